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

die() { echo "edge: error: $*" >&2; exit 1; }
say() { echo "edge: $*" >&2; }

# Options and their defaults; --name VALUE or --name=VALUE.
declare -A opt=([releases]=20 [idle]=60 [interval]=10m [cpu]=0 [rudder]="" [keep-logs]="")
while (($#)); do
	case $1 in
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
	--*)
		[[ -v opt[${1#--}] ]] || die "unknown option: $1 (see --help)"
		(($# >= 2)) || die "$1 wants a value"
		opt[${1#--}]=$2
		shift 2
		;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
done
releases=${opt[releases]} idle=${opt[idle]} interval=${opt[interval]} cpu=${opt[cpu]}
rudder_bin=${opt[rudder]} keep_logs=${opt[keep-logs]}
[[ $releases =~ ^[1-9][0-9]*$ && $releases -le 99999 ]] || die "--releases wants 1..99999, got '$releases'"
[[ $idle =~ ^[1-9][0-9]*$ ]] || die "--idle wants a whole number of seconds, got '$idle'"
[[ $interval =~ ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$ ]] || die "--interval wants a Go duration like 1m or 90s, got '$interval'"
[[ $cpu =~ ^[0-9]+$ && $cpu -lt $(nproc) ]] || die "--cpu wants a CPU number below $(nproc), got '$cpu'"
command -v taskset >/dev/null || die "taskset (util-linux) is missing"

work=$(mktemp -d "${TMPDIR:-/tmp}/rudder-edge-XXXXXX")
state=$work/cluster
ctl_pid=""
ctl_rc=0

# quietly LOG WHAT CMD...: runs CMD with its output appended to LOG; when it fails, the log's end
# and "WHAT failed".
quietly() {
	local log=$1 what=$2
	shift 2
	"$@" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "$what failed"; }
}

# stop_controller: SIGTERM to the controller (if it runs), 10 s to exit, then SIGKILL; its exit
# status in ctl_rc.
stop_controller() {
	ctl_rc=0
	[[ -n $ctl_pid ]] || return 0
	kill -TERM "$ctl_pid" 2>/dev/null || true
	timeout 10 tail --pid="$ctl_pid" -f /dev/null || kill -KILL "$ctl_pid" 2>/dev/null || true
	wait "$ctl_pid" || ctl_rc=$?
	ctl_pid=""
}

on_exit() {
	local rc=$?
	trap - EXIT INT TERM HUP
	stop_controller
	[[ -z $keep_logs ]] || { mkdir -p "$keep_logs" && cp "$work"/*.log "$keep_logs"/; } 2>/dev/null || true
	[[ ! -d $state ]] || "$root/tests/cluster/down" "$state" >/dev/null 2>&1 || true
	rm -rf "$work"
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The binary: --rudder, or a RelWithDebInfo one built in build-edge.
if [[ -z $rudder_bin ]]; then
	rudder_bin=${RUDDER_EDGE_BUILD:-$root/build-edge}/rudder
	say "building $rudder_bin (RelWithDebInfo)"
	quietly "$work/build.log" "building rudder" bash -c 'cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DRUDDER_E2E=OFF && cmake --build "$2" -j"$3" --target rudder' _ "$root" "${rudder_bin%/rudder}" "${RUDDER_EDGE_JOBS:-2}"
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

cat <<EOF
# bench/edge/run.sh --releases $releases --idle $idle --interval $interval --cpu $cpu
# rudder: $("$rudder_bin" version | tr '\n' ' ')
# tree: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- 2>/dev/null || echo '+dirty')
# host: $(nproc) CPUs, $(uname -r); start: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')
EOF

say "starting a local control plane in $state"
quietly "$work/up.log" "tests/cluster/up" "$root/tests/cluster/up" --name "edge-$$" --state-dir "$state"
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

stop_controller
echo "edge_controller_exit_status $ctl_rc code"
echo "# end: $(date -u +%FT%TZ); load: $(uptime | sed 's/.*load average: //')"
