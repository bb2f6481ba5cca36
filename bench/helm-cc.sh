#!/usr/bin/env bash
# Builds rudder's libraries (RelWithDebInfo) in build-bench ($RUDDER_BENCH_BUILD) and compiles one
# benchmark source against them, standalone (no change to the project's CMakeLists). Prints the
# binary's path (<build>/bench/NAME).
#   bench/helm-cc.sh SOURCE.c NAME
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: bench/helm-cc.sh SOURCE.c NAME}
name=${2:?usage: bench/helm-cc.sh SOURCE.c NAME}
build=${RUDDER_BENCH_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target rudder_helm >/dev/null
mkdir -p "$build/bench"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
  -Wvla -fno-strict-aliasing -I"$root" -I"$build/gen" -I/usr/include/cjson -o "$build/bench/$name" "$src" \
  "$build/librudder_helm.a" "$build/librudder_watch.a" "$build/librudder_base.a" "$build/libllhttp.a" \
  $(pkg-config --libs yaml-0.1 libpcre2-8 libcjson zlib libuv) -lmbedtls -lmbedx509 -lmbedcrypto -lm -lpthread
echo "$build/bench/$name"
