#!/bin/sh
# Regenerates expected/*.jsonl from corpus/*.tcase with the Go oracle.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
oracle=$("$here/../oracle/template/build.sh")
mkdir -p "$here/expected"
for f in "$here"/corpus/*.tcase; do
  b=$(basename "$f" .tcase)
  "$oracle" "$f" > "$here/expected/$b.jsonl"
done
echo "regenerated $(ls "$here"/expected/*.jsonl | wc -l) files"
