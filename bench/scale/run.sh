#!/usr/bin/env bash
# bench/scale/run.sh - the scale harness (issue 16): N HelmReleases of a
# 4-object chart on a fresh local control plane, and what they cost.
#
#   bench/scale/run.sh [--releases N] [--concurrency C] [--source inline|repo|oci]
#                      [--qps Q] [--interval D] [--namespaces K]
#                      [--poll table|json] [--rudder PATH] [--rudder-arg ARG] [--peer flux]
#                      [--peer-only] [--flux-wait] [--keep-logs DIR]
#                      [--no-upgrade] [--no-restart] [--restart-signal KILL|TERM]
#                      [--floor] [--floor-all] [--floor-user] [--floor-watches] [--floor-concurrency C[,C...]]
#                      [--perf FILE] [--apiserver-profile DIR]
#                      [--kcm-qps Q]
#
#   --releases N      HelmReleases to create (default 100)
#   --concurrency C   the controller's --concurrency (default 10)
#   --source S        where the chart comes from (default inline):
#                     inline: the chart of bench/scale/chart carried in each
#                       object;
#                     repo: the same chart packaged with the real helm into
#                       the chart repository of tests/servers (nginx, plain
#                       HTTP on 127.0.0.1), one HelmRepository per namespace
#                       (made and Ready before the clock starts), the
#                       releases naming it (spec.chart.repository); the run
#                       also prints what nginx served the controller (chart
#                       downloads, index fetches) and the controller's own
#                       count at shutdown (the `chart sources` log line)
#                     oci: the same package pushed with the real `helm push`
#                       to the basic-auth OCI registry of tests/servers
#                       (CNCF distribution, TLS with the test CA), one
#                       oci:// HelmRepository per namespace with its
#                       credentials and CA Secrets; the run prints what the
#                       registry served the controller (tag lists,
#                       manifests, blobs, from its access log)
#   --qps Q           the controller's --qps (default: the controller's own)
#   --perf FILE       record rudder with `perf record -g` (DWARF call graphs,
#                     499 Hz) from the first create until all are Ready into
#                     FILE, and over the upgrade into FILE.upgrade; each flat
#                     profile (symbols over 0.5 %) goes to FILE.txt
#                     (FILE.upgrade.txt) and the log
#   --interval D      the releases' spec.interval, a Go duration (default 1m);
#                     the resync phase watches one such interval
#   --namespaces K    spread the releases over K namespaces (default 4)
#   --poll table|json how the harness lists the releases once a second: the
#                     server-side table with the CRD's Ready column (default)
#                     or whole objects, as `kubectl get -o json` (at 1,000
#                     inline releases ~6 MiB per list, which costs the API
#                     server CPU that then counts in its figure)
#   --rudder PATH     the rudder binary to measure (default: build a
#                     RelWithDebInfo one in ${RUDDER_SCALE_BUILD:-build-scale})
#   --rudder-arg ARG  one more flag for `rudder controller` (repeat for more;
#                     e.g. --rudder-arg=--max-waiting=0)
#   --peer flux       then run the same releases through Flux (helm-controller
#                     and source-controller, built once by flux-build.sh), on a
#                     fresh control plane of its own, the chart served from a
#                     HelmRepository on 127.0.0.1 (python3 -m http.server;
#                     with --source repo the same nginx as rudder's)
#   --peer-only       with --peer: skip rudder's run
#   --flux-wait       keep Flux's readiness waits on (its default; the
#                     harness turns them off unless this is given)
#   --keep-logs DIR   copy the controller's and the API server's logs and the
#                     audit log there before cleaning up
#   --drift MODE      the releases' spec.driftDetection.mode (enabled, warn,
#                     disabled; default: not set, i.e. disabled); with
#                     enabled, after the resync window 20 Deployments are
#                     scaled by hand one at a time, each timed until rudder
#                     has put it back (drift_correction_*), and the drift
#                     watches' cache is printed from the memory line the
#                     controller logs on SIGUSR1 right after
#                     (drift_cache_bytes_per_object)
#   --no-upgrade      skip the upgrade phase (after the resync window: a new
#                     image tag in every release's spec.values, one merge
#                     patch each, timed until each is Ready at its new
#                     generation with lastAppliedRevision 2)
#   --no-restart      skip the restart phase (rudder only; after the upgrade:
#                     the controller stopped with --restart-signal, default
#                     KILL, and started again with the same command line by
#                     measure.py; time until /readyz says synced and until
#                     no request has come for 10 s, and the writes it sent)
#   --kcm-qps Q       kube-controller-manager's client limit, --kube-api-qps Q
#                     --kube-api-burst 2Q (default 500; the stock default is
#                     20, and then its Deployment controller, not the API
#                     server, bounds how fast 1,000 Deployments become ready:
#                     ~1.9 s per wait at 10 installs in flight)
#   --floor           after rudder's run, on the same control plane as the
#                     same user: bench/scale/floor (built with rudder), the
#                     writes of N installs with no controller logic, at each
#                     of --floor-concurrency's in-flight limits (default
#                     10,25,50,100); prints floor_install_seconds (the best)
#                     and rudder_install_ready_over_floor (the ratio); each
#                     phase also until every Deployment is ready
#                     (floor_*_ready_seconds, rudder_*_over_floor_ready)
#   --floor-all       with --floor: then the floor again with every other
#                     request rudder sends (floor --requests all: the
#                     ownership GETs, the finalizer, the upgrade's records
#                     list, the Events), as floor_all_* and
#                     rudder_{install,upgrade}_ready_over_floor_all
#   --floor-user      with --floor: then the floor again with the user's writes
#                     in its windows too (floor --user-writes: each release's
#                     HelmRelease create timed as its install's first write,
#                     the merge patch of its values as its upgrade's, as
#                     measure.py sends them in rudder's windows, 8 at a time
#                     beside the floor's own limit), as
#                     floor_user_* and rudder_*_ready_over_floor_user[_ready];
#                     with --floor-all also floor_all_user_*
#   --floor-watches   with --floor: then the floor with the user's writes and
#                     rudder's watches held open (floor --user-writes
#                     --watches: the HelmReleases, the records' metadata,
#                     Deployments and Ingresses, cluster-wide), as
#                     floor_user_watch_*, and once more with the upgrade's
#                     status patch as rudder wrote it (--upgrade-status, a
#                     history of 2), as floor_user_watch_status_*: what of
#                     rudder's window over the floor's each of those explains
#   --apiserver-profile DIR
#                     the API server's CPU profile (/debug/pprof/profile, its
#                     first --apiserver-profile-seconds, default 20) of
#                     rudder's install and upgrade (DIR/rudder.install.pprof,
#                     DIR/rudder.upgrade.pprof; measure.py) and of every timed
#                     floor phase (DIR/floor_c10_upgrade.pprof, ...;
#                     apiprof.py follow), then `go tool pprof -top` of each
#                     beside it (.txt) and its first lines as # comments
#   --audit-all       audit every user's requests, not only the controllers'
#                     (the harness', the controller manager's, ...; the
#                     figures still count the controllers' only): with
#                     --keep-logs, bench/scale/auditsplit.py then counts each
#                     phase's requests by user, verb and resource (it costs the
#                     API server some CPU: not for timed comparisons)
#
# Starts its own control plane (tests/cluster/up) with an audit log of the
# controller's requests only (bench/scale/audit-policy.yaml), runs
# `rudder controller` as its own user (a client certificate for
# CN=rudder-controller, bound to cluster-admin), and lets
# bench/scale/measure.py create the releases, wait until all are Ready, watch
# one resync interval and delete them. Figures go to stdout as
# `name value unit` lines (lines starting with `#` describe the run);
# progress to stderr. There are no thresholds. Everything it starts is
# stopped, and its temporary directory removed, on every exit path.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

releases=100
concurrency=10
source=inline
qps=""
interval=1m
namespaces=4
poll=table
rudder_bin=""
rudder_extra=()
keep_logs=""
audit_all=0
peer=""
peer_only=0
flux_wait=0
drift=""
upgrade=1
restart=1
restart_signal=KILL
floor=0
floor_all=0
floor_user=0
floor_watches=0
apiprof_dir=""
apiprof_seconds=20
floor_concurrency=10,25,50,100
perf_out=
kcm_qps=500

die() { echo "run.sh: error: $*" >&2; exit 1; }
say() { echo "run.sh: $*" >&2; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--releases) releases=${2:?}; shift ;;
	--concurrency) concurrency=${2:?}; shift ;;
	--source) source=${2:?}; shift ;;
	--qps) qps=${2:?}; shift ;;
	--interval) interval=${2:?}; shift ;;
	--namespaces) namespaces=${2:?}; shift ;;
	--rudder) rudder_bin=${2:?}; shift ;;
	--rudder-arg) rudder_extra+=("${2:?}"); shift ;;
	--keep-logs) keep_logs=${2:?}; shift ;;
	--peer) peer=${2:?}; shift ;;
	--peer-only) peer_only=1 ;;
	--flux-wait) flux_wait=1 ;;
	--drift) drift=${2:?}; shift ;;
	--poll) poll=${2:?}; shift ;;
	--no-upgrade) upgrade=0 ;;
	--no-restart) restart=0 ;;
	--restart-signal) restart_signal=${2:?}; shift ;;
	--floor) floor=1 ;;
	--floor-all) floor_all=1 ;;
	--floor-user) floor_user=1 ;;
	--floor-watches) floor_watches=1 ;;
	--apiserver-profile) apiprof_dir=${2:?}; shift ;;
	--apiserver-profile-seconds) apiprof_seconds=${2:?}; shift ;;
	--audit-all) audit_all=1 ;;
	--perf) perf_out=${2:?}; shift ;;
	--kcm-qps) kcm_qps=${2:?}; shift ;;
	--floor-concurrency) floor_concurrency=${2:?}; shift ;;
	--*=*) a=$1; shift; set -- "${a%%=*}" "${a#*=}" "$@"; continue ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
[[ $releases =~ ^[1-9][0-9]*$ && $releases -le 99999 ]] || die "--releases wants 1..99999, got '$releases'"
[[ $concurrency =~ ^[1-9][0-9]*$ ]] || die "--concurrency wants a positive number, got '$concurrency'"
[[ $namespaces =~ ^[1-9][0-9]*$ ]] || die "--namespaces wants a positive number, got '$namespaces'"
[[ $kcm_qps =~ ^[1-9][0-9]*$ ]] || die "--kcm-qps wants a positive number, got '$kcm_qps'"
[[ -z $qps || $qps =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || die "--qps wants a number, got '$qps'"
case $source in
inline | repo | oci) ;;
*) die "--source wants inline, repo or oci, got '$source'" ;;
esac
[[ $poll == table || $poll == json ]] || die "--poll wants table or json, got '$poll'"
[[ -z $drift || $drift == enabled || $drift == warn || $drift == disabled ]] || die "--drift wants enabled, warn or disabled, got '$drift'"
[[ -z $drift || $peer != flux ]] || die "--drift: rudder only (the Flux run keeps its defaults)"
[[ -z $peer || $peer == flux ]] || die "--peer wants flux, got '$peer'"
[[ $peer_only == 0 || -n $peer ]] || die "--peer-only needs --peer"
[[ $restart_signal == KILL || $restart_signal == TERM ]] || die "--restart-signal wants KILL or TERM, got '$restart_signal'"
[[ $floor_concurrency =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--floor-concurrency wants numbers like 10,25,50, got '$floor_concurrency'"
[[ $floor_all == 0 || $floor == 1 ]] || die "--floor-all needs --floor"
[[ $floor_user == 0 || $floor == 1 ]] || die "--floor-user needs --floor"
[[ $floor_watches == 0 || $floor == 1 ]] || die "--floor-watches needs --floor"
[[ $apiprof_seconds =~ ^[1-9][0-9]*$ ]] || die "--apiserver-profile-seconds wants a positive number, got '$apiprof_seconds'"
if [[ -n $apiprof_dir ]]; then
	mkdir -p "$apiprof_dir" && apiprof_dir=$(cd "$apiprof_dir" && pwd) || die "--apiserver-profile: cannot make $apiprof_dir"
	command -v go >/dev/null || die "--apiserver-profile needs go (go tool pprof)"
fi
[[ $floor == 0 || $peer_only == 0 ]] || die "--floor needs rudder's run (it sends what rudder's install sent)"
((namespaces <= releases)) || namespaces=$releases
interval_s=$(python3 - "$interval" <<'EOF'
import re, sys
d = sys.argv[1]
units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
parts = re.findall(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)", d)
if not parts or "".join(a + b for a, b in parts) != d:
    sys.exit(f"run.sh: --interval wants a Go duration like 1m or 90s, got '{d}'")
print(sum(float(a) * units[b] for a, b in parts))
EOF
) || exit 1

# --- cleanup on every exit path -------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/rudder-scale-XXXXXX")
stop_pids=()   # processes this script started, stopped newest first
clusters=()    # state dirs of clusters this script started
servers=""     # state dir of the chart servers (tests/servers/up), if started
audit_policy=$here/audit-policy.yaml
if ((audit_all)); then # every user at Metadata level, for auditsplit.py
	audit_policy=$work/audit-all.yaml
	printf '%s\n' 'apiVersion: audit.k8s.io/v1' 'kind: Policy' 'omitStages: [RequestReceived]' \
		'rules: [{level: Metadata}]' >"$audit_policy"
fi

# forget_pid PID: PID has been waited for; never signal that number again
# (the kernel may give it to someone else's process).
forget_pid() {
	local p keep=()
	for p in "${stop_pids[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	stop_pids=("${keep[@]}")
}

stop_pid() { # PID (a child of this script, not yet waited for): SIGTERM, up to 10 s, then SIGKILL
	local pid=$1 i
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
	fi
	wait "$pid" 2>/dev/null || true
	forget_pid "$pid"
}

cleanup() {
	local rc=$? i
	trap - EXIT INT TERM HUP
	for ((i = ${#stop_pids[@]} - 1; i >= 0; i--)); do stop_pid "${stop_pids[i]}"; done
	if [[ -n $keep_logs ]]; then
		mkdir -p "$keep_logs"
		cp "$work"/*.log "$keep_logs"/ 2>/dev/null || true
	fi
	for i in "${clusters[@]}"; do
		[[ -d $i ]] && down_cluster "$i"
	done
	[[ -z $servers || ! -d $servers ]] || stop_servers
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- binaries ---------------------------------------------------------------------

if [[ -z $rudder_bin ]]; then
	build=${RUDDER_SCALE_BUILD:-$root/build-scale}
	say "building rudder (RelWithDebInfo) in $build"
	cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRUDDER_E2E=OFF >"$work/build.log" 2>&1 ||
		{ tail -n 30 "$work/build.log" >&2; die "cmake configure failed"; }
	cmake --build "$build" -j"${RUDDER_SCALE_JOBS:-2}" --target rudder rudder_floor >>"$work/build.log" 2>&1 ||
		{ tail -n 30 "$work/build.log" >&2; die "build failed"; }
	rudder_bin=$build/rudder
fi
[[ -x $rudder_bin ]] || die "no rudder executable at $rudder_bin"
rudder_bin=$(cd "$(dirname "$rudder_bin")" && pwd)/$(basename "$rudder_bin")
floor_bin=$(dirname "$rudder_bin")/bench/floor
[[ $floor == 0 || -x $floor_bin ]] || die "--floor: no $floor_bin (cmake --build $(dirname "$rudder_bin") --target rudder_floor)"
bindir=$("$root/tests/cluster/build" | tail -n 1)
kubectl=$bindir/kubectl
if [[ $peer == flux ]]; then
	mapfile -t flux_bins < <("$here/flux-build.sh")
	[[ ${#flux_bins[@]} == 2 ]] || die "flux-build.sh did not give two binaries"
fi

# The chart's values as JSON, as Helm reads them (the project's own renderer
# does the YAML, so the harness needs no YAML library).
mkdir -p "$work/values-chart/templates"
cp "$here/chart/Chart.yaml" "$here/chart/values.yaml" "$work/values-chart/"
echo '{"kind":"ConfigMap","data":{"values":{{ toJson .Values | toJson }}}}' >"$work/values-chart/templates/values.json"
"$rudder_bin" template values "$work/values-chart" | grep '^{' |
	python3 -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["data"]["values"])' >"$work/values.json"

# --- the chart repository (--source repo) -------------------------------------------

# tests/servers/up in $work/servers: nginx serving a Helm chart repository
# (and the other test servers, unused here); bench/scale/chart is packaged
# with the real helm and added to that repository's index by
# tests/servers/publish. Sets servers and the SRV_* variables.
start_servers() {
	servers=$work/servers
	say "starting the chart servers (tests/servers/up $servers)"
	"$root/tests/servers/up" "$servers" >/dev/null 2>"$work/servers-up.log" ||
		{ tail -n 30 "$work/servers-up.log" >&2; die "tests/servers/up failed"; }
	# shellcheck disable=SC1091
	. "$servers/env"
	chart_version=$(sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$here/chart/Chart.yaml")
	chart_tgz=$("$root/tests/servers/publish" "$servers" "$here/chart" "$chart_version" 2>>"$work/servers-up.log") ||
		{ tail -n 30 "$work/servers-up.log" >&2; die "tests/servers/publish $here/chart failed"; }
	say "chart repository at $SRV_HTTP_URL ($(basename "$chart_tgz"), $(stat -c %s "$chart_tgz") bytes)"
}

stop_servers() {
	if [[ -n $keep_logs && -d $servers/logs ]]; then
		mkdir -p "$keep_logs/servers"
		cp -r "$servers"/logs/. "$keep_logs/servers"/ 2>/dev/null || true
	fi
	"$root/tests/servers/down" "$servers" >/dev/null 2>&1 || true
	servers=""
}

nginx_lines() { wc -l <"$SRV_NGINX_LOG"; }

# nginx_figures PEER FROM UA-REGEX: what nginx's access log says it served
# to requests whose user agent matches UA-REGEX, from line FROM+1 on: chart
# archives (GET .../*.tgz), index fetches (GET .../index.yaml: 200, 304).
nginx_figures() {
	tail -n +"$(($2 + 1))" "$SRV_NGINX_LOG" | python3 -c '
import re, sys
peer, ua_re = sys.argv[1], re.compile(sys.argv[2])
tgz = idx200 = idx304 = other = 0
tgz_bytes = idx_bytes = 0
uas = set()
for line in sys.stdin:
    m = re.match(r"(\S+) \"(\S+) (\S+) [^\"]*\" (\d+) (\d+) .* ua=\"([^\"]*)\"$", line.rstrip("\n"))
    if not m or not ua_re.search(m.group(6)):
        continue
    method, path, status, size, ua = m.group(2), m.group(3).split("?")[0], m.group(4), int(m.group(5)), m.group(6)
    uas.add(ua)
    if method == "GET" and path.endswith(".tgz"):
        tgz += 1; tgz_bytes += size
    elif method == "GET" and path.endswith("/index.yaml"):
        if status == "304": idx304 += 1
        else: idx200 += 1
        idx_bytes += size
    else:
        other += 1
print("# %s: nginx user agents: %s" % (peer, ", ".join(sorted(uas)) or "none"))
print(f"{peer}_nginx_chart_downloads {tgz} requests")
print(f"{peer}_nginx_chart_download_bytes {tgz_bytes} B")
print(f"{peer}_nginx_index_fetches {idx200 + idx304} requests")
print(f"{peer}_nginx_index_fetches_200 {idx200} requests")
print(f"{peer}_nginx_index_fetches_304 {idx304} requests")
print(f"{peer}_nginx_index_bytes {idx_bytes} B")
print(f"{peer}_nginx_other_requests {other} requests")
' "$1" "$3"
}

registry_lines() { wc -l <"$SRV_REGISTRY_LOG"; }

# registry_figures PEER FROM UA-REGEX: what the OCI registry's access log (combined format) says
# it served to requests whose user agent matches UA-REGEX, from line FROM+1 on: the API checks
# (GET /v2/), tag lists, manifests, blobs (the chart's layer and its config), and the answers
# that asked for credentials (401) among them.
registry_figures() {
	tail -n +"$(($2 + 1))" "$SRV_REGISTRY_LOG" | python3 -c '
import re, sys
peer, ua_re = sys.argv[1], re.compile(sys.argv[2])
n = {"ping": 0, "tags": 0, "manifests": 0, "blobs": 0, "other": 0}
unauth = blob_bytes = 0
uas = set()
for line in sys.stdin:
    m = re.match(r"\S+ \S+ \S+ \[[^]]*\] \"(\S+) (\S+) [^\"]*\" (\d+) (\d+|-) \"[^\"]*\" \"([^\"]*)\"", line)
    if not m or not ua_re.search(m.group(5)):
        continue
    method, path, status, size, ua = m.group(1), m.group(2).split("?")[0], m.group(3), m.group(4), m.group(5)
    uas.add(ua)
    if status == "401":
        unauth += 1
    if path in ("/v2", "/v2/"):
        n["ping"] += 1
    elif path.endswith("/tags/list"):
        n["tags"] += 1
    elif "/manifests/" in path:
        n["manifests"] += 1
    elif "/blobs/" in path:
        n["blobs"] += 1
        if status == "200" and method == "GET" and size != "-":
            blob_bytes += int(size)
    else:
        n["other"] += 1
print("# %s: registry user agents: %s" % (peer, ", ".join(sorted(uas)) or "none"))
print(f"{peer}_registry_requests {sum(n.values())} requests")
for key, name in (("ping", "api_checks"), ("tags", "tag_lists"), ("manifests", "manifests"), ("blobs", "blobs")):
    print(f"{peer}_registry_{name} {n[key]} requests")
print(f"{peer}_registry_blob_bytes {blob_bytes} B")
print("%s_registry_other_requests %d requests" % (peer, n["other"]))
print(f"{peer}_registry_unauthorized {unauth} requests")
' "$1" "$3"
}

# oci_secrets KUBECONFIG NS: the registry's credentials and CA in NS, as a user keeps them
# (scale-auth: username/password; scale-ca: ca.crt), for the oci:// HelmRepository there.
oci_secrets() {
	"$kubectl" --kubeconfig "$1" -n "$2" create secret generic scale-auth \
		--from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" >/dev/null
	"$kubectl" --kubeconfig "$1" -n "$2" create secret generic scale-ca --from-file=ca.crt="$SRV_CA" >/dev/null
}

# --- one peer on its own control plane ---------------------------------------------

# mint_user STATE NAME: a client certificate for user NAME signed by the
# cluster's CA, a kubeconfig for it in $work/NAME.kubeconfig, and a binding
# to cluster-admin (a controller applies whatever its charts hold).
mint_user() {
	local state=$1 n=$2 pki=$1/pki port
	openssl ecparam -name prime256v1 -genkey -noout -out "$work/$n.key" 2>/dev/null
	openssl req -new -key "$work/$n.key" -subj "/O=rudder:bench/CN=$n" -out "$work/$n.csr" 2>/dev/null
	printf 'basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\n' >"$work/$n.ext"
	openssl x509 -req -in "$work/$n.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
		-set_serial "0x$(openssl rand -hex 16)" -days 2 -sha256 -extfile "$work/$n.ext" -out "$work/$n.crt" 2>/dev/null
	port=$(sed -n 's/^apiserver=//p' "$state/ports")
	(
		umask 077
		cat >"$work/$n.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: scale
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: $n
  user:
    client-certificate-data: $(base64 -w0 <"$work/$n.crt")
    client-key-data: $(base64 -w0 <"$work/$n.key")
contexts:
- name: scale
  context: {cluster: scale, user: $n, namespace: default}
current-context: scale
EOF
	)
	"$kubectl" --kubeconfig "$state/kubeconfig" create clusterrolebinding "bench-$n" \
		--clusterrole=cluster-admin --user="$n" >/dev/null
}

component_pid() { # STATE NAME
	local f
	f=$(ls "$1"/pids/*-"$2".pid 2>/dev/null | head -n 1)
	[[ -n $f ]] || die "no pid file for $2 in $1"
	cat "$f"
}

# wait_watching STATE USER RESOURCE PID LOG: until USER has a watch open on
# RESOURCE (its informers are up), at most 60 s, while PID lives.
wait_watching() {
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$4" 2>/dev/null || { tail -n 20 "$5" >&2; die "$2 (pid $4) exited before it watched $3"; }
		grep -F "\"username\":\"$2\"" "$1/logs/audit.log" 2>/dev/null | grep -F '"verb":"watch"' |
			grep -qF "\"resource\":\"$3\"" && return 0
		sleep 0.1
	done
	tail -n 20 "$5" >&2
	die "$2 opened no watch on $3 within 60 s"
}

start_cluster() { # PEER -> sets state
	state=$work/cluster-$1
	clusters+=("$state")
	say "$1: starting a local control plane in $state"
	RUDDER_CLUSTER_KCM_ARGS="--kube-api-qps=$kcm_qps --kube-api-burst=$((2 * kcm_qps))" \
	RUDDER_CLUSTER_APISERVER_ARGS="--audit-policy-file=$audit_policy --audit-log-path=$state/logs/audit.log --audit-log-format=json --audit-log-maxsize=100000 --audit-log-mode=blocking" \
		"$root/tests/cluster/up" --name "scale-$1-$$" --state-dir "$state" >"$work/up-$1.env" 2>"$work/up-$1.log" ||
		{ tail -n 30 "$work/up-$1.log" >&2; die "tests/cluster/up failed"; }
}

down_cluster() { # STATE: keep its logs if asked, then stop it and remove its state dir
	if [[ -n $keep_logs && -d $1/logs ]]; then
		mkdir -p "$keep_logs/$(basename "$1")"
		cp -r "$1"/logs/. "$keep_logs/$(basename "$1")"/ 2>/dev/null || true
	fi
	"$root/tests/cluster/down" "$1" >/dev/null 2>&1 || true
}

stop_cluster() { down_cluster "$state"; }

measure() { # PEER GROUP/VERSION USER=PID... [-- MEASURE-ARGS...]
	local p=$1 gv=$2 port args=()
	shift 2
	while [[ $# -gt 0 && $1 != -- ]]; do args+=(--controller-pid "$1"); shift; done
	[[ $# == 0 ]] || { shift; args+=("$@"); }
	((upgrade == 0)) || args+=(--upgrade)
	port=$(sed -n 's/^apiserver=//p' "$state/ports")
	# In the background and waited for, so that a signal to this script runs
	# its trap at once (bash runs traps only between foreground commands).
	python3 "$here/measure.py" --peer "$p" --server "https://127.0.0.1:$port" \
		--ca "$state/pki/ca.crt" --cert "$state/pki/admin.crt" --key "$state/pki/admin.key" \
		--releases "$releases" --namespaces "$namespaces" --objects "$work/objects-$p.json" \
		--group-version "$gv" "${args[@]}" \
		--apiserver-pid "$(component_pid "$state" kube-apiserver)" --etcd-pid "$(component_pid "$state" etcd)" \
		--plane-pid "kube-controller-manager=$(component_pid "$state" kube-controller-manager)" \
		--plane-pid "kube-scheduler=$(component_pid "$state" kube-scheduler)" \
		--plane-pid "kwok=$(component_pid "$state" kwok)" \
		--audit-log "$state/logs/audit.log" --interval "$interval_s" --poll "$poll" \
		$([[ $p == rudder && $drift == enabled ]] && echo --drift-edits 20) > >(tee "$work/figures-$p.txt") &
	local mpid=$! rc=0
	stop_pids+=("$mpid")
	wait "$mpid" || rc=$?
	forget_pid "$mpid"
	return "$rc"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Flux: source-controller serves the chart's artifacts to helm-controller
# over HTTP; the chart comes from a HelmRepository (one per namespace) at a
# python3 http.server on 127.0.0.1 holding the chart packaged by the real helm.
run_flux() {
	local sc=${flux_bins[0]} hc=${flux_bins[1]} repo_port storage_port i pid_sc pid_hc pid_http ns
	start_cluster flux
	say "flux: installing the Flux CRDs"
	local crd_args=()
	for i in "$(dirname "$sc")"/crds/*.yaml "$(dirname "$hc")"/crds/*.yaml; do crd_args+=(-f "$i"); done
	"$kubectl" --kubeconfig "$state/kubeconfig" apply --server-side --field-manager=bench-scale "${crd_args[@]}" >/dev/null
	"$kubectl" --kubeconfig "$state/kubeconfig" wait --for=condition=Established --timeout=60s crd --all >/dev/null
	mint_user "$state" flux-source-controller
	mint_user "$state" flux-helm-controller

	mkdir -p "$work/flux-storage"
	local repo_url repo_spec nginx0=0 registry0=0
	if [[ $source == oci ]]; then
		# --source oci: the registry rudder's run used (the same pushed chart), with the same
		# Secrets. An OCI HelmRepository is data for Flux's HelmCharts (no artifact, no Ready).
		repo_url=oci://$SRV_REGISTRY/charts
		registry0=$(registry_lines)
	elif [[ -n $servers ]]; then
		# --source repo: the nginx repository rudder's run used (same index, same archive).
		repo_url=$SRV_HTTP_URL
		nginx0=$(nginx_lines)
	else
		mkdir -p "$work/repo"
		repo_port=$(free_port)
		repo_url=http://127.0.0.1:$repo_port
		"$bindir/helm" package "$here/chart" -d "$work/repo" >/dev/null
		"$bindir/helm" repo index "$work/repo" --url "$repo_url" >/dev/null
		python3 -m http.server --bind 127.0.0.1 --directory "$work/repo" "$repo_port" >"$work/chart-server.log" 2>&1 &
		pid_http=$!
		stop_pids+=("$pid_http")
	fi

	storage_port=$(free_port)
	local common=(--concurrent="$concurrency" --enable-leader-election=false --watch-all-namespaces=true --log-encoding=json)
	[[ -z $qps ]] || common+=(--kube-api-qps="$qps")
	say "flux: $sc ${common[*]} --storage-addr=127.0.0.1:$storage_port"
	KUBECONFIG=$work/flux-source-controller.kubeconfig RUNTIME_NAMESPACE=flux-system \
		"$sc" "${common[@]}" --metrics-addr="127.0.0.1:$(free_port)" --health-addr="127.0.0.1:$(free_port)" --storage-path="$work/flux-storage" \
		--storage-addr="127.0.0.1:$storage_port" --storage-adv-addr="127.0.0.1:$storage_port" \
		>"$work/source-controller.log" 2>&1 &
	pid_sc=$!
	stop_pids+=("$pid_sc")
	say "flux: $hc ${common[*]}"
	KUBECONFIG=$work/flux-helm-controller.kubeconfig RUNTIME_NAMESPACE=flux-system \
		"$hc" "${common[@]}" --metrics-addr="127.0.0.1:$(free_port)" --health-addr="127.0.0.1:$(free_port)" \
		>"$work/helm-controller.log" 2>&1 &
	pid_hc=$!
	stop_pids+=("$pid_hc")
	wait_watching "$state" flux-source-controller helmrepositories "$pid_sc" "$work/source-controller.log"
	wait_watching "$state" flux-helm-controller helmreleases "$pid_hc" "$work/helm-controller.log"

	# The HelmRepositories are the source, not what is measured: made and
	# Ready before the clock starts (measure.py finds the namespaces there).
	repo_spec="url: \"$repo_url\""
	[[ $source != oci ]] || repo_spec+=", type: oci, secretRef: {name: scale-auth}, certSecretRef: {name: scale-ca}"
	for ((i = 1; i <= namespaces; i++)); do
		ns=scale-$i
		"$kubectl" --kubeconfig "$state/kubeconfig" create namespace "$ns" >/dev/null
		[[ $source != oci ]] || oci_secrets "$state/kubeconfig" "$ns"
		"$kubectl" --kubeconfig "$state/kubeconfig" apply -f - >/dev/null <<EOF
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: scale, namespace: $ns}
spec: {$repo_spec, interval: $interval}
EOF
	done
	[[ $source == oci ]] ||
		"$kubectl" --kubeconfig "$state/kubeconfig" wait --for=condition=Ready --timeout=120s helmrepositories.source.toolkit.fluxcd.io -A --all >/dev/null ||
		{ tail -n 20 "$work/source-controller.log" >&2; die "flux: the HelmRepositories did not become Ready"; }
	python3 "$here/releases.py" --kind flux --chart "$here/chart" --releases "$releases" \
		--interval "$interval" --repository scale $( ((flux_wait)) && echo --wait) >"$work/objects-flux.json"
	measure flux helm.toolkit.fluxcd.io/v2 "flux-helm-controller=$pid_hc" "flux-source-controller=$pid_sc" ||
		{ tail -n 20 "$work/helm-controller.log" >&2; die "flux: measurement failed"; }
	local rc=0
	kill -TERM "$pid_hc" "$pid_sc"
	wait "$pid_hc" || rc=$?
	forget_pid "$pid_hc"
	echo "flux_helm_controller_exit_status $rc code"
	rc=0
	wait "$pid_sc" || rc=$?
	forget_pid "$pid_sc"
	echo "flux_source_controller_exit_status $rc code"
	if [[ $source == oci ]]; then
		# Every registry request after rudder's run is Flux's (source-controller's).
		registry_figures flux "$registry0" '.'
	elif [[ -n $servers ]]; then
		# Every request after rudder's run is Flux's (source-controller's getter).
		nginx_figures flux "$nginx0" '.'
	else
		stop_pid "$pid_http"
	fi
	stop_cluster
}

run_rudder() {
	start_cluster rudder
	mint_user "$state" rudder-controller
	# A chart store of this run's own: no archive left by an earlier run is served from disk.
	local args=(controller --kubeconfig "$work/rudder-controller.kubeconfig" --concurrency "$concurrency"
		--storage-path "$work/rudder-charts" --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0)
	[[ -z $qps ]] || args+=(--qps "$qps")
	args+=(${rudder_extra[@]+"${rudder_extra[@]}"})
	local nginx0=0 registry0=0 i ns
	[[ -z $servers ]] || { nginx0=$(nginx_lines); registry0=$(registry_lines); }
	say "rudder: $rudder_bin ${args[*]}"
	"$rudder_bin" "${args[@]}" >"$work/rudder.log" 2>&1 &
	local pid=$!
	stop_pids+=("$pid")
	wait_watching "$state" rudder-controller helmreleases "$pid" "$work/rudder.log"
	if [[ $source != inline ]]; then
		# As for Flux: the HelmRepositories are the source, not what is
		# measured; made and Ready before the clock starts.
		local repo_spec="url: \"$SRV_HTTP_URL\""
		[[ $source != oci ]] ||
			repo_spec="url: \"oci://$SRV_REGISTRY/charts\", secretRef: {name: scale-auth}, certSecretRef: {name: scale-ca}"
		for ((i = 1; i <= namespaces; i++)); do
			ns=scale-$i
			"$kubectl" --kubeconfig "$state/kubeconfig" create namespace "$ns" >/dev/null
			[[ $source != oci ]] || oci_secrets "$state/kubeconfig" "$ns"
			"$kubectl" --kubeconfig "$state/kubeconfig" apply -f - >/dev/null <<EOF
apiVersion: rudder.dev/v1alpha1
kind: HelmRepository
metadata: {name: scale, namespace: $ns}
spec: {$repo_spec, interval: $interval}
EOF
		done
		"$kubectl" --kubeconfig "$state/kubeconfig" wait --for=condition=Ready --timeout=120s \
			helmrepositories.rudder.dev -A --all >/dev/null ||
			{ tail -n 20 "$work/rudder.log" >&2; die "rudder: the HelmRepositories did not become Ready"; }
		if [[ $source == oci ]]; then
			echo "rudder_registry_requests_before_creates $(tail -n +"$((registry0 + 1))" "$SRV_REGISTRY_LOG" |
				grep -c '"rudder"$' || true) requests"
		else
			echo "rudder_nginx_requests_before_creates $(tail -n +"$((nginx0 + 1))" "$SRV_NGINX_LOG" |
				grep -c 'ua="rudder"$' || true) requests"
		fi
		python3 "$here/releases.py" --kind rudder --chart "$here/chart" --repository scale \
			--releases "$releases" --interval "$interval" ${drift:+--drift "$drift"} >"$work/objects-rudder.json"
	else
		python3 "$here/releases.py" --kind rudder --chart "$here/chart" --values-json "$work/values.json" \
			--releases "$releases" --interval "$interval" ${drift:+--drift "$drift"} >"$work/objects-rudder.json"
	fi
	local margs=()
	if ((restart)); then
		# measure.py stops the controller and starts it again with the same command line.
		python3 -c 'import json, sys; json.dump({"argv": sys.argv[2:], "log": sys.argv[1]}, sys.stdout)' \
			"$work/rudder.log" "$rudder_bin" "${args[@]}" >"$work/restart-rudder.json"
		margs+=(--restart-cmd "$work/restart-rudder.json" --restart-signal "$restart_signal")
	fi
	[[ -z $perf_out ]] || margs+=(--perf "$perf_out")
	((floor == 0)) || margs+=(--save-release "$work/release0")
	[[ -z $apiprof_dir ]] || margs+=(--apiserver-profile "$apiprof_dir/rudder" --apiserver-profile-seconds "$apiprof_seconds")
	measure rudder rudder.dev/v1alpha1 "rudder-controller=$pid" -- "${margs[@]}" ||
		{ tail -n 20 "$work/rudder.log" >&2; die "rudder: measurement failed"; }
	local rc=0
	if ((restart)); then
		# Killed by measure.py, which started, stopped and reported its successor.
		wait "$pid" 2>/dev/null || true
		forget_pid "$pid"
	else
		kill -TERM "$pid"
		wait "$pid" || rc=$?
		forget_pid "$pid"
		echo "rudder_controller_exit_status $rc code"
	fi
	# Drift detection's caches, from the memory line logged once at shutdown (before anything is freed).
	[[ -z $drift ]] || grep -F 'msg=memory' "$work/rudder.log" | head -n 1 | python3 -c '
import re, sys
line = sys.stdin.read()
f = dict(re.findall(r"(\w+)=(\d+)", line))
n, b = int(f.get("drift_objects", 0)), int(f.get("drift_cache_bytes", 0))
print(f"rudder_drift_objects {n} count")
print(f"rudder_drift_cache_bytes {b} B")
if n:
    print(f"rudder_drift_cache_bytes_per_object {b / n:.0f} B")
' || true
	# The controller's own count, logged once at shutdown.
	grep -F 'msg="chart sources"' "$work/rudder.log" | tail -n 1 |
		grep -oE '(index_fetches|index_not_modified|downloads|disk_hits|memory_hits|charts_loaded|charts_cached|chart_cache_bytes)=[0-9]+' |
		sed 's/^\(.*\)=\(.*\)$/rudder_sources_\1 \2 count/' || true
	if [[ $source == oci ]]; then
		registry_figures rudder "$registry0" '^rudder$'
	elif [[ $source == repo ]]; then
		nginx_figures rudder "$nginx0" '^rudder$'
	fi
	((floor == 0)) || run_floor
	stop_cluster
}

# The floor on rudder's control plane, after rudder's run and as its user: the writes of N
# installs with no controller logic (bench/scale/floor.c), bodies made from what rudder's run
# wrote (release 0's record and status, saved by measure.py) and from `rudder template`.
run_floor() {
	local v0=$work/release0/values.json ready audit_from
	python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))[0]["spec"]["values"], sys.stdout)' \
		"$work/objects-rudder.json" >"$v0"
	"$rudder_bin" template app-00000 "$here/chart" -n scale-1 -f "$v0" >"$work/release0/manifests.yaml" ||
		die "floor: rudder template failed"
	local fargs=()
	# Each phase also timed until every Deployment is ready (floor_*_ready_seconds): the floor of a
	# controller that waits for readiness, the controller manager's work included.
	fargs+=(--ready)
	if ((upgrade)); then
		# The upgrade's objects: release 0 with the image tag measure.py's upgrade gives it.
		python3 -c 'import json, sys; v = json.load(open(sys.argv[1])); v["image"]["tag"] = "2.5.0"; json.dump(v, sys.stdout)' \
			"$v0" >"$work/release0/values-upgrade.json"
		"$rudder_bin" template app-00000 "$here/chart" -n scale-1 -f "$work/release0/values-upgrade.json" \
			>"$work/release0/manifests-upgrade.yaml" || die "floor: rudder template failed"
		fargs+=(--upgrade-manifests "$work/release0/manifests-upgrade.yaml")
	fi
	[[ -z $keep_logs ]] || { mkdir -p "$keep_logs/release0" && cp "$work"/release0/* "$keep_logs/release0/"; }
	audit_from=$(stat -c %s "$state/logs/audit.log")
	# floor_round NAME [FLAG...]: one run of the floor (every --floor-concurrency round), its figures
	# appended to floor.txt.
	floor_round() {
		local what=$1
		shift
		say "floor: $floor_bin $* --releases $releases --namespaces $namespaces --concurrency $floor_concurrency"
		"$floor_bin" --kubeconfig "$work/rudder-controller.kubeconfig" --objects "$work/objects-rudder.json" \
			--manifests "$work/release0/manifests.yaml" --record "$work/release0/record.json" \
			--status "$work/release0/release.json" --releases "$releases" --namespaces "$namespaces" \
			--concurrency "$floor_concurrency" --apiserver-pid "$(component_pid "$state" kube-apiserver)" \
			--etcd-pid "$(component_pid "$state" etcd)" "$@" "${fargs[@]}" >>"$work/floor.txt" 2>>"$work/floor.log" ||
			{ cat "$work/floor.txt"; tail -n 20 "$work/floor.log" >&2; die "floor $what failed"; }
	}
	: >"$work/floor.txt"
	: >"$work/floor.log"
	local apiprof_pid=""
	if [[ -n $apiprof_dir ]]; then
		python3 "$here/apiprof.py" follow --log "$work/floor.log" --dir "$apiprof_dir" \
			--server "https://127.0.0.1:$(sed -n 's/^apiserver=//p' "$state/ports")" --ca "$state/pki/ca.crt" \
			--cert "$state/pki/admin.crt" --key "$state/pki/admin.key" --seconds "$apiprof_seconds" 2>>"$work/apiprof.log" &
		apiprof_pid=$!
		stop_pids+=("$apiprof_pid")
	fi
	floor_round ""
	((floor_all == 0)) || floor_round "--requests all" --requests all
	((floor_user == 0)) || floor_round "--user-writes" --user-writes
	((floor_all == 0 || floor_user == 0)) || floor_round "--requests all --user-writes" --requests all --user-writes
	if ((floor_watches)); then
		floor_round "--user-writes --watches" --user-writes --watches
		[[ ! -f $work/release0/release-upgraded.json ]] ||
			floor_round "--user-writes --watches --upgrade-status" --user-writes --watches \
				--upgrade-status "$work/release0/release-upgraded.json"
	fi
	if [[ -n $apiprof_pid ]]; then
		sleep "$((apiprof_seconds + 2))" # the last phase's profile
		stop_pid "$apiprof_pid"
		python3 "$here/apiprof.py" top "$apiprof_dir" >>"$work/floor.txt" 2>&1 || true
	fi
	cat "$work/floor.txt"
	sleep 0.3 # the API server's last audit events
	# Its requests as the API server logged them (the untimed namespaces and HelmReleases included).
	python3 - "$here" "$state/logs/audit.log" "$audit_from" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import measure
au = measure.Audit(sys.argv[2], ["rudder-controller"], r"app-\d{5}")
au.pos = int(sys.argv[3])
c, _ = au.take()
print(f"floor_audit_requests {sum(c.values())} requests")
for (_, verb, res), v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"floor_audit_requests_by.{verb}.{res.replace('/', '_').strip('_')} {v} requests")
EOF
	python3 - "$work/figures-rudder.txt" "$work/floor.txt" <<'EOF'
import re, sys
def fig(path, name):
    m = re.search(r"^" + name + r" ([0-9.]+) s$", open(path).read(), re.M)
    return float(m.group(1)) if m else None
for phase in ("install", "upgrade"):
    r, f = fig(sys.argv[1], f"rudder_{phase}_ready_seconds"), fig(sys.argv[2], f"floor_{phase}_seconds")
    if r and f:
        print(f"rudder_{phase}_ready_over_floor {r / f:.2f} ratio")
    for pre in ("floor_all", "floor_user", "floor_all_user", "floor_user_watch", "floor_user_watch_status"):
        fa = fig(sys.argv[2], f"{pre}_{phase}_seconds")
        if r and fa:
            print(f"rudder_{phase}_ready_over_{pre} {r / fa:.2f} ratio")
    for pre in ("floor", "floor_all", "floor_user", "floor_all_user", "floor_user_watch", "floor_user_watch_status"):
        fr = fig(sys.argv[2], f"{pre}_{phase}_ready_seconds")
        if r and fr:
            print(f"rudder_{phase}_ready_over_{pre}_ready {r / fr:.2f} ratio")
EOF
}

# --- the run -------------------------------------------------------------------------

echo "# bench/scale/run.sh --releases $releases --concurrency $concurrency --source $source --interval $interval --namespaces $namespaces --poll $poll --kcm-qps $kcm_qps${qps:+ --qps $qps}${drift:+ --drift $drift}${peer:+ --peer $peer}$( ((peer_only)) && echo " --peer-only")$( ((flux_wait)) && echo " --flux-wait")"
echo "# rudder: $("$rudder_bin" version | tr '\n' ' ')"
echo "# tree: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- 2>/dev/null || echo '+dirty')"
echo "# host: $(nproc) CPUs, $(uname -r); start: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"
[[ $source == inline ]] || start_servers
((peer_only)) || run_rudder
if [[ $peer == flux ]]; then
	echo "# flux: $(for b in "${flux_bins[@]}"; do basename "$(dirname "$b")"; done | tr '\n' ' ')(chart from a HelmRepository on 127.0.0.1, $(case $source in oci) echo "the same OCI registry as rudder's" ;; repo) echo "the same nginx as rudder's" ;; *) echo "python3 -m http.server" ;; esac), $( ((flux_wait)) && echo "Helm waits on" || echo "install/upgrade disableWait"))"
	run_flux
fi
[[ -z $servers ]] || stop_servers
echo "# end: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"
