#!/usr/bin/env bash
# The repository index benchmark (issue 12): generates indexes of several sizes
# (bench/source/gen_index.py), stream-parses each keeping 3 charts (index_bench), and loads the
# same file with Helm v4.3.1's own repo.LoadIndexFile (the chart-source oracle) for comparison.
# Prints `name value unit` lines. No thresholds.
#   bench/source/run.sh [MB...]      (default: 2.6 26 104)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
index_bench=$("$root/bench/helm-cc.sh" "$root/bench/source/index_bench.c" index_bench)
oracle=""
if oracle=$("$root/tests/oracle/source/build" 2>/dev/null); then :; else oracle=""; fi
# The helm CLI itself (v4, built and cached by tests/cluster/build), when it is there.
helm_cli=""
for h in "$HOME/.cache/rudder/bin"/helm-v4*/helm; do [ -x "$h" ] && helm_cli=$h; done
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2.6 26 104)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mb in "${sizes[@]}"; do
  f=$tmp/index-$mb.yaml
  python3 "$root/bench/source/gen_index.py" "$f" "$mb" 2>/dev/null
  echo "# index of $mb MB: rudder (helm/source/index, 3 charts kept)"
  "$index_bench" "$f"
  if [ -n "$oracle" ]; then
    echo "# the same file loaded by Helm v4.3.1 repo.LoadIndexFile, then Get of one chart"
    printf 'chart-0007\t\n' >"$tmp/q"
    /usr/bin/time -f 'helm_load_time %e s
helm_peak_rss %M KiB' "$oracle" index "$f" <"$tmp/q" 2>&1 >/dev/null | grep '^helm_'
  fi
  if [ -n "$helm_cli" ]; then
    echo "# the same file as a repository's cached index, read by the helm CLI: helm search repo bench/chart-0007"
    hh=$tmp/helm-$mb
    mkdir -p "$hh/cache"
    cp "$f" "$hh/cache/bench-index.yaml"
    printf 'apiVersion: ""\ngenerated: "0001-01-01T00:00:00Z"\nrepositories:\n- name: bench\n  url: http://127.0.0.1:1/\n' >"$hh/repositories.yaml"
    HELM_REPOSITORY_CONFIG=$hh/repositories.yaml HELM_REPOSITORY_CACHE=$hh/cache \
      /usr/bin/time -f 'helm_cli_search_time %e s
helm_cli_search_peak_rss %M KiB' "$helm_cli" search repo bench/chart-0007 2>&1 >/dev/null | grep '^helm_cli_'
  fi
done
