# shellcheck shell=bash disable=SC2034
# tests/servers/lib.sh - helpers shared by tests/servers/up, down and publish.
# Sourced, not run. Everything here writes to stderr only. The process
# helpers are the local control plane's (tests/cluster/lib.sh): each server is
# recorded as STATE/pids/NN-NAME.pid and only a process whose command line
# names STATE/ is ever signalled.

servers_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
servers_repo=$(cd "$servers_here/../.." && pwd)
cluster_prog=${servers_prog:-servers}
# shellcheck source=../cluster/lib.sh
source "$servers_repo/tests/cluster/lib.sh"
# shellcheck source=../versions.env
source "$servers_repo/tests/versions.env"

srv_log() { cluster_log "$@"; }
srv_die() { cluster_die "$@"; }

# The marker that says "this directory is a chart-servers state dir"; down
# refuses to delete a directory without it.
SERVERS_MARKER=.rudder-servers

# The helm (v4) that tests/cluster/build makes and caches; built if missing.
srv_helm() {
	local bindir
	bindir=$("$servers_repo/tests/cluster/build" helm | tail -n 1)
	[[ -x $bindir/helm ]] || srv_die "tests/cluster/build did not produce $bindir/helm"
	echo "$bindir/helm"
}

# helm with its config, cache, data and registry login kept in the state dir,
# never in the caller's home.
srv_helm_env() { # STATE
	export HELM_CONFIG_HOME=$1/helm/config HELM_CACHE_HOME=$1/helm/cache HELM_DATA_HOME=$1/helm/data
	export HELM_REGISTRY_CONFIG=$1/helm/registry.json HELM_REPOSITORY_CONFIG=$1/helm/config/repositories.yaml
	mkdir -p "$HELM_CONFIG_HOME" "$HELM_CACHE_HOME" "$HELM_DATA_HOME"
}

# Package CHART_DIR at VERSION into OUT_DIR; prints the .tgz path.
srv_package() { # HELM CHART_DIR VERSION OUT_DIR
	local out
	out=$("$1" package "$2" --version "$3" --destination "$4" 2>&1) ||
		srv_die "helm package $2 --version $3 failed: $out"
	out=${out##*: }
	[[ -f $out ]] || srv_die "helm package did not say where it wrote the chart: $out"
	echo "$out"
}

# Does something accept TCP connections on 127.0.0.1:PORT?
srv_port_open() ( # PORT
	exec 3<>"/dev/tcp/127.0.0.1/$1"
) 2>/dev/null

# Ask the kernel for COUNT distinct free ports on 127.0.0.1 (all held open at
# once so they differ). Another process may take one before we bind it: the
# servers that fail to bind are restarted on fresh ports.
srv_free_ports() { # COUNT
	python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# Has this machine an IPv6 loopback (::1) to listen on?
srv_have_ipv6() {
	python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null
}
