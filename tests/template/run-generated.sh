#!/bin/sh
# Generates COUNT random template cases (seed from $TPL_SEED or the time),
# renders them with the Go oracle and with rudder, and compares byte for byte
# (output, or error text when Go fails). Fails when Go is missing, when fewer
# than COUNT cases were compared, or on any mismatch; for a mismatch it prints
# the seed and a minimised reproducer of (up to 3 of) the failing cases.
# Usage: run-generated.sh RUNNER [COUNT]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
runner=$1
count=${2:-10000}
command -v go >/dev/null 2>&1 || { echo "FAIL: Go is not installed; the generated template cases need the Go oracle (tests/deps checks for it)"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is not installed; it runs the case generator"; exit 1; }
oracle=$("$here/../oracle/template/build.sh")
seed=${TPL_SEED:-$(date +%s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "seed $seed, $count cases"
python3 "$here/gen.py" "$seed" "$count" > "$work/gen.tcase"
"$oracle" "$work/gen.tcase" > "$work/gen.jsonl"
set +e
"$runner" "$work/gen.jsonl" > "$work/summary" 2> "$work/fails"
rc=$?
set -e
cat "$work/summary"
passed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$work/summary")
failed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$work/summary")
compared=$(( ${passed:-0} + ${failed:-0} ))
errors=$(grep -c '"error"' "$work/gen.jsonl" || true)
echo "compared $compared cases ($((compared - errors)) rendered by Go, $errors Go errors)"
if [ "$compared" -lt "$count" ]; then
  echo "FAIL: only $compared of $count generated cases were compared"
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  head -c 20000 "$work/fails"
  echo "FAIL: $failed generated cases differ from Go (reproduce: TPL_SEED=$seed $0 RUNNER $count)"
  for name in $(sed -n 's/^FAIL //p' "$work/fails" | head -3); do
    echo "--- minimised $name:"
    python3 "$here/minimise.py" "$oracle" "$runner" "$work/gen.jsonl" "$name" || true
  done
  exit 1
fi
