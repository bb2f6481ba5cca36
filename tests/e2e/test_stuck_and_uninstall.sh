#!/usr/bin/env bash
# A release the helm CLI left in pending-install (killed mid-install) is waited
# for while younger than spec.timeout, then marked failed and installed anew;
# uninstall.keepHistory keeps the records (marked uninstalled); a chart whose
# record would not fit in a Secret is refused before anything is written.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/hang" "$WORK/t" "$WORK/big"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: hang\n  annotations:\n    "helm.sh/hook": pre-install\nspec:\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: busybox:1.36\n' >"$WORK/hang/hang.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stuck-cm\ndata:\n  k: v\n' >"$WORK/t/cm.yaml"
cp "$WORK/t/cm.yaml" "$WORK/hang/"
write_chart "$WORK/c" stuck 1.0.0 "$WORK/hang"/*.yaml

# 1. helm install killed while its pre-install hook runs: pending-install left behind.
helm install stuck "$WORK/c" -n "$NS" --timeout 10m >/dev/null 2>&1 &
helm_pid=$!
EXTRA_PIDS+=("$helm_pid")
wait_for 60 "helm's pending-install record" bash -c "[ \"\$(kubectl -n $NS get secret sh.helm.release.v1.stuck.v1 -o jsonpath='{.metadata.labels.status}' 2>/dev/null)\" = pending-install ]"
kill -KILL "$helm_pid"
wait "$helm_pid" 2>/dev/null || true
ok "helm install killed: revision 1 left pending-install"
start_controller
HR_SPEC='{"timeout":"20s","install":{"takeOwnership":true},"upgrade":{"takeOwnership":true}}' \
  hr_inline stuck stuck 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 30 "ReleaseLocked" bash -c "[ \"\$(kubectl -n $NS get helmrelease stuck -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = ReleaseLocked ]"
[ "$(helm_status helm stuck)" = "pending-install 1" ] || fail "the pending operation was touched while young: $(helm_status helm stuck)"
ok "a young pending operation of someone else is waited for (ReleaseLocked)"
wait_for 90 "recovered" hr_ready stuck
[ "$(helm_history helm stuck)" = "1:failed 2:deployed" ] || fail "history: $(helm_history helm stuck)"
hr_events stuck | grep -q ReleaseUnlocked || fail "no ReleaseUnlocked event"
ok "after the timeout: revision 1 marked failed, revision 2 deployed"

# 2. keepHistory.
HR_SPEC='{"uninstall":{"keepHistory":true}}' hr_inline kept kept 1.0.0 "$WORK/t"/*.yaml | sed 's/stuck-cm/kept-cm/' | kubectl apply -f - >/dev/null
wait_for 60 "kept Ready" hr_ready kept
kubectl -n "$NS" delete helmrelease kept --wait=false >/dev/null
wait_for 60 "kept deleted" bash -c "! kubectl -n $NS get helmrelease kept >/dev/null 2>&1"
[ "$(helm_history helm kept)" = "1:uninstalled" ] || fail "history after a keepHistory uninstall: $(helm_history helm kept)"
kubectl -n "$NS" get configmap kept-cm >/dev/null 2>&1 && fail "objects left after uninstall"
ok "uninstall.keepHistory: objects gone, the record kept as uninstalled"

# 3. A record too big for a Secret: refused before anything is written.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: "{{ range until 200000 }}{{ randAlphaNum 8 }}{{ end }}"\n' >"$WORK/big/big.yaml"
hr_inline big big 1.0.0 "$WORK/big"/*.yaml | kubectl apply -f - >/dev/null
wait_for 90 "big failed" hr_failed big
msg=$(hr_cond_msg big Ready)
echo "$msg" | grep -q "more than the 1048576 bytes a Secret can hold" || fail "message: $msg"
[ -z "$(kubectl -n "$NS" get secrets -l owner=helm,name=big -o name)" ] || fail "a record was written"
kubectl -n "$NS" get configmap big >/dev/null 2>&1 && fail "the object was applied"
ok "a record too big for a Secret is refused before anything is written: ${msg:0:160}"

for hr in stuck big; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
