#!/usr/bin/env bash
# Captain's HelmRequest (app.alauda.io) on the release engine, through both served versions (v1
# and v1alpha1): a chart from spec.source.http (the nginx chart server) installs into
# spec.namespace, Synced, listed by the real `helm ls -n <namespace>`, status.version and
# status.notes as `helm get metadata|notes` print them; a values change is revision 2; the
# app.alauda.io/rollback-to annotation rolls back (`helm history`) and, removed, the spec is
# followed again; remediation.retries rolls a failed upgrade back and retries it; delete uninstalls. Bad input: a chart without '/', a release name over 53
# characters, clusters chosen by labels, an unknown ChartRepo -> phase Failed with the reason (Validated=False
# for what the door refuses) and nothing applied; fields of the wrong type are refused by the API
# server (the CRD's schema). The CRD documents its fields (`kubectl explain`) and prints Captain's
# columns.
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
: "${RUDDER_SERVERS_STATE:?run through ctest (the e2e.servers-up fixture provides the chart servers)}"
[ -f "$RUDDER_SERVERS_STATE/env" ] || fail "no chart servers: $RUDDER_SERVERS_STATE/env is missing (e2e.servers-up failed?)"
. "$RUDDER_SERVERS_STATE/env"

APPS="$NS-apps"
EXTRA_NAMESPACES+=("$APPS")
kubectl create namespace "$APPS" >/dev/null

hq_field() { kubectl -n "$NS" get helmrequests.v1.app.alauda.io "$1" -o jsonpath="$2"; }
hq_cond() { hq_field "$1" "{.status.conditions[?(@.type==\"$2\")].$3}"; }
# hq_phase NAME PHASE: the status is PHASE for the current generation.
hq_phase() {
  [ "$(hq_field "$1" '{.metadata.generation}')" = "$(hq_field "$1" '{.status.observedGeneration}')" ] &&
    [ "$(hq_field "$1" '{.status.phase}')" = "$2" ]
}
# helm_ls NS RELEASE: "<status> <revision> <chart>" as the real helm lists it, or "absent".
helm_ls() {
  helm ls -n "$1" -o json --filter "^$2\$" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join([r[0]["status"], str(r[0]["revision"]), r[0]["chart"]]) if r else "absent")'
}
helm_hist() {
  helm history -n "$1" "$2" -o json |
    python3 -c 'import json,sys; print(" ".join("%d:%s" % (h["revision"], h["status"]) for h in json.load(sys.stdin)))'
}
# hq APIVERSION NAME SPEC-JSON: creates or updates a HelmRequest.
hq() {
  python3 - "$1" "$2" "$NS" "$3" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
api, name, ns, spec = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
print(json.dumps({"apiVersion": "app.alauda.io/" + api, "kind": "HelmRequest",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
# status_matches_helm NAME NS RELEASE: status.version and status.notes are what helm prints.
status_matches_helm() {
  kubectl -n "$NS" get helmrequest.v1.app.alauda.io "$1" -o json >"$WORK/hq.json"
  helm get metadata "$3" -n "$2" -o json >"$WORK/meta.json"
  helm get notes "$3" -n "$2" >"$WORK/notes.txt"
  python3 - "$WORK/hq.json" "$WORK/meta.json" "$WORK/notes.txt" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["status"]
meta = json.load(open(sys.argv[2]))
printed = open(sys.argv[3]).read()
assert st["version"] == meta["version"], "status.version %r, helm says %r" % (st["version"], meta["version"])
# helm get notes prints "NOTES:\n<notes>\n"
assert printed == "NOTES:\n" + st["notes"] + "\n", "status.notes %r, helm prints %r" % (st["notes"], printed)
PY
}

url1="$SRV_HTTP_URL/podlike-0.1.0.tgz"
url2="$SRV_HTTP_URL/podlike-0.2.0.tgz"
start_controller

# 0. The CRD: both versions served, v1 stored, every field documented, Captain's columns.
[ "$(kubectl get crd helmrequests.app.alauda.io -o jsonpath='{.spec.versions[*].name} {.spec.versions[?(@.storage==true)].name}')" = "v1 v1alpha1 v1" ] ||
  fail "CRD versions: $(kubectl get crd helmrequests.app.alauda.io -o jsonpath='{.spec.versions[*].name}')"
for f in spec.chart spec.version spec.namespace spec.releaseName spec.values spec.valuesFrom.configMapKeyRef.key \
  spec.valuesFrom.secretKeyRef.optional spec.dependencies spec.clusterName spec.installToAllClusters spec.source.http.url \
  spec.source.oci.repo spec.remediation.retries status.phase status.version status.notes status.lastSpecHash \
  status.syncedClusters status.reason status.conditions.reason; do
  for v in v1 v1alpha1; do
    out=$(kubectl explain "helmrequests.$f" --api-version="app.alauda.io/$v" 2>&1) || fail "kubectl explain helmrequests.$f ($v): $out"
    desc=$(awk '/^DESCRIPTION:/{getline; print; exit}' <<<"$out")
    [[ "$desc" =~ [a-zA-Z] && "$desc" != *"<empty>"* ]] || fail "kubectl explain helmrequests.$f ($v): no description: $out"
  done
done
ok "the CRD serves v1 (stored) and v1alpha1, and kubectl explain documents every field"

# 1. Install from spec.source.http into another namespace (v1).
hq v1 web "{\"chart\": \"ignored/by-source\", \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url1\"}},
  \"values\": {\"message\": \"first\", \"replicaCount\": 0}}"
wait_for 90 "web Synced" hq_phase web Synced
[ "$(helm_ls "$APPS" web)" = "deployed 1 podlike-0.1.0" ] || fail "helm ls -n $APPS: $(helm_ls "$APPS" web)"
[ "$(helm_ls "$NS" web)" = absent ] || fail "the release is also in the HelmRequest's namespace"
kubectl -n "$APPS" get deployment web-podlike >/dev/null || fail "the chart's Deployment is not in $APPS"
status_matches_helm web "$APPS" web || fail "status.version/notes differ from helm's"
[ "$(hq_field web '{.status.version}')" = 0.1.0 ] || fail "status.version: $(hq_field web '{.status.version}')"
[[ "$(hq_field web '{.status.notes}')" == *"It runs 0 replicas: first"* ]] || fail "status.notes: $(hq_field web '{.status.notes}')"
for c in Ready Validated Initialized; do
  [ "$(hq_cond web "$c" status)" = True ] || fail "$c: $(hq_cond web "$c" status) $(hq_cond web "$c" message)"
done
[ "$(hq_field web '{.status.syncedClusters}')" = '["global"]' ] || fail "syncedClusters: $(hq_field web '{.status.syncedClusters}')"
[[ "$(hq_field web '{.status.lastSpecHash}')" =~ ^[0-9a-f]{64}$ ]] || fail "lastSpecHash: $(hq_field web '{.status.lastSpecHash}')"
[ "$(hq_field web '{.status.reason}')" = "" ] || fail "reason set while Synced: $(hq_field web '{.status.reason}')"
[ "$(hq_field web '{.metadata.finalizers}')" = '["captain.cpaas.io"]' ] || fail "finalizers: $(hq_field web '{.metadata.finalizers}')"
[ "$(helm get values web -n "$APPS" -o json)" = '{"message":"first","replicaCount":0}' ] ||
  fail "helm get values: $(helm get values web -n "$APPS" -o json)"
table=$(kubectl -n "$NS" get hreq web) # whole, not piped into head: a closed pipe would kill kubectl
[ "$(head -1 <<<"$table" | tr -s ' ')" = "NAME CHART VERSION NAMESPACE ALLCLUSTER PHASE AGE" ] || fail "printer columns: $table"
row_re="^web +ignored/by-source +([^ ]+ +)?$APPS +([^ ]+ +)?Synced +[0-9]"
[[ "$(tail -1 <<<"$table")" =~ $row_re ]] || fail "printed row: $table"
ok "v1 source.http: Synced, helm ls -n $APPS lists it deployed, status.version and notes as helm prints them"

# 2. A values change upgrades: revision 2.
hq v1 web "{\"chart\": \"ignored/by-source\", \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url1\"}},
  \"values\": {\"message\": \"second\", \"replicaCount\": 0}}"
wait_for 90 "web revision 2" bash -c "[ \"\$(helm ls -n $APPS -o json --filter '^web\$' | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"revision\"])')\" = 2 ]"
wait_for 60 "web Synced at generation 2" hq_phase web Synced
[ "$(helm_hist "$APPS" web)" = "1:superseded 2:deployed" ] || fail "history: $(helm_hist "$APPS" web)"
status_matches_helm web "$APPS" web || fail "status after the upgrade differs from helm's"
[[ "$(hq_field web '{.status.notes}')" == *"It runs 0 replicas: second"* ]] || fail "notes not updated: $(hq_field web '{.status.notes}')"
ok "a values change is revision 2; status.notes follows"

# The release's place cannot move (as Captain's webhook refused): the CRD's rules say so.
for change in "{\"spec\":{\"namespace\":\"$NS\"}}" '{"spec":{"releaseName":"other"}}'; do
  if out=$(kubectl -n "$NS" patch helmrequest.v1.app.alauda.io web --type merge -p "$change" 2>&1); then
    fail "the API server accepted $change"
  fi
  f=$(sed -E 's/.*"(namespace|releaseName)".*/\1/' <<<"$change")
  [[ "$out" == *"spec.$f cannot be changed"* ]] || fail "refusal of $change: $out"
done
[ "$(hq_field web '{.metadata.generation}')" = 2 ] || fail "a refused change bumped the generation"
ok "spec.namespace and spec.releaseName cannot be changed"

# 3. v1alpha1: the same API, the record in the HelmRequest's namespace by default, releaseName.
hq v1alpha1 legacy "{\"releaseName\": \"legacy-rel\", \"source\": {\"http\": {\"url\": \"$url2\"}}}"
wait_for 90 "legacy Synced" hq_phase legacy Synced
[ "$(helm_ls "$NS" legacy-rel)" = "deployed 1 podlike-0.2.0" ] || fail "helm ls -n $NS: $(helm_ls "$NS" legacy-rel)"
status_matches_helm legacy "$NS" legacy-rel || fail "v1alpha1: status differs from helm's"
[ "$(kubectl -n "$NS" get helmrequests.v1alpha1.app.alauda.io legacy -o jsonpath='{.apiVersion} {.status.phase} {.status.version}')" = \
  "app.alauda.io/v1alpha1 Synced 0.2.0" ] || fail "read as v1alpha1: $(kubectl -n "$NS" get helmrequests.v1alpha1.app.alauda.io legacy -o jsonpath='{.apiVersion} {.status.phase}')"
ok "v1alpha1: Synced as legacy-rel in the HelmRequest's namespace, read back through v1alpha1"

# 4. Rollback by annotation; removed, the spec again.
kubectl -n "$NS" annotate helmrequest.v1.app.alauda.io web app.alauda.io/rollback-to=1 >/dev/null
wait_for 90 "web rolled back" bash -c "[ \"\$(helm history -n $APPS web -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')\" = 3 ]"
wait_for 60 "web Synced after the rollback" hq_phase web Synced
[ "$(helm_hist "$APPS" web)" = "1:superseded 2:superseded 3:deployed" ] || fail "history after rollback: $(helm_hist "$APPS" web)"
[[ "$(helm history -n "$APPS" web -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["description"])')" == *"Rollback to 1"* ]] ||
  fail "revision 3 is not a rollback to 1: $(helm history -n "$APPS" web)"
[ "$(helm get values web -n "$APPS" -o json)" = '{"message":"first","replicaCount":0}' ] ||
  fail "values after the rollback: $(helm get values web -n "$APPS" -o json)"
status_matches_helm web "$APPS" web || fail "status after the rollback differs from helm's"
kubectl -n "$NS" annotate helmrequest.v1.app.alauda.io web app.alauda.io/rollback-to- >/dev/null
wait_for 90 "web back on the spec" bash -c "[ \"\$(helm history -n $APPS web -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')\" = 4 ]"
wait_for 60 "web Synced on the spec" hq_phase web Synced
[ "$(helm get values web -n "$APPS" -o json)" = '{"message":"second","replicaCount":0}' ] ||
  fail "values after removing the rollback: $(helm get values web -n "$APPS" -o json)"
ok "app.alauda.io/rollback-to=1: helm history shows revision 3 rolled back to 1; removed, revision 4 follows the spec"

# 5. Bad input: phase Failed with the reason, nothing applied.
nothing_applied() { [ -z "$(kubectl -n "$2" get secrets -l "owner=helm,name=$1" -o name)" ]; }
hq v1 nochart '{"chart": "nginx"}'
hq v1alpha1 longname '{"chart": "stable/nginx", "releaseName": "a123456789b123456789c123456789d123456789e123456789f1234"}'
hq v1 allclusters "{\"targetClusters\": {\"clusterLabels\": {\"labelSelector\": {\"env\": \"prod\"}}}, \"source\": {\"http\": {\"url\": \"$url1\"}}}"
hq v1 norepo '{"chart": "nosuch/podlike"}'
for n in nochart longname allclusters norepo; do wait_for 60 "$n Failed" hq_phase "$n" Failed; done
want_nochart='spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it), got "nginx"'
want_longname='spec.releaseName: "a123456789b123456789c123456789d123456789e123456789f1234" must be a name of at most 53 lowercase letters, digits, '"'-'"' and '"'.'"', starting and ending with a letter or digit'
want_allclusters='spec.targetClusters.clusterLabels: selecting clusters by labels is not supported by this rudder version'
for n in nochart longname allclusters; do
  want="want_$n"
  [ "$(hq_field "$n" '{.status.reason}')" = "${!want}" ] || fail "$n: reason: $(hq_field "$n" '{.status.reason}')"
  [ "$(hq_cond "$n" Validated status)" = False ] || fail "$n: Validated is $(hq_cond "$n" Validated status)"
  [ "$(hq_cond "$n" Validated message)" = "${!want}" ] || fail "$n: Validated message: $(hq_cond "$n" Validated message)"
  [ "$(hq_cond "$n" Ready status)" = False ] || fail "$n: Ready is $(hq_cond "$n" Ready status)"
done
[ "$(hq_cond nochart Validated reason)" = InvalidSpec ] || fail "nochart: Validated reason $(hq_cond nochart Validated reason)"
[ "$(hq_cond allclusters Validated reason)" = NotSupported ] || fail "allclusters: Validated reason $(hq_cond allclusters Validated reason)"
[[ "$(hq_field norepo '{.status.reason}')" == *"chartrepo:captain-system/nosuch"* ]] || fail "norepo: reason: $(hq_field norepo '{.status.reason}')"
for n in nochart allclusters norepo; do
  nothing_applied "$n" "$NS" || fail "$n: release records were written"
  [ "$(helm_ls "$NS" "$n")" = absent ] || fail "$n: helm lists it"
done
nothing_applied a123456789b123456789c123456789d123456789e123456789f1234 "$NS" || fail "longname: release records were written"
[ "$(kubectl -n "$NS" get deployments -o name)" = deployment.apps/legacy-rel-podlike ] ||
  fail "a bad HelmRequest applied objects: $(kubectl -n "$NS" get deployments -o name)"
ok "a chart without '/', a release name over 53, clusters chosen by labels, an unknown ChartRepo: Failed with the reason, nothing applied"

# Fields of the wrong type never reach rudder: the API server refuses them, naming the field.
for bad in '"installToAllClusters": "yes"' '"values": "a: 1"' '"dependencies": "db"' '"valuesFrom": [{"configMapKeyRef": {"name": 3}}]' \
  '"remediation": {"retries": -1}'; do
  field=$(sed -E 's/^"([a-zA-Z]+)".*/\1/' <<<"$bad")
  for v in v1 v1alpha1; do
    if out=$(kubectl create -f - 2>&1 <<Y
{"apiVersion": "app.alauda.io/$v", "kind": "HelmRequest", "metadata": {"name": "wrongtype", "namespace": "$NS"},
 "spec": {"chart": "r/c", $bad}}
Y
    ); then fail "the API server accepted {$bad} ($v)"; fi
    [[ "$out" == *"spec.$field"* ]] || fail "refusal of {$bad} ($v) does not name spec.$field: $out"
  done
done
kubectl -n "$NS" get helmrequest.app.alauda.io wrongtype >/dev/null 2>&1 && fail "wrongtype exists"
ok "fields of the wrong type are refused by the API server with the field's path (both versions)"

# A bad request fixed: Synced (the failure is not sticky).
hq v1 nochart "{\"chart\": \"nginx\", \"source\": {\"http\": {\"url\": \"$url1\"}}}"
wait_for 90 "nochart Synced once fixed" hq_phase nochart Synced
[ "$(hq_cond nochart Validated status)" = True ] || fail "fixed: Validated is $(hq_cond nochart Validated status)"
[ "$(hq_field nochart '{.status.reason}')" = "" ] || fail "fixed: reason kept: $(hq_field nochart '{.status.reason}')"
ok "a bad HelmRequest, fixed, is Synced with Validated=True"

# spec.remediation.retries: a failed upgrade is rolled back and retried once, then left Failed.
hq v1 remed "{\"source\": {\"http\": {\"url\": \"$url1\"}}, \"remediation\": {\"retries\": 1}}"
wait_for 90 "remed Synced" hq_phase remed Synced
hq v1 remed "{\"source\": {\"http\": {\"url\": \"$url1\"}}, \"remediation\": {\"retries\": 1}, \"values\": {\"podLabels\": {\"not a key!\": \"x\"}}}"
wait_for 120 "remed: failed, rolled back, failed again" bash -c "[ \"\$(helm history -n $NS remed -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')\" = 4 ]"
wait_for 60 "remed Failed" hq_phase remed Failed
[ "$(helm_hist "$NS" remed)" = "1:superseded 2:failed 3:deployed 4:failed" ] || fail "remediation history: $(helm_hist "$NS" remed)"
[[ "$(hq_field remed '{.status.reason}')" == *"not a key!"* ]] || fail "remed: reason: $(hq_field remed '{.status.reason}')"
[ "$(hq_cond remed Validated status)" = True ] || fail "remed: a failed upgrade is not a validation failure"
[ "$(hq_field remed '{.status.version}')" = 0.1.0 ] || fail "remed: status.version: $(hq_field remed '{.status.version}')"
ok "remediation.retries=1: a failed upgrade is rolled back and retried once (helm history), then Failed with the cause"

# source.http with a secretRef: the chart behind basic auth and our own CA (username, password and
# ca.crt from the Secret); a wrong password fails naming the 401.
kubectl -n "$NS" create secret generic src-creds --from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" \
  --from-file=ca.crt="$SRV_CA" >/dev/null
kubectl -n "$NS" create secret generic src-bad --from-literal=username="$SRV_USER" --from-literal=password=wrong \
  --from-file=ca.crt="$SRV_CA" >/dev/null
hq v1 private "{\"source\": {\"http\": {\"url\": \"$SRV_BASIC_URL/podlike-0.1.0.tgz\", \"secretRef\": \"src-creds\"}}}"
hq v1 denied "{\"source\": {\"http\": {\"url\": \"$SRV_BASIC_URL/podlike-0.1.0.tgz\", \"secretRef\": \"src-bad\"}}}"
wait_for 60 "private Synced" hq_phase private Synced
[ "$(helm_ls "$NS" private)" = "deployed 1 podlike-0.1.0" ] || fail "private: $(helm_ls "$NS" private)"
wait_for 60 "denied Failed" hq_phase denied Failed
[[ "$(hq_field denied '{.status.reason}')" == *"401 Unauthorized"* ]] || fail "denied: reason: $(hq_field denied '{.status.reason}')"
grep -q "$SRV_PASS" "$CTRL_LOG" && fail "the chart password appears in the controller log"
ok "source.http with secretRef: credentials and CA from the Secret; a wrong password Failed with the 401"
kubectl -n "$NS" delete helmrequest.app.alauda.io private denied --wait=true --timeout=60s >/dev/null

# An object Captain made carries its older finalizer (captain.alauda.io): it is served, and on
# deletion uninstalled before that finalizer is removed.
python3 - "$NS" "$url1" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
ns, url = sys.argv[1:3]
print(json.dumps({"apiVersion": "app.alauda.io/v1alpha1", "kind": "HelmRequest",
                  "metadata": {"name": "oldfin", "namespace": ns, "finalizers": ["captain.alauda.io"]},
                  "spec": {"source": {"http": {"url": url}}}}))
PY
wait_for 60 "oldfin Synced" hq_phase oldfin Synced
[ "$(kubectl -n "$NS" get helmrequest.app.alauda.io oldfin -o jsonpath='{.metadata.finalizers}')" = '["captain.alauda.io"]' ] ||
  fail "oldfin: finalizers $(kubectl -n "$NS" get helmrequest.app.alauda.io oldfin -o jsonpath='{.metadata.finalizers}')"
kubectl -n "$NS" delete helmrequest.app.alauda.io oldfin --wait=true --timeout=60s >/dev/null || fail "oldfin: not deleted"
[ "$(helm_ls "$NS" oldfin)" = absent ] || fail "oldfin still listed"
ok "Captain's older finalizer counts as rudder's: uninstalled, then removed"

# 6. Delete: uninstalled, objects and records gone, then the HelmRequest.
kubectl -n "$NS" delete helmrequest.app.alauda.io web legacy nochart remed --wait=false >/dev/null
for n in web legacy nochart remed; do
  wait_for 90 "$n deleted" bash -c "! kubectl -n $NS get helmrequest.app.alauda.io $n >/dev/null 2>&1"
done
[ "$(helm_ls "$APPS" web)" = absent ] || fail "web still listed: $(helm_ls "$APPS" web)"
[ "$(helm_ls "$NS" legacy-rel)" = absent ] || fail "legacy-rel still listed"
nothing_applied web "$APPS" || fail "web's records remain"
nothing_applied remed "$NS" || fail "remed's records remain"
kubectl -n "$APPS" get deployment web-podlike >/dev/null 2>&1 && fail "web's Deployment remains"
kubectl -n "$NS" get deployment legacy-rel-podlike >/dev/null 2>&1 && fail "legacy-rel's Deployment remains"
ok "delete uninstalls: helm ls shows nothing, objects and records gone"

# Refused ones go at once (nothing of theirs was installed).
kubectl -n "$NS" delete helmrequest.app.alauda.io nochart longname allclusters norepo --ignore-not-found --wait=false >/dev/null
wait_for 60 "refused HelmRequests deleted" bash -c "[ -z \"\$(kubectl -n $NS get helmrequests.app.alauda.io -o name)\" ]"
ok "refused HelmRequests delete without an uninstall"
stop_controller
