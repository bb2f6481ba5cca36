# shellcheck shell=bash disable=SC2034
# tests/cluster/lib.sh - helpers shared by tests/cluster/up and down.
# Sourced, not run. Everything here writes to stderr only.

cluster_log() { printf '%s: %s\n' "${cluster_prog:-cluster}" "$*" >&2; }
cluster_die() { printf '%s: error: %s\n' "${cluster_prog:-cluster}" "$*" >&2; exit 1; }

# The marker file that says "this directory is a rudder cluster state dir";
# down refuses to delete a directory without it.
CLUSTER_MARKER=.rudder-cluster

# Make sure the commands exist, installing the Debian packages that provide
# them if not. apt-get update runs only when an install fails for lack of
# package lists.
cluster_need() { # CMD:PACKAGE...
	local spec cmd pkg missing=()
	for spec in "$@"; do
		cmd=${spec%%:*}
		pkg=${spec#*:}
		command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		cluster_die "missing ${missing[*]} and no apt-get to install them"
	local sudo=()
	[[ $(id -u) == 0 ]] || sudo=(sudo)
	cluster_log "installing ${missing[*]}"
	if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-upgrade "${missing[@]}" >&2; then
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-upgrade "${missing[@]}" >&2
	fi
}

# Is PID alive and started by this cluster (its command line names the state
# dir)? Guards against signalling a recycled pid.
cluster_pid_ours() { # STATE PID
	local state=$1 pid=$2
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$state/" || return 1
	# A zombie is as good as gone.
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}

# Whether a process just started (its pid recorded before it execs its server)
# is still running. For startup waits only: the process is not judged by its
# command line, which passes through the exec chain of interpreters and shims
# (empty in the middle of an exec, a shim's own arguments for a moment) and
# was twice read as "gone" on a loaded machine while the server was starting.
# A pid freed and reused within a startup wait's seconds is not a real risk.
# The stop keeps to cluster_pid_ours.
cluster_pid_running() { # STATE PID
	local pid=$2
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || [[ -e /proc/$pid ]] || return 1
	# A zombie is as good as gone.
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}

# Stop the components recorded in STATE/pids, newest first: SIGTERM, wait up
# to GRACE seconds, then SIGKILL what is left.
cluster_stop() { # STATE [GRACE]
	local state=$1 grace=${2:-10} f pid name pids=() i files
	[[ -d $state/pids ]] || return 0
	files=("$state"/pids/*.pid)
	# Newest first: the files are numbered in start order.
	for ((i = ${#files[@]} - 1; i >= 0; i--)); do
		f=${files[i]}
		[[ -e $f ]] || continue
		pid=$(cat "$f" 2>/dev/null || true)
		f=${f##*/}
		name=${f#*-}
		name=${name%.pid}
		if cluster_pid_ours "$state" "$pid"; then
			cluster_log "stopping $name (pid $pid)"
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	for ((i = 0; i < grace * 10; i++)); do
		local left=()
		for pid in "${pids[@]}"; do
			cluster_pid_ours "$state" "$pid" && left+=("$pid")
		done
		pids=("${left[@]}")
		[[ ${#pids[@]} -eq 0 ]] && break
		sleep 0.1
	done
	for pid in "${pids[@]}"; do
		if cluster_pid_ours "$state" "$pid"; then
			cluster_log "killing pid $pid"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$state/pids"
}
