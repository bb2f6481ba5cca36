#!/usr/bin/env bash
# Builds rudder's libraries (RelWithDebInfo) and the benchmarks against them, standalone:
# no change to the project's CMakeLists. Prints the directory the benchmark binaries are in.
#   bench/api/build.sh            # build dir: $RUDDER_BENCH_BUILD or <repo>/build-bench
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${RUDDER_BENCH_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target rudder_watch rudder_queue >/dev/null
out=$build/bench
mkdir -p "$out"
cflags=(-std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
        -Wno-unused-parameter -Wvla -fno-strict-aliasing -I"$root" -I"$build/gen" -I/usr/share/include/llhttp)
libs=("$build/librudder_watch.a" "$build/librudder_queue.a" "$build/librudder_base.a" "$build/libllhttp.a"
      $(pkg-config --libs libuv libcjson yaml-0.1 zlib) -lmbedtls -lmbedx509 -lmbedcrypto -lm)
for src in "$root"/bench/api/*.c "$root"/bench/queue/*.c; do
  [ -e "$src" ] || continue
  name=$(basename "$src" .c)
  cc "${cflags[@]}" -o "$out/$name" "$src" "${libs[@]}"
done
echo "$out"
