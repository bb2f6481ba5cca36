#!/usr/bin/env bash
# Charts from HTTP(S) repositories served by a real nginx (the servers fixture): HelmRepository
# over plain HTTP, HTTPS trusted through certSecretRef or caConfigMapRef, basic auth, client
# certificates and a path prefix; its status (Ready, digest, counts); releases installed from
# each, the record's chart equal to what `helm install --repo` stores; a version published later
# upgrades the release; failures (no such version, wrong CA, wrong password, a corrupt archive,
# a server that is down) leave the deployed release in place with ArtifactFailed naming the
# cause; a direct .tgz URL.
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
servers_env
# The servers are shared by the whole ctest run: count only the requests made from here on.
log_from=$(($(wc -l <"$SRV_NGINX_LOG") + 1))

kubectl apply -n "$NS" -f - >/dev/null <<Y
apiVersion: v1
kind: Secret
metadata: {name: basic}
stringData: {username: "$SRV_USER", password: "$SRV_PASS"}
---
apiVersion: v1
kind: Secret
metadata: {name: badpass}
stringData: {username: "$SRV_USER", password: "not-the-password"}
---
apiVersion: v1
kind: Secret
metadata: {name: ca}
data: {ca.crt: $(b64 "$SRV_CA")}
---
apiVersion: v1
kind: Secret
metadata: {name: client}
data: {ca.crt: $(b64 "$SRV_CA"), tls.crt: $(b64 "$SRV_CLIENT_CERT"), tls.key: $(b64 "$SRV_CLIENT_KEY")}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data:
  ca.crt: |
$(sed 's/^/    /' "$SRV_CA")
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other-ca}
data:
  ca.crt: |
$(sed 's/^/    /' "$SRV_OTHER_CA")
Y

repo() { # repo NAME URL [EXTRA-SPEC-JSON]
  python3 - "$1" "$2" "${3:-{\}}" "$NS" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
name, url, extra, ns = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
spec = {"url": url, "interval": "10s"}
spec.update(extra)
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRepository",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
repo_cond() { kubectl -n "$NS" get helmrepository "$1" -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].$2}"; }
repo_ready() { [ "$(repo_cond "$1" status)" = True ]; }
repo_failed() { [ "$(repo_cond "$1" status)" = False ]; }

hr_repo() { # hr_repo NAME REPO CHART VERSION
  kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: $1, namespace: $NS}
spec:
  chart: {repository: {name: $2}, name: $3, version: "$4"}
  values: {greeting: "from $2"}
Y
}

# A chart of this test's own (a copy of podlike under another name), so that publishing new
# versions does not change what other tests sharing the chart servers see.
up_chart=$WORK/charts-src/uptest-$$
mkdir -p "$up_chart" && cp -r "$RUDDER_SOURCE_DIR/tests/servers/charts/podlike/." "$up_chart/"
sed -i "s/^name: podlike\$/name: uptest-$$/" "$up_chart/Chart.yaml"
"$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$up_chart" 0.1.0 >/dev/null

start_controller

repo plain "$SRV_HTTP_URL"
repo tls "$SRV_HTTPS_URL/chartrepo/library" '{"certSecretRef": {"name": "ca"}}'
repo basic "$SRV_BASIC_URL" '{"secretRef": {"name": "basic"}, "caConfigMapRef": {"name": "ca"}}'
repo mtls "$SRV_MTLS_URL" '{"certSecretRef": {"name": "client"}}'
repo wrongca "$SRV_HTTPS_URL" '{"caConfigMapRef": {"name": "other-ca"}}'
repo badpass "$SRV_BASIC_URL" '{"secretRef": {"name": "badpass"}, "caConfigMapRef": {"name": "ca"}}'
repo nocreds "$SRV_BASIC_URL" '{"caConfigMapRef": {"name": "ca"}}'
repo nomtls "$SRV_MTLS_URL" '{"caConfigMapRef": {"name": "ca"}}'
repo down "$SRV_DOWN_URL"
repo unresolvable "https://charts.nonexistent.invalid"

for r in plain tls basic mtls; do wait_for 60 "HelmRepository $r Ready" repo_ready "$r"; done
ok "HelmRepository Ready over plain HTTP, HTTPS with certSecretRef, basic auth with caConfigMapRef, mutual TLS"

# The counts are those helm search finds in the same repository; the digest is the served file's.
export HELM_REPOSITORY_CONFIG="$WORK/helm-repos.yaml" HELM_REPOSITORY_CACHE="$WORK/helm-cache"
helm repo add plain "$SRV_HTTP_URL" >/dev/null
read -r want_charts want_versions < <(helm search repo plain/ --versions --devel -o json |
  python3 -c 'import json,sys; r=json.load(sys.stdin); print(len({x["name"] for x in r}), len(r))')
want_digest="sha256:$(sha256sum "$SRV_REPO_DIR/index.yaml" | cut -d" " -f1)"
got=$(kubectl -n "$NS" get helmrepository plain -o jsonpath='{.status.charts} {.status.versions} {.status.indexDigest}')
[ "$got" = "$want_charts $want_versions $want_digest" ] || fail "plain status: got '$got', want '$want_charts $want_versions $want_digest'"
ok "status: $want_charts charts, $want_versions versions, the digest of the served index"

for r in wrongca badpass nocreds nomtls down unresolvable; do wait_for 60 "HelmRepository $r not Ready" repo_failed "$r"; done
msg=$(repo_cond wrongca message); echo "wrongca: $msg"
[[ "$msg" == *127.0.0.1* && "$msg" == *certif* ]] || fail "wrong CA: message should name the host and the certificate problem: $msg"
msg=$(repo_cond badpass message); echo "badpass: $msg"
[[ "$msg" == *401* ]] || fail "wrong password: message should say 401: $msg"
[[ "$msg" != *not-the-password* ]] || fail "the password appears in the status: $msg"
msg=$(repo_cond nocreds message); [[ "$msg" == *401* ]] || fail "no credentials: message should say 401: $msg"
msg=$(repo_cond nomtls message); echo "nomtls: $msg"; [ -n "$msg" ] || fail "no client certificate: no message"
msg=$(repo_cond down message); echo "down: $msg"; [[ "$msg" == *"${SRV_DOWN_URL#*://}"* ]] || fail "server down: message should name it: $msg"
msg=$(repo_cond unresolvable message); echo "unresolvable: $msg"
[[ "$msg" == *charts.nonexistent.invalid* ]] || fail "unresolvable name: message should name the host: $msg"
ok "failures said plainly: wrong CA, wrong or no password, no client certificate, server down, unknown host"

# Credentials go to chart URLs on another host only with passCredentials: the index (on the fault
# server) lists a chart on the basic-auth nginx.
dg=$(sha256sum "$SRV_REPO_DIR/podlike-0.1.0.tgz" | cut -d" " -f1)
xq="chart=$SRV_BASIC_URL/podlike-0.1.0.tgz&digest=$dg"
repo xhost "$SRV_FAULT_URL/xhost?$xq" '{"secretRef": {"name": "basic"}, "certSecretRef": {"name": "ca"}}'
repo xhostpass "$SRV_FAULT_URL/xhost?$xq" '{"secretRef": {"name": "basic"}, "certSecretRef": {"name": "ca"}, "passCredentials": true}'
wait_for 60 "HelmRepository xhost Ready" repo_ready xhost
wait_for 60 "HelmRepository xhostpass Ready" repo_ready xhostpass
# (One after the other: once one has the archive, the other is served it from the cache by digest.)
hr_repo nopass xhost podlike "0.1.0"
wait_for 60 "nopass failed" hr_failed nopass
echo "nopass: $(hr_cond_msg nopass Ready)"
[[ "$(hr_cond_msg nopass Ready)" == *401* ]] || fail "nopass: the chart host should have refused the request without credentials"
hr_repo pass xhostpass podlike "0.1.0"
wait_for 60 "pass Ready" hr_ready pass
ok "credentials go to a chart URL on another host only with passCredentials"
kubectl -n "$NS" delete helmrelease nopass pass --wait=false >/dev/null

# A credential rotated in its Secret is picked up at once (the repository's interval is 10 minutes).
kubectl -n "$NS" create secret generic rot --from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" >/dev/null
repo rotated "$SRV_BASIC_URL" '{"secretRef": {"name": "rot"}, "caConfigMapRef": {"name": "ca"}, "interval": "10m"}'
wait_for 60 "HelmRepository rotated Ready" repo_ready rotated
kubectl -n "$NS" create secret generic rot --from-literal=username="$SRV_USER" --from-literal=password=rotated-wrong \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null
wait_for 20 "rotated: the wrong password seen" repo_failed rotated
kubectl -n "$NS" create secret generic rot --from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null
wait_for 20 "rotated: the right password seen again" repo_ready rotated
ok "a credential rotated in its Secret is used at once, not at the next 10m interval"

# Servers that misbehave: each fails with its cause named, or (a huge index) works.
repo stall "$SRV_FAULT_URL/stall" '{"timeout": "2s"}'
repo err500 "$SRV_FAULT_URL/status/500"
repo loop "$SRV_FAULT_URL/redirect-loop"
repo bombidx "$SRV_FAULT_URL/gzip-bomb"
repo huge "$SRV_FAULT_URL/index-huge"
repo baddigest "$SRV_FAULT_URL/baddigest"
repo insecure "$SRV_HTTPS_URL" '{"insecureSkipTLSVerify": true}'
for r in stall err500 loop bombidx; do wait_for 90 "HelmRepository $r not Ready" repo_failed "$r"; done
for r in huge baddigest insecure; do wait_for 90 "HelmRepository $r Ready" repo_ready "$r"; done
for r in stall err500 loop bombidx; do echo "$r: $(repo_cond "$r" message)"; done
[[ "$(repo_cond stall message)" == *"timed out after 2s"* ]] || fail "stall: should say it timed out after 2s"
[[ "$(repo_cond err500 message)" == *500* ]] || fail "500: should say 500"
[[ "$(repo_cond loop message)" == *redirect* ]] || fail "redirect loop: should say so"
[[ "$(repo_cond bombidx message)" == *"not valid"* || "$(repo_cond bombidx message)" == *limit* ]] || fail "gzip bomb index: should be refused"
[ "$(kubectl -n "$NS" get helmrepository huge -o jsonpath='{.status.versions}')" = 100000 ] || fail "huge index: versions"
[ "$(kubectl -n "$NS" get helmrepository insecure -o jsonpath='{.status.conditions[?(@.type=="Insecure")].status}')" = True ] ||
  fail "insecureSkipTLSVerify: no Insecure condition"
kubectl -n "$NS" get events --field-selector involvedObject.name=insecure -o jsonpath='{.items[*].reason}' | grep -q InsecureSkipTLSVerify ||
  fail "insecureSkipTLSVerify: no Warning Event"
ok "a stalling server times out, 500 and a redirect loop are said, a gzip-bomb index is refused, 100,000 versions load, insecureSkipTLSVerify works and says so"

hr_repo a tls podlike "~0.1"
hr_repo b plain podlike "*"
hr_repo up plain "uptest-$$" "*"
hr_repo c basic podlike "0.1.0"
hr_repo d mtls podlike ">=1.0.0-0"
for r in a b c d up; do wait_for 120 "HelmRelease $r Ready" hr_ready "$r"; done
[ "$(helm_status helm a)" = "deployed 1" ] || fail "helm ls a: $(helm_status helm a)"
v() { helm get metadata -n "$NS" "$1" -o json | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["chart"], m["version"])'; }
# The version the real helm picks for each constraint from the same repository is the oracle.
helm_pick() { # helm_pick CONSTRAINT: "podlike VERSION" as helm show chart --version picks it
  local dev=(); [[ "$1" == *-* ]] && dev=(--devel)
  helm show chart podlike --repo "$SRV_HTTP_URL" --version "$1" "${dev[@]}" |
    python3 -c 'import sys; d=dict(l.split(": ",1) for l in sys.stdin.read().splitlines() if ": " in l and not l.startswith(" ")); print(d["name"], d["version"].strip("\x27\""))'
}
for pair in "a ~0.1" "b *" "c 0.1.0" "d >=1.0.0-0"; do
  r=${pair%% *} c=${pair#* }
  want=$(helm_pick "$c")
  [ "$(v "$r")" = "$want" ] || fail "$r ($c): rudder installed $(v "$r"), helm picks $want"
  echo "$r: $c -> $want"
done
ok "releases from each repository at the version helm picks (~0.1, *, 0.1.0, >=1.0.0-0 with its prerelease)"

# The record equals what helm install --repo stores for the same chart and values.
kubectl create namespace "$NS-oracle" >/dev/null
printf 'greeting: from tls\n' >"$WORK/values.yaml"
helm install a podlike --repo "$SRV_HTTPS_URL/chartrepo/library" --ca-file "$SRV_CA" --version "~0.1" \
  -f "$WORK/values.yaml" -n "$NS-oracle" >/dev/null
release_record "$NS" sh.helm.release.v1.a.v1 >"$WORK/ours.json"
release_record "$NS-oracle" sh.helm.release.v1.a.v1 >"$WORK/helm.json"
python3 - "$WORK/ours.json" "$WORK/helm.json" <<'PY' || fail "record differs from helm install --repo (see above)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
def first_diff(x, y, path):
    if type(x) != type(y):
        print(" ours:", json.dumps(x)[:400], file=sys.stderr)
        print(" helm:", json.dumps(y)[:400], file=sys.stderr)
        return path
    if isinstance(x, dict):
        for k in sorted(set(x) | set(y)):
            d = first_diff(x.get(k), y.get(k), path + "." + k)
            if d:
                return d
        return None
    if isinstance(x, list):
        if len(x) != len(y):
            return path + "[len %d vs %d]" % (len(x), len(y))
        for i, (p, q) in enumerate(zip(x, y)):
            d = first_diff(p, q, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if x != y:
        print(" ours:", json.dumps(x)[:400], file=sys.stderr)
        print(" helm:", json.dumps(y)[:400], file=sys.stderr)
        return path
    return None
ok = True
for k in ("chart", "config", "manifest", "name", "version"):
    d = first_diff(a.get(k), b.get(k), k)
    if d:
        ok = False
        print("differs at", d, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
ok "record (chart, config, manifest) equal to helm install --repo"

# A version published later upgrades the release that asks for "*" (the repository's 10s interval).
[ "$(v up)" = "uptest-$$ 0.1.0" ] || fail "up: $(v up)"
"$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$up_chart" 0.2.0 >/dev/null
wait_for 90 "up upgraded to 0.2.0" bash -c "[ \"\$(helm get metadata -n $NS up -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"version\"])')\" = 0.2.0 ]"
# (helm get metadata reads the newest record, pending-upgrade while the upgrade runs: wait for it to end)
up_deployed2() { [ "$(helm_status helm up)" = "deployed 2" ]; }
wait_for 60 "up deployed at revision 2" up_deployed2
[ "$(helm_status helm b)" = "deployed 1" ] || fail "b (another chart) must not have changed: $(helm_status helm b)"
ok "a new version in the repository upgrades the release whose constraint matches it (and only that one)"

# No such version: ArtifactFailed, the deployed release stays.
kubectl -n "$NS" patch helmrelease c --type merge -p '{"spec":{"chart":{"version":"9.9.9"}}}' >/dev/null
wait_for 60 "c failed" hr_failed c
msg=$(hr_cond_msg c Ready); echo "c: $msg"
[ "$(hr_field c '{.status.conditions[?(@.type=="Ready")].reason}')" = ArtifactFailed ] || fail "c reason"
[[ "$msg" == *9.9.9* ]] || fail "message should name the version asked for: $msg"
[ "$(helm_status helm c)" = "deployed 1" ] || fail "c's deployed release must stay: $(helm_status helm c)"
ok "no matching version: ArtifactFailed naming it, the deployed release left in place"

# A direct .tgz URL; a corrupt archive; archives with '..' members, each as the real helm takes it
# (the first path segment is the chart's directory: '../evil.yaml' is the chart's 'evil.yaml'; a
# member that is outside the chart once cleaned is refused).
tgz=$(cd "$SRV_REPO_DIR" && ls podlike-0.1.0.tgz)
kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: direct, namespace: $NS}
spec:
  chart: {url: "$SRV_HTTP_URL/$tgz"}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: corrupt, namespace: $NS}
spec:
  chart: {url: "$SRV_FAULT_URL/corrupt.tgz"}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: traversal, namespace: $NS}
spec:
  chart: {url: "$SRV_FAULT_URL/traversal.tgz"}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: parent, namespace: $NS}
spec:
  chart: {url: "$SRV_FAULT_URL/parent.tgz"}
Y
hr_repo digest baddigest podlike "0.1.0"
kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: bomb, namespace: $NS}
spec:
  chart: {url: "$SRV_FAULT_URL/bomb.tgz"}
Y
kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: newline, namespace: $NS}
spec:
  chart: {url: "$SRV_FAULT_URL/newline.tgz"}
Y
wait_for 60 "newline failed" hr_failed newline
echo "newline: $(hr_cond_msg newline Ready)"
[[ "$(hr_cond_msg newline Ready)" == *"control character"* ]] || fail "newline: should refuse the file name"
[ -z "$(helm ls -n "$NS" -q --filter '^newline$')" ] || fail "newline: a release was recorded"
! kubectl -n "$NS" get secret victim >/dev/null 2>&1 || fail "newline: the document hidden in the name was applied"
ok "a file name with a line break (a document hidden in it) is refused: nothing applied, nothing recorded"
wait_for 60 "digest failed" hr_failed digest
wait_for 60 "bomb failed" hr_failed bomb
echo "digest: $(hr_cond_msg digest Ready)"; echo "bomb: $(hr_cond_msg bomb Ready)"
[[ "$(hr_cond_msg digest Ready)" == *sha256* || "$(hr_cond_msg digest Ready)" == *digest* ]] || fail "digest mismatch: should say so"
[ -z "$(helm ls -n "$NS" -q --filter '^(digest|bomb)$')" ] || fail "a refused archive was installed"
ok "an archive whose digest differs from the index's, and a gzip bomb, are refused before anything is installed"
wait_for 60 "direct Ready" hr_ready direct
[ "$(v direct)" = "podlike 0.1.0" ] || fail "direct: $(v direct)"
wait_for 60 "corrupt failed" hr_failed corrupt
wait_for 60 "parent failed" hr_failed parent
echo "corrupt: $(hr_cond_msg corrupt Ready)"; echo "parent: $(hr_cond_msg parent Ready)"
[[ "$(hr_cond_msg corrupt Ready)" == *corrupt.tgz* ]] || fail "corrupt: message should name the URL"
[ "$(hr_field parent '{.status.conditions[?(@.type=="Ready")].reason}')" = ArtifactFailed ] || fail "parent reason"
curl -sS "$SRV_FAULT_URL/traversal.tgz" -o "$WORK/traversal.tgz"; curl -sS "$SRV_FAULT_URL/parent.tgz" -o "$WORK/parent.tgz"
helm template x "$WORK/traversal.tgz" >/dev/null 2>&1 || fail "helm refuses traversal.tgz: the test's premise is wrong"
! helm template x "$WORK/parent.tgz" >/dev/null 2>&1 || fail "helm loads parent.tgz: the test's premise is wrong"
wait_for 60 "traversal Ready (as helm loads it)" hr_ready traversal
ok "a direct .tgz URL installs; a corrupt archive and one reaching outside the chart fail with ArtifactFailed; '../x' loads as helm loads it"

# One download per archive: podlike 0.1.0 is used under three URLs with one index digest (the
# passCredentials test, a from tls, c from basic), so it is fetched once; the direct URL gives no
# digest and is fetched once more. (Counted: answers 200 to rudder.)
n=$(ls "$WORK/charts"/*.tgz | wc -l)
gets=$(tail -n +"$log_from" "$SRV_NGINX_LOG" | grep -c 'GET [^ ]*podlike-0.1.0.tgz HTTP/1.1" 200 .*ua="rudder"' || true)
echo "archives on disk: $n; GETs of podlike-0.1.0.tgz: $gets"
[ "$n" = 7 ] || fail "expected 7 archives on disk (podlike 0.1.0, 0.2.0, 1.0.0-rc.1; uptest 0.1.0, 0.2.0; evil from traversal.tgz and newline.tgz), found $n"
[ "$gets" = 2 ] || fail "expected podlike-0.1.0.tgz downloaded twice (once by digest, once by direct URL), got $gets"
ok "each archive downloaded once per digest and kept on disk once"

# A packaged chart in a ConfigMap (binaryData) and in a Secret under a key of its own; a new chart
# put in the ConfigMap is installed within seconds (the object is watched; the interval is 10m).
kubectl -n "$NS" create configmap packaged --from-file=chart.tgz="$SRV_REPO_DIR/podlike-0.1.0.tgz" >/dev/null
kubectl -n "$NS" create secret generic packaged --from-file=app.tgz="$SRV_REPO_DIR/podlike-0.2.0.tgz" >/dev/null
kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: fromcm, namespace: $NS}
spec:
  chart: {configMapRef: {name: packaged}}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: fromsecret, namespace: $NS}
spec:
  chart: {secretRef: {name: packaged, key: app.tgz}}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: nokey, namespace: $NS}
spec:
  chart: {secretRef: {name: packaged}}
Y
wait_for 60 "fromcm Ready" hr_ready fromcm
wait_for 60 "fromsecret Ready" hr_ready fromsecret
wait_for 60 "nokey failed" hr_failed nokey
[ "$(v fromcm)" = "podlike 0.1.0" ] || fail "fromcm: $(v fromcm)"
[ "$(v fromsecret)" = "podlike 0.2.0" ] || fail "fromsecret: $(v fromsecret)"
echo "nokey: $(hr_cond_msg nokey Ready)"
[[ "$(hr_cond_msg nokey Ready)" == *"no key chart.tgz"* ]] || fail "nokey: message should name the missing key"
kubectl -n "$NS" create configmap packaged --from-file=chart.tgz="$SRV_REPO_DIR/podlike-0.2.0.tgz" --dry-run=client -o yaml |
  kubectl apply -f - >/dev/null
wait_for 20 "fromcm upgraded to 0.2.0" bash -c "[ \"\$(helm get metadata -n $NS fromcm -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"version\"])')\" = 0.2.0 ]"
ok "packaged charts from a ConfigMap and a Secret (a missing key said plainly; a new chart in the ConfigMap upgrades at once)"

kubectl -n "$NS" delete helmrelease fromcm fromsecret nokey --wait=false >/dev/null
kubectl -n "$NS" delete helmrelease a b c d up direct corrupt traversal parent digest bomb newline --wait=false >/dev/null
wait_for 60 "releases uninstalled" bash -c "[ -z \"\$(helm ls -n $NS -q)\" ]"
stop_controller
grep -q "$SRV_PASS" "$CTRL_LOG" && fail "the repository password appears in the controller log"
ok "uninstalled; no credential in the log"
