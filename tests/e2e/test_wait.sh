#!/usr/bin/env bash
# Waiting for readiness as Helm 4 does (kstatus on every applied object, from
# watch events): a Deployment is waited for until available; one that can never
# become ready fails the release after spec.timeout, the message naming the
# object and why; install.disableWait does not wait.
. "$(dirname "$0")/lib.sh"

deploy() { # NAME [NODE-SELECTOR]
  printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n' "$1" "$1" "$1"
  [ -n "${2:-}" ] && printf '      nodeSelector: {%s}\n' "$2"
  printf '      containers:\n      - name: c\n        image: busybox:1.36\n'
}
mkdir -p "$WORK/ok" "$WORK/stuck"
deploy web >"$WORK/ok/web.yaml"
deploy stuck 'nowhere: "true"' >"$WORK/stuck/stuck.yaml"
start_controller

hr_inline web web 1.0.0 "$WORK/ok"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "web Ready" hr_ready web
[ "$(kubectl -n "$NS" get deployment web -o jsonpath='{.status.availableReplicas}')" = 2 ] ||
  fail "Ready before the Deployment was available"
ok "Ready only once the Deployment is available"

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
for hr in web stuck nowait; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
