#!/usr/bin/env bash
# upgrade.force: objects are replaced whole (Helm 4's --force-replace, which Helm allows only with
# client-side apply): a field another manager added survives a normal upgrade and is gone after a
# forced one; the forced record equals what `helm upgrade --force-replace --server-side=false`
# stores. upgrade.cleanupOnFail: a failed upgrade deletes the objects it created.
. "$(dirname "$0")/lib.sh"

norm() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps(r, sort_keys=True, indent=1))'; }
mkdir -p "$WORK/t"
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: forced-cm\ndata:\n  v: "%s"\n' "$1" >"$WORK/t/cm.yaml"; }
start_controller
kubectl create namespace "$NS-oracle" >/dev/null

# 1. Install, then another field manager adds a key.
cm 1
hr_inline forced forced 1.0.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "forced Ready" hr_ready forced
write_chart "$WORK/c1" forced 1.0.0 "$WORK/t/cm.yaml"
helm install forced "$WORK/c1" -n "$NS-oracle" >/dev/null
for n in "$NS" "$NS-oracle"; do
  kubectl -n "$n" patch configmap forced-cm --type merge -p '{"data":{"extra":"theirs"}}' --field-manager other >/dev/null
done

# 2. A normal upgrade (server-side apply) keeps the other manager's key.
cm 2
hr_inline forced forced 1.0.1 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "revision 2" bash -c "[ \"\$(kubectl -n $NS get helmrelease forced -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"
[ "$(cm_data "$NS" forced-cm v)" = 2 ] || fail "the upgrade was not applied"
[ "$(cm_data "$NS" forced-cm extra)" = theirs ] || fail "a normal upgrade removed another manager's field"
write_chart "$WORK/c2" forced 1.0.1 "$WORK/t/cm.yaml"
helm upgrade forced "$WORK/c2" -n "$NS-oracle" >/dev/null
ok "a normal upgrade keeps a field another manager owns"

# 3. A forced upgrade replaces the object: the other manager's key is gone.
cm 3
HR_SPEC='{"upgrade":{"force":true}}' hr_inline forced forced 1.0.2 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "revision 3" bash -c "[ \"\$(kubectl -n $NS get helmrelease forced -o jsonpath='{.status.lastAppliedRevision}')\" = 3 ]"
wait_for 30 "forced Ready after the forced upgrade" hr_ready forced
[ "$(cm_data "$NS" forced-cm v)" = 3 ] || fail "the forced upgrade was not applied"
[ -z "$(cm_data "$NS" forced-cm extra)" ] || fail "a forced upgrade kept another manager's field"
kubectl -n "$NS" get configmap forced-cm -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}' | grep -qx Helm ||
  fail "the replaced object lost its ownership metadata"
ok "a forced upgrade replaces the object (the other manager's field is gone)"
write_chart "$WORK/c3" forced 1.0.2 "$WORK/t/cm.yaml"
# Helm 4 refuses --force-replace with server-side apply (the release's method): the oracle says so...
out=$(helm upgrade forced "$WORK/c3" -n "$NS-oracle" --force-replace 2>&1) && fail "helm accepted --force-replace with SSA"
echo "$out" | grep -q "cannot use server-side apply and force replace together" || fail "helm said: $out"
# ...and replaces with client-side apply.
helm upgrade forced "$WORK/c3" -n "$NS-oracle" --force-replace --server-side=false >/dev/null
[ -z "$(cm_data "$NS-oracle" forced-cm extra)" ] || fail "helm's forced upgrade kept the field (the test is wrong)"
# helm's revision 3 is its refused attempt; its forced upgrade is revision 4.
release_record "$NS-oracle" sh.helm.release.v1.forced.v4 | norm | sed 's/"version": 4/"version": 3/' >"$WORK/want.json"
release_record "$NS" sh.helm.release.v1.forced.v3 | norm >"$WORK/got.json"
diff -u "$WORK/want.json" "$WORK/got.json" >&2 || fail "the forced upgrade's record differs from helm upgrade --force-replace's"
grep -q '"apply_method": "csa"' "$WORK/got.json" || fail "the forced record is not recorded as client-side apply"
ok "the forced record equals helm upgrade --force-replace --server-side=false's (apply_method csa)"
[ "$(helm_history helm forced)" = "1:superseded 2:superseded 3:deployed" ] || fail "history: $(helm_history helm forced)"

# 4. The next upgrade without force is server-side again.
cm 4
HR_SPEC='{"upgrade":{"force":false}}' hr_inline forced forced 1.0.3 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "revision 4" bash -c "[ \"\$(kubectl -n $NS get helmrelease forced -o jsonpath='{.status.lastAppliedRevision}')\" = 4 ]"
release_record "$NS" sh.helm.release.v1.forced.v4 | norm >"$WORK/got4.json"
grep -q '"apply_method": "ssa"' "$WORK/got4.json" || fail "revision 4 is not ssa"
[ "$(cm_data "$NS" forced-cm v)" = 4 ] || fail "revision 4 not applied"
ok "without force the next upgrade applies server-side again"
helm uninstall forced -n "$NS-oracle" >/dev/null

# 5. cleanupOnFail: an upgrade that adds an object and then fails (a post-upgrade hook that never
# completes) deletes what it created; the objects of the previous revision stay. Without it the new
# object is left, as helm upgrade leaves it.
mkdir -p "$WORK/u1" "$WORK/u2"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n' base >"$WORK/u1/base.yaml"
cp "$WORK/u1/base.yaml" "$WORK/u2/"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n' added >"$WORK/u2/added.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: never\n  annotations:\n    "helm.sh/hook": post-upgrade\nspec:\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: busybox:1.36\n' >"$WORK/u2/never.yaml"
for hr in clean dirty; do
  sed "s/base/$hr-base/; s/added/$hr-added/" -i "$WORK/u1/base.yaml" "$WORK/u2/base.yaml" "$WORK/u2/added.yaml"
  sed "s/name: never/name: $hr-never/" "$WORK/u2/never.yaml" >"$WORK/u2/never-$hr.yaml"
  HR_SPEC='{"timeout":"3s"}' hr_inline "$hr" "$hr" 1.0.0 "$WORK/u1/base.yaml" | kubectl apply -f - >/dev/null
  wait_for 60 "$hr Ready" hr_ready "$hr"
  opt=false; [ "$hr" = clean ] && opt=true
  HR_SPEC="{\"timeout\":\"3s\",\"upgrade\":{\"cleanupOnFail\":$opt}}" \
    hr_inline "$hr" "$hr" 1.0.1 "$WORK/u2/base.yaml" "$WORK/u2/added.yaml" "$WORK/u2/never-$hr.yaml" | kubectl apply -f - >/dev/null
  wait_for 60 "$hr upgrade failed" hr_failed "$hr"
  [ "$(helm_history helm "$hr")" = "1:deployed 2:failed" ] || fail "$hr history: $(helm_history helm "$hr")"
  kubectl -n "$NS" get configmap "$hr-base" >/dev/null || fail "$hr: the previous revision's object was deleted"
  sed "s/$hr-base/base/; s/$hr-added/added/" -i "$WORK/u1/base.yaml" "$WORK/u2/base.yaml" "$WORK/u2/added.yaml"
done
msg=$(hr_cond_msg clean Ready)
echo "$msg" | grep -q "warning: Hook post-upgrade clean/templates/never-clean.yaml failed" || fail "message: $msg"
kubectl -n "$NS" get configmap clean-added >/dev/null 2>&1 && fail "cleanupOnFail left the object the failed upgrade created"
kubectl -n "$NS" get configmap dirty-added >/dev/null || fail "without cleanupOnFail the created object should stay"
ok "cleanupOnFail: the object the failed upgrade created is deleted, the previous ones stay"
# The oracle: helm upgrade --cleanup-on-fail leaves the same objects.
write_chart "$WORK/o1" oclean 1.0.0 "$WORK/u1/base.yaml"
write_chart "$WORK/o2" oclean 1.0.1 "$WORK/u2/base.yaml" "$WORK/u2/added.yaml" "$WORK/u2/never.yaml"
helm install oclean "$WORK/o1" -n "$NS-oracle" >/dev/null
helm upgrade oclean "$WORK/o2" -n "$NS-oracle" --cleanup-on-fail --timeout 3s >/dev/null 2>&1 && fail "helm's upgrade did not fail"
[ "$(kubectl -n "$NS-oracle" get configmaps -o name | grep -c 'configmap/\(base\|added\)$')" = 1 ] || fail "helm left: $(kubectl -n "$NS-oracle" get configmaps -o name)"
kubectl -n "$NS-oracle" get configmap base >/dev/null || fail "helm deleted base (the test is wrong)"
ok "helm upgrade --cleanup-on-fail leaves the same objects"

for hr in forced clean dirty; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
