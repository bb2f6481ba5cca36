#!/bin/sh
# Fuzzes the YAML and JSON encoders against the Go oracle: generates COUNT
# random value trees (tests/template/gen_values.py; seed from $TPL_SEED or the
# time), renders each with every encoder template of the generator (toYaml,
# toJson, toPrettyJson, toRawJson, toYamlPretty, fromYaml/fromJson round
# trips) with the oracle and with rudder, and compares byte for byte (output,
# or error text when Go fails). Fails when Go or python3 is missing, when
# fewer cases than generated were compared, or on any mismatch; for a
# mismatch it prints the seed and a minimised reproducer (the value tree
# shrunk) of up to 3 of the failing cases.
# Usage: run-encoders.sh RUNNER [COUNT]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
runner=$1
count=${2:-2000}
command -v go >/dev/null 2>&1 || { echo "FAIL: Go is not installed; the encoder fuzz cases need the Go oracle (tests/deps checks for it)"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is not installed; it runs the value-tree generator"; exit 1; }
oracle=$("$here/../oracle/template/build.sh")
seed=${TPL_SEED:-$(date +%s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_values.py" "$seed" "$count" > "$work/gen.tcase"
cases=$(grep -c '^=== ' "$work/gen.tcase")
echo "seed $seed, $count value trees, $cases cases"
"$oracle" "$work/gen.tcase" > "$work/gen.jsonl"
verrs=$(grep -c '"values_error"' "$work/gen.jsonl" || true)
if [ "$verrs" -ne 0 ]; then
  grep -m1 '"values_error"' "$work/gen.jsonl" | head -c 2000
  echo "FAIL: the generator wrote $verrs value trees Go cannot read (reproduce: TPL_SEED=$seed $0 RUNNER $count)"
  exit 1
fi
set +e
TZ=UTC "$runner" "$work/gen.jsonl" > "$work/summary" 2> "$work/fails"
rc=$?
set -e
cat "$work/summary"
passed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$work/summary")
failed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$work/summary")
compared=$(( ${passed:-0} + ${failed:-0} ))
errors=$(grep -c '"error"' "$work/gen.jsonl" || true)
echo "compared $compared cases ($((compared - errors)) rendered by Go, $errors Go errors)"
if [ "$compared" -lt "$cases" ]; then
  echo "FAIL: only $compared of $cases generated cases were compared"
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  # Cases Go itself renders differently from run to run (key order of keys mixing
  # digits and letters follows Go's random map order) are reported, not failed.
  real=0
  for name in $(sed -n 's/^FAIL //p' "$work/fails"); do
    if python3 "$here/gen_values.py" go-varies "$oracle" "$work/gen.jsonl" "$name"; then
      echo "note: $name: Go's own output varies between runs (yaml.v2 key order); not counted"
    else
      real=$((real + 1)); echo "$name" >> "$work/real"
    fi
  done
  [ "$real" -eq 0 ] && { echo "ok: every difference is a case Go renders nondeterministically"; exit 0; }
  failed=$real
fi
if [ "$rc" -ne 0 ]; then
  head -c 20000 "$work/fails"
  echo "FAIL: $failed encoder cases differ from Go (reproduce: TPL_SEED=$seed $0 RUNNER $count)"
  for name in $(head -3 "$work/real"); do
    echo "--- minimised $name:"
    python3 "$here/gen_values.py" minimise "$oracle" "$runner" "$work/gen.jsonl" "$name" || true
  done
  exit 1
fi
