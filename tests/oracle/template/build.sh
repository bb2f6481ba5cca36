#!/bin/sh
# Builds the template oracle (Go text/template + Sprig + Helm's engine functions,
# pinned in go.mod) into a cache directory outside the repository and prints
# the binary's path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${RUDDER_CACHE:-$HOME/.cache/rudder}/oracle
mkdir -p "$cache"
bin=$cache/template-oracle
cd "$here"
GOFLAGS=-mod=mod go build -o "$bin" . >&2
echo "$bin"
