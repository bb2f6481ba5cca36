#!/bin/sh
# Generates COUNT random template cases (seed from $TPL_SEED or the time),
# renders them with the Go oracle and with rudder, and compares byte for byte.
# Usage: run-generated.sh RUNNER [COUNT]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
runner=$1
count=${2:-10000}
command -v go >/dev/null 2>&1 || { echo "FAIL: Go is not installed; the generated template cases need the Go oracle (tests/deps checks for it)"; exit 1; }
oracle=$("$here/../oracle/template/build.sh")
seed=${TPL_SEED:-$(date +%s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "seed $seed, $count cases"
python3 "$here/gen.py" "$seed" "$count" > "$work/gen.tcase"
"$oracle" "$work/gen.tcase" > "$work/gen.jsonl"
"$runner" "$work/gen.jsonl"
