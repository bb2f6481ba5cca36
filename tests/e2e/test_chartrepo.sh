#!/usr/bin/env bash
# Captain's ChartRepo and Chart objects (app.alauda.io) against the nginx chart servers: a
# ChartRepo over plain HTTP, HTTPS trusting ca.crt from spec.secret, basic auth; a wrong password
# and a wrong CA fail with the reason; insecureSkipTLSVerify works and warns; type Git is refused;
# Chart objects hold every version `helm search repo --versions --devel` lists, with the index's
# metadata (helm repo index wrote it); a version published later appears, and only the Chart
# that changed is written again; a deleted ChartRepo's Charts go; 1,000 charts are published and
# not written again after a restart; --publish-charts=false writes none.
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
servers_env

secret() { kubectl -n "$NS" create secret generic "$@" >/dev/null; } # secret NAME --from-...
secret basic --from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" --from-file=ca.crt="$SRV_CA"
secret badpass --from-literal=username="$SRV_USER" --from-literal=password=not-the-password --from-file=ca.crt="$SRV_CA"
secret ca --from-file=ca.crt="$SRV_CA"
secret other-ca --from-file=ca.crt="$SRV_OTHER_CA"

chartrepo() { # chartrepo NAME URL [EXTRA-SPEC-JSON [API-VERSION]]
  python3 - "$1" "$2" "${3:-{\}}" "$NS" "${4:-v1beta1}" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
name, url, extra, ns, ver = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], sys.argv[5]
spec = {"url": url, "interval": "10s"}
spec.update(extra)
print(json.dumps({"apiVersion": "app.alauda.io/" + ver, "kind": "ChartRepo",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
phase() { kubectl -n "$NS" get chartrepo "$1" -o jsonpath='{.status.phase}'; }
reason() { kubectl -n "$NS" get chartrepo "$1" -o jsonpath='{.status.reason}'; }
synced() { [ "$(phase "$1")" = Synced ]; }
failed() { [ "$(phase "$1")" = Failed ]; }

# A chart of this test's own (podlike under another name, with an icon and a home page), so
# that publishing versions does not change what other tests sharing the chart servers see.
own=crtest-$$
own_src=$WORK/charts-src/$own
mkdir -p "$own_src" && cp -r "$RUDDER_SOURCE_DIR/tests/servers/charts/podlike/." "$own_src/"
sed -i "s/^name: podlike\$/name: $own/" "$own_src/Chart.yaml"
printf 'icon: https://example.org/%s.png\nhome: https://example.org/%s\nsources: [https://git.example.org/%s]\n' \
  "$own" "$own" "$own" >>"$own_src/Chart.yaml"
"$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$own_src" 0.1.0 >/dev/null

CTRL_ARGS=(--chartrepo-namespace "$NS")
start_controller

chartrepo plain "$SRV_HTTP_URL"
chartrepo tls "$SRV_HTTPS_URL/chartrepo/library" '{"secret": {"name": "ca"}}'
chartrepo basic "$SRV_BASIC_URL" "{\"secret\": {\"name\": \"basic\", \"namespace\": \"$NS\"}}" v1alpha1
chartrepo badpass "$SRV_BASIC_URL" '{"secret": {"name": "badpass"}}'
chartrepo wrongca "$SRV_HTTPS_URL" '{"secret": {"name": "other-ca"}}'
chartrepo noca "$SRV_HTTPS_URL"
chartrepo skip "$SRV_HTTPS_URL" '{"insecureSkipTLSVerify": true}'
chartrepo git "$SRV_HTTP_URL" '{"type": "Git"}'
chartrepo nosecret "$SRV_HTTP_URL" '{"secret": {"name": "missing"}}'

chartrepo stall "$SRV_FAULT_URL/stall"

pending() { [ "$(phase "$1")" = Pending ]; }
wait_for 30 "ChartRepo stall Pending" pending stall
ok "a ChartRepo whose index has not come yet is Pending ($(reason stall))"
kubectl -n "$NS" delete chartrepo stall >/dev/null

for r in plain tls basic skip; do wait_for 60 "ChartRepo $r Synced" synced "$r"; done
[ -z "$(reason plain)" ] || fail "a Synced ChartRepo has a reason: $(reason plain)"
[ "$(kubectl -n "$NS" get chartrepos.v1alpha1.app.alauda.io basic -o jsonpath='{.status.phase}')" = Synced ] ||
  fail "the v1alpha1 ChartRepo is not Synced when read as v1alpha1"
ok "ChartRepo Synced over plain HTTP, HTTPS with ca.crt in spec.secret, basic auth (a v1alpha1 object), skip-verify"

for r in badpass wrongca noca git nosecret; do wait_for 60 "ChartRepo $r Failed" failed "$r"; done
msg=$(reason badpass); echo "badpass: $msg"
[[ "$msg" == *401* && "$msg" == *"${SRV_BASIC_URL#https://}"* ]] || fail "wrong password: the reason should name the host and say 401: $msg"
[[ "$msg" != *not-the-password* ]] || fail "the password appears in the status: $msg"
msg=$(reason wrongca); echo "wrongca: $msg"
[[ "$msg" == *127.0.0.1* && "$msg" == *certif* ]] || fail "wrong CA: the reason should name the host and the certificate problem: $msg"
msg=$(reason noca); echo "noca: $msg"
[[ "$msg" == *certif* ]] || fail "no CA: TLS must be verified against the system CAs and fail: $msg"
msg=$(reason git); echo "git: $msg"
[[ "$msg" == *spec.type* && "$msg" == *Git* && "$msg" == *not\ supported* ]] || fail "type Git: the reason should say it is not supported: $msg"
msg=$(reason nosecret); echo "nosecret: $msg"
[[ "$msg" == *spec.secret* && "$msg" == *missing* ]] || fail "missing Secret: the reason should name spec.secret and the Secret: $msg"
[ "$(kubectl -n "$NS" get chartrepo git -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')" = InvalidSpec ] ||
  fail "type Git: condition Ready should have reason InvalidSpec"
ok "Failed with the reason: wrong password (401), wrong CA, no CA (verified by default), type Git, a missing Secret"

ev=$(kubectl -n "$NS" get events --field-selector involvedObject.name=skip,reason=InsecureSkipTLSVerify -o jsonpath='{.items[*].type}')
[[ "$ev" == *Warning* ]] || fail "insecureSkipTLSVerify: no Warning Event (got '$ev')"
[ "$(kubectl -n "$NS" get chartrepo skip -o jsonpath='{.status.conditions[?(@.type=="Insecure")].status}')" = True ] ||
  fail "insecureSkipTLSVerify: no Insecure condition"
ok "insecureSkipTLSVerify: Synced, with a Warning Event and the Insecure condition"

# Chart objects against the real helm: every chart and version `helm search repo --versions
# --devel` lists, app version and description; and, against the served index.yaml (written by
# helm repo index), every version's digest, urls, icon, home, keywords, sources, maintainers.
# Other tests publish into the same servers meanwhile, so the comparison is retried until equal.
export HELM_REPOSITORY_CONFIG="$WORK/helm-repos.yaml" HELM_REPOSITORY_CACHE="$WORK/helm-cache"
helm repo add plain "$SRV_HTTP_URL" >/dev/null
charts_match() { # charts_match REPO: Chart objects labelled REPO equal helm's and the index's view
  helm repo update plain >/dev/null 2>&1 || return 1
  helm search repo plain/ --versions --devel -o json >"$WORK/search.json" || return 1
  cp "$SRV_REPO_DIR/index.yaml" "$WORK/index.yaml"
  kubectl -n "$NS" get charts.app.alauda.io -l repo="$1" -o json >"$WORK/charts.json" || return 1
  python3 - "$1" "$WORK/search.json" "$WORK/index.yaml" "$WORK/charts.json" "$own" <<'PY' >"$WORK/match.out" 2>&1
import json, sys, yaml
repo, search, index, charts, own = sys.argv[1:6]
want = sorted((r["name"].split("/", 1)[1], r["version"], r["app_version"], r["description"]) for r in json.load(open(search)))
objs = json.load(open(charts))["items"]
got = sorted((o["metadata"]["name"].rsplit(".", 1)[0], v["version"], v.get("appVersion", ""), v.get("description", ""))
             for o in objs for v in o["spec"]["versions"])
if got != want:
    print("charts differ from helm search:\n got ", got, "\n want", want); sys.exit(1)
idx = yaml.safe_load(open(index))["entries"]
for o in objs:
    name = o["metadata"]["name"].rsplit(".", 1)[0]
    assert o["metadata"]["name"] == name + "." + repo, o["metadata"]["name"]
    assert o["metadata"]["labels"]["repo"] == repo
    ow = o["metadata"]["ownerReferences"][0]
    assert (ow["kind"], ow["name"], ow["apiVersion"]) == ("ChartRepo", repo, "app.alauda.io/v1beta1"), ow
    byver = {e["version"]: e for e in idx[name]}
    for v in o["spec"]["versions"]:
        e = byver[v["version"]]
        for k in ("digest", "urls", "icon", "home", "keywords", "sources", "apiVersion", "created", "type"):
            if (e.get(k) or None) != (v.get(k) or None):
                print(name, v["version"], k, "differs:", v.get(k), "index:", e.get(k)); sys.exit(1)
        if [m.get("name") for m in e.get("maintainers") or []] != [m.get("name") for m in v.get("maintainers") or []]:
            print(name, v["version"], "maintainers differ"); sys.exit(1)
    if name == own and not o["spec"]["versions"][0].get("icon"):
        print("no icon on", name); sys.exit(1)
print(len(objs), "charts,", len(got), "versions")
PY
}
charts_wait() { # charts_wait REPO: until charts_match REPO, at most 60 s
  local end=$((SECONDS + 60))
  until charts_match "$1"; do
    ((SECONDS < end)) || { cat "$WORK/match.out" >&2; fail "Chart objects of $1 do not equal helm search and the index"; }
    sleep 1
  done
  cat "$WORK/match.out"
}
charts_wait plain
kubectl -n "$NS" get charts.app.alauda.io -l repo=plain
ok "Chart objects <chart>.plain: every version helm search lists, with the index's metadata, owned by the ChartRepo"
charts_wait basic
ok "Chart objects <chart>.basic (through basic auth) as well"

# A version published later appears at the next fetch (10s interval); the Charts whose content
# did not change are not written again.
rv_before=$(kubectl -n "$NS" get chart "podlike.plain" -o jsonpath='{.metadata.resourceVersion}')
"$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$own_src" 0.2.0 >/dev/null
own_has_020() { kubectl -n "$NS" get chart "$own.plain" -o jsonpath='{.spec.versions[*].version}' | grep -qw 0.2.0; }
wait_for 60 "$own 0.2.0 in Chart $own.plain" own_has_020
[ "$(kubectl -n "$NS" get chart "$own.plain" -o jsonpath='{.spec.versions[0].version}')" = 0.2.0 ] ||
  fail "the newest version is not first in $own.plain"
charts_wait plain
rv_after=$(kubectl -n "$NS" get chart "podlike.plain" -o jsonpath='{.metadata.resourceVersion}')
[ "$rv_before" = "$rv_after" ] || fail "podlike.plain was written again though its versions did not change ($rv_before -> $rv_after)"
grep 'charts published' "$CTRL_LOG" | grep -q "$NS/plain" || fail "no 'charts published' line for plain in the controller log"
ok "a version published later appears (newest first); unchanged Charts are not written again"

# Deleting the ChartRepo deletes its Charts (and only its own): rudder deletes them, not only the
# garbage collector (a Chart labelled repo=plain without an owner goes too).
kubectl apply -f - >/dev/null <<Y
apiVersion: app.alauda.io/v1alpha1
kind: Chart
metadata: {name: stray.plain, namespace: $NS, labels: {repo: plain}}
spec: {versions: [{name: stray, version: 1.0.0}]}
Y
kubectl -n "$NS" delete chartrepo plain >/dev/null
no_plain_charts() { [ -z "$(kubectl -n "$NS" get charts.app.alauda.io -l repo=plain -o name)" ]; }
wait_for 60 "Charts of plain gone" no_plain_charts
[ -n "$(kubectl -n "$NS" get charts.app.alauda.io -l repo=basic -o name)" ] || fail "the Charts of basic went too"
ok "ChartRepo deleted: its Chart objects are gone, the other repository's stay"

# 1,000 charts (the fault server's generated index): one Chart each with every version; after a
# restart nothing is written again (the digests on the objects say they are current).
chartrepo huge "$SRV_FAULT_URL/index-huge?charts=1000&versions=3"
wait_for 180 "ChartRepo huge Synced" synced huge
count_huge() {
  kubectl -n "$NS" get charts.app.alauda.io -l repo=huge -o json |
    python3 -c 'import json,sys; i=json.load(sys.stdin)["items"]; print(len(i), sum(len(o["spec"]["versions"]) for o in i))'
}
[ "$(count_huge)" = "1000 3000" ] || fail "huge: want 1000 Charts with 3000 versions, got $(count_huge)"
grep 'charts published' "$CTRL_LOG" | grep "$NS/huge" | grep -q 'written=1000 ' || fail "huge: the first publish did not write 1000 Charts"
stop_controller
start_controller
wait_for 120 "the restarted controller checked huge" sh -c "grep 'charts published' '$CTRL_LOG' | grep '$NS/huge' | grep -q 'unchanged=1000'"
grep 'charts published' "$CTRL_LOG" | grep "$NS/huge" | tail -n 1 | grep -q 'written=0 deleted=0 unchanged=1000' ||
  fail "huge: after a restart, Charts were written again: $(grep 'charts published' "$CTRL_LOG" | tail -n 1)"
ok "1,000 charts: 1,000 Charts with all 3,000 versions; after a restart none written again"

# --publish-charts=false: a ChartRepo is Synced and no Chart is written.
stop_controller
CTRL_ARGS=(--chartrepo-namespace "$NS" --publish-charts=false)
start_controller
chartrepo nopub "$SRV_HTTP_URL"
wait_for 60 "ChartRepo nopub Synced" synced nopub
sleep 2
[ -z "$(kubectl -n "$NS" get charts.app.alauda.io -l repo=nopub -o name)" ] || fail "--publish-charts=false wrote Charts"
ok "--publish-charts=false: Synced, no Chart objects"

kubectl explain charts.spec.versions.icon --api-version=app.alauda.io/v1alpha1 >"$WORK/explain-chart"
grep -q "SVG or PNG" "$WORK/explain-chart" || fail "kubectl explain does not document Chart fields"
kubectl explain chartrepos.spec.secret --api-version=app.alauda.io/v1beta1 >"$WORK/explain-chartrepo"
grep -q "ca.crt" "$WORK/explain-chartrepo" || fail "kubectl explain does not document ChartRepo fields"
ok "kubectl explain documents ChartRepo and Chart fields"
stop_controller
