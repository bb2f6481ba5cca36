#!/usr/bin/env bash
# Charts from OCI registries (the CNCF distribution registry of the servers fixture, charts pushed
# with the real helm push): a HelmRepository with an oci:// URL and basic auth, one with token auth
# and a dockerconfigjson Secret; versions chosen from the tag list as Helm chooses them; the record
# equal to what `helm install oci://...` stores; a version pushed later upgrades the release; a
# pinned digest; wrong credentials and an untrusted registry said plainly, the deployed release
# left in place.
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
: "${RUDDER_SERVERS_STATE:?run through ctest (the e2e.servers-up fixture provides the registries)}"
[ -f "$RUDDER_SERVERS_STATE/env" ] || fail "no chart servers: $RUDDER_SERVERS_STATE/env is missing (e2e.servers-up failed?)"
. "$RUDDER_SERVERS_STATE/env"

kubectl -n "$NS" create secret generic basic --from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" >/dev/null
kubectl -n "$NS" create secret generic badpass --from-literal=username="$SRV_USER" --from-literal=password=not-the-password >/dev/null
kubectl -n "$NS" create secret docker-registry dock --docker-server="$SRV_REGISTRY_TOKEN" \
  --docker-username="$SRV_USER" --docker-password="$SRV_PASS" >/dev/null
kubectl -n "$NS" create secret generic ca --from-file=ca.crt="$SRV_CA" >/dev/null

kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRepository
metadata: {name: reg, namespace: $NS}
spec: {url: "oci://$SRV_REGISTRY/charts", secretRef: {name: basic}, certSecretRef: {name: ca}}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRepository
metadata: {name: tok, namespace: $NS}
spec: {url: "oci://$SRV_REGISTRY_TOKEN/charts", secretRef: {name: dock}, certSecretRef: {name: ca}}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRepository
metadata: {name: bad, namespace: $NS}
spec: {url: "oci://$SRV_REGISTRY/charts", secretRef: {name: badpass}, certSecretRef: {name: ca}}
Y
repo_ready() { [ "$(kubectl -n "$NS" get helmrepository "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }

hr() { # hr NAME REPO CHART VERSION [INTERVAL]
  kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: $1, namespace: $NS}
spec:
  interval: ${5:-10m}
  chart: {repository: {name: $2}, name: $3, version: "$4"}
  values: {greeting: "from $2"}
Y
}
v() { helm get metadata -n "$NS" "$1" -o json | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["chart"], m["version"])'; }

# A chart of this test's own (a copy of settings under another name): publishing new versions
# then changes nothing other tests sharing the registries see.
up_chart=$WORK/charts-src/upoci-$$
mkdir -p "$up_chart" && cp -r "$RUDDER_SOURCE_DIR/tests/servers/charts/settings/." "$up_chart/"
sed -i "s/^name: settings\$/name: upoci-$$/" "$up_chart/Chart.yaml"
"$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$up_chart" 0.1.0 >/dev/null

start_controller
for r in reg tok bad; do wait_for 60 "HelmRepository $r Ready" repo_ready "$r"; done
ok "oci:// HelmRepositories Ready (basic auth; token auth with a dockerconfigjson Secret)"

hr a reg podlike "~0.1"
hr b tok "upoci-$$" "*" 10s
hr c reg podlike ">=1.0.0-0"
hr d bad podlike "~0.1"
for r in a b c; do wait_for 120 "HelmRelease $r Ready" hr_ready "$r"; done
# The version the real helm picks from the same registry's tags is the oracle.
helm_pick() { # helm_pick CHART CONSTRAINT
  helm show chart "oci://$SRV_REGISTRY/charts/$1" --version "$2" --ca-file "$SRV_CA" --username "$SRV_USER" \
    --password "$SRV_PASS" 2>/dev/null |
    python3 -c 'import sys; d=dict(l.split(": ",1) for l in sys.stdin.read().splitlines() if ": " in l and not l.startswith(" ")); print(d["name"], d["version"].strip("\x27\""))'
}
for t in "a podlike ~0.1" "b upoci-$$ *" "c podlike >=1.0.0-0"; do
  read -r r ch c <<<"$t"
  want=$(helm_pick "$ch" "$c")
  [ "$(v "$r")" = "$want" ] || fail "$r ($ch $c): rudder installed $(v "$r"), helm picks $want"
  echo "$r: $ch $c -> $want"
done
[ "$(helm_status helm a)" = "deployed 1" ] || fail "helm ls a: $(helm_status helm a)"
ok "releases from both registries at the version helm picks from the tag list (~0.1, *, >=1.0.0-0)"

wait_for 60 "d failed" hr_failed d
msg=$(hr_cond_msg d Ready); echo "d: $msg"
[ "$(hr_field d '{.status.conditions[?(@.type=="Ready")].reason}')" = ArtifactFailed ] || fail "d: reason"
[[ "$msg" == *401* || "$msg" == *nauthorized* ]] || fail "d: a wrong password should be said as 401: $msg"
[[ "$msg" != *not-the-password* ]] || fail "d: the password is in the message"
ok "a wrong registry password: ArtifactFailed, said as 401, no credential in it"

# The record equals what helm install oci://... stores.
kubectl create namespace "$NS-oracle" >/dev/null
printf 'greeting: from reg\n' >"$WORK/values.yaml"
helm install a "oci://$SRV_REGISTRY/charts/podlike" --version "~0.1" --ca-file "$SRV_CA" \
  --username "$SRV_USER" --password "$SRV_PASS" -f "$WORK/values.yaml" -n "$NS-oracle" >/dev/null 2>&1 ||
  fail "helm install oci:// (the oracle) failed"
release_record "$NS" sh.helm.release.v1.a.v1 >"$WORK/ours.json"
release_record "$NS-oracle" sh.helm.release.v1.a.v1 >"$WORK/helm.json"
python3 - "$WORK/ours.json" "$WORK/helm.json" <<'PY' || fail "record differs from helm install oci://"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
bad = [k for k in ("chart", "config", "manifest", "name", "version") if a.get(k) != b.get(k)]
for k in bad:
    print("differs:", k, json.dumps(a.get(k))[:300], "|", json.dumps(b.get(k))[:300], file=sys.stderr)
sys.exit(1 if bad else 0)
PY
ok "record (chart, config, manifest) equal to helm install oci://"

# A version pushed later upgrades the release asking for "*" (its interval is 10s).
"$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$up_chart" 0.2.0 >/dev/null
wait_for 90 "b upgraded to 0.2.0" bash -c "[ \"\$(helm get metadata -n $NS b -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"version\"])')\" = 0.2.0 ]"
[ "$(helm_status helm b)" = "deployed 2" ] || fail "b after the push: $(helm_status helm b)"
ok "a version pushed to the registry upgrades the release whose constraint matches"

# Pinned by digest (spec.chart.url with @sha256:), from the registry helm pull reads.
digest=$(helm pull "oci://$SRV_REGISTRY/charts/podlike" --version 0.2.0 --ca-file "$SRV_CA" \
  --username "$SRV_USER" --password "$SRV_PASS" -d "$WORK" 2>&1 | sed -n 's/^Digest: //p')
[ -n "$digest" ] || fail "helm pull printed no digest"
# Through the HelmRepository (its credentials and CA), the chart name may carry the digest.
hr pinnedrepo reg "podlike@$digest" ""
wait_for 60 "pinnedrepo Ready" hr_ready pinnedrepo
[ "$(v pinnedrepo)" = "podlike 0.2.0" ] || fail "pinnedrepo: $(v pinnedrepo) (helm pull gave $digest for 0.2.0)"
ok "pinned by the manifest digest helm pull printed: the chart it names is installed"
# A direct reference carries no credentials and no CA: said plainly (the registry's certificate is
# the test CA's, which only a HelmRepository's certSecretRef trusts).
kubectl apply -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRelease
metadata: {name: pinned, namespace: $NS}
spec:
  chart: {url: "oci://$SRV_REGISTRY/charts/podlike@$digest"}
Y
wait_for 60 "pinned failed" hr_failed pinned
msg=$(hr_cond_msg pinned Ready); echo "pinned: $msg"
[[ "$msg" == *"$SRV_REGISTRY"* && ( "$msg" == *certif* || "$msg" == *401* ) ]] ||
  fail "pinned: an untrusted registry should be said with its host and the cause: $msg"
ok "a direct oci:// reference to a registry it cannot trust fails naming the registry and the cause"

kubectl -n "$NS" delete helmrelease a b c d pinned pinnedrepo --wait=false >/dev/null
wait_for 60 "releases uninstalled" bash -c "[ -z \"\$(helm ls -n $NS -q)\" ]"
stop_controller
grep -q "$SRV_PASS" "$CTRL_LOG" && fail "the registry password appears in the controller log"
ok "uninstalled; no credential in the log"
