#!/usr/bin/env bash
# Helm hooks: pre/post-install, pre/post-upgrade, pre/post-rollback,
# pre/post-delete, ordered by weight (then kind, then name), with delete
# policies; hook Jobs are waited for until complete (kwok completes their pods).
# The release records equal what `helm install` / `helm upgrade` store for the
# same chart (times and namespace aside: hooks' last_run included). A hook that
# never completes fails the release with Helm's message after the timeout.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t"
job() { # NAME EVENTS WEIGHT [POLICY]
  printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  annotations:\n    "helm.sh/hook": %s\n    "helm.sh/hook-weight": "%s"\n' "$1" "$2" "$3"
  [ -n "${4:-}" ] && printf '    "helm.sh/hook-delete-policy": %s\n' "$4"
  printf 'spec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: run\n        image: busybox:1.36\n        command: ["true"]\n'
}
hookcm() { # NAME EVENTS WEIGHT [POLICY]
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations:\n    "helm.sh/hook": %s\n    "helm.sh/hook-weight": "%s"\n' "$1" "$2" "$3"
  [ -n "${4:-}" ] && printf '    "helm.sh/hook-delete-policy": %s\n' "$4"
  printf 'data:\n  k: v\n'
}
job pre-job pre-install,pre-upgrade -5 >"$WORK/t/pre-job.yaml"
hookcm pre-cm pre-install,pre-upgrade 0 hook-succeeded >"$WORK/t/pre-cm.yaml"
job post-job post-install,post-upgrade 5 hook-succeeded >"$WORK/t/post-job.yaml"
hookcm post-cm post-install 10 >"$WORK/t/post-cm.yaml"
hookcm rb-cm pre-rollback,post-rollback 0 >"$WORK/t/rb-cm.yaml"
hookcm del-cm pre-delete 0 >"$WORK/t/del-cm.yaml"
hookcm test-cm test 0 >"$WORK/t/test-cm.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "1"\n' >"$WORK/t/app.yaml"
start_controller

# Install: hooks run, the record equals helm install's.
hr_inline hooked hooked 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "hooked Ready" hr_ready hooked
kubectl -n "$NS" get job pre-job >/dev/null || fail "pre-install Job not created"
[ "$(kubectl -n "$NS" get job pre-job -o jsonpath='{.status.succeeded}')" = 1 ] || fail "pre-install Job did not complete"
kubectl -n "$NS" get configmap pre-cm >/dev/null 2>&1 && fail "hook-succeeded hook pre-cm not deleted"
kubectl -n "$NS" get job post-job >/dev/null 2>&1 && fail "hook-succeeded hook post-job not deleted"
kubectl -n "$NS" get configmap post-cm >/dev/null || fail "post-install hook post-cm missing"
kubectl -n "$NS" get configmap test-cm >/dev/null 2>&1 && fail "a test hook ran on install"
ok "install hooks ran, Jobs waited for, delete policies honoured"
write_chart "$WORK/c" hooked 1.0.0 "$WORK/t"/*.yaml
kubectl create namespace "$NS-oracle" >/dev/null
helm install hooked "$WORK/c" -n "$NS-oracle" --timeout 120s >/dev/null
norm() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps(r, sort_keys=True, indent=1))'; }
release_record "$NS-oracle" sh.helm.release.v1.hooked.v1 | norm >"$WORK/want1.json"
release_record "$NS" sh.helm.release.v1.hooked.v1 | norm >"$WORK/got1.json"
diff -u "$WORK/want1.json" "$WORK/got1.json" >&2 || fail "the install record differs from helm install's"
ok "install record (hooks and their last_run) equals helm install's"
[ "$(helm get hooks hooked -n "$NS" | grep -c '^# Source:')" = 7 ] || fail "helm get hooks does not list 7 hooks"
ok "helm get hooks lists them"

# Upgrade.
sed -i 's/v: "1"/v: "2"/' "$WORK/t/app.yaml"
hr_inline hooked hooked 1.0.1 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "upgrade" bash -c "[ \"\$(kubectl -n $NS get helmrelease hooked -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"
wait_for 30 "hooked Ready after upgrade" hr_ready hooked
write_chart "$WORK/c2" hooked 1.0.1 "$WORK/t"/*.yaml
helm upgrade hooked "$WORK/c2" -n "$NS-oracle" --timeout 120s >/dev/null
release_record "$NS-oracle" sh.helm.release.v1.hooked.v2 | norm >"$WORK/want2.json"
release_record "$NS" sh.helm.release.v1.hooked.v2 | norm >"$WORK/got2.json"
diff -u "$WORK/want2.json" "$WORK/got2.json" >&2 || fail "the upgrade record differs from helm upgrade's"
ok "upgrade record equals helm upgrade's"

# Rollback runs the rollback hooks of the target revision.
kubectl -n "$NS" delete configmap rb-cm --ignore-not-found >/dev/null
HR_SPEC='{"rollback":{"toRevision":1}}' hr_inline hooked hooked 1.0.1 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 120 "rollback" bash -c "[ \"\$(kubectl -n $NS get helmrelease hooked -o jsonpath='{.status.lastAppliedRevision}')\" = 3 ]"
kubectl -n "$NS" get configmap rb-cm >/dev/null || fail "rollback hooks did not run"
ok "rollback hooks ran"

# Delete: pre-delete hook runs; the hooks' own objects are not the release's.
kubectl -n "$NS" delete helmrelease hooked --wait=false >/dev/null
wait_for 120 "hooked uninstalled" bash -c "! kubectl -n $NS get helmrelease hooked >/dev/null 2>&1"
kubectl -n "$NS" get configmap del-cm >/dev/null || fail "pre-delete hook did not run"
kubectl -n "$NS" get configmap app >/dev/null 2>&1 && fail "release object left after uninstall"
ok "pre-delete hook ran on uninstall"
helm uninstall hooked -n "$NS-oracle" >/dev/null

# A hook that never completes: the release fails with Helm's message after the timeout.
mkdir -p "$WORK/slow"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: never\n  annotations:\n    "helm.sh/hook": pre-install\nspec:\n  restartPolicy: Never\n  containers:\n  - name: run\n    image: busybox:1.36\n' >"$WORK/slow/never.yaml"
cp "$WORK/t/app.yaml" "$WORK/slow/"
HR_SPEC='{"timeout":"3s"}' hr_inline slow slow 1.0.0 "$WORK/slow"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "slow failed" hr_failed slow
msg=$(hr_cond_msg slow Ready)
echo "$msg" | grep -q "warning: Hook pre-install slow/templates/never.yaml failed" || fail "not Helm's hook failure: $msg"
[ "$(helm_history helm slow)" = "1:failed" ] || fail "history: $(helm_history helm slow)"
kubectl -n "$NS" get configmap app -o jsonpath='{.data.v}' 2>/dev/null | grep -q 2 && true
ok "a hook that never completes fails the release: $msg"

# disableHooks: hooks stored, not run.
HR_SPEC='{"install":{"disableHooks":true}}' hr_inline quiet quiet 1.0.0 "$WORK/slow"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "quiet Ready" hr_ready quiet
kubectl -n "$NS" get pod never >/dev/null 2>&1 && [ "$(kubectl -n "$NS" get pod never -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" = quiet ] && fail "a disabled hook ran"
[ "$(helm get hooks quiet -n "$NS" | grep -c '^# Source:')" = 1 ] || fail "the disabled hook is not stored"
ok "install.disableHooks: hooks stored, not run"
for hr in slow quiet; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
