#!/bin/sh
# Sprig function benchmark: rudder vs the Go oracle (Helm v4.3.1's function
# map) in one run, side by side: toYaml of a ~1 MB values tree, include of a
# helper 10,000 times, semverCompare (1,000 checks) and regex functions
# (regexMatch/regexReplaceAll/regexFind/regexSplit, 750 strings each). The
# set is written by sprig_gen.py; the measuring is bench/template/run.sh's
# (bench_template.c and the oracle's -bench mode: ns per render incl. parse,
# exec-only ns, bytes allocated per render, peak RSS, identical output).
# Usage: bench/template/sprig_bench.sh [N]   (renders per case, default 20)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${BENCH_OUT:-$root/build-bench}
mkdir -p "$out"
python3 "$here/sprig_gen.py" > "$out/sprig_bench.tcase"
exec "$here/run.sh" "${1:-20}" "$out/sprig_bench.tcase"
