#!/usr/bin/env bash
# The chart servers themselves (tests/servers/up): each one really works, as
# curl and the real helm see it. No cluster needed.
# fixtures: servers
set -euo pipefail
: "${RUDDER_SERVERS_STATE:?run through ctest (the e2e.servers-up fixture provides the servers)}"
[ -f "$RUDDER_SERVERS_STATE/env" ] ||
  { echo "FAIL: no chart servers: $RUDDER_SERVERS_STATE/env is missing (e2e.servers-up failed?)" >&2; exit 1; }
. "$RUDDER_SERVERS_STATE/env"
src=${RUDDER_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rudder-servers-test.XXXXXX")
checks=0
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { checks=$((checks + 1)); echo "ok $checks - $*"; }
cleanup() {
  local rc=$?
  rm -rf "$WORK"
  if [ $rc = 0 ]; then echo "$checks passed, 0 failed"; else echo "$checks passed, 1 failed"; fi
  exit $rc
}
trap cleanup EXIT

# code ARGS...: the HTTP status curl gets (000 when no answer), within 20 s.
code() { curl -sS -o /dev/null -w '%{http_code}' -m 20 "$@" 2>/dev/null || true; }
# expect_code WANT DESCRIPTION CURL_ARGS...
expect_code() {
  local want=$1 desc=$2 got
  shift 2
  got=$(code "$@")
  [ "$got" = "$want" ] || fail "$desc: HTTP $got, want $want (curl $*)"
  ok "$desc: $want"
}
# curl_rc ARGS...: curl's exit status.
curl_rc() { local rc=0; curl -sS -o /dev/null -m 20 "$@" 2>/dev/null || rc=$?; echo $rc; }

# --- the chart repository (nginx) -------------------------------------------------

ca=(--cacert "$SRV_CA")
cert=(--cert "$SRV_CLIENT_CERT" --key "$SRV_CLIENT_KEY")
for prefix in "" /chartrepo/library; do
  expect_code 200 "index over plain http at '$prefix/'" "$SRV_HTTP_URL$prefix/index.yaml"
  expect_code 200 "index over https at '$prefix/'" "${ca[@]}" "$SRV_HTTPS_URL$prefix/index.yaml"
  expect_code 200 "index over https + basic auth at '$prefix/'" "${ca[@]}" -u "$SRV_USER:$SRV_PASS" "$SRV_BASIC_URL$prefix/index.yaml"
  expect_code 200 "index over https + client certificate at '$prefix/'" "${ca[@]}" "${cert[@]}" "$SRV_MTLS_URL$prefix/index.yaml"
  expect_code 200 "a chart over https at '$prefix/'" "${ca[@]}" "$SRV_HTTPS_URL$prefix/podlike-0.2.0.tgz"
done
if [ -n "${SRV_HTTPS6_URL:-}" ]; then
  expect_code 200 "index over https on ::1" "${ca[@]}" "$SRV_HTTPS6_URL/index.yaml"
fi
curl -sS "${ca[@]}" "$SRV_HTTPS_URL/index.yaml" >"$WORK/index.yaml"
cmp -s "$WORK/index.yaml" "$SRV_REPO_DIR/index.yaml" || fail "the index served is not SRV_REPO_DIR/index.yaml"
for v in 0.1.0 0.2.0 1.0.0-rc.1; do
  grep -q "^    version: $v\$" "$WORK/index.yaml" || fail "index.yaml has no podlike $v"
  [ -f "$SRV_REPO_DIR/podlike-$v.tgz" ] || fail "no podlike-$v.tgz in SRV_REPO_DIR"
done
grep -q '^  settings:$' "$WORK/index.yaml" || fail "index.yaml has no second chart (settings)"
ok "index.yaml lists podlike 0.1.0, 0.2.0, 1.0.0-rc.1 and settings"

[ "$(curl_rc --cacert "$SRV_OTHER_CA" "$SRV_HTTPS_URL/index.yaml")" = 60 ] ||
  fail "https trusted with the other CA"
ok "https refused when trusting the other CA (curl 60: certificate verify failed)"
[ "$(curl_rc "$SRV_HTTPS_URL/index.yaml")" = 60 ] || fail "https trusted without the test CA"
ok "https refused with the system CAs only"

expect_code 401 "basic auth without credentials" "${ca[@]}" "$SRV_BASIC_URL/index.yaml"
expect_code 401 "basic auth with a wrong password" "${ca[@]}" -u "$SRV_USER:wrong" "$SRV_BASIC_URL/index.yaml"
expect_code 400 "mTLS without a client certificate" "${ca[@]}" "$SRV_MTLS_URL/index.yaml"
expect_code 400 "mTLS with a client certificate of the other CA" "${ca[@]}" \
  --cert "$SRV_OTHER_CLIENT_CERT" --key "$SRV_OTHER_CLIENT_KEY" "$SRV_MTLS_URL/index.yaml"

hdrs=$(curl -sS -D - -o "$WORK/index.gz" -H 'Accept-Encoding: gzip' "$SRV_HTTP_URL/index.yaml")
grep -qi '^content-encoding: gzip' <<<"$hdrs" || fail "index.yaml not gzipped: $hdrs"
gzip -dc "$WORK/index.gz" | cmp -s - "$SRV_REPO_DIR/index.yaml" || fail "gzipped index.yaml does not decode to the index"
ok "index.yaml answered gzipped to Accept-Encoding: gzip"
etag=$(curl -sS -D - -o /dev/null "$SRV_HTTP_URL/index.yaml" | sed -n 's/^[Ee][Tt][Aa][Gg]: *\(.*\)\r$/\1/p')
[ -n "$etag" ] || fail "index.yaml has no ETag"
expect_code 304 "index.yaml with a matching If-None-Match" -H "If-None-Match: $etag" "$SRV_HTTP_URL/index.yaml"

# --- the proxy ---------------------------------------------------------------------

before=$(grep -c 'CONNECT 127.0.0.1' "$SRV_PROXY_LOG" || true)
expect_code 200 "index over https through the proxy" --proxy "$SRV_PROXY_URL" "${ca[@]}" "$SRV_HTTPS_URL/index.yaml"
port=${SRV_HTTPS_URL##*:}
grep -q "CONNECT 127.0.0.1:$port " "$SRV_PROXY_LOG" || fail "no CONNECT 127.0.0.1:$port in $SRV_PROXY_LOG"
[ "$(grep -c 'CONNECT 127.0.0.1' "$SRV_PROXY_LOG")" -gt "$before" ] || fail "the proxy log did not grow"
ok "the proxy log shows the CONNECT"
expect_code 200 "plain http through the proxy" --proxy "$SRV_PROXY_URL" "$SRV_HTTP_URL/index.yaml"
[ "$(curl_rc --proxy "$SRV_PROXY_URL" -k https://chart.invalid/index.yaml)" != 0 ] ||
  fail "the proxy let a CONNECT to a non-loopback name through"
grep -q 'refused on filtered domain "chart.invalid"' "$SRV_PROXY_LOG" || fail "no refusal of chart.invalid in the proxy log"
ok "the proxy refuses CONNECT to a name that is not loopback"

# --- the fault server -----------------------------------------------------------------

for base in "$SRV_FAULT_URL" "$SRV_FAULT_TLS_URL"; do
  expect_code 500 "fault /status/500 ($base)" "${ca[@]}" "$base/status/500"
done
F=$SRV_FAULT_URL
expect_code 404 "fault /status/404" "$F/status/404"
ra=$(curl -sS -D - -o /dev/null "$F/status/503?retry-after=7")
grep -q '^HTTP/1.1 503' <<<"$ra" && grep -qi '^retry-after: 7' <<<"$ra" || fail "no 503 with Retry-After: 7: $ra"
ok "fault /status/503?retry-after=7 sends Retry-After"
[ "$(curl_rc -m 2 "$F/stall")" = 28 ] || fail "/stall answered"
ok "fault /stall never answers (curl timed out)"
[ "$(curl_rc -m 2 "${ca[@]}" "$SRV_FAULT_TLS_URL/stall")" = 28 ] || fail "/stall over TLS answered"
ok "fault /stall over TLS never answers"
expect_code 302 "fault /redirect-loop" "$F/redirect-loop"
[ "$(curl_rc -L --max-redirs 10 "$F/redirect-loop")" = 47 ] || fail "/redirect-loop ends"
loc=$(curl -sS -D - -o /dev/null "$F/redirect-loop" | sed -n 's/^[Ll]ocation: *\(.*\)\r$/\1/p')
[ "$loc" = /redirect-loop ] || fail "/redirect-loop redirects to '$loc'"
ok "fault /redirect-loop redirects to itself forever"
expect_code 200 "fault /redirect?to= followed" -L "$F/redirect?to=$SRV_HTTP_URL/index.yaml"
curl -sS -D "$WORK/bomb.h" -o "$WORK/bomb.gz" "$F/gzip-bomb"
grep -qi '^content-encoding: gzip' "$WORK/bomb.h" || fail "/gzip-bomb has no Content-Encoding: gzip"
size=$(stat -c %s "$WORK/bomb.gz")
[ "$size" -lt $((4 << 20)) ] || fail "/gzip-bomb is $size bytes on the wire"
# gzip's trailer holds the decoded size mod 2^32: 1 GiB is 0x40000000.
[ "$(tail -c 4 "$WORK/bomb.gz" | od -An -tu4 | tr -d ' ')" = $((1 << 30)) ] || fail "/gzip-bomb does not say 1 GiB"
[ "$( (gzip -dc "$WORK/bomb.gz" 2>/dev/null || true) | head -c $((64 << 20)) | tr -d '\0' | wc -c)" = 0 ] ||
  fail "/gzip-bomb does not decode to zeros"
[ "$(gzip -dc "$WORK/bomb.gz" | wc -c)" = $((1 << 30)) ] || fail "/gzip-bomb does not decode to 1 GiB"
ok "fault /gzip-bomb: $size bytes that decode to 1 GiB of zeros"
curl -sS "${ca[@]}" -H 'Authorization: Bearer s3cret' -H 'X-Rudder: 1' "$SRV_FAULT_TLS_URL/echo?a=b" >"$WORK/echo.json"
python3 - "$WORK/echo.json" <<'EOF' || fail "/echo: $(cat "$WORK/echo.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["method"] == "GET" and d["path"] == "/echo" and d["query"] == "a=b", d
assert d["header"]["authorization"] == "Bearer s3cret", d
assert ["X-Rudder", "1"] in d["headers"], d
EOF
ok "fault /echo shows the method, path and headers received"
rc=$(curl_rc "$F/drop")
[ "$rc" = 18 ] || fail "/drop: curl $rc, want 18 (transfer closed with data left)"
ok "fault /drop closes halfway through the body"
n=$(curl -sS "$F/big?n=3000000" | wc -c)
[ "$n" = 3000000 ] || fail "/big?n=3000000 sent $n bytes"
ok "fault /big?n=3000000 sends 3000000 bytes"
curl -sS "$F/index-huge" >"$WORK/huge.yaml"
python3 - "$WORK/huge.yaml" <<'EOF' || fail "/index-huge is not an index of 100,000 versions"
import sys
n = sum(1 for l in open(sys.argv[1]) if l.startswith("    version: "))
assert n == 100000, n
EOF
HELM=$SRV_HELM
mkdir -p "$WORK/pull" "$WORK/pull2" "$WORK/pull3"
export HELM_CONFIG_HOME=$WORK/helm/config HELM_CACHE_HOME=$WORK/helm/cache HELM_DATA_HOME=$WORK/helm/data
export HELM_REGISTRY_CONFIG=$WORK/helm/registry.json HELM_REPOSITORY_CONFIG=$WORK/helm/repositories.yaml
ok "fault /index-huge: 100,000 chart versions ($(stat -c %s "$WORK/huge.yaml") bytes)"
curl -sS "$F/corrupt.tgz" >"$WORK/corrupt.tgz"
! gzip -t "$WORK/corrupt.tgz" 2>/dev/null || fail "/corrupt.tgz is gzip"
ok "fault /corrupt.tgz is not gzip"
curl -sS "$F/traversal.tgz" >"$WORK/traversal.tgz"
tar tzf "$WORK/traversal.tgz" 2>/dev/null | grep -qx '\.\./evil\.yaml' || fail "/traversal.tgz has no ../evil.yaml member"
ok "fault /traversal.tgz holds a member ../evil.yaml"
hdrs=$(curl -sS -D - -o /dev/null "$F/etag")
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\(.*\)\r$/\1/p' <<<"$hdrs")
lm=$(sed -n 's/^[Ll]ast-[Mm]odified: *\(.*\)\r$/\1/p' <<<"$hdrs")
[ -n "$etag" ] && [ -n "$lm" ] || fail "/etag: no ETag or Last-Modified: $hdrs"
expect_code 304 "fault /etag with If-None-Match" -H "If-None-Match: $etag" "$F/etag"
expect_code 304 "fault /etag with If-Modified-Since" -H "If-Modified-Since: $lm" "$F/etag"
expect_code 200 "fault /etag with another ETag" -H 'If-None-Match: "other"' "$F/etag"
[ "$(curl_rc "$SRV_DOWN_URL/index.yaml")" = 7 ] || fail "something answers on SRV_DOWN_URL"
ok "nothing listens on SRV_DOWN_URL (curl 7: connection refused)"

# --- the real helm as a client -----------------------------------------------------------

"$HELM" repo add srv "$SRV_HTTPS_URL" --ca-file "$SRV_CA" >/dev/null || fail "helm repo add $SRV_HTTPS_URL"
"$HELM" search repo srv/podlike --versions >"$WORK/search" || fail "helm search repo"
grep -q '^srv/podlike[[:space:]]*0\.2\.0' "$WORK/search" || fail "helm search repo: $(cat "$WORK/search")"
! grep -q '1\.0\.0-rc\.1' "$WORK/search" || fail "helm search repo lists the prerelease without --devel"
"$HELM" search repo srv/podlike --versions --devel | grep -q '1\.0\.0-rc\.1' || fail "helm search --devel misses 1.0.0-rc.1"
ok "helm repo add / search repo against SRV_HTTPS_URL (prerelease only with --devel)"
"$HELM" pull srv/podlike --version 0.2.0 -d "$WORK/pull" >/dev/null || fail "helm pull srv/podlike --version 0.2.0"
tar xzf "$WORK/pull/podlike-0.2.0.tgz" -O podlike/Chart.yaml | grep -q '^version: 0.2.0$' || fail "pulled chart is not 0.2.0"
ok "helm pull srv/podlike --version 0.2.0 over https with --ca-file"
"$HELM" pull podlike --repo "$SRV_BASIC_URL/chartrepo/library" --version 0.1.0 --ca-file "$SRV_CA" \
  --username "$SRV_USER" --password "$SRV_PASS" -d "$WORK/pull" >/dev/null || fail "helm pull with basic auth"
ok "helm pull --repo SRV_BASIC_URL/chartrepo/library with --username/--password"
"$HELM" pull podlike --repo "$SRV_MTLS_URL" --version 1.0.0-rc.1 --ca-file "$SRV_CA" \
  --cert-file "$SRV_CLIENT_CERT" --key-file "$SRV_CLIENT_KEY" -d "$WORK/pull" >/dev/null || fail "helm pull with a client certificate"
ok "helm pull --repo SRV_MTLS_URL with --cert-file/--key-file"
! "$HELM" pull podlike --repo "$SRV_HTTPS_URL" --version 0.1.0 -d "$WORK/pull2" >/dev/null 2>&1 ||
  fail "helm pull trusted the test CA without --ca-file"
ok "helm pull without --ca-file refuses the test server"

# --- the OCI registries ------------------------------------------------------------------------

accept='Accept: application/vnd.oci.image.manifest.v1+json'
for reg in "$SRV_REGISTRY" "$SRV_REGISTRY_TOKEN"; do
  printf '%s' "$SRV_PASS" | "$HELM" registry login "$reg" --username "$SRV_USER" --password-stdin \
    --ca-file "$SRV_CA" >/dev/null 2>&1 || fail "helm registry login $reg"
  rm -rf "$WORK/oci" && mkdir -p "$WORK/oci"
  "$HELM" pull "oci://$reg/charts/podlike" --version 0.2.0 --ca-file "$SRV_CA" -d "$WORK/oci" >/dev/null 2>&1 ||
    fail "helm pull oci://$reg/charts/podlike --version 0.2.0"
  tar xzf "$WORK/oci/podlike-0.2.0.tgz" -O podlike/Chart.yaml | grep -q '^version: 0.2.0$' || fail "oci pull is not 0.2.0"
  cmp -s "$WORK/oci/podlike-0.2.0.tgz" "$SRV_REPO_DIR/podlike-0.2.0.tgz" ||
    fail "the chart in oci://$reg is not the one in the repository"
  "$HELM" pull "oci://$reg/charts/settings" --version 0.1.0 --ca-file "$SRV_CA" -d "$WORK/oci" >/dev/null 2>&1 ||
    fail "helm pull oci://$reg/charts/settings --version 0.1.0"
  ok "helm pull oci://$reg/charts/podlike --version 0.2.0 (the same bytes as the repository's)"
  "$HELM" registry logout "$reg" >/dev/null 2>&1 || true
  ! "$HELM" pull "oci://$reg/charts/podlike" --version 0.2.0 --ca-file "$SRV_CA" -d "$WORK/oci2" >/dev/null 2>&1 ||
    fail "helm pull from $reg without credentials worked"
  ok "helm pull from $reg without credentials is refused"
done

# basic-auth registry: a Basic challenge; the manifest with credentials is a Helm chart's.
hdrs=$(curl -sS -D - -o /dev/null "${ca[@]}" -H "$accept" "https://$SRV_REGISTRY/v2/charts/podlike/manifests/0.2.0")
grep -q '^HTTP/[0-9.]* 401' <<<"$hdrs" && grep -qi '^www-authenticate: Basic realm=' <<<"$hdrs" ||
  fail "anonymous manifest GET on the basic registry: $hdrs"
ok "basic registry: anonymous manifest GET gets 401 with a Basic challenge"
curl -sS "${ca[@]}" -u "$SRV_USER:$SRV_PASS" -H "$accept" \
  "https://$SRV_REGISTRY/v2/charts/podlike/manifests/0.2.0" >"$WORK/manifest.json"
python3 - "$WORK/manifest.json" <<'EOF' || fail "manifest: $(cat "$WORK/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["config"]["mediaType"] == "application/vnd.cncf.helm.config.v1+json", m
assert m["layers"][0]["mediaType"] == "application/vnd.cncf.helm.chart.content.v1.tar+gzip", m
EOF
ok "basic registry: the manifest of podlike:0.2.0 is a Helm chart's (config and layer media types)"
curl -sS "${ca[@]}" -u "$SRV_USER:$SRV_PASS" "https://$SRV_REGISTRY/v2/charts/podlike/tags/list" >"$WORK/tags.json"
python3 - "$WORK/tags.json" <<'EOF' || fail "tags: $(cat "$WORK/tags.json")"
import json, sys
t = json.load(open(sys.argv[1]))
assert sorted(t["tags"]) == ["0.1.0", "0.2.0", "1.0.0-rc.1"], t
EOF
ok "basic registry: tags/list shows 0.1.0, 0.2.0, 1.0.0-rc.1"
expect_code 401 "basic registry: wrong password" "${ca[@]}" -u "$SRV_USER:wrong" "https://$SRV_REGISTRY/v2/"

# token-auth registry: the Bearer challenge, the token endpoint, the token accepted.
hdrs=$(curl -sS -D - -o /dev/null "${ca[@]}" -H "$accept" "https://$SRV_REGISTRY_TOKEN/v2/charts/podlike/manifests/0.2.0")
grep -q '^HTTP/[0-9.]* 401' <<<"$hdrs" || fail "anonymous manifest GET on the token registry: $hdrs"
chal=$(sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: *\(.*\)\r$/\1/p' <<<"$hdrs")
want="Bearer realm=\"$SRV_TOKEN_REALM\",service=\"$SRV_TOKEN_SERVICE\",scope=\"repository:charts/podlike:pull\""
[ "$chal" = "$want" ] || fail "token registry challenge: '$chal', want '$want'"
ok "token registry: anonymous manifest GET gets 401 with $chal"
q="service=$SRV_TOKEN_SERVICE&scope=repository:charts/podlike:pull"
expect_code 401 "token issuer without credentials" "${ca[@]}" "$SRV_TOKEN_REALM?$q"
expect_code 401 "token issuer with a wrong password" "${ca[@]}" -u "$SRV_USER:wrong" "$SRV_TOKEN_REALM?$q"
token=$(curl -sS "${ca[@]}" -u "$SRV_USER:$SRV_PASS" "$SRV_TOKEN_REALM?$q" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
[ -n "$token" ] || fail "no token from $SRV_TOKEN_REALM"
expect_code 200 "token registry: the manifest GET with the issued Bearer token" "${ca[@]}" -H "$accept" \
  -H "Authorization: Bearer $token" "https://$SRV_REGISTRY_TOKEN/v2/charts/podlike/manifests/0.2.0"
expect_code 401 "token registry: a push-scope request with a pull-only token" "${ca[@]}" -X POST \
  -H "Authorization: Bearer $token" "https://$SRV_REGISTRY_TOKEN/v2/charts/podlike/blobs/uploads/"
expect_code 401 "token registry: a token that is not ours" "${ca[@]}" -H "$accept" \
  -H "Authorization: Bearer ${token%.*}.AAAA" "https://$SRV_REGISTRY_TOKEN/v2/charts/podlike/manifests/0.2.0"

# --- publish --------------------------------------------------------------------------------

# A chart of its own, so the charts other tests rely on keep their versions.
mkdir -p "$WORK/selftest"
cp -r "$src/tests/servers/charts/settings/." "$WORK/selftest/"
sed -i 's/^name: settings$/name: servers-selftest/' "$WORK/selftest/Chart.yaml"
pub=$("$src/tests/servers/publish" "$SRV_STATE" "$WORK/selftest" "0.$$.0") || fail "tests/servers/publish"
[ -f "$pub" ] || fail "publish printed no package path"
"$HELM" repo update srv >/dev/null || fail "helm repo update"
"$HELM" pull srv/servers-selftest --version "0.$$.0" -d "$WORK/pull" >/dev/null || fail "helm pull of the published version"
"$HELM" pull srv/podlike --version 0.1.0 -d "$WORK/pull3" >/dev/null || fail "the index lost podlike 0.1.0 after publish"
ok "tests/servers/publish: the new version is in the index, the old ones stay"
for reg in "$SRV_REGISTRY" "$SRV_REGISTRY_TOKEN"; do
  "$HELM" pull "oci://$reg/charts/servers-selftest" --version "0.$$.0" --ca-file "$SRV_CA" \
    --username "$SRV_USER" --password "$SRV_PASS" -d "$WORK/pull" >/dev/null 2>&1 ||
    fail "helm pull oci://$reg/charts/servers-selftest --version 0.$$.0 (published)"
done
ok "tests/servers/publish: the new version is in both registries"
