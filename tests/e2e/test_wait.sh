#!/usr/bin/env bash
# Waiting for readiness as Helm 4 does (kstatus on every applied object, from
# watch events): a Deployment is waited for until available; one that can never
# become ready fails the release after spec.timeout, the message naming the
# object and why; install.disableWait does not wait. Waits after the first share
# one watch of the kind (rudder_readiness_waits_total{watch="shared"}) and judge
# the same way. A release that only waits gives its reconcile slot to the next
# one (--max-waiting), unless told not to (--max-waiting 0).
. "$(dirname "$0")/lib.sh"

deploy() { # NAME [NODE-SELECTOR]
  printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n' "$1" "$1" "$1"
  [ -n "${2:-}" ] && printf '      nodeSelector: {%s}\n' "$2"
  printf '      containers:\n      - name: c\n        image: busybox:1.36\n'
}
mkdir -p "$WORK/ok" "$WORK/ok2" "$WORK/stuck"
deploy web >"$WORK/ok/web.yaml"
deploy web2 >"$WORK/ok2/web2.yaml"
deploy stuck 'nowhere: "true"' >"$WORK/stuck/stuck.yaml"
CTRL_ARGS=(--metrics-addr 127.0.0.1:0)
start_controller
# waits WATCH: the controller's rudder_readiness_waits_total{watch="WATCH"} (0 when absent).
waits() {
  local a
  a=$(sed -n 's/.*msg="serving HTTP".*address=\([0-9.:]*\).*/\1/p' "$CTRL_LOG" | head -1)
  [ -n "$a" ] || fail "the controller did not log its metrics address"
  curl -fsS "http://$a/metrics" | awk -v w="$1" '$1 == "rudder_readiness_waits_total{watch=\"" w "\"}" {print $2; f=1} END {if (!f) print 0}'
}

hr_inline web web 1.0.0 "$WORK/ok"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "web Ready" hr_ready web
[ "$(kubectl -n "$NS" get deployment web -o jsonpath='{.status.availableReplicas}')" = 2 ] ||
  fail "Ready before the Deployment was available"
ok "Ready only once the Deployment is available"

# The first wait started the shared watch of Deployments (and watched on its own meanwhile); the
# next one waits on the shared watch.
shared0=$(waits shared)
hr_inline web2 web2 1.0.0 "$WORK/ok2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "web2 Ready" hr_ready web2
[ "$(kubectl -n "$NS" get deployment web2 -o jsonpath='{.status.availableReplicas}')" = 2 ] ||
  fail "web2 Ready before the Deployment was available"
shared1=$(waits shared)
[ "${shared1%.*}" -gt "${shared0%.*}" ] || fail "web2's wait was not on the shared watch: shared $shared0 -> $shared1, own $(waits own)"
ok "a wait on the shared watch: Ready only once available (waits shared $shared1, own $(waits own))"

HR_SPEC='{"timeout":"5s"}' hr_inline stuck stuck 1.0.0 "$WORK/stuck"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "stuck failed" hr_failed stuck
msg=$(hr_cond_msg stuck Ready)
echo "$msg" | grep -q "resource Deployment/$NS/stuck not ready. status: InProgress" || fail "message does not name the object: $msg"
[ "$(helm_history helm stuck)" = "1:failed" ] || fail "history: $(helm_history helm stuck)"
ok "a Deployment that never becomes available fails the release after the timeout: $msg"

HR_SPEC='{"install":{"disableWait":true}}' hr_inline nowait nowait 1.0.0 "$WORK/stuck"/*.yaml | sed 's/"stuck"/"nowait-d"/g; s/stuck/nowaitd/g' | kubectl apply -f - >/dev/null
wait_for 60 "nowait Ready" hr_ready nowait
[ "$(helm_status helm nowait)" = "deployed 1" ] || fail "nowait not deployed"
ok "install.disableWait: deployed without waiting"
for hr in web web2 stuck nowait; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller

# With one reconcile slot (--concurrency 1), a release waiting for a Deployment that cannot become
# ready gives the slot away: the next release is installed while it waits.
mkdir -p "$WORK/cm"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: "1"\n' >"$WORK/cm/cm.yaml"
stuckd() { sed "s/stuck/$1/g" "$WORK/stuck/stuck.yaml" >"$WORK/$1.yaml"; echo "$WORK/$1.yaml"; }
CTRL_ARGS=(--concurrency 1)
start_controller
HR_SPEC='{"timeout":"90s"}' hr_inline parked parked 1.0.0 "$(stuckd parked)" | kubectl apply -f - >/dev/null
wait_for 60 "parked's Deployment applied" kubectl -n "$NS" get deployment parked
hr_inline cm1 cm1 1.0.0 "$WORK/cm/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "cm1 Ready while parked waits" hr_ready cm1
hr_failed parked && fail "parked failed before its timeout"
[ "$(helm_status helm parked)" = "pending-install 1" ] || fail "parked is not waiting: $(helm_status helm parked)"
ok "--concurrency 1: a release waiting for readiness does not hold up the next (parked $(helm_status helm parked))"
kubectl -n "$NS" delete helmrelease parked cm1 --wait=false >/dev/null
wait_for 60 "parked and cm1 uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller

# --max-waiting 0: the waiting release holds its slot, as a Helm client's wait does: the next
# release is not started before the first one's wait has failed.
CTRL_ARGS=(--concurrency 1 --max-waiting 0)
start_controller
HR_SPEC='{"timeout":"10s"}' hr_inline held held 1.0.0 "$(stuckd held)" | kubectl apply -f - >/dev/null
wait_for 60 "held's Deployment applied" kubectl -n "$NS" get deployment held
hr_inline cm2 cm2 1.0.0 "$WORK/cm/cm.yaml" | kubectl apply -f - >/dev/null
deadline=$((SECONDS + 60))
until hr_failed held; do
  [ "$SECONDS" -lt "$deadline" ] || fail "held did not fail after its 10s timeout"
  kubectl -n "$NS" get configmap cm2 >/dev/null 2>&1 && fail "cm2 was installed while held waited in the only slot"
  sleep 0.5
done
wait_for 60 "cm2 Ready after held failed" hr_ready cm2
ok "--max-waiting 0: the next release waits for the slot of the one waiting for readiness"
kubectl -n "$NS" delete helmrelease held cm2 --wait=false >/dev/null
wait_for 60 "held and cm2 uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
