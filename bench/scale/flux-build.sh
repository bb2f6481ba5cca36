#!/usr/bin/env bash
# bench/scale/flux-build.sh - builds the peer of `bench/scale/run.sh --peer flux`
# once: Flux's helm-controller and source-controller from the Go module proxy,
# cached under ${RUDDER_CACHE:-~/.cache/rudder}/bin/<name>-<version>/ (the
# binary, its CRDs in crds/, a stamp file), as tests/cluster/build does for the
# control plane. Prints the two binaries' paths, one a line.
#
#   bench/scale/flux-build.sh [--check]      # --check: exit 0 only if both are built
#
# `go install MODULE@VERSION` does not work for these two: their go.mod
# replaces their own api module with ./api, a directory the module zip does
# not hold (it is a module of its own). So each is built from a copy of the
# module cache's source with that one replace dropped: the api module then
# comes from the proxy at the version go.mod requires. The other replace
# directives stay as they are.
set -euo pipefail

HELM_CONTROLLER_VERSION=v1.6.2
SOURCE_CONTROLLER_VERSION=v1.9.1

cache=${RUDDER_CACHE:-$HOME/.cache/rudder}/bin
check=0
[[ ${1:-} == --check ]] && check=1

say() { echo "flux-build: $*" >&2; }

build_one() { # NAME VERSION
	local n=$1 v=$2 dir=$cache/$1-$2 src tmp
	if [[ -f $dir/.stamp && -x $dir/$n ]]; then
		echo "$dir/$n"
		return 0
	fi
	((check == 0)) || exit 1
	command -v go >/dev/null || { say "no Go toolchain"; exit 1; }
	say "building $n $v from the Go module proxy (several minutes the first time)"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/flux-build-$n-XXXXXX")
	# shellcheck disable=SC2064 # expand now
	trap "chmod -R u+w '$tmp' 2>/dev/null; rm -rf '$tmp'" RETURN
	src=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/fluxcd/$n@$v" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error","no Dir")))')
	cp -r "$src/." "$tmp/src"
	chmod -R u+w "$tmp/src"
	(
		cd "$tmp/src"
		go mod edit -dropreplace "github.com/fluxcd/$n/api"
		GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/$n" .
	) >&2
	mkdir -p "$dir/crds"
	cp "$src"/config/crd/bases/*.yaml "$dir/crds/"
	mv "$tmp/$n" "$dir/$n"
	echo "$n $v $(date -u +%FT%TZ)" >"$dir/.stamp"
	echo "$dir/$n"
}

build_one source-controller "$SOURCE_CONTROLLER_VERSION"
build_one helm-controller "$HELM_CONTROLLER_VERSION"
