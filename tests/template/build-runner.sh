#!/bin/sh
# Builds the corpus runner straight from the sources (independent of the rest
# of the tree) into $1 (default: build-tpl/tpl_corpus). Extra CFLAGS via $CFLAGS.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-tpl/tpl_corpus}
mkdir -p "$(dirname "$out")"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter -Wvla \
  ${CFLAGS:-} -I"$root" -I/usr/include/cjson -o "$out" \
  "$root"/tests/template/runner.c "$root"/helm/template/*.c "$root"/base/*.c "$root"/helm/release/release.c "$root"/helm/render/manifest.c -lcjson -lyaml -lpcre2-8 -lmbedx509 -lmbedcrypto -lz -lm
echo "$out"
