#!/usr/bin/env bash
# values.schema.json $ref to documents served over HTTP (the nginx chart server): rudder template
# and the real helm give the same output, or the same error text, for a document found, a value
# it refuses, a document it refers to relatively, a missing one (404) and one that is not JSON.
# fixtures: servers
set -euo pipefail
: "${RUDDER_SERVERS_STATE:?run through ctest (the e2e.servers-up fixture provides the servers)}"
[ -f "$RUDDER_SERVERS_STATE/env" ] ||
  { echo "FAIL: no chart servers: $RUDDER_SERVERS_STATE/env is missing (e2e.servers-up failed?)" >&2; exit 1; }
. "$RUDDER_SERVERS_STATE/env"
: "${RUDDER_BIN:?RUDDER_BIN (the rudder binary) is not set}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rudder-schema-ref.XXXXXX")
docs="$SRV_REPO_DIR/schema-ref-$$"
checks=0
cleanup() {
  local rc=$?
  rm -rf "$WORK" "$docs"
  if [ $rc = 0 ]; then echo "$checks passed, 0 failed"; else echo "$checks passed, 1 failed"; fi
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
base="$SRV_HTTP_URL/schema-ref-$$"
mkdir -p "$docs/sub"
printf '{"$defs":{"port":{"type":"integer","maximum":65535},"name":{"$ref":"sub/name.json"}}}\n' >"$docs/defs.json"
printf '{"type":"string","minLength":3}\n' >"$docs/sub/name.json"
printf '{"type": tru}\n' >"$docs/bad.json"
curl -fsS -o /dev/null "$base/defs.json" || fail "nginx does not serve $base/defs.json"

# compare NAME SCHEMA VALUES...: helm template and rudder template of a chart with that schema
compare() {
  local name=$1 schema=$2
  shift 2
  local c="$WORK/$name"
  mkdir -p "$c/templates"
  printf 'apiVersion: v2\nname: %s\nversion: 0.1.0\n' "$name" >"$c/Chart.yaml"
  printf '%s\n' "$schema" >"$c/values.schema.json"
  printf 'port: 80\nname: web\n' >"$c/values.yaml"
  printf 'kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\ndata: {port: "{{ .Values.port }}"}\n' >"$c/templates/cm.yaml"
  local hs=0 rs=0
  "$SRV_HELM" template r "$c" "$@" >"$WORK/h.out" 2>"$WORK/h.err" || hs=$?
  "$RUDDER_BIN" template r "$c" "$@" >"$WORK/r.out" 2>"$WORK/r.err" || rs=$?
  [ $hs = $rs ] || fail "$name: helm exited $hs, rudder $rs: $(cat "$WORK/h.err" "$WORK/r.err")"
  cmp -s "$WORK/h.out" "$WORK/r.out" || fail "$name: output differs: $(diff "$WORK/h.out" "$WORK/r.out" | head -20)"
  cmp -s "$WORK/h.err" "$WORK/r.err" || fail "$name: error differs: $(diff "$WORK/h.err" "$WORK/r.err" | head -20)"
  checks=$((checks + 1))
  echo "ok $checks - $name (helm exit $hs): $(head -c 200 "$WORK/h.err" | tr '\n' ' ')"
}
compare found "{\"properties\":{\"port\":{\"\$ref\":\"$base/defs.json#/\$defs/port\"}}}"
compare refused "{\"properties\":{\"port\":{\"\$ref\":\"$base/defs.json#/\$defs/port\"}}}" --set port=70000
compare relative "{\"\$id\":\"$base/root.json\",\"properties\":{\"name\":{\"\$ref\":\"defs.json#/\$defs/name\"}}}" --set name=ab
compare relative-ok "{\"\$id\":\"$base/root.json\",\"properties\":{\"name\":{\"\$ref\":\"defs.json#/\$defs/name\"}}}"
compare not-found "{\"properties\":{\"port\":{\"\$ref\":\"$base/none.json\"}}}"
compare not-json "{\"properties\":{\"port\":{\"\$ref\":\"$base/bad.json\"}}}"
compare pointer-missing "{\"properties\":{\"port\":{\"\$ref\":\"$base/defs.json#/\$defs/nope\"}}}"
compare server-down "{\"properties\":{\"port\":{\"\$ref\":\"$SRV_DOWN_URL/x.json\"}}}"
