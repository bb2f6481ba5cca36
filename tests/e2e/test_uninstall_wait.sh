#!/usr/bin/env bash
# Uninstall waits until the release's objects are really gone (Helm's uninstall --wait; Flux waits
# unless spec.uninstall.disableWait), within spec.uninstall.timeout (default spec.timeout). An object
# held by a finalizer: after the timeout Ready=False names it, the records and the HelmRelease stay;
# once the finalizer goes the next attempt finishes. With disableWait the HelmRelease goes at once.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t"
cmf() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n' "$1" >"$WORK/t/$1.yaml"; }
start_controller

# 1. An object whose finalizer never goes: the uninstall fails after uninstall.timeout, naming it.
cmf held-cm; cmf free-cm
HR_SPEC='{"timeout":"5m","uninstall":{"timeout":"3s"}}' hr_inline held held 1.0.0 "$WORK/t/held-cm.yaml" "$WORK/t/free-cm.yaml" |
  kubectl apply -f - >/dev/null
wait_for 60 "held Ready" hr_ready held
kubectl -n "$NS" patch configmap held-cm --type merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
kubectl -n "$NS" delete helmrelease held --wait=false >/dev/null
reason() { kubectl -n "$NS" get helmrelease "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}'; }
wait_for 60 "held UninstallFailed" bash -c "[ \"\$(kubectl -n $NS get helmrelease held -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = UninstallFailed ]"
[ "$(hr_cond held Ready)" = False ] || fail "Ready is not False"
msg=$(hr_cond_msg held Ready)
echo "$msg" | grep -q "resource ConfigMap/$NS/held-cm still exists. status: Terminating, message: Resource scheduled for deletion" ||
  fail "the message does not name the object: $msg"
echo "$msg" | grep -q "within 3s" || fail "the message does not give the uninstall timeout: $msg"
kubectl -n "$NS" get configmap free-cm >/dev/null 2>&1 && fail "the other object was not deleted"
[ "$(helm_history helm held)" = "1:deployed" ] || fail "the records were touched: $(helm_history helm held)"
kubectl -n "$NS" get helmrelease held >/dev/null || fail "the HelmRelease went while its objects are still there"
ok "an object held by a finalizer: Ready=False after uninstall.timeout, naming it: ${msg:0:200}"

# 2. The finalizer goes: the next attempt finishes the uninstall.
kubectl -n "$NS" patch configmap held-cm --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
wait_for 120 "held uninstalled" bash -c "! kubectl -n $NS get helmrelease held >/dev/null 2>&1"
[ -z "$(kubectl -n "$NS" get secrets -l owner=helm,name=held -o name)" ] || fail "records left"
kubectl -n "$NS" get configmap held-cm >/dev/null 2>&1 && fail "held-cm still there"
ok "once the object is gone the uninstall finishes (records deleted, HelmRelease gone)"

# 3. The wait really waits: a finalizer removed while the uninstall waits lets it finish at once.
cmf slow-cm
HR_SPEC='{"uninstall":{"timeout":"2m"}}' hr_inline slow slow 1.0.0 "$WORK/t/slow-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "slow Ready" hr_ready slow
kubectl -n "$NS" patch configmap slow-cm --type merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
kubectl -n "$NS" delete helmrelease slow --wait=false >/dev/null
wait_for 30 "slow-cm terminating" bash -c "[ -n \"\$(kubectl -n $NS get configmap slow-cm -o jsonpath='{.metadata.deletionTimestamp}')\" ]"
sleep 2
kubectl -n "$NS" get helmrelease slow >/dev/null || fail "the HelmRelease went before its object"
[ "$(helm_history helm slow)" = "1:deployed" ] || fail "the records went before the object: $(helm_history helm slow)"
kubectl -n "$NS" patch configmap slow-cm --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
wait_for 20 "slow uninstalled" bash -c "! kubectl -n $NS get helmrelease slow >/dev/null 2>&1"
ok "the uninstall waits for the object (watched) and finishes as soon as it is gone"

# 4. disableWait: the HelmRelease goes while the object is still terminating.
cmf nowait-cm
HR_SPEC='{"uninstall":{"disableWait":true}}' hr_inline nowait nowait 1.0.0 "$WORK/t/nowait-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "nowait Ready" hr_ready nowait
kubectl -n "$NS" patch configmap nowait-cm --type merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
kubectl -n "$NS" delete helmrelease nowait --wait=false >/dev/null
wait_for 30 "nowait uninstalled" bash -c "! kubectl -n $NS get helmrelease nowait >/dev/null 2>&1"
[ -n "$(kubectl -n "$NS" get configmap nowait-cm -o jsonpath='{.metadata.deletionTimestamp}')" ] || fail "nowait-cm not being deleted"
kubectl -n "$NS" patch configmap nowait-cm --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
ok "uninstall.disableWait: the release is gone without waiting for its objects"
stop_controller
