#!/bin/sh
# Builds bench_template (rudder's side of bench/template/run.sh and keys.sh) from the working
# tree with -O2 into $BENCH_OUT (default build-bench) and prints its path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${BENCH_OUT:-$root/build-bench}
mkdir -p "$out"
# The engine, all of base/ and what the harness uses from helm/, optimised.
cc -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Werror -DNDEBUG -I"$root" -I/usr/include/cjson -o "$out/bench_template" "$here/bench_template.c" \
  $(ls "$root"/helm/template/*.c "$root"/base/*.c) "$root/helm/release/release.c" "$root/helm/render/manifest.c" "$root/helm/semver/semver.c" \
  -lcjson -lyaml -lpcre2-8 -lmbedx509 -lmbedcrypto -lz -lm -lpthread
echo "$out/bench_template"
