#!/usr/bin/env bash
# Which kinds the controller serves: every kind whose CRD is installed, found when it starts and
# whenever a CRD appears later. Started with the Microservice CRD absent, the controller serves
# HelmReleases and says once that Microservice is not served; the CRD applied, Microservices are
# reconciled without a restart; the CRD deleted, their reconciler stops (the releases stay) and
# starts again when the CRD is back. `--kinds HelmRelease`: Microservices are left alone while
# HelmReleases are served; an unknown kind is refused at start, listing the known ones. The
# Microservice CRD is installed again at the end (the cluster is shared).
. "$(dirname "$0")/lib.sh"
crd=$RUDDER_SOURCE_DIR/deploy/crds/micro.hello.com_microservices.yaml
crd_name=microservices.micro.hello.com
restore() {
  local rc=$?
  kubectl apply -f "$crd" >/dev/null 2>&1 || true
  kubectl wait --for=condition=Established "crd/$crd_name" --timeout=60s >/dev/null 2>&1 || true
  for ms in $(kubectl -n "$NS" get microservices -o name 2>/dev/null); do
    kubectl -n "$NS" patch "$ms" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
  (exit $rc)
  cleanup
}
trap restore EXIT

ms_yaml() { # NAME: a Microservice holding one ConfigMap
  printf '{"apiVersion":"micro.hello.com/v1alpha1","kind":"Microservice","metadata":{"name":"%s","namespace":"%s"},"spec":{"resources":"apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: {{ .Release.Name }}-cm\\ndata:\\n  k: v\\n"}}' "$1" "$NS"
}
ms_phase() { kubectl -n "$NS" get microservice "$1" -o jsonpath='{.status.phase}'; }
# served_lines KIND: how many times the controller said it serves KIND.
served_lines() { grep -c "msg=\"serving kind\" kind=$1 " "$CTRL_LOG" || true; }
mkdir -p "$WORK/t"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  k: v\n' >"$WORK/t/cm.yaml"

# An unknown kind is refused before anything starts, naming the known ones.
rc=0
out=$("$RUDDER_BIN" controller --kubeconfig "$KUBECONFIG" --kinds HelmRelease,Widget 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "--kinds Widget: exit status $rc, want 2"
[ "$out" = 'rudder controller: --kinds: unknown kind "Widget"; the known kinds are HelmRelease (rudder.dev), Microservice (micro.hello.com), HelmRequest (app.alauda.io), HelmRepository (rudder.dev), ChartRepo (app.alauda.io)' ] ||
  fail "--kinds Widget: $out"
ok "--kinds with an unknown kind: exit 2, the known kinds listed"
out=$("$RUDDER_BIN" controller --help)
grep -q -- '--kinds KIND' <<<"$out" || fail "--help does not document --kinds"
grep -q '^Kinds: HelmRelease (rudder.dev), Microservice (micro.hello.com), HelmRequest (app.alauda.io), HelmRepository (rudder.dev), ChartRepo (app.alauda.io)' <<<"$out" ||
  fail "--help does not list the kinds: $out"
ok "--help documents --kinds and lists the known kinds"

kubectl delete crd "$crd_name" --wait=true --timeout=60s >/dev/null
! kubectl get crd "$crd_name" >/dev/null 2>&1 || fail "the Microservice CRD is still there"
ok "Microservice CRD deleted for the test"

start_controller
wait_for 30 "HelmRelease served" bash -c "grep -q 'msg=\"serving kind\" kind=HelmRelease ' '$CTRL_LOG'"
wait_for 30 "Microservice said not served" bash -c "grep -q 'msg=\"kind not served\" kind=Microservice ' '$CTRL_LOG'"
grep -q "msg=\"kind not served\" kind=Microservice crd=$crd_name version=v1alpha1 reason=\"its CRD is not installed\"" "$CTRL_LOG" ||
  fail "the log does not say why Microservice is not served: $(grep 'kind not served' "$CTRL_LOG")"
[ "$(served_lines Microservice)" = 0 ] || fail "Microservice served without its CRD"
ok "without its CRD, Microservice is not served (logged: its CRD is not installed)"
hr_inline hr1 hr1 1.0.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "hr1 Ready" hr_ready hr1
ok "HelmReleases are served meanwhile"
n=$(grep -c 'msg="kind not served" kind=Microservice ' "$CTRL_LOG") || true
[ "$n" = 1 ] || fail "'not served' logged $n times, want once"
ok "the missing CRD is logged once"

# The CRD appears: Microservices are served, without a restart.
pid=$CTRL_PID
kubectl apply -f "$crd" >/dev/null
kubectl wait --for=condition=Established "crd/$crd_name" --timeout=60s >/dev/null
wait_for 30 "Microservice served" bash -c "grep -q 'msg=\"serving kind\" kind=Microservice ' '$CTRL_LOG'"
wait_for 30 "the Microservice API served" kubectl -n "$NS" get microservices
ms_yaml ms1 | kubectl apply -f - >/dev/null
wait_for 60 "ms1 Deployed" bash -c "[ \"\$(kubectl -n $NS get microservice ms1 -o jsonpath='{.status.phase}')\" = Deployed ]"
[ "$(helm_status helm ms1)" = "deployed 1" ] || fail "helm ls ms1: $(helm_status helm ms1)"
[ "$(cm_data "$NS" ms1-cm k)" = v ] || fail "ms1's ConfigMap missing"
kill -0 "$pid" 2>/dev/null && [ "$CTRL_PID" = "$pid" ] || fail "the controller is not the one started before the CRD"
ok "CRD applied: a Microservice is reconciled by the running controller (helm ls: deployed 1)"

# The CRD deleted while served: the release stays, the reconciler stops; back again with the CRD.
kubectl delete crd "$crd_name" --wait=true --timeout=90s >/dev/null
wait_for 30 "the reconciler stopped" bash -c "grep -q 'msg=\"kind.s CRD deleted: its reconciler stops until the CRD is installed again\" kind=Microservice' '$CTRL_LOG'"
[ "$(helm_status helm ms1)" = "deployed 1" ] || fail "ms1 was uninstalled with its CRD: $(helm_status helm ms1)"
ok "CRD deleted: the Microservice reconciler stops, the release stays installed"
kubectl apply -f "$crd" >/dev/null
kubectl wait --for=condition=Established "crd/$crd_name" --timeout=60s >/dev/null
wait_for 30 "Microservice served again" bash -c "[ \"\$(grep -c 'msg=\"serving kind\" kind=Microservice ' '$CTRL_LOG')\" = 2 ]"
wait_for 30 "the Microservice API served" kubectl -n "$NS" get microservices
ms_yaml ms2 | kubectl apply -f - >/dev/null
wait_for 60 "ms2 Deployed" bash -c "[ \"\$(kubectl -n $NS get microservice ms2 -o jsonpath='{.status.phase}')\" = Deployed ]"
ok "CRD installed again: served again without a restart (ms2 Deployed)"
# The release records are watched once for every kind's engine (reconcile/records.h): one list
# although the HelmRelease, HelmRequest and Microservice engines started (Microservice twice).
n=$(grep -c "request=\"GET /api/v1/namespaces/$NS/secrets?limit=500&labelSelector=owner%3Dhelm\"" "$CTRL_LOG") || true
[ "$n" = 1 ] || fail "the release records were listed $n times, want once (one watch shared by the engines)"
ok "one watch of the release records for every kind's engine"
kubectl -n "$NS" delete microservice ms2 --wait=true --timeout=60s >/dev/null
[ "$(helm_status helm ms2)" = absent ] || fail "ms2 not uninstalled: $(helm_status helm ms2)"
helm uninstall ms1 -n "$NS" >/dev/null
stop_controller

# --kinds HelmRelease: Microservices are left alone, HelmReleases served.
from=$(($(wc -l <"$CTRL_LOG") + 1))
CTRL_ARGS=(--kinds HelmRelease)
start_controller
ms_yaml ms3 | kubectl apply -f - >/dev/null
hr_inline hr2 hr2 1.0.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "hr2 Ready" hr_ready hr2
sleep 3 # as long again as hr2 took at most, for ms3 to be (wrongly) picked up
[ -z "$(ms_phase ms3)" ] || fail "ms3 was reconciled: phase $(ms_phase ms3)"
[ -z "$(kubectl -n "$NS" get microservice ms3 -o jsonpath='{.metadata.finalizers}')" ] || fail "ms3 got a finalizer"
[ "$(helm_status helm ms3)" = absent ] || fail "ms3 was installed: $(helm_status helm ms3)"
tail -n +"$from" "$CTRL_LOG" >"$WORK/second.log"
grep -q 'msg="kind not served (not in --kinds)" kind=Microservice ' "$WORK/second.log" || fail "the log does not say Microservice is left out"
grep -q 'msg="serving kind" kind=Microservice ' "$WORK/second.log" && fail "Microservice served despite --kinds HelmRelease"
grep -q 'msg="serving kind" kind=HelmRepository ' "$WORK/second.log" && fail "HelmRepository served despite --kinds HelmRelease"
ok "--kinds HelmRelease: the Microservice is left alone (no status, finalizer or release), HelmReleases served"
kubectl -n "$NS" delete microservice ms3 --wait=true --timeout=30s >/dev/null
stop_controller
