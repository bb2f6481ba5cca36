#!/usr/bin/env bash
# Renders every chart under tests/charts/<name>/ with the pinned `helm template` and with
# `rudder template` (the rudder-template test binary) and compares standard output byte for byte
# and success/failure; then packages each chart with `helm package` and compares the .tgz render
# too. An optional <name>.args file next to the chart holds extra arguments (one per line; $DIR
# is the tests/charts directory). Fails loudly when helm is missing.
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
  (cd "$tmp" && "$bin" "$@" "$path") >"$tmp/r.out" 2>"$tmp/r.err"; local rs=$?
  local ok=1
  if [ $hs -ne 0 ] && [ $rs -eq 0 ]; then ok=0; echo "FAIL $name: helm failed, rudder did not"; sed 's/^/  helm: /' "$tmp/h.err"; fi
  if [ $hs -eq 0 ] && [ $rs -ne 0 ]; then ok=0; echo "FAIL $name: rudder failed, helm did not"; sed 's/^/  rudder: /' "$tmp/r.err"; fi
  if ! cmp -s "$tmp/h.out" "$tmp/r.out"; then ok=0; echo "FAIL $name: stdout differs"; diff "$tmp/h.out" "$tmp/r.out" | head -40; fi
  if [ $hs -ne 0 ] && ! cmp -s "$tmp/h.err" "$tmp/r.err"; then
    echo "note $name: error text differs"; diff "$tmp/h.err" "$tmp/r.err" | head -10 | sed 's/^/  /'
  fi
  if [ $ok -eq 1 ]; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); fi
}
for c in "${charts[@]}"; do
  args=(rel)
  if [ -f "$here/$c.args" ]; then
    while IFS= read -r line; do [ -n "$line" ] && args+=("${line//\$DIR/$here}"); done <"$here/$c.args"
  fi
  compare "$c" "$here/$c" "${args[@]}"
  mkdir -p "$tmp/pkg/$c"
  if "$helm" package "$here/$c" -d "$tmp/pkg/$c" >/dev/null 2>&1; then
    compare "$c.tgz" "$(ls "$tmp/pkg/$c"/*.tgz)" "${args[@]}"
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
