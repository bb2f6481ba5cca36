#!/bin/sh
# Builds the OCI and URL parsers fuzz target with clang + libFuzzer (ASan+UBSan, the parsers, the
# semver port and what they use instrumented) and runs it from the seed corpus.
# Usage: tests/fuzz/fuzz_source_oci.sh [SECONDS] [libFuzzer flags...]   (default 60 s)
# Output: build-fuzz/fuzz_source_oci; crashes go to build-fuzz/fuzz_source_oci-artifacts/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
out=$root/build-fuzz
mkdir -p "$out/fuzz_source_oci-corpus" "$out/fuzz_source_oci-artifacts"
command -v clang >/dev/null 2>&1 || { echo "clang is needed (apt-get install clang)"; exit 1; }
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  -I"$root" -I/usr/include/cjson -o "$out/fuzz_source_oci" "$root/tests/fuzz/fuzz_source_oci.c" \
  "$root"/helm/source/oci.c "$root"/helm/source/index_url.c "$root"/helm/semver/semver.c \
  "$root"/helm/template/value.c "$root"/helm/template/fmt.c "$root"/helm/template/parse.c \
  "$root"/helm/template/exec.c "$root"/helm/template/helm_funcs.c "$root"/helm/template/unicode.c \
  "$root"/helm/template/unicode_tables.c "$root"/base/buf.c "$root"/base/err.c "$root"/base/gofloat.c "$root"/base/b64.c \
  -lyaml -lpcre2-8 -lcjson -lm
cp -n "$root"/tests/fuzz/fuzz_source_oci_seeds/* "$out/fuzz_source_oci-corpus/" 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$out/fuzz_source_oci" -max_total_time="$secs" -timeout=10 \
  -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$out/fuzz_source_oci-artifacts/" "$@" \
  "$out/fuzz_source_oci-corpus"
