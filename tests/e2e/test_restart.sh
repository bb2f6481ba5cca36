#!/usr/bin/env bash
# The controller is stopped (killed, or cleanly) and restarted in the middle of
# installs, upgrades and deletes, and still converges: every release ends with
# exactly one deployed revision and correct objects.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t"
mk_release() { # NAME DATA
  cat >"$WORK/t/cm.yaml" <<Y
apiVersion: v1
kind: ConfigMap
metadata:
  name: $1-cm
data:
  value: "$2"
Y
  cat >"$WORK/t/svc.yaml" <<Y
apiVersion: v1
kind: Service
metadata:
  name: $1-svc
spec:
  ports:
  - port: 80
Y
  hr_inline "$1" app 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
}
all_ready() { for r in "$@"; do hr_ready "$r" || return 1; done; }

# Installs interrupted by SIGKILL as soon as the first release record appears.
for i in 1 2 3 4 5 6; do mk_release "r$i" v1; done
start_controller
wait_for 60 "a first release record" bash -c "[ -n \"\$(kubectl -n $NS get secrets -l owner=helm -o name)\" ]"
stop_controller KILL
start_controller
wait_for 120 "all releases Ready after kill" all_ready r1 r2 r3 r4 r5 r6
for i in 1 2 3 4 5 6; do
  [ "$(helm_history helm "r$i")" = "1:deployed" ] || fail "r$i history after restart: $(helm_history helm "r$i")"
done
ok "installs interrupted by SIGKILL converge to revision 1 deployed"

# Upgrades made while the controller is down are picked up on start.
stop_controller
for i in 1 2 3; do mk_release "r$i" v2; done
start_controller
wait_for 120 "upgrades after restart" all_ready r1 r2 r3
for i in 1 2 3; do
  [ "$(helm_history helm "r$i")" = "1:superseded 2:deployed" ] || fail "r$i history: $(helm_history helm "r$i")"
  [ "$(kubectl -n "$NS" get configmap "r$i-cm" -o jsonpath='{.data.value}')" = v2 ] || fail "r$i not upgraded"
done
ok "upgrades made while stopped are applied on start"

# Upgrades interrupted mid-flight.
for i in 4 5 6; do mk_release "r$i" v3; done
sleep 0.2
stop_controller KILL
start_controller
wait_for 120 "interrupted upgrades converge" all_ready r4 r5 r6
for i in 4 5 6; do
  h=$(helm_history helm "r$i")
  [ "$h" = "1:superseded 2:deployed" ] || fail "r$i history after interrupted upgrade: $h"
  [ "$(kubectl -n "$NS" get configmap "r$i-cm" -o jsonpath='{.data.value}')" = v3 ] || fail "r$i not upgraded"
done
ok "interrupted upgrades converge with one deployed revision"

# Deletes made while stopped, and deletes interrupted.
stop_controller
kubectl -n "$NS" delete helmrelease r1 r2 --wait=false >/dev/null
start_controller
kubectl -n "$NS" delete helmrelease r3 r4 --wait=false >/dev/null
sleep 0.2
stop_controller KILL
start_controller
wait_for 120 "deleted releases gone" bash -c "! kubectl -n $NS get helmrelease r1 r2 r3 r4 2>/dev/null | grep -q ."
for i in 1 2 3 4; do
  [ "$(kubectl -n "$NS" get secrets -l owner=helm,name="r$i" -o name | wc -l)" = 0 ] || fail "r$i records left"
  kubectl -n "$NS" get configmap "r$i-cm" >/dev/null 2>&1 && fail "r$i objects left"
done
all_ready r5 r6 || fail "r5/r6 no longer Ready"
ok "deletes across restarts remove objects and records"
stop_controller
