#!/usr/bin/env bash
# Two controllers with --leader-elect: exactly one leads and reconciles; when
# it stops cleanly it releases the Lease and the other takes over at once;
# Events are recorded for the releases.
. "$(dirname "$0")/lib.sh"

lease_holder() { kubectl -n "$NS" get lease rudder-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
start_elector() { # LOGFILE; sets ELECTOR_PID
  "$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$KUBECONFIG" --namespace "$NS" --leader-elect \
    --leader-election-namespace "$NS" --leader-election-lease-duration 4s --leader-election-renew-deadline 3s \
    --leader-election-retry-period 500ms >"$1" 2>&1 &
  ELECTOR_PID=$!
  EXTRA_PIDS+=("$ELECTOR_PID")
}
start_elector "$WORK/a.log"; pid_a=$ELECTOR_PID
start_elector "$WORK/b.log"; pid_b=$ELECTOR_PID

mkdir -p "$WORK/t"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: "1"\n' >"$WORK/t/cm.yaml"
hr_inline one app 1.0.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease one Ready" hr_ready one
wait_for 10 "a lease holder" bash -c "[ -n \"\$(kubectl -n $NS get lease rudder-controller -o jsonpath='{.spec.holderIdentity}')\" ]"
leaders=$(grep -l '"became leader"\|msg="became leader"' "$WORK/a.log" "$WORK/b.log" | wc -l)
[ "$leaders" = 1 ] || fail "$leaders controllers became leader"
ok "exactly one of two controllers leads ($(lease_holder))"
if grep -q "became leader" "$WORK/a.log"; then leader=$pid_a; other_log=$WORK/b.log; leader_log=$WORK/a.log
else leader=$pid_b; other_log=$WORK/a.log; leader_log=$WORK/b.log; fi
grep -q "release=$NS/one" "$other_log" && fail "the follower reconciled"
ok "only the leader reconciled"
kubectl -n "$NS" get events --field-selector involvedObject.kind=HelmRelease,involvedObject.name=one,reason=InstallSucceeded \
  -o jsonpath='{.items[0].message}' | grep -q "Helm install succeeded" || fail "no InstallSucceeded event"
ok "an InstallSucceeded event was recorded"

kill -TERM "$leader"
rc=0; wait "$leader" || rc=$?
[ "$rc" = 0 ] || fail "the leader exited with status $rc on SIGTERM"
grep -q "shutting down" "$leader_log" || fail "the leader did not shut down cleanly"
start=$SECONDS
wait_for 10 "the other controller to lead" grep -q "became leader" "$other_log"
ok "the follower took over in $((SECONDS - start))s after a clean stop"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n' >"$WORK/t/cm.yaml"
hr_inline two app 1.0.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease two Ready (new leader)" hr_ready two
ok "the new leader reconciles"
