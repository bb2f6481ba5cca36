#!/usr/bin/env bash
# Leadership lost in the middle of an install: the controller cancels what it
# has in flight and writes nothing more (the pending record it left is not
# touched, no status is written), exits non-zero, and the next leader takes its
# own interrupted operation over and finishes it.
. "$(dirname "$0")/lib.sh"

start_elector() { # LOGFILE; sets ELECTOR_PID
  "$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$KUBECONFIG" --namespace "$NS" --leader-elect --log-level debug \
    --leader-election-namespace "$NS" --leader-election-lease-duration 4s --leader-election-renew-deadline 3s \
    --leader-election-retry-period 500ms >"$1" 2>&1 &
  ELECTOR_PID=$!
  EXTRA_PIDS+=("$ELECTOR_PID")
}
mkdir -p "$WORK/t"
# A pre-install hook that takes until we let it go: the install is in flight meanwhile.
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: gate\n  annotations:\n    "helm.sh/hook": pre-install\nspec:\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: busybox:1.36\n' >"$WORK/t/gate.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n' >"$WORK/t/cm.yaml"

start_elector "$WORK/a.log"; pid_a=$ELECTOR_PID
wait_for 20 "a leads" grep -q "became leader" "$WORK/a.log"
HR_SPEC='{"timeout":"5m"}' hr_inline gated gated 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "the install waiting on its hook" bash -c "kubectl -n $NS get pod gate >/dev/null 2>&1"
[ "$(kubectl -n "$NS" get secret sh.helm.release.v1.gated.v1 -o jsonpath='{.metadata.labels.status}')" = pending-install ] ||
  fail "no pending-install record while the hook runs"
ok "install in flight (pre-install hook running, record pending-install)"

# Someone else takes the lease.
rv_before=$(kubectl -n "$NS" get secret sh.helm.release.v1.gated.v1 -o jsonpath='{.metadata.resourceVersion}')
hr_rv_before=$(kubectl -n "$NS" get helmrelease gated -o jsonpath='{.metadata.resourceVersion}')
kubectl -n "$NS" patch lease rudder-controller --type merge \
  -p "{\"spec\":{\"holderIdentity\":\"thief\",\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\",\"leaseDurationSeconds\":30}}" >/dev/null
rc=0; wait "$pid_a" || rc=$?
[ "$rc" != 0 ] || fail "the controller exited 0 after losing its lease"
grep -q "lost leadership" "$WORK/a.log" || fail "the controller did not say it lost leadership"
ok "lease lost: the controller stopped (status $rc)"
[ "$(kubectl -n "$NS" get secret sh.helm.release.v1.gated.v1 -o jsonpath='{.metadata.resourceVersion}')" = "$rv_before" ] ||
  fail "the release record was written after the lease was lost"
[ "$(kubectl -n "$NS" get helmrelease gated -o jsonpath='{.metadata.resourceVersion}')" = "$hr_rv_before" ] ||
  fail "the HelmRelease was written after the lease was lost"
ok "nothing was written after the lease was lost"

# The next leader takes its own interrupted install over.
kubectl -n "$NS" delete lease rudder-controller >/dev/null
start_elector "$WORK/b.log"
wait_for 20 "b leads" grep -q "became leader" "$WORK/b.log"
# (kwok never completes a bare Pod, so this attempt runs without the hook.)
HR_SPEC='{"timeout":"5m","install":{"disableHooks":true}}' hr_inline gated gated 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "gated Ready" hr_ready gated
[ "$(helm_history helm gated)" = "1:deployed" ] || fail "history: $(helm_history helm gated) (the interrupted revision was not taken over)"
ok "the next leader took its own pending revision over and deployed it (history 1:deployed)"
kubectl -n "$NS" delete helmrelease gated --wait=false >/dev/null
wait_for 60 "gated gone" bash -c "! kubectl -n $NS get helmrelease gated >/dev/null 2>&1"
