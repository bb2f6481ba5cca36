#!/bin/sh
# Builds the YAML head scanner fuzz target with clang + libFuzzer (ASan+UBSan) and runs it from the
# seed corpus (manifests with multi-line plain and quoted scalars, as encoders fold them).
# Usage: tests/fuzz/fuzz_yaml_head.sh [SECONDS] [libFuzzer flags...]   (default 60 s)
# Output: build-fuzz/fuzz_yaml_head; crashes go to build-fuzz/fuzz_yaml_head-artifacts/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
out=$root/build-fuzz
mkdir -p "$out/fuzz_yaml_head-corpus" "$out/fuzz_yaml_head-artifacts"
command -v clang >/dev/null 2>&1 || { echo "clang is needed (apt-get install clang)"; exit 1; }
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  -I"$root" -I/usr/include/cjson -o "$out/fuzz_yaml_head" "$root/tests/fuzz/fuzz_yaml_head.c" \
  "$root"/base/yaml.c "$root"/base/buf.c "$root"/base/gofloat.c "$root"/base/strset.c "$root"/base/b64.c -lyaml -lcjson -lm
cp -n "$root"/tests/fuzz/fuzz_yaml_head_seeds/* "$out/fuzz_yaml_head-corpus/" 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_yaml_head" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -dict="$root/tests/fuzz/fuzz_yaml_head.dict" -artifact_prefix="$out/fuzz_yaml_head-artifacts/" "$@" \
  "$out/fuzz_yaml_head-corpus"
