#!/usr/bin/env bash
# bench/scale/memory.sh - the controller's memory per release in a steady state
# (issue 11 §5): what it holds beyond its informer caches.
#
#   bench/scale/memory.sh [--releases N] [--concurrency C] [--interval D]
#                         [--namespaces K] [--rudder PATH] [--keep-logs DIR]
#
#   --releases N      HelmReleases (default 200), the inline chart of
#                     bench/scale/chart, written by releases.py as run.sh's are
#   --concurrency C   the controller's --concurrency (default 10, as run.sh)
#   --interval D      the releases' spec.interval, a Go duration (default 1m);
#                     the steady state is one such interval (plus 5 s) after
#                     all are Ready
#   --namespaces K    spread over K namespaces (default 4)
#   --rudder PATH     the rudder binary (default: build a RelWithDebInfo one
#                     in ${RUDDER_SCALE_BUILD:-build-scale}, as run.sh does)
#   --keep-logs DIR   copy the controllers' logs there
#
# On one fresh local control plane (tests/cluster/up) it runs the controller
# twice, as the cluster's admin: first with 0 releases (the namespaces only)
# for one interval, then a fresh one that brings the N releases to Ready and
# is left alone for one interval. Each is then sent SIGTERM and logs, before
# it frees anything, a `msg=memory` line (loop/controller.c): the bytes its
# informer caches hold (informer_memory: the HelmReleases' projections and
# the release Secrets' labels), its engine's per-release structures (memo,
# release index, queue), the heap as malloc sees it, and VmRSS and VmHWM,
# read at the same moment. The figures (`name value unit`, stdout):
#
#   rudder_memory_rss_per_release_beyond_cache_bytes
#       (VmRSS - informer cache bytes - VmRSS of the run with 0 releases) / N
#   rudder_memory_informer_cache_bytes_per_release   informer cache bytes / N
#   rudder_memory_engine_bytes_per_release           memo + index + queue / N
#   and the parts: rss, peak rss, caches, engine, heap in use and free, ...
#
# No thresholds; progress on stderr; everything started is stopped on every
# exit path.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

releases=200
concurrency=10
interval=1m
namespaces=4
rudder_bin=""
keep_logs=""

die() { echo "memory.sh: error: $*" >&2; exit 1; }
say() { echo "memory.sh: $*" >&2; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--releases) releases=${2:?}; shift ;;
	--concurrency) concurrency=${2:?}; shift ;;
	--interval) interval=${2:?}; shift ;;
	--namespaces) namespaces=${2:?}; shift ;;
	--rudder) rudder_bin=${2:?}; shift ;;
	--keep-logs) keep_logs=${2:?}; shift ;;
	--*=*) a=$1; shift; set -- "${a%%=*}" "${a#*=}" "$@"; continue ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
[[ $releases =~ ^[1-9][0-9]*$ && $releases -le 99999 ]] || die "--releases wants 1..99999, got '$releases'"
[[ $concurrency =~ ^[1-9][0-9]*$ ]] || die "--concurrency wants a positive number, got '$concurrency'"
[[ $namespaces =~ ^[1-9][0-9]*$ ]] || die "--namespaces wants a positive number, got '$namespaces'"
[[ $interval =~ ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$ ]] || die "--interval wants a Go duration like 1m or 90s, got '$interval'"
interval_s=$(python3 -c '
import re, sys
print(sum(float(a) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[b] for a, b in re.findall(r"([0-9.]+)(ms|s|m|h)", sys.argv[1])))' "$interval")
((namespaces <= releases)) || namespaces=$releases

work=$(mktemp -d "${TMPDIR:-/tmp}/rudder-memory-XXXXXX")
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
	build=${RUDDER_SCALE_BUILD:-$root/build-scale}
	say "building rudder (RelWithDebInfo) in $build"
	cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRUDDER_E2E=OFF >"$work/build.log" 2>&1 ||
		{ tail -n 30 "$work/build.log" >&2; die "cmake configure failed"; }
	cmake --build "$build" -j"${RUDDER_SCALE_JOBS:-2}" --target rudder >>"$work/build.log" 2>&1 ||
		{ tail -n 30 "$work/build.log" >&2; die "build failed"; }
	rudder_bin=$build/rudder
fi
[[ -x $rudder_bin ]] || die "no rudder executable at $rudder_bin"
rudder_bin=$(cd "$(dirname "$rudder_bin")" && pwd)/$(basename "$rudder_bin")

# The releases, as run.sh writes them (the chart's values read by rudder itself).
python3 "$here/releases.py" --kind rudder --chart "$here/chart" --rudder "$rudder_bin" \
	--releases "$releases" --interval "$interval" >"$work/objects.json"

echo "# bench/scale/memory.sh --releases $releases --concurrency $concurrency --interval $interval --namespaces $namespaces"
echo "# rudder: $("$rudder_bin" version | tr '\n' ' ')"
echo "# tree: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- 2>/dev/null || echo '+dirty')"
echo "# host: $(nproc) CPUs, $(uname -r); start: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"

say "starting a local control plane in $state"
"$root/tests/cluster/up" --name "memory-$$" --state-dir "$state" >"$work/up.env" 2>"$work/up.log" ||
	{ tail -n 30 "$work/up.log" >&2; die "tests/cluster/up failed"; }
port=$(sed -n 's/^apiserver=//p' "$state/ports")
api=(--server "https://127.0.0.1:$port" --ca "$state/pki/ca.crt" --cert "$state/pki/admin.crt" --key "$state/pki/admin.key")

# run_controller NAME [OBJECTS]: a fresh controller, the load, one interval, SIGTERM; its log in $work/NAME.log.
run_controller() {
	local name=$1 objects=${2:-} rc=0 mpid
	say "$name: $rudder_bin controller --concurrency $concurrency"
	"$rudder_bin" controller --kubeconfig "$state/kubeconfig" --concurrency "$concurrency" \
		--metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 \
		--storage-path "$work/charts-$name" >"$work/$name.log" 2>&1 &
	ctl_pid=$!
	# In the background and waited for, so that a signal to this script runs its trap at once.
	python3 "$here/memory.py" load "${api[@]}" --namespaces "$namespaces" --controller-pid "$ctl_pid" \
		--interval "$interval_s" --prefix "rudder_memory_${name}_" ${objects:+--objects "$objects"} &
	mpid=$!
	wait "$mpid" || { tail -n 20 "$work/$name.log" >&2; die "$name: the load failed"; }
	kill -TERM "$ctl_pid"
	wait "$ctl_pid" || rc=$?
	ctl_pid=""
	echo "rudder_memory_${name}_controller_exit_status $rc code"
}

run_controller zero
run_controller steady "$work/objects.json"
python3 "$here/memory.py" report --zero "$work/zero.log" --run "$work/steady.log" --releases "$releases"
echo "# end: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"
