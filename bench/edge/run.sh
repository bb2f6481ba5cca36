#!/usr/bin/env bash
# bench/edge/run.sh - the edge profile (issue 15 §6): one CPU, --concurrency 1, 20 releases,
# and what the controller costs when nothing changes.
#
#   bench/edge/run.sh [--releases N] [--idle S] [--interval D] [--cpu C] [--rudder PATH]
#                     [--keep-logs DIR]
#
#   --releases N   HelmReleases of bench/scale/chart (inline, 4 objects each, written by
#                  bench/scale/releases.py), in one namespace (default 20)
#   --idle S       the idle window, seconds (default 60)
#   --interval D   the releases' spec.interval, a Go duration (default 10m: no resync falls in
#                  the window; 1m puts one resync of every release in it)
#   --cpu C        the one CPU the controller may run on (taskset -c C; default 0)
#   --rudder PATH  the rudder binary (default: build a RelWithDebInfo one in
#                  ${RUDDER_EDGE_BUILD:-build-edge}, as the scale harness does)
#   --keep-logs DIR  copy the controller's log there
#
# Starts a fresh local control plane (tests/cluster/up), runs `rudder controller
# --concurrency 1` pinned to one CPU as the cluster's admin, creates the releases, waits until
# every one is Ready, lets 5 s pass, then bench/edge/idle.py samples the controller for the
# idle window (CPU time of all its threads, VmRSS once a second) and asks it for its memory
# line (SIGUSR1: loop/controller.c ctl__log_memory). Figures go to stdout as `name value unit`
# lines (lines starting with `#` describe the run); progress to stderr. No thresholds. Everything
# it starts is stopped, and its temporary directory removed, on every exit path.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
scale=$root/bench/scale

releases=20
idle=60
interval=10m
cpu=0
rudder_bin=""
keep_logs=""

die() { echo "edge: error: $*" >&2; exit 1; }
say() { echo "edge: $*" >&2; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--releases) releases=${2:?}; shift ;;
	--idle) idle=${2:?}; shift ;;
	--interval) interval=${2:?}; shift ;;
	--cpu) cpu=${2:?}; shift ;;
	--rudder) rudder_bin=${2:?}; shift ;;
	--keep-logs) keep_logs=${2:?}; shift ;;
	--*=*) a=$1; shift; set -- "${a%%=*}" "${a#*=}" "$@"; continue ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
[[ $releases =~ ^[1-9][0-9]*$ && $releases -le 99999 ]] || die "--releases wants 1..99999, got '$releases'"
[[ $idle =~ ^[1-9][0-9]*$ ]] || die "--idle wants a whole number of seconds, got '$idle'"
[[ $interval =~ ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$ ]] || die "--interval wants a Go duration like 1m or 90s, got '$interval'"
[[ $cpu =~ ^[0-9]+$ && $cpu -lt $(nproc) ]] || die "--cpu wants a CPU number below $(nproc), got '$cpu'"
command -v taskset >/dev/null || die "taskset (util-linux) is missing"

work=$(mktemp -d "${TMPDIR:-/tmp}/rudder-edge-XXXXXX")
state=$work/cluster
ctl_pid=""

cleanup() {
	local rc=$? i
	trap - EXIT INT TERM HUP
	if [[ -n $ctl_pid ]] && kill -0 "$ctl_pid" 2>/dev/null; then
		kill -TERM "$ctl_pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do kill -0 "$ctl_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$ctl_pid" 2>/dev/null || true
		wait "$ctl_pid" 2>/dev/null || true
	fi
	if [[ -n $keep_logs ]]; then
		mkdir -p "$keep_logs"
		cp "$work"/*.log "$keep_logs"/ 2>/dev/null || true
	fi
	[[ -d $state ]] && "$root/tests/cluster/down" "$state" >/dev/null 2>&1 || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

if [[ -z $rudder_bin ]]; then
	build=${RUDDER_EDGE_BUILD:-$root/build-edge}
	say "building rudder (RelWithDebInfo) in $build"
	cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRUDDER_E2E=OFF >"$work/build.log" 2>&1 ||
		{ tail -n 30 "$work/build.log" >&2; die "cmake configure failed"; }
	cmake --build "$build" -j"${RUDDER_EDGE_JOBS:-2}" --target rudder >>"$work/build.log" 2>&1 ||
		{ tail -n 30 "$work/build.log" >&2; die "build failed"; }
	rudder_bin=$build/rudder
fi
[[ -x $rudder_bin ]] || die "no rudder executable at $rudder_bin"
rudder_bin=$(cd "$(dirname "$rudder_bin")" && pwd)/$(basename "$rudder_bin")

# The releases as the scale harness writes them, in the namespace edge, as one List.
python3 "$scale/releases.py" --kind rudder --chart "$scale/chart" --rudder "$rudder_bin" \
	--releases "$releases" --interval "$interval" |
	python3 -c 'import json, sys
items = json.load(sys.stdin)
for o in items:
    o["metadata"]["namespace"] = "edge"
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)' >"$work/objects.json"

echo "# bench/edge/run.sh --releases $releases --idle $idle --interval $interval --cpu $cpu"
echo "# rudder: $("$rudder_bin" version | tr '\n' ' ')"
echo "# tree: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- 2>/dev/null || echo '+dirty')"
echo "# host: $(nproc) CPUs, $(uname -r); start: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"

say "starting a local control plane in $state"
"$root/tests/cluster/up" --name "edge-$$" --state-dir "$state" >"$work/up.env" 2>"$work/up.log" ||
	{ tail -n 30 "$work/up.log" >&2; die "tests/cluster/up failed"; }
# shellcheck disable=SC1091
. "$state/env"
kubectl create namespace edge >/dev/null

say "rudder controller --concurrency 1 on CPU $cpu"
taskset -c "$cpu" "$rudder_bin" controller --kubeconfig "$state/kubeconfig" --concurrency 1 \
	--metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --storage-path "$work/charts" >"$work/rudder.log" 2>&1 &
ctl_pid=$!
echo "# affinity: $(taskset -cp "$ctl_pid" | sed 's/.*: //')"

t0=$SECONDS
kubectl apply -f "$work/objects.json" >/dev/null
say "waiting until the $releases releases are Ready"
kubectl wait --for=condition=Ready --timeout=600s -n edge helmreleases.rudder.dev --all >/dev/null ||
	{ tail -n 20 "$work/rudder.log" >&2; die "the releases did not become Ready"; }
echo "edge_releases $releases releases"
echo "edge_ready_seconds $((SECONDS - t0)) s"
sleep 5
say "idle for ${idle}s"
# In the background and waited for, so that a signal to this script runs its trap at once.
python3 -B "$here/idle.py" --pid "$ctl_pid" --seconds "$idle" --log "$work/rudder.log" &
wait $! || { tail -n 20 "$work/rudder.log" >&2; die "the idle measurement failed"; }

rc=0
kill -TERM "$ctl_pid"
wait "$ctl_pid" || rc=$?
ctl_pid=""
echo "edge_controller_exit_status $rc code"
echo "# end: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"
