#!/usr/bin/env bash
# Release record benchmarks: bench/release/record_write.c (the upgrade's supersede with the
# compressed tail taken from the listed record, and compressed whole). Prints `name value unit`
# lines. No thresholds.
#   bench/release/run.sh [ITERATIONS]      (default 2000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${RUDDER_BENCH_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target rudder_helm >/dev/null
out=$build/bench
mkdir -p "$out"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
  -Wvla -fno-strict-aliasing -I"$root" -I"$build/gen" -I/usr/include/cjson -o "$out/record_write" \
  "$root/bench/release/record_write.c" "$build/librudder_helm.a" "$build/librudder_watch.a" "$build/librudder_base.a" \
  "$build/libllhttp.a" $(pkg-config --libs yaml-0.1 libpcre2-8 libcjson zlib libuv) -lmbedtls -lmbedx509 -lmbedcrypto -lm -lpthread
"$out/record_write" "$root/bench/scale/chart" "${1:-2000}"
