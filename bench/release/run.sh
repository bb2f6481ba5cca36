#!/usr/bin/env bash
# Release record benchmarks: bench/release/record_write.c (the upgrade's supersede with the
# compressed tail taken from the listed record, and compressed whole). Prints `name value unit`
# lines. No thresholds.
#   bench/release/run.sh [ITERATIONS]      (default 2000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$("$root/bench/helm-cc.sh" "$root/bench/release/record_write.c" record_write)
"$bin" "$root/bench/scale/chart" "${1:-2000}"
