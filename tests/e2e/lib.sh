# Shared helpers for the end-to-end tests. Each test runs in a namespace of its
# own with a controller of its own watching only that namespace, against the
# cluster that the e2e.cluster-up fixture started.
set -euo pipefail
: "${RUDDER_E2E_STATE:?run through ctest (the e2e.cluster-up fixture provides the cluster)}"
[ -f "$RUDDER_E2E_STATE/env" ] || { echo "FAIL: no local control plane: $RUDDER_E2E_STATE/env is missing (e2e.cluster-up failed?)" >&2; exit 1; }
. "$RUDDER_E2E_STATE/env"
for tool in kubectl helm helm3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not on PATH (tests/cluster/build should provide it)" >&2; exit 1; }
done
RUDDER_BIN=${RUDDER_BIN:?}
TEST_NAME=$(basename "$0" .sh)
NS="e2e-${TEST_NAME#test_}-$$"
NS=${NS//_/-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rudder-e2e.XXXXXX")
CTRL_PID=
EXTRA_PIDS=() # other processes a test started; killed on exit
EXTRA_NAMESPACES=() # other namespaces a test created; deleted on exit
CTRL_LOG="$WORK/controller.log"
CTRL_ARGS=() # extra controller flags a test adds
# Controllers of tests run side by side (and with other checkouts' tests): none binds the default
# metrics and health ports unless a test asks (a later --metrics-addr in CTRL_ARGS wins).
NO_TELEMETRY=(--metrics-addr 0 --health-addr 0)
checks=0

log() { echo "--- $*" >&2; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { checks=$((checks + 1)); echo "ok $checks - $*"; }

# wait_for SECONDS DESCRIPTION CMD...: polls CMD until it succeeds.
wait_for() {
  local secs=$1 desc=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || fail "timed out after ${secs}s waiting for: $desc"
    sleep 0.3
  done
}

start_controller() {
  "$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$KUBECONFIG" --namespace "$NS" --log-level debug \
    --storage-path "$WORK/charts" ${CTRL_ARGS[@]+"${CTRL_ARGS[@]}"} >>"$CTRL_LOG" 2>&1 &
  CTRL_PID=$!
  log "controller started (pid $CTRL_PID)"
}

# stop_controller [SIGNAL]: TERM by default (clean shutdown must exit 0).
stop_controller() {
  local sig=${1:-TERM}
  [ -n "$CTRL_PID" ] || return 0
  kill -"$sig" "$CTRL_PID" 2>/dev/null || true
  local rc=0
  wait "$CTRL_PID" || rc=$?
  CTRL_PID=
  if [ "$sig" = TERM ] && [ "$rc" != 0 ]; then fail "controller exited with status $rc on SIGTERM"; fi
  log "controller stopped ($sig, status $rc)"
}

# cleanup [RC]: RC is the test's status when a test's own EXIT trap ran other commands first (their
# status must not become the test's): trap 'rc=$?; ...; cleanup $rc' EXIT.
cleanup() {
  local rc=${1:-$?}
  stop_controller KILL
  if ((${#EXTRA_PIDS[@]})); then kill -KILL "${EXTRA_PIDS[@]}" 2>/dev/null || true; fi
  if [ $rc != 0 ]; then
    echo "=== controller log (last 80 lines) ===" >&2
    tail -n 80 "$CTRL_LOG" >&2 2>/dev/null || true
    kubectl -n "$NS" get helmreleases -o yaml >&2 2>/dev/null || true
    kubectl -n "$NS" get helmrequests.app.alauda.io -o yaml >&2 2>/dev/null || true
  fi
  # Leave nothing behind: drop our finalizers, then the namespaces (a finalizer left in one of them
  # would hold the namespace, and the kind's CRD for e2e.crd_deleted, for ever).
  local n hr
  for n in "$NS" ${EXTRA_NAMESPACES[@]+"${EXTRA_NAMESPACES[@]}"}; do
    for hr in $(kubectl -n "$n" get helmreleases -o name 2>/dev/null) $(kubectl -n "$n" get helmrequests.app.alauda.io -o name 2>/dev/null); do
      kubectl -n "$n" patch "$hr" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
    done
  done
  kubectl delete namespace "$NS" "$NS-oracle" ${EXTRA_NAMESPACES[@]+"${EXTRA_NAMESPACES[@]}"} --wait=false >/dev/null 2>&1 || true
  rm -rf "$WORK"
  if [ $rc = 0 ]; then echo "$checks passed, 0 failed"; else echo "$checks passed, 1 failed"; fi
  exit $rc
}
trap cleanup EXIT

kubectl create namespace "$NS" >/dev/null

# hr_cond NAME TYPE: prints status of condition TYPE.
hr_cond() { kubectl -n "$NS" get helmrelease "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}"; }
hr_cond_msg() { kubectl -n "$NS" get helmrelease "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].message}"; }
hr_field() { kubectl -n "$NS" get helmrelease "$1" -o jsonpath="$2"; }

# hr_ready NAME: Ready=True for the current generation.
hr_ready() {
  local gen obs
  gen=$(hr_field "$1" '{.metadata.generation}')
  obs=$(hr_field "$1" '{.status.observedGeneration}')
  [ "$gen" = "$obs" ] && [ "$(hr_cond "$1" Ready)" = True ]
}
# hr_failed NAME: Ready=False for the current generation.
hr_failed() {
  local gen obs
  gen=$(hr_field "$1" '{.metadata.generation}')
  obs=$(hr_field "$1" '{.status.observedGeneration}')
  [ "$gen" = "$obs" ] && [ "$(hr_cond "$1" Ready)" = False ]
}

# helm_status HELM RELEASE: "<status> <revision>" as `helm ls` reports it.
helm_status() {
  local all=() # helm 4 lists every status by default; helm 3 needs --all
  [ "$1" = helm3 ] && all=(--all)
  "$1" ls -n "$NS" "${all[@]}" -o json --filter "^$2\$" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join([r[0]["status"], str(r[0]["revision"])]) if r else "absent")'
}

# helm_history HELM RELEASE: "1:superseded 2:deployed".
helm_history() {
  "$1" history -n "$NS" "$2" -o json |
    python3 -c 'import json,sys; print(" ".join("%d:%s" % (h["revision"], h["status"]) for h in json.load(sys.stdin)))'
}

# write_chart DIR NAME VERSION FILE...: a chart directory whose templates are
# copies of the given files (for helm template/install as the oracle).
write_chart() {
  local dir=$1 name=$2 version=$3; shift 3
  mkdir -p "$dir/templates"
  printf 'apiVersion: v2\nname: %s\nversion: %s\n' "$name" "$version" >"$dir/Chart.yaml"
  for f in "$@"; do cp "$f" "$dir/templates/"; done
}

# deployment_template FILE: a chart template of one Deployment named after the release (one
# replica on its own line, one container of image registry.local/web:1.0), for releases whose
# workload drift or readiness a test watches.
deployment_template() {
  cat >"$1" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: web
          image: registry.local/web:1.0
Y
}

# hr_inline NAME CHART VERSION FILE...: a HelmRelease manifest carrying the
# given template files inline (file name -> text). $HR_SPEC (JSON, optional) is
# merged into its spec.
hr_inline() {
  local name=$1 chart=$2 version=$3; shift 3
  HR_SPEC=${HR_SPEC:-} python3 - "$name" "$NS" "$chart" "$version" "$@" <<'PY'
import json, os, sys
name, ns, chart, version, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
templates = {os.path.basename(f): open(f).read() for f in files}
spec = {"chart": {"inline": {"chartName": chart, "chartVersion": version, "templates": templates}}}
spec.update(json.loads(os.environ.get("HR_SPEC") or "{}"))
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}

# hr_events NAME: the reasons of the Events recorded for HelmRelease NAME.
hr_events() {
  kubectl -n "$NS" get events --field-selector "involvedObject.name=$1,involvedObject.kind=HelmRelease" \
    -o jsonpath='{.items[*].reason}'
}

# cm_data NS NAME KEY: a ConfigMap's data value ("" when absent).
cm_data() { kubectl -n "$1" get configmap "$2" -o jsonpath="{.data.$3}" 2>/dev/null || true; }

# release_record NS SECRET: the release JSON stored in a release Secret, with
# times and the namespace masked so that records of two installs compare.
release_record() {
  kubectl -n "$1" get secret "$2" -o jsonpath='{.data.release}' | base64 -d | base64 -d | gunzip |
    sed -E 's/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)"/"<time>"/g; s/"namespace":"[^"]*"/"namespace":"<ns>"/g'
}

# oracle_manifest RELEASE CHARTDIR OUT: the manifest the helm CLI itself stores
# for the chart, from a real `helm install` into a namespace of its own; its
# masked release record goes to OUT.record.
oracle_manifest() {
  kubectl create namespace "$NS-oracle" >/dev/null 2>&1 || true
  helm uninstall "$1" -n "$NS-oracle" >/dev/null 2>&1 || true
  helm install "$1" "$2" -n "$NS-oracle" >/dev/null
  helm get manifest "$1" -n "$NS-oracle" >"$3"
  release_record "$NS-oracle" "sh.helm.release.v1.$1.v1" >"$3.record"
  helm uninstall "$1" -n "$NS-oracle" >/dev/null
}

# servers_env: loads the chart servers' SRV_* keys (scripts with '# fixtures: ... servers').
servers_env() {
  : "${RUDDER_SERVERS_STATE:?run through ctest (the e2e.servers-up fixture provides the chart servers)}"
  [ -f "$RUDDER_SERVERS_STATE/env" ] || fail "no chart servers: $RUDDER_SERVERS_STATE/env is missing (e2e.servers-up failed?)"
  . "$RUDDER_SERVERS_STATE/env"
}

# b64 FILE: the file's bytes in base64, on one line (for a Secret's data).
b64() { base64 -w0 <"$1"; }
