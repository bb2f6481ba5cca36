#!/usr/bin/env bash
# The commands for people against the local control plane: `rudder history` prints what
# `helm history` prints (byte for byte; -o json: helm history -o json's fields and values, -o yaml
# the same data); `rudder get` shows what kubectl reads from the objects (also -o json|yaml);
# `rudder reconcile` makes the controller reconcile at once (seen in status.lastHandledReconcileAt,
# and it waits for it); `rudder suspend` stops upgrades and `rudder resume` brings them back;
# `rudder diff` shows a changed value as a unified diff and nothing for an unchanged release,
# and changes nothing; clear errors for a missing object, a missing namespace's object and an
# unreachable server.
. "$(dirname "$0")/lib.sh"
R() { "$RUDDER_BIN" "$@" --kubeconfig "$KUBECONFIG" -n "$NS"; }

mkdir -p "$WORK/t"
cat >"$WORK/t/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
data:
  color: {{ .Values.color | quote }}
  size: "10"
Y
hr() { # NAME COLOR
  HR_SPEC="{\"values\": {\"color\": \"$2\"}, \"interval\": \"1h\"}" hr_inline "$1" web 1.0.0 "$WORK/t/cm.yaml" |
    kubectl apply -f - >/dev/null
}
start_controller
hr web red
hr other blue
wait_for 60 "web Ready" hr_ready web
wait_for 60 "other Ready" hr_ready other
hr web green
wait_for 60 "web upgraded" bash -c "[ \"\$(kubectl -n $NS get cm web-cfg -o jsonpath='{.data.color}')\" = green ]"
wait_for 60 "web Ready at revision 2" bash -c "[ \"\$(kubectl -n $NS get helmrelease web -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"

# ---- history: byte for byte what helm history prints
TZ=UTC helm history web -n "$NS" >"$WORK/helm.hist"
TZ=UTC R history web >"$WORK/rudder.hist" 2>"$WORK/err" || fail "rudder history: $(cat "$WORK/err")"
diff -u "$WORK/helm.hist" "$WORK/rudder.hist" >&2 || fail "rudder history differs from helm history"
[ "$(wc -l <"$WORK/rudder.hist")" = 3 ] || fail "history: not two revisions: $(cat "$WORK/rudder.hist")"
TZ=UTC helm history web -n "$NS" --max 1 >"$WORK/helm.hist1"
TZ=UTC R history web --max 1 >"$WORK/rudder.hist1"
cmp -s "$WORK/helm.hist1" "$WORK/rudder.hist1" || fail "history --max 1 differs: $(diff "$WORK/helm.hist1" "$WORK/rudder.hist1")"
ok "rudder history == helm history, byte for byte (also --max 1)"

# ---- history -o json / -o yaml: helm history -o json's fields and values
helm history web -n "$NS" -o json >"$WORK/helm.hist.json"
R history web -o json >"$WORK/rudder.hist.json" 2>"$WORK/err" || fail "rudder history -o json: $(cat "$WORK/err")"
R history web -o yaml >"$WORK/rudder.hist.yaml" 2>"$WORK/err" || fail "rudder history -o yaml: $(cat "$WORK/err")"
helm history web -n "$NS" -o json --max 1 >"$WORK/helm.hist1.json"
R history web -o json --max 1 >"$WORK/rudder.hist1.json"
python3 - "$WORK" <<'PY' || fail "rudder history -o json/yaml differ from helm history -o json"
import json, sys, yaml
w = sys.argv[1]
helm, ours = json.load(open(w + "/helm.hist.json")), json.load(open(w + "/rudder.hist.json"))
assert len(helm) == 2, helm
for h, r in zip(helm, ours):
    assert set(h) == set(r), ("fields", sorted(h), sorted(r))
    assert h == r, (h, r)
assert helm == ours, (helm, ours)
assert yaml.safe_load(open(w + "/rudder.hist.yaml")) == ours, open(w + "/rudder.hist.yaml").read()
assert json.load(open(w + "/helm.hist1.json")) == json.load(open(w + "/rudder.hist1.json"))
PY
ok "rudder history -o json == helm history -o json (fields $(jq -c '.[0] | keys' "$WORK/helm.hist.json"), every value; also --max 1); -o yaml the same data"

# ---- get: the columns as kubectl reads them from the objects
R get >"$WORK/get.txt" 2>"$WORK/err" || fail "rudder get: $(cat "$WORK/err")"
head -1 "$WORK/get.txt" | grep -qE '^NAME +REVISION +SUSPENDED +READY +CHART +MESSAGE$' || fail "get header: $(head -1 "$WORK/get.txt")"
tail -n +2 "$WORK/get.txt" | awk '{print $1, $2, $3, $4, $5}' >"$WORK/get.cols"
kubectl -n "$NS" get helmreleases -o json | python3 -c '
import json, sys
for i in sorted(json.load(sys.stdin)["items"], key=lambda i: i["metadata"]["name"]):
    s = i["status"]; r = [c for c in s["conditions"] if c["type"] == "Ready"][0]; h = s["history"][0]
    print(i["metadata"]["name"], s["lastAppliedRevision"], "True" if i["spec"].get("suspend") else "False", r["status"],
          h["chartName"] + "-" + h["chartVersion"])' >"$WORK/kubectl.cols"
diff -u "$WORK/kubectl.cols" "$WORK/get.cols" >&2 || fail "rudder get differs from kubectl's view"
msg=$(hr_cond_msg web Ready)
grep -E '^web ' "$WORK/get.txt" | grep -qF -- "   $msg" || fail "get: not the Ready message '$msg': $(cat "$WORK/get.txt")"
R get -A | grep -qE "^$NS +web +2 +False +True +web-1.0.0 " || fail "get -A: $(R get -A | grep "$NS" )"
R get other | tail -n +2 | grep -q '^other ' || fail "get NAME: $(R get other)"
ok "rudder get (also -A and NAME) shows what kubectl reads: name, revision, suspended, Ready, chart, message"
R get -o json >"$WORK/get.json" 2>"$WORK/err" || fail "rudder get -o json: $(cat "$WORK/err")"
R get -o yaml >"$WORK/get.yaml" 2>"$WORK/err" || fail "rudder get -o yaml: $(cat "$WORK/err")"
R get web -o json >"$WORK/get1.json"
kubectl -n "$NS" get helmreleases -o json >"$WORK/kubectl.json"
python3 - "$WORK" <<'PY' || fail "rudder get -o json/yaml differ from kubectl's view"
import json, sys, yaml
w = sys.argv[1]
want = []
for i in sorted(json.load(open(w + "/kubectl.json"))["items"], key=lambda i: i["metadata"]["name"]):
    s = i["status"]; r = [c for c in s["conditions"] if c["type"] == "Ready"][0]; h = s["history"][0]
    want.append({"name": i["metadata"]["name"], "namespace": i["metadata"]["namespace"], "ready": r["status"],
                 "reason": r["reason"], "message": r["message"], "revision": s["lastAppliedRevision"],
                 "chart": h["chartName"], "version": h["chartVersion"], "suspended": bool(i["spec"].get("suspend"))})
got = json.load(open(w + "/get.json"))
assert got == want, (got, want)
assert yaml.safe_load(open(w + "/get.yaml")) == want, open(w + "/get.yaml").read()
assert json.load(open(w + "/get1.json")) == [x for x in want if x["name"] == "web"]
PY
set +e; R get -o wide >"$WORK/e.txt" 2>&1; rc=$?; R history web --output=xml >"$WORK/e2.txt" 2>&1; rc2=$?; set -e
[ "$rc" = 2 ] && grep -qx 'rudder get: -o: unknown output format "wide" (json, yaml or table)' "$WORK/e.txt" ||
  fail "get -o wide: status $rc: $(cat "$WORK/e.txt")"
[ "$rc2" = 2 ] && grep -qx 'rudder history: --output: unknown output format "xml" (json, yaml or table)' "$WORK/e2.txt" ||
  fail "history --output=xml: status $rc2: $(cat "$WORK/e2.txt")"
ok "rudder get -o json/-o yaml: name, namespace, ready, reason, message, revision, chart, version, suspended as kubectl reads them; an unknown -o: status 2 naming it"

# ---- reconcile: a reconcile now, seen in status, waited for
before=$(grep -c "release=$NS/web" "$CTRL_LOG" || true)
R reconcile web --timeout 60s >"$WORK/rec.txt" 2>"$WORK/rec.err" || fail "rudder reconcile: $(cat "$WORK/rec.txt" "$WORK/rec.err")"
asked=$(kubectl -n "$NS" get helmrelease web -o jsonpath='{.metadata.annotations.rudder\.dev/reconcile-requested-at}')
handled=$(hr_field web '{.status.lastHandledReconcileAt}')
[ -n "$asked" ] && [ "$asked" = "$handled" ] || fail "reconcile: annotation '$asked', status.lastHandledReconcileAt '$handled'"
grep -q "HelmRelease $NS/web reconciled: Ready=True (UpgradeSucceeded), revision 2: Helm release $NS/web.v2 is deployed" \
  "$WORK/rec.txt" || fail "reconcile printed: $(cat "$WORK/rec.txt")"
after=$(grep -c "release=$NS/web" "$CTRL_LOG" || true)
grep "release=$NS/web" "$CTRL_LOG" | tail -n $((after - before)) | grep -q 'msg=observed' ||
  fail "the controller did not observe the release again (memo not bypassed)"
[ "$(helm_history helm web)" = "1:superseded 2:deployed" ] || fail "reconcile changed the history: $(helm_history helm web)"
ok "rudder reconcile: the controller reconciled at once (lastHandledReconcileAt = the annotation), no new revision"

# kubectl annotate does the same (the documented equivalent)
kubectl -n "$NS" annotate helmrelease other --overwrite "rudder.dev/reconcile-requested-at=by-kubectl-1" >/dev/null
wait_for 30 "other handled the kubectl annotation" bash -c "[ \"\$(kubectl -n $NS get helmrelease other -o jsonpath='{.status.lastHandledReconcileAt}')\" = by-kubectl-1 ]"
ok "kubectl annotate rudder.dev/reconcile-requested-at=... is handled the same way"

# ---- diff: nothing for an unchanged release, the changed value otherwise, and nothing changes
R diff web >"$WORK/diff0.txt" 2>"$WORK/err"; rc=$?
[ "$rc" = 0 ] && [ ! -s "$WORK/diff0.txt" ] || fail "diff of an unchanged release: status $rc: $(cat "$WORK/diff0.txt" "$WORK/err")"
ok "rudder diff of an unchanged release: empty, status 0"
kubectl -n "$NS" patch helmrelease web --type merge -p '{"spec":{"suspend":true}}' >/dev/null
R diff web >/dev/null || fail "diff of a suspended, unchanged release"
kubectl -n "$NS" patch helmrelease web --type merge -p '{"spec":{"values":{"color":"blue"}}}' >/dev/null
set +e; R diff web >"$WORK/diff1.txt" 2>"$WORK/err"; rc=$?; set -e
[ "$rc" = 1 ] || fail "diff of a changed release: status $rc: $(cat "$WORK/diff1.txt" "$WORK/err")"
cat >"$WORK/want.diff" <<EOF
--- ConfigMap $NS/web-cfg (live)
+++ ConfigMap $NS/web-cfg (after the upgrade)
EOF
head -2 "$WORK/diff1.txt" | cmp -s - "$WORK/want.diff" || fail "diff headers: $(head -2 "$WORK/diff1.txt")"
grep -qx -- '-  color: green' "$WORK/diff1.txt" && grep -qx -- '+  color: blue' "$WORK/diff1.txt" ||
  fail "diff does not show color green -> blue: $(cat "$WORK/diff1.txt")"
[ "$(grep -c '^[-+] ' "$WORK/diff1.txt")" = 2 ] || fail "diff shows more than the value: $(cat "$WORK/diff1.txt")"
grep -q '^@@ -[0-9]*,[0-9]* +[0-9]*,[0-9]* @@$' "$WORK/diff1.txt" || fail "no hunk header: $(cat "$WORK/diff1.txt")"
[ "$(cm_data "$NS" web-cfg color)" = green ] || fail "diff changed the live object"
ok "rudder diff: the changed value as a unified diff (status 1), the live object untouched"
# An object the next revision adds is shown created (every line added).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  k: v\n' >"$WORK/t/extra.yaml"
HR_SPEC='{"values": {"color": "blue"}, "interval": "1h", "suspend": true}' hr_inline other web 1.0.0 "$WORK/t/cm.yaml" "$WORK/t/extra.yaml" |
  kubectl apply -f - >/dev/null
set +e; R diff other >"$WORK/diff2.txt" 2>"$WORK/err"; rc=$?; set -e
[ "$rc" = 1 ] && grep -qx -- "+++ ConfigMap $NS/extra (created by the upgrade)" "$WORK/diff2.txt" &&
  grep -qx -- '+  k: v' "$WORK/diff2.txt" && ! grep -q "other-cfg" "$WORK/diff2.txt" ||
  fail "diff of a release gaining an object: status $rc: $(cat "$WORK/diff2.txt" "$WORK/err")"
! kubectl -n "$NS" get configmap extra >/dev/null 2>&1 || fail "diff created the object"
ok "rudder diff: an object the upgrade adds is shown created, nothing else; it is not created"

# ---- suspend: no upgrade while suspended; resume upgrades and waits
R suspend web >"$WORK/s.txt" || fail "suspend"
grep -qx "HelmRelease $NS/web suspended" "$WORK/s.txt" || fail "suspend printed: $(cat "$WORK/s.txt")"
sleep 5
[ "$(cm_data "$NS" web-cfg color)" = green ] && [ "$(helm_history helm web)" = "1:superseded 2:deployed" ] ||
  fail "a suspended release was upgraded: $(helm_history helm web)"
R get web | grep -qE '^web +2 +True ' || fail "get does not show it suspended: $(R get web)"
set +e; R reconcile web >"$WORK/rs.txt" 2>&1; rc=$?; set -e
[ "$rc" = 1 ] && grep -q "is suspended; resume it first" "$WORK/rs.txt" || fail "reconcile of a suspended release: $(cat "$WORK/rs.txt")"
ok "rudder suspend: no upgrade while suspended (history unchanged); reconcile refuses with a reason"
R resume web --timeout 60s >"$WORK/r.txt" 2>"$WORK/r.err" || fail "resume: $(cat "$WORK/r.txt" "$WORK/r.err")"
grep -q "reconciled: Ready=True (UpgradeSucceeded), revision 3" "$WORK/r.txt" || fail "resume printed: $(cat "$WORK/r.txt")"
[ "$(cm_data "$NS" web-cfg color)" = blue ] && [ "$(helm_history helm web)" = "1:superseded 2:superseded 3:deployed" ] ||
  fail "resume did not upgrade: $(helm_history helm web)"
R diff web >/dev/null || fail "diff after the upgrade is not empty"
ok "rudder resume: upgraded to revision 3 and waited for it; diff is empty again"

# ---- errors: a missing object, a kind the server does not serve, an unreachable server
for cmd in history diff reconcile suspend resume; do
  set +e; R $cmd nope >"$WORK/e.txt" 2>&1; rc=$?; set -e
  [ "$rc" != 0 ] && grep -qx "rudder $cmd: HelmRelease $NS/nope not found" "$WORK/e.txt" ||
    fail "$cmd of a missing object: status $rc: $(cat "$WORK/e.txt")"
done
set +e; R get nope >"$WORK/e.txt" 2>&1; rc=$?; set -e
[ "$rc" = 1 ] && grep -qx "rudder get: HelmRelease $NS/nope not found" "$WORK/e.txt" || fail "get nope: $(cat "$WORK/e.txt")"
ok "a missing HelmRelease: 'rudder CMD: HelmRelease $NS/nope not found' and a failure status, for every command"
sed -E 's#(server: https?://)[^/ ]+#\1127.0.0.1:1#' "$KUBECONFIG" >"$WORK/dead.kubeconfig"
for cmd in "get" "history web" "reconcile web" "diff web"; do
  set +e; "$RUDDER_BIN" $cmd --kubeconfig "$WORK/dead.kubeconfig" -n "$NS" >"$WORK/e.txt" 2>&1; rc=$?; set -e
  [ "$rc" != 0 ] && grep -q "rudder ${cmd%% *}: cannot reach the API server https://127.0.0.1:1 (kubeconfig $WORK/dead.kubeconfig): " "$WORK/e.txt" ||
    fail "$cmd with an unreachable server: status $rc: $(cat "$WORK/e.txt")"
done
ok "an unreachable API server: 'cannot reach the API server <url> (kubeconfig <file>): <why>'"
set +e; "$RUDDER_BIN" get --kubeconfig "$WORK/none" >"$WORK/e.txt" 2>&1; rc=$?; set -e
[ "$rc" = 1 ] && grep -q "$WORK/none" "$WORK/e.txt" || fail "a missing kubeconfig: $(cat "$WORK/e.txt")"
set +e; "$RUDDER_BIN" history >"$WORK/e.txt" 2>&1; rc=$?; set -e
[ "$rc" = 2 ] && grep -q "give the HelmRelease's NAME" "$WORK/e.txt" || fail "history without NAME: $(cat "$WORK/e.txt")"
ok "a missing kubeconfig names the file; a missing NAME is a usage error (status 2)"
stop_controller
