#!/usr/bin/env bash
# The helm CLI on what rudder writes: rudder installs and upgrades a release with hooks and a test
# hook; then helm (v4) on one release and helm3 on another run history, get hooks, get values,
# get manifest, test, rollback and uninstall, all successfully, and rudder's view follows (the
# CLI's rollback revision shows in status.history before rudder brings the release back to its spec).
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t"
job() { # NAME HOOK
  printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  annotations:\n    "helm.sh/hook": %s\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: run\n        image: busybox:1.36\n' "$1" "$2"
}
start_controller
hrs=(cli4 cli3)
declare -A tool=([cli4]=helm [cli3]=helm3)
release_yaml() { # NAME V
  rm -f "$WORK/t"/*
  job "$1-pre" pre-install,pre-upgrade >"$WORK/t/pre.yaml"
  job "$1-test" test >"$WORK/t/test.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-post\n  annotations:\n    "helm.sh/hook": post-upgrade\ndata:\n  k: v\n' "$1" >"$WORK/t/post.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-app\ndata:\n  v: {{ .Values.v | quote }}\n' "$1" >"$WORK/t/app.yaml"
  HR_SPEC="{\"test\":{\"enable\":true},\"values\":{\"v\":\"$2\"}}" hr_inline "$1" "$1" "1.0.$2" "$WORK/t"/*.yaml
}
for hr in "${hrs[@]}"; do release_yaml "$hr" 1 | kubectl apply -f - >/dev/null; done
for hr in "${hrs[@]}"; do wait_for 120 "$hr Ready" hr_ready "$hr"; done
for hr in "${hrs[@]}"; do release_yaml "$hr" 2 | kubectl apply -f - >/dev/null; done
for hr in "${hrs[@]}"; do
  wait_for 40 "$hr upgraded" bash -c "[ \"\$(kubectl -n $NS get helmrelease $hr -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"
  wait_for 60 "$hr Ready after the upgrade" hr_ready "$hr"
done
ok "rudder installed and upgraded both releases (hooks and tests ran)"

for hr in "${hrs[@]}"; do
  h=${tool[$hr]}
  [ "$(helm_history "$h" "$hr")" = "1:superseded 2:deployed" ] || fail "$h history: $(helm_history "$h" "$hr")"
  n=$("$h" get hooks "$hr" -n "$NS" | grep -c '^# Source:') || true
  [ "$n" = 3 ] || fail "$h get hooks lists $n hooks"
  "$h" get values "$hr" -n "$NS" -o json | python3 -c 'import json,sys; v=json.load(sys.stdin); sys.exit(v != {"v": "2"})' ||
    fail "$h get values: $("$h" get values "$hr" -n "$NS" -o json)"
  "$h" get manifest "$hr" -n "$NS" | grep -q "name: $hr-app" || fail "$h get manifest: $("$h" get manifest "$hr" -n "$NS")"
  "$h" get manifest "$hr" -n "$NS" | grep -q 'v: "2"' || fail "$h get manifest is not revision 2's"
  "$h" test "$hr" -n "$NS" --timeout 120s >"$WORK/test.out" 2>&1 || fail "$h test: $(cat "$WORK/test.out")"
  grep -q "Phase:.*Succeeded" "$WORK/test.out" || fail "$h test output: $(cat "$WORK/test.out")"
  ok "$h: history, get hooks, get values, get manifest and test work on $hr"

  # rudder's server-side apply owns the fields: helm 4 (server-side apply too) needs --force-conflicts,
  # as against any other field manager; helm3 patches client-side.
  force=(); [ "$h" = helm ] && force=(--force-conflicts)
  "$h" rollback "$hr" 1 -n "$NS" --timeout 120s "${force[@]}" >"$WORK/rb.out" 2>&1 || fail "$h rollback: $(cat "$WORK/rb.out")"
  # rudder sees the CLI's revision 3 (it shows in status.history), then brings the release back to its spec.
  wait_for 60 "$hr revision 3 in status.history" bash -c "kubectl -n $NS get helmrelease $hr -o jsonpath='{.status.history[*].version}' | tr ' ' '\n' | grep -qx 3"
  wait_for 120 "$hr corrected to the spec" bash -c "[ \"\$(kubectl -n $NS get helmrelease $hr -o jsonpath='{.status.lastAppliedRevision}')\" = 4 ]"
  wait_for 60 "$hr Ready after the correction" hr_ready "$hr"
  hist=$(helm_history "$h" "$hr")
  [ "$hist" = "1:superseded 2:superseded 3:superseded 4:deployed" ] || fail "$h history after the rollback: $hist"
  "$h" history "$hr" -n "$NS" -o json | python3 -c 'import json,sys; h=json.load(sys.stdin); sys.exit(h[2]["description"] != "Rollback to 1")' ||
    fail "revision 3 is not the CLI's rollback"
  hr_events "$hr" | grep -q ChangedOutside || fail "no ChangedOutside event"
  [ "$(cm_data "$NS" "$hr-app" v)" = 2 ] || fail "the spec's values are not back"
  ok "$h rollback works; rudder shows revision 3 and corrects to the spec (revision 4): $hist"

  # The CLI uninstalls a release rudder no longer acts on (suspended); the HelmRelease then goes quietly.
  kubectl -n "$NS" patch helmrelease "$hr" --type merge -p '{"spec":{"suspend":true}}' >/dev/null
  sleep 1
  "$h" uninstall "$hr" -n "$NS" --timeout 120s >"$WORK/un.out" 2>&1 || fail "$h uninstall: $(cat "$WORK/un.out")"
  [ "$(helm_status "$h" "$hr")" = absent ] || fail "$h still lists $hr"
  kubectl -n "$NS" get configmap "$hr-app" >/dev/null 2>&1 && fail "$h uninstall left $hr-app"
  [ -z "$(kubectl -n "$NS" get secrets -l "owner=helm,name=$hr" -o name)" ] || fail "records left"
  kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null
  wait_for 60 "$hr gone" bash -c "! kubectl -n $NS get helmrelease $hr >/dev/null 2>&1"
  ok "$h uninstall works on $hr; the HelmRelease is then deleted without trouble"
done
stop_controller
