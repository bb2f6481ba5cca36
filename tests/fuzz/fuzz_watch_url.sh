#!/bin/sh
# Builds the URL, Location and proxy-variable fuzz target with clang + libFuzzer (ASan+UBSan) and
# runs it from the seed corpus.
# Usage: tests/fuzz/fuzz_watch_url.sh [SECONDS] [libFuzzer flags...]   (default 60 s)
# Output: build-fuzz/fuzz_watch_url; crashes go to build-fuzz/fuzz_watch_url-artifacts/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
out=$root/build-fuzz
mkdir -p "$out/fuzz_watch_url-corpus" "$out/fuzz_watch_url-artifacts"
command -v clang >/dev/null 2>&1 || { echo "clang is needed (apt-get install clang)"; exit 1; }
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  -I"$root" -o "$out/fuzz_watch_url" "$root/tests/fuzz/fuzz_watch_url.c" \
  "$root"/watch/url.c "$root"/watch/proxyenv.c "$root"/base/buf.c "$root"/base/b64.c -luv
cp -n "$root"/tests/fuzz/fuzz_watch_url_seeds/* "$out/fuzz_watch_url-corpus/" 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$out/fuzz_watch_url" -max_total_time="$secs" -timeout=10 \
  -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$out/fuzz_watch_url-artifacts/" "$@" "$out/fuzz_watch_url-corpus"
