#!/usr/bin/env bash
# Remediation: a failed upgrade is rolled back and retried while retries remain,
# then the release is Stalled (RetriesExceeded) until its inputs change; a failed
# install is uninstalled between attempts. The API server's own rejection is the
# failure (a ConfigMap key it refuses), so nothing here is simulated.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/good" "$WORK/bad" "$WORK/fixed"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  v: "1"\n' >"$WORK/good/settings.yaml"
# A data key the API server rejects (422): the upgrade fails at apply time.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  "not a key!": "2"\n' >"$WORK/bad/settings.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  v: "3"\n' >"$WORK/fixed/settings.yaml"
# the same for the other releases, each with objects of its own
for r in inst plain; do
  mkdir -p "$WORK/$r-good" "$WORK/$r-bad"
  sed "s/name: settings/name: $r-settings/" "$WORK/good/settings.yaml" >"$WORK/$r-good/settings.yaml"
  sed "s/name: settings/name: $r-settings/" "$WORK/bad/settings.yaml" >"$WORK/$r-bad/settings.yaml"
done
start_controller

# 1. Upgrade remediation by rollback, one retry.
spec='{"upgrade":{"remediation":{"retries":1,"strategy":"rollback"}}}'
HR_SPEC=$spec hr_inline up up 1.0.0 "$WORK/good"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "up Ready" hr_ready up
HR_SPEC=$spec hr_inline up up 2.0.0 "$WORK/bad"/*.yaml | kubectl apply -f - >/dev/null
wait_for 90 "up Stalled" bash -c "[ \"\$(kubectl -n $NS get helmrelease up -o jsonpath='{.status.conditions[?(@.type==\"Stalled\")].status}')\" = True ]"
[ "$(hr_cond up Ready)" = False ] || fail "a stalled release is Ready"
[ "$(hr_field up '{.status.conditions[?(@.type=="Stalled")].reason}')" = RetriesExceeded ] || fail "Stalled reason is not RetriesExceeded"
[ "$(hr_cond up Remediated)" = True ] || fail "Remediated is not True"
[ "$(hr_field up '{.status.upgradeFailures}')" = 2 ] || fail "upgradeFailures: $(hr_field up '{.status.upgradeFailures}')"
[ "$(helm_history helm up)" = "1:superseded 2:failed 3:deployed 4:failed" ] || fail "history: $(helm_history helm up)"
[ "$(cm_data "$NS" settings v)" = 1 ] || fail "the rollback did not keep revision 1's objects"
ok "failed upgrade: rolled back (revision 3), retried once (revision 4), then Stalled/RetriesExceeded"
msg=$(hr_cond_msg up Ready)
echo "$msg" | grep -q "not a key" || fail "message does not say what the server refused: $msg"
ok "the message says why: $msg"
# Stalled means no more attempts with these inputs.
sleep 3
[ "$(helm_history helm up)" = "1:superseded 2:failed 3:deployed 4:failed" ] || fail "a stalled release was retried: $(helm_history helm up)"
ok "no further attempt while stalled"
# New inputs: the counts start again, and the release recovers.
HR_SPEC=$spec hr_inline up up 3.0.0 "$WORK/fixed"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "up Ready after the fix" hr_ready up
[ "$(hr_cond up Stalled)" = "" ] || fail "Stalled still set after recovery"
[ "$(cm_data "$NS" settings v)" = 3 ] || fail "the fix was not applied"
[ "$(hr_field up '{.status.upgradeFailures}')" = 0 ] || fail "failure count not reset"
ok "new inputs recover the release (revision 5); Stalled cleared, counts reset"

# 2. Install remediation by uninstall, one retry.
HR_SPEC='{"install":{"remediation":{"retries":1}}}' hr_inline inst inst 1.0.0 "$WORK/inst-bad"/*.yaml | kubectl apply -f - >/dev/null
wait_for 90 "inst Stalled" bash -c "[ \"\$(kubectl -n $NS get helmrelease inst -o jsonpath='{.status.conditions[?(@.type==\"Stalled\")].status}')\" = True ]"
[ "$(hr_field inst '{.status.installFailures}')" = 2 ] || fail "installFailures: $(hr_field inst '{.status.installFailures}')"
[ "$(helm_history helm inst)" = "1:failed" ] || fail "history: $(helm_history helm inst)"
hr_events inst | grep -q Remediated || fail "no Remediated event: $(hr_events inst)"
ok "failed install: uninstalled and retried once, then Stalled; the last failed attempt kept for inspection"

# 3. Without remediation (the default) a failure stalls at once, and a failed
# upgrade leaves the previous revision deployed.
hr_inline plain plain 1.0.0 "$WORK/plain-good"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "plain Ready" hr_ready plain
hr_inline plain plain 2.0.0 "$WORK/plain-bad"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "plain failed" hr_failed plain
[ "$(helm_history helm plain)" = "1:deployed 2:failed" ] || fail "history: $(helm_history helm plain)"
[ "$(hr_cond plain Stalled)" = True ] || fail "not Stalled without retries"
ok "no remediation: Stalled after the first failure; revision 1 stays deployed"

for hr in up inst plain; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
[ -z "$(kubectl -n "$NS" get secrets -l owner=helm -o name)" ] || fail "release records left behind"
ok "deleted; no records left"
stop_controller
