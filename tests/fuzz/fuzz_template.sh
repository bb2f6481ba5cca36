#!/bin/sh
# Builds the template fuzz target with clang + libFuzzer (ASan+UBSan, the
# engine's sources instrumented) and runs it. Seeds come from the hand corpus.
# Usage: tests/fuzz/fuzz_template.sh [SECONDS] [libFuzzer flags...]   (default 60 s)
# Output: build-fuzz/fuzz_template; crashes are written to build-fuzz/fuzz_template-artifacts/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
out=$root/build-fuzz
mkdir -p "$out/fuzz_template-corpus" "$out/fuzz_template-artifacts"
command -v clang >/dev/null 2>&1 || { echo "clang is needed (apt-get install clang)"; exit 1; }
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
  -I"$root" -I/usr/include/cjson -o "$out/fuzz_template" "$root/tests/fuzz/fuzz_template.c" \
  "$root"/helm/template/value.c "$root"/helm/template/fmt.c "$root"/helm/template/parse.c "$root"/helm/template/exec.c \
  "$root"/helm/template/helm_funcs.c "$root"/helm/template/unicode.c "$root"/helm/template/unicode_tables.c \
  "$root"/base/buf.c "$root"/base/gofloat.c -lcjson -lm
# Seeds: every template of the hand corpus, one file each.
python3 - "$root/tests/template/expected" "$out/fuzz_template-corpus" <<'PY'
import glob, hashlib, json, os, sys
src, dst = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob(os.path.join(src, "*.jsonl"))):
    if os.path.basename(path).startswith("fn_"):
        continue
    for line in open(path, encoding="utf-8"):
        c = json.loads(line)
        data = "".join(t for _, t in c["templates"]).encode() + b"\0" + json.dumps(c["values"]).encode()
        if len(data) > 4096:
            continue
        with open(os.path.join(dst, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
PY
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$out/fuzz_template" -max_total_time="$secs" -timeout=10 \
  -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$out/fuzz_template-artifacts/" "$@" "$out/fuzz_template-corpus"
