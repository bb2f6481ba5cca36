#!/usr/bin/env bash
# One hostile release cannot stall the others: its render runs off the loop
# thread and fails on its budget (--max-render-time, or the step limit) with a message naming the
# limit, while a canary release created after it is installed meanwhile (an
# ordering check, not a timing threshold); the hostile release is not retried
# until its inputs change. Deeply nested values fail alone too.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/bomb" "$WORK/canary"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  x: "{{ $l := until 3000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}"\n' >"$WORK/bomb/bomb.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary\ndata:\n  k: v\n' >"$WORK/canary/canary.yaml"
"$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$KUBECONFIG" --namespace "$NS" --log-level debug --max-render-time 5s >>"$CTRL_LOG" 2>&1 &
CTRL_PID=$!

hr_inline bomb bomb 1.0.0 "$WORK/bomb"/*.yaml | kubectl apply -f - >/dev/null
wait_for 30 "the bomb's render to start" grep -q "release=$NS/bomb state=absent" "$CTRL_LOG"
hr_inline canary canary 1.0.0 "$WORK/canary"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "canary Ready" hr_ready canary
wait_for 60 "bomb failed" hr_failed bomb
# The order the controller did things in, from its log: the canary was installed before the
# hostile render ended.
installed=$(grep -n "msg=installed release=$NS/canary" "$CTRL_LOG" | head -1 | cut -d: -f1)
failed=$(grep -n "msg=\"reconcile failed\" release=$NS/bomb" "$CTRL_LOG" | head -1 | cut -d: -f1)
[ -n "$installed" ] && [ -n "$failed" ] || fail "the log does not show both outcomes"
[ "$installed" -lt "$failed" ] || fail "the hostile release finished before the canary was installed"
ok "the canary was installed while the hostile release was still rendering"
msg=$(hr_cond_msg bomb Ready)
# the time budget, or the engine's step limit when the machine is fast enough to reach it first
echo "$msg" | grep -Eq "render budget exceeded: time longer than 5 s \(limit --max-render-time\)|exceeded 100000000 steps" ||
  fail "the message does not name the limit: $msg"
echo "$msg" | grep -q "bomb/templates/bomb.yaml" || fail "the message does not say where: $msg"
[ "$(hr_cond bomb Stalled)" = True ] || fail "not Stalled"
ok "the hostile release fails on its budget: $msg"
renders=$(grep -c "release=$NS/bomb action=\|release=$NS/bomb state=" "$CTRL_LOG")
sleep 3
[ "$(grep -c "release=$NS/bomb action=\|release=$NS/bomb state=" "$CTRL_LOG")" = "$renders" ] || fail "the hostile release was tried again"
ok "not tried again with the same inputs"

# Values nested far deeper than any chart needs: that object fails alone.
python3 - "$NS" >"$WORK/deep.json" <<'PY'
import sys
deep = '{"a":' * 1200 + '{}' + '}' * 1200  # written out: too deep for Python's own encoder
print('{"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease", "metadata": {"name": "deep", "namespace": "%s"}, '
      '"spec": {"values": %s, "chart": {"inline": {"templates": {"a.yaml": "apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: deep\\n"}}}}}'
      % (sys.argv[1], deep))
PY
if kubectl create -f "$WORK/deep.json" >/dev/null 2>"$WORK/deep.err"; then
  wait_for 60 "deep refused" bash -c "[ \"\$(kubectl -n $NS get helmrelease deep -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = False ]"
  ok "a HelmRelease nested 1,200 levels fails alone: $(hr_cond_msg deep Ready | cut -c1-120)"
else
  ok "the API server itself refuses 1,200 levels: $(head -c 120 "$WORK/deep.err")"
fi
# A NUL in a template (JSON \u0000): the text would be cut there and the rest silently dropped.
printf '{"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease", "metadata": {"name": "nul", "namespace": "%s"}, "spec": {"chart": {"inline": {"templates": {"a.yaml": "apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: nul\\n\\u0000\\n---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: after-nul\\n"}}}}}' "$NS" >"$WORK/nul.json"
kubectl create -f "$WORK/nul.json" >/dev/null
wait_for 60 "nul refused" bash -c "[ \"\$(kubectl -n $NS get helmrelease nul -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = False ]"
[[ "$(hr_cond_msg nul Ready)" == *NUL* ]] || fail "nul: the message should say NUL: $(hr_cond_msg nul Ready)"
! kubectl -n "$NS" get configmap nul >/dev/null 2>&1 || fail "nul: a cut template was applied"
ok "a NUL in a template is refused, nothing applied: $(hr_cond_msg nul Ready | cut -c1-120)"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary2\ndata:\n  k: v\n' >"$WORK/canary/canary.yaml"
hr_inline canary canary 1.0.1 "$WORK/canary"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "canary upgraded" bash -c "kubectl -n $NS get configmap canary2 >/dev/null 2>&1"
ok "the other releases go on"
for hr in bomb canary deep nul; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null 2>&1 || true; done
for hr in deep nul; do kubectl -n "$NS" patch helmrelease "$hr" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true; done
wait_for 60 "all gone" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
