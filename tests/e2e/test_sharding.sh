#!/usr/bin/env bash
# Shards: two controllers on one namespace, each with --watch-label-selector (Flux's
# sharding.fluxcd.io/key) and --leader-elect, each leading a Lease of its own (named after its
# selector); each reconciles only the releases labelled for it, and neither touches an unlabelled
# one. A release relabelled from shard A to shard B is taken over by B without an uninstall (the
# release stays deployed, its history unchanged, its finalizer kept), A no longer acts on it, B
# upgrades it and, when it is deleted, uninstalls it. Selectors are checked at start: rudder
# refuses exactly those the API server refuses.
. "$(dirname "$0")/lib.sh"
KEY=sharding.fluxcd.io/key
SEL_A="$KEY in (shard-a)"
SEL_B="$KEY in (shard-b)"
start_shard() { # LOG SELECTOR; sets SHARD_PID
  "$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$KUBECONFIG" --namespace "$NS" --log-level debug \
    --storage-path "$WORK/charts" --watch-label-selector "$2" --leader-elect --leader-election-namespace "$NS" \
    --leader-election-lease-duration 4s --leader-election-renew-deadline 3s --leader-election-retry-period 500ms \
    >"$1" 2>&1 &
  SHARD_PID=$!
  EXTRA_PIDS+=("$SHARD_PID")
}
lease_of() { printf 'rudder-controller-%s' "$(printf '%s' "$1" | sha256sum | cut -c1-10)"; }

# ---- the selector is checked at start, as the API server checks it (the oracle: a list with it)
for sel in "$KEY" "!$KEY" "$KEY in (a, b)" "$KEY notin (a),app=web" "a=b,c==d,e!=f" "k=" "x>1" \
  "$KEY in a" "k in ()" "k in (a" "a=b," "a/b/c=1" "Bad.Prefix/k" "-a" "a=-b" "x>y" "a b"; do
  if kubectl get configmaps -n "$NS" -l "$sel" >/dev/null 2>&1; then server=accepted; else server=refused; fi
  set +e
  "$RUDDER_BIN" controller --watch-label-selector "$sel" --kubeconfig "$WORK/no-such-kubeconfig" >"$WORK/sel.out" 2>&1
  rc=$?
  set -e
  if [ "$rc" = 2 ]; then ours=refused; else ours=accepted; fi
  [ "$server" = "$ours" ] || fail "selector '$sel': the API server $server it, rudder $ours it: $(cat "$WORK/sel.out")"
  if [ "$ours" = refused ]; then grep -q "^rudder controller: --watch-label-selector \"$sel\": at character [0-9]*: " "$WORK/sel.out" ||
    fail "selector '$sel': no clear error: $(cat "$WORK/sel.out")"; fi
done
ok "--watch-label-selector: rudder refuses at start exactly the selectors the API server refuses, naming the character"

start_shard "$WORK/a.log" "$SEL_A"; pid_a=$SHARD_PID
start_shard "$WORK/b.log" "$SEL_B"; pid_b=$SHARD_PID
lease_a=$(lease_of "$SEL_A"); lease_b=$(lease_of "$SEL_B")
holder() { kubectl -n "$NS" get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
wait_for 30 "shard A leads its Lease $lease_a" bash -c "[ -n \"\$(kubectl -n $NS get lease $lease_a -o jsonpath='{.spec.holderIdentity}')\" ]"
wait_for 30 "shard B leads its Lease $lease_b" bash -c "[ -n \"\$(kubectl -n $NS get lease $lease_b -o jsonpath='{.spec.holderIdentity}')\" ]"
grep -q "became leader" "$WORK/a.log" && grep -q "became leader" "$WORK/b.log" || fail "not both shards lead"
! kubectl -n "$NS" get lease rudder-controller >/dev/null 2>&1 || fail "a shard took the unsharded Lease rudder-controller"
ok "each shard leads a Lease of its own ($lease_a, $lease_b)"

mkdir -p "$WORK/t"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  v: {{ .Values.v | quote }}\n' >"$WORK/t/cm.yaml"
hr() { # NAME SHARD V: a HelmRelease labelled for SHARD ("" for none)
  HR_SPEC="{\"values\": {\"v\": \"$3\"}}" hr_inline "$1" app 1.0.0 "$WORK/t/cm.yaml" | python3 -c '
import json, sys
o = json.load(sys.stdin)
if sys.argv[1]: o["metadata"]["labels"] = {"sharding.fluxcd.io/key": sys.argv[1]}
print(json.dumps(o))' "$2" | kubectl apply -f - >/dev/null
}
hr a1 shard-a 1
hr b1 shard-b 1
hr none "" 1
wait_for 60 "a1 Ready" hr_ready a1
wait_for 60 "b1 Ready" hr_ready b1
acted() { grep -E "msg=action .*release=$NS/$2( |$)" "$1" | grep -c . || true; } # LOG NAME: actions taken
[ "$(acted "$WORK/a.log" a1)" = 1 ] && [ "$(acted "$WORK/b.log" a1)" = 0 ] || fail "a1: actions A $(acted "$WORK/a.log" a1), B $(acted "$WORK/b.log" a1)"
[ "$(acted "$WORK/b.log" b1)" = 1 ] && [ "$(acted "$WORK/a.log" b1)" = 0 ] || fail "b1: actions A $(acted "$WORK/a.log" b1), B $(acted "$WORK/b.log" b1)"
! grep -q "release=$NS/b1" "$WORK/a.log" && ! grep -q "release=$NS/a1" "$WORK/b.log" || fail "a shard looked at the other's release"
ok "each release is installed by its own shard only (the other never looks at it), both Ready"
sleep 2
[ -z "$(hr_field none '{.status}')" ] && [ "$(helm_status helm none)" = absent ] && ! grep -q "release=$NS/none" "$WORK/a.log" "$WORK/b.log" ||
  fail "an unlabelled release was touched: $(hr_field none '{.status}')"
ok "an unlabelled release belongs to neither shard: untouched"

# ---- a1 moves from shard A to shard B
a_lines=$(wc -l <"$WORK/a.log")
kubectl -n "$NS" label helmrelease a1 --overwrite "$KEY=shard-b" >/dev/null
wait_for 30 "shard B to reconcile a1" grep -q "release=$NS/a1" "$WORK/b.log"
sleep 3
wait_for 30 "a1 Ready under B" hr_ready a1
[ "$(helm_history helm a1)" = "1:deployed" ] || fail "the move changed the history: $(helm_history helm a1)"
kubectl -n "$NS" get helmrelease a1 -o jsonpath='{.metadata.finalizers}' | grep -q rudder.dev/finalizer || fail "a1 lost its finalizer"
[ "$(cm_data "$NS" a1 v)" = 1 ] || fail "a1's ConfigMap is gone"
[ "$(acted "$WORK/b.log" a1)" = 0 ] || fail "B took an action on a release already in sync"
tail -n +$((a_lines + 1)) "$WORK/a.log" | grep -E "release=$NS/a1" | grep -qE "msg=action|uninstall" && fail "A acted on a1 after the move"
ok "relabelled to shard B: B takes a1 over as it is (deployed, history 1:deployed, finalizer kept), A does nothing"

hr a1 shard-b 2
wait_for 60 "a1 upgraded by B" bash -c "[ \"\$(kubectl -n $NS get cm a1 -o jsonpath='{.data.v}')\" = 2 ]"
wait_for 30 "a1 Ready" hr_ready a1
[ "$(helm_history helm a1)" = "1:superseded 2:deployed" ] || fail "history after B's upgrade: $(helm_history helm a1)"
[ "$(acted "$WORK/b.log" a1)" = 1 ] || fail "B did not upgrade a1"
tail -n +$((a_lines + 1)) "$WORK/a.log" | grep "release=$NS/a1" >"$WORK/a.after" || true
tail -n +$((a_lines + 1)) "$WORK/a.log" | grep "/helmreleases/a1" >>"$WORK/a.after" || true
# The watch told A the object left its selection (a delete, to A): one reconcile that finds it gone
# and forgets it, sending nothing.
[ "$(grep -c 'msg=reconcile ' "$WORK/a.after" || true)" -le 1 ] && ! grep -v 'msg=reconcile ' "$WORK/a.after" >&2 ||
  fail "A did more than forget a1 after the move"
ok "B upgrades a1 (revision 2); A only forgot it when it left its selection (no request about it since)"

kubectl -n "$NS" delete helmrelease a1 --wait=false >/dev/null
wait_for 60 "a1 uninstalled by B" bash -c "! kubectl -n $NS get helmrelease a1 >/dev/null 2>&1"
[ "$(helm_status helm a1)" = absent ] && ! kubectl -n "$NS" get cm a1 >/dev/null 2>&1 || fail "a1 not uninstalled"
grep -E "release=$NS/a1" "$WORK/b.log" | grep -q "action=uninstall" || fail "B did not uninstall a1"
ok "deleting a1 now: its new shard uninstalls it and removes the finalizer"

kill -TERM "$pid_a" "$pid_b"
wait "$pid_a" || fail "shard A exited with status $? on SIGTERM"
wait "$pid_b" || fail "shard B exited with status $? on SIGTERM"
