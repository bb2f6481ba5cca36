#!/usr/bin/env bash
# Rollback, declarative and by hand: while spec.rollback.toRevision is set the
# release is that revision (the record equals what `helm rollback` writes for
# the same history); removed, the spec is followed again; a `helm rollback`
# made by hand is seen (Event) and corrected to the spec.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/v1" "$WORK/v2"
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  v: "%s"\n' "$1"; }
cm 1 >"$WORK/v1/settings.yaml"
cm 2 >"$WORK/v2/settings.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: only-in-v2\ndata: {}\n' >"$WORK/v2/extra.yaml"
start_controller

hr_inline app app 1.0.0 "$WORK/v1"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "revision 1 Ready" hr_ready app
hr_inline app app 2.0.0 "$WORK/v2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "revision 2" bash -c "[ \"\$(kubectl -n $NS get helmrelease app -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"
wait_for 30 "revision 2 Ready" hr_ready app
[ "$(cm_data "$NS" settings v)" = 2 ] || fail "revision 2 not applied"
ok "revisions 1 and 2 deployed"

# 1. Declarative rollback to revision 1.
HR_SPEC='{"rollback":{"toRevision":1}}' hr_inline app app 2.0.0 "$WORK/v2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "rollback to 1" bash -c "[ \"\$(kubectl -n $NS get helmrelease app -o jsonpath='{.status.lastAppliedRevision}')\" = 3 ]"
wait_for 30 "Ready after the rollback" hr_ready app
[ "$(hr_cond app Ready)" = True ] || fail "not Ready after the rollback"
[ "$(cm_data "$NS" settings v)" = 1 ] || fail "rollback did not restore revision 1's objects"
kubectl -n "$NS" get configmap only-in-v2 >/dev/null 2>&1 && fail "an object only revision 2 had is still there"
[ "$(helm_history helm app)" = "1:superseded 2:superseded 3:deployed" ] || fail "history: $(helm_history helm app)"
[ "$(helm_history helm3 app)" = "1:superseded 2:superseded 3:deployed" ] || fail "helm3 history: $(helm_history helm3 app)"
ok "spec.rollback.toRevision=1: revision 3 restores revision 1"

# The same history made by the helm CLI: its revision 3 is the oracle for ours.
write_chart "$WORK/c1" app 1.0.0 "$WORK/v1"/*.yaml
write_chart "$WORK/c2" app 2.0.0 "$WORK/v2"/*.yaml
kubectl create namespace "$NS-oracle" >/dev/null
helm install app "$WORK/c1" -n "$NS-oracle" >/dev/null
helm upgrade app "$WORK/c2" -n "$NS-oracle" >/dev/null
helm rollback app 1 -n "$NS-oracle" >/dev/null
release_record "$NS-oracle" sh.helm.release.v1.app.v3 >"$WORK/want.json"
release_record "$NS" sh.helm.release.v1.app.v3 >"$WORK/got.json"
diff -u <(python3 -m json.tool --sort-keys "$WORK/want.json") <(python3 -m json.tool --sort-keys "$WORK/got.json") >&2 ||
  fail "the rollback record differs from what helm rollback writes"
helm uninstall app -n "$NS-oracle" >/dev/null
ok "the rollback record equals helm rollback's (times and namespace aside)"

# 2. Rollback removed: the spec is followed again.
hr_inline app app 2.0.0 "$WORK/v2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "back to the spec" bash -c "[ \"\$(kubectl -n $NS get helmrelease app -o jsonpath='{.status.lastAppliedRevision}')\" = 4 ]"
wait_for 30 "Ready on the spec" hr_ready app
[ "$(cm_data "$NS" settings v)" = 2 ] || fail "spec not applied after removing the rollback"
ok "without spec.rollback the spec is followed again (revision 4)"

# 3. A rollback made by hand is seen and corrected.
# (rudder's server-side apply owns the fields: helm needs --force-conflicts, as for any other field manager)
helm rollback app 3 -n "$NS" --force-conflicts >/dev/null 2>"$WORK/rb.err" || fail "helm rollback failed: $(cat "$WORK/rb.err")"
wait_for 60 "the hand-made rollback corrected" bash -c "[ \"\$(kubectl -n $NS get helmrelease app -o jsonpath='{.status.lastAppliedRevision}')\" = 6 ]"
[ "$(helm_history helm app)" = "1:superseded 2:superseded 3:superseded 4:superseded 5:superseded 6:deployed" ] ||
  fail "history after the correction: $(helm_history helm app)"
[ "$(cm_data "$NS" settings v)" = 2 ] || fail "the hand-made rollback was not corrected"
hr_events app | grep -q ChangedOutside || fail "no ChangedOutside event: $(hr_events app)"
ok "helm rollback by hand: seen (Event ChangedOutside) and corrected to the spec (revision 6)"

# 4. A rollback to a revision that does not exist.
HR_SPEC='{"rollback":{"toRevision":42}}' hr_inline app app 2.0.0 "$WORK/v2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "rollback to 42 refused" hr_failed app
msg=$(hr_cond_msg app Ready)
echo "$msg" | grep -q "revision 42" || fail "message does not name the revision: $msg"
[ "$(helm_status helm app)" = "deployed 6" ] || fail "a failed rollback changed the release: $(helm_status helm app)"
ok "rollback to a missing revision: $msg; revision 6 stays deployed"

kubectl -n "$NS" delete helmrelease app --wait=false >/dev/null
wait_for 60 "uninstalled" bash -c "! kubectl -n $NS get helmrelease app >/dev/null 2>&1"
[ "$(helm_status helm app)" = absent ] || fail "release still listed after delete"
ok "deleted"
stop_controller
