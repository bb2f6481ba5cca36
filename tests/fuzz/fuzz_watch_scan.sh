#!/bin/sh
# Builds the watch scanner fuzz target with clang + libFuzzer (ASan+UBSan) and runs it.
# Usage: tests/fuzz/fuzz_watch_scan.sh [SECONDS] [libFuzzer flags...]   (default 60 s)
# Output: build-fuzz/fuzz_watch_scan; crashes are written to build-fuzz/fuzz_watch_scan-artifacts/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
out=$root/build-fuzz
mkdir -p "$out/fuzz_watch_scan-corpus" "$out/fuzz_watch_scan-artifacts"
command -v clang >/dev/null 2>&1 || { echo "clang is needed (apt-get install clang)"; exit 1; }
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  -I"$root" -I/usr/include/cjson -o "$out/fuzz_watch_scan" "$root/tests/fuzz/fuzz_watch_scan.c" \
  "$root"/watch/jscan.c "$root"/watch/ndjson.c "$root"/base/buf.c -lcjson -luv
printf '%s' '{"items":[{"metadata":{"name":"a","namespace":"n"}},1,"s",[[]]],"metadata":{"continue":"x"}}' \
  > "$out/fuzz_watch_scan-corpus/list"
printf '%s\n%s\n' '{"type":"ADDED","object":{"metadata":{"name":"a"}}}' '{"type":"ADDED","object":{"x":[1,}}' \
  > "$out/fuzz_watch_scan-corpus/events"
printf '%s\n%s\n' '{"type":"MODIFIED","object":{"kind":"D","metadata":{"name":"a","managedFields":[{"m":"r","f":{"f:x":{}}}]},"spec":{}}}' \
  '{"object":{"metadata":{"managedFields":[],"name":"b"}},"type":"ADDED"}' > "$out/fuzz_watch_scan-corpus/managed"
ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_watch_scan" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix="$out/fuzz_watch_scan-artifacts/" "$@" "$out/fuzz_watch_scan-corpus"
