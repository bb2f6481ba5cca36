#!/bin/sh
# Render benchmark: rudder's template engine vs Go's text/template (the
# oracle, Helm v4.3.1's functions) doing the same work in one process: parse
# a chart-like template set and render every file, N times. Prints both
# figures side by side and whether the outputs are byte-identical. No
# thresholds: figures only. Usage: bench/template/run.sh [N] [SET.tcase...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-1000}
[ $# -gt 0 ] && shift
sets=${*:-$here/chart.tcase}
out=${BENCH_OUT:-$root/build-bench}
mkdir -p "$out"
oracle=$("$root/tests/oracle/template/build.sh")
bench=$("$here/build.sh")
for s in $sets; do
  "$oracle" "$s" > "$out/set.jsonl"
  go=$("$oracle" -bench "$n" "$s")
  c=$("$bench" "$n" "$out/set.jsonl")
  echo "$go"
  echo "$c"
  printf '%s\n%s\n' "$go" "$c" | awk '
    { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } name = $2 }
    END {
      printf "\n%-26s %16s %16s %9s\n", name, "Go text/template", "rudder (C)", "Go/rudder"
      split("ns_per_render exec_ns_per_render alloc_bytes_per_render maxrss_kb out_bytes", k, " ")
      for (i = 1; i <= 5; i++)
        printf "%-26s %16s %16s %9.1fx\n", k[i], v["go", k[i]], v["rudder", k[i]], v["rudder", k[i]] ? v["go", k[i]] / v["rudder", k[i]] : 0
      printf "%-26s %s\n", "identical output", (v["go", "fnv"] == v["rudder", "fnv"] && v["go", "out_bytes"] == v["rudder", "out_bytes"]) ? "yes" : "NO"
    }'
done
