#!/usr/bin/env bash
# spec.test.enable runs the chart's test hooks after install and upgrade:
# condition TestSuccess, results stored in the release record as `helm test`
# stores them; a failing test fails the release unless test.ignoreFailures.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t" "$WORK/f"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n' >"$WORK/t/app.yaml"
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: smoke\n  annotations:\n    "helm.sh/hook": test\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: t\n        image: busybox:1.36\n' >"$WORK/t/smoke.yaml"
sed 's/name: app/name: app-f/' "$WORK/t/app.yaml" >"$WORK/f/app.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: never-passes\n  annotations:\n    "helm.sh/hook": test\nspec:\n  restartPolicy: Never\n  containers:\n  - name: t\n    image: busybox:1.36\n' >"$WORK/f/never.yaml"
start_controller

HR_SPEC='{"test":{"enable":true}}' hr_inline tested tested 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "tested Ready" hr_ready tested
[ "$(hr_cond tested TestSuccess)" = True ] || fail "TestSuccess is not True"
[ "$(kubectl -n "$NS" get job smoke -o jsonpath='{.status.succeeded}')" = 1 ] || fail "the test Job did not run"
ok "tests ran after install: TestSuccess=True"
write_chart "$WORK/c" tested 1.0.0 "$WORK/t"/*.yaml
kubectl create namespace "$NS-oracle" >/dev/null
helm install tested "$WORK/c" -n "$NS-oracle" >/dev/null
helm test tested -n "$NS-oracle" --timeout 120s >/dev/null
norm() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, indent=1))'; }
release_record "$NS-oracle" sh.helm.release.v1.tested.v1 | norm >"$WORK/want.json"
release_record "$NS" sh.helm.release.v1.tested.v1 | norm >"$WORK/got.json"
diff -u "$WORK/want.json" "$WORK/got.json" >&2 || fail "the record after the tests differs from helm install + helm test"
helm uninstall tested -n "$NS-oracle" >/dev/null
ok "the record equals what helm install + helm test store"
helm test tested -n "$NS" --timeout 120s >/dev/null 2>"$WORK/ht.err" || fail "helm test on rudder's release: $(cat "$WORK/ht.err")"
ok "helm test works on the release"

HR_SPEC='{"timeout":"3s","test":{"enable":true}}' hr_inline failing failing 1.0.0 "$WORK/f"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "failing failed" hr_failed failing
[ "$(hr_cond failing TestSuccess)" = False ] || fail "TestSuccess is not False"
hr_cond_msg failing Ready | grep -q "never.yaml" || fail "message does not name the test: $(hr_cond_msg failing Ready)"
ok "a failing test fails the release: $(hr_cond_msg failing Ready | cut -c1-150)"

HR_SPEC='{"timeout":"3s","test":{"enable":true,"ignoreFailures":true}}' hr_inline ignored ignored 1.0.0 "$WORK/f"/*.yaml |
  sed 's/never-passes/never-passes-2/; s/app-f/app-i/' | kubectl apply -f - >/dev/null
wait_for 60 "ignored Ready" hr_ready ignored
[ "$(hr_cond ignored TestSuccess)" = False ] || fail "TestSuccess is not False with ignoreFailures"
ok "test.ignoreFailures: Ready with TestSuccess=False"
for hr in tested failing ignored; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
