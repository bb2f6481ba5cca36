#!/usr/bin/env bash
# Deleting the HelmRelease CRD deletes every HelmRelease in the cluster; that is
# not taken as a request to uninstall every release: the releases stay
# installed (and keep working with the helm CLI), only the finalizers go. The
# CRD is installed again afterwards for the tests that follow.
. "$(dirname "$0")/lib.sh"
crd=$RUDDER_SOURCE_DIR/deploy/crds/rudder.dev_helmreleases.yaml
restore() {
  local rc=$?
  kubectl apply -f "$crd" >/dev/null 2>&1 || true
  kubectl wait --for=condition=Established crd/helmreleases.rudder.dev --timeout=60s >/dev/null 2>&1 || true
  cleanup $rc
}
trap restore EXIT

mkdir -p "$WORK/t"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keepme\ndata:\n  k: v\n' >"$WORK/t/cm.yaml"
start_controller
hr_inline survivor survivor 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "survivor Ready" hr_ready survivor
ok "release installed"

kubectl delete crd helmreleases.rudder.dev --wait=false >/dev/null
wait_for 90 "CRD gone" bash -c "! kubectl get crd helmreleases.rudder.dev >/dev/null 2>&1"
ok "CRD deleted (the finalizers were released)"
[ "$(helm_status helm survivor)" = "deployed 1" ] || fail "the release was uninstalled: $(helm_status helm survivor)"
kubectl -n "$NS" get configmap keepme >/dev/null 2>&1 || fail "the release's objects were deleted"
grep -q "the kind's CRD is being deleted" "$CTRL_LOG" || fail "the controller did not say why it left the release"
ok "the release and its objects are still there"
kubectl apply -f "$crd" >/dev/null
kubectl wait --for=condition=Established crd/helmreleases.rudder.dev --timeout=60s >/dev/null
helm uninstall survivor -n "$NS" >/dev/null
stop_controller
