#!/usr/bin/env bash
# The app-store flow on Captain's API (app.alauda.io) through the official Kubernetes Java client
# (io.kubernetes:client-java, CustomObjectsApi and CoreV1Api; tests/java/appstore, built and cached
# by tests/java/build), as an app store written for Captain drives it: a ChartRepo for the private
# repository behind basic auth and our own CA → Synced; the Chart objects it publishes, compared
# with what `helm search repo` finds there; a HelmRequest <repo>/<chart> with values and valuesFrom
# (a ConfigMap, then a Secret with its own key)
# → Synced, checked with helm and kubectl; upgrades by merge patch (through v1alpha1) and by get +
# replace (v1), each a new revision; a change of the valuesFrom ConfigMap → a new revision; the
# rollback annotation → a revision with the earlier values, and off again → the spec's; a delete
# with propagationPolicy Foreground → the release and its objects gone. Then the same steps with
# kubectl alone (apply, patch, replace, annotate, delete --cascade=foreground).
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
servers_env
. "$RUDDER_SOURCE_DIR/tests/versions.env"

# Never skipped: without the Java tooling the test fails and says what is missing.
java_cmd=$("$RUDDER_SOURCE_DIR/tests/java/build") ||
  fail "the Java app-store driver cannot be built: tests/java/build needs a JDK 17 and Maven (apt-get) and io.kubernetes:client-java $KUBE_JAVA_CLIENT_VERSION from Maven Central (see its error above)"
for crd in chartrepos.app.alauda.io charts.app.alauda.io helmrequests.app.alauda.io; do
  kubectl get crd "$crd" >/dev/null 2>&1 || fail "CRD $crd is not installed (deploy/crds/ should hold it; tests/cluster/up applies them)"
done

# One JVM for the whole test (a start costs about 2 s): commands go to it one a line,
# tab-separated; an answer is the output, the error lines (each after STX), then "<EOT>rc=N".
# shellcheck disable=SC2086 # java_cmd is a command line without quoted parts
coproc APPSTORE { exec $java_cmd serve; }
EXTRA_PIDS+=("$APPSTORE_PID")
# Plain descriptors: bash closes a coproc's own in subshells, and js runs in pipelines.
exec 7>&"${APPSTORE[1]}" 8<&"${APPSTORE[0]}"
# js ARGS...: runs one driver command; its output on stdout, its exit code as status.
js() {
  local IFS=$'\t' line
  printf '%s\n' "$*" >&7
  while IFS= read -r line <&8; do
    case $line in
    $'\x04'rc=*) return "${line#$'\x04'rc=}" ;;
    $'\x02'*) printf '%s\n' "${line#$'\x02'}" >&2 ;;
    *) printf '%s\n' "$line" ;;
    esac
  done
  fail "the Java driver exited (command: $*)"
}
# js_close: ends the driver's input; it must then exit 0.
js_close() {
  exec 7>&- 8<&-
  eval "exec ${APPSTORE[1]}>&-"
  local rc=0
  wait "$APPSTORE_PID" || rc=$?
  [ "$rc" = 0 ] || fail "the Java driver exited with status $rc at the end of its input"
}
# until_ok SECONDS CMD...: polls CMD until it succeeds; status 1 on time-out (the caller says why).
until_ok() {
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.3
  done
}
# jq_py EXPR: a Python expression over the JSON on stdin (bound to o), printed (non-strings as sorted JSON).
jq_py() { python3 -c "import json,sys; o=json.load(sys.stdin); r=$1; print(r if isinstance(r, str) else json.dumps(r, sort_keys=True))"; }

# A chart of this test's own, two versions, published on the chart servers.
chart=appstore-$$
chart_dir=$WORK/chart/$chart
mkdir -p "$chart_dir/templates"
cat >"$chart_dir/Chart.yaml" <<Y
apiVersion: v2
name: $chart
description: The app-store test chart (a ConfigMap of its values and a ServiceAccount)
version: 0.1.0
appVersion: "2.0"
keywords: [rudder, appstore]
Y
cat >"$chart_dir/values.yaml" <<'Y'
greeting: hello
color: blue
size: small
Y
cat >"$chart_dir/templates/settings.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
  color: {{ .Values.color | quote }}
  size: {{ .Values.size | quote }}
  chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
Y
cat >"$chart_dir/templates/serviceaccount.yaml" <<'Y'
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}-app
Y
cat >"$chart_dir/templates/NOTES.txt" <<'Y'
{{ .Release.Name }} says {{ .Values.greeting }}.
Y
for v in 0.1.0 0.2.0; do "$RUDDER_SOURCE_DIR/tests/servers/publish" "$RUDDER_SERVERS_STATE" "$chart_dir" "$v" >/dev/null; done

# The helm CLI's own view of the same repository, with the same credentials and CA.
export HELM_REPOSITORY_CONFIG="$WORK/helm-repos.yaml" HELM_REPOSITORY_CACHE="$WORK/helm-cache"
helm repo add store "$SRV_BASIC_URL" --username "$SRV_USER" --password "$SRV_PASS" --ca-file "$SRV_CA" >/dev/null

CTRL_ARGS=(--chartrepo-namespace "$NS")
start_controller

# cm_field NAME KEY: a key of the ConfigMap the chart renders for release NAME.
cm_field() { cm_data "$NS" "$1-settings" "$2"; }
# hq_phase NAME: the HelmRequest's phase as kubectl reads it.
hq_phase() { kubectl -n "$NS" get helmrequests.app.alauda.io "$1" -o jsonpath='{.status.phase}'; }
# values_of NAME [REVISION]: the release's user-supplied values as helm records them, sorted JSON.
values_of() {
  helm get values -n "$NS" "$1" ${2:+--revision "$2"} -o json | jq_py o
}
history_is() { [ "$(helm_history helm "$1")" = "$2" ]; }

# ---- the app store, through the Java client ----

log "ChartRepo store: $SRV_BASIC_URL, basic auth and our CA (Secret store-auth)"
js chartrepo-create "$NS" store "$SRV_BASIC_URL" "$SRV_USER" "$SRV_PASS" "$SRV_CA" >/dev/null || fail "chartrepo-create"
js wait chartrepo "$NS" store Synced 90 >/dev/null || fail "ChartRepo store did not become Synced"
[ "$(kubectl -n "$NS" get chartrepos.app.alauda.io store -o jsonpath='{.status.phase}')" = Synced ] || fail "kubectl does not see ChartRepo store Synced"
[ "$(kubectl -n "$NS" get secret store-auth -o jsonpath='{.data.ca\.crt}' | base64 -d)" = "$(cat "$SRV_CA")" ] || fail "Secret store-auth does not hold the CA"
ok "ChartRepo (v1beta1) for the private repository behind basic auth and a self-signed CA: Synced"

# Every chart and version helm finds (prereleases too), with its app version and description,
# against the Chart objects the Java client lists.
want_charts=$(helm search repo store/ --versions --devel -o json |
  jq_py 'sorted({(x["name"].split("/", 1)[1], x["version"], x["app_version"], x["description"]) for x in o})')
charts_match() {
  got_charts=$(js charts "$NS" store |
    jq_py 'sorted({(c["chart"], v["version"], v["appVersion"] or "", v["description"] or "") for c in o for v in c["versions"]})') &&
    [ "$got_charts" = "$want_charts" ]
}
until_ok 60 charts_match ||
  fail "Charts: got $got_charts, want $want_charts"
[[ $want_charts == *"\"$chart\", \"0.2.0\", \"2.0\""* && $want_charts == *"\"$chart\", \"0.1.0\", \"2.0\""* ]] ||
  fail "helm search does not list $chart 0.1.0 and 0.2.0 (app version 2.0): $want_charts"
names=$(js charts "$NS" store | jq_py '" ".join(sorted(c["name"] for c in o))')
[[ " $names " == *" $chart.store "* ]] || fail "no Chart object named $chart.store: $names"
ok "Chart objects list every chart, version, app version and description of helm search repo --versions --devel ($(jq_py 'str(len(o))' <<<"$want_charts") versions)"

log "HelmRequest web (v1): store/$chart, values, valuesFrom a ConfigMap (default key) and a Secret (key extra.yaml)"
printf 'size: large\ncolor: green\n' >"$WORK/values-1.yaml"
printf 'color: violet\nextra: from-secret\n' >"$WORK/secret-values.yaml"
js configmap-apply "$NS" store-values values.yaml "$WORK/values-1.yaml" >/dev/null || fail "configmap-apply"
js secret-apply "$NS" store-secret extra.yaml "$WORK/secret-values.yaml" >/dev/null || fail "secret-apply"
js helmrequest-create v1 "$NS" web "store/$chart" "" '{"greeting": "hi from java", "color": "teal"}' \
  configmap:store-values secret:store-secret:extra.yaml >/dev/null || fail "helmrequest-create"
js wait helmrequest "$NS" web Synced 120 >"$WORK/web.json" || fail "HelmRequest web did not become Synced"
[ "$(helm_status helm web)" = "deployed 1" ] || fail "helm ls: $(helm_status helm web), want deployed 1"
newest=$(helm search repo "store/$chart" -o json | jq_py 'o[0]["version"]')
[ "$newest" = 0.2.0 ] || fail "helm search: newest $chart is $newest"
[ "$(jq_py 'o["status"]["version"]' <"$WORK/web.json")" = "$newest" ] || fail "status.version: $(jq_py 'o["status"]' <"$WORK/web.json"), want $newest"
[ "$(helm ls -n "$NS" -o json --filter '^web$' | jq_py 'o[0]["chart"]')" = "$chart-$newest" ] || fail "helm ls: not chart $chart-$newest"
[ "$(values_of web)" = '{"color": "teal", "extra": "from-secret", "greeting": "hi from java", "size": "large"}' ] || fail "helm get values: $(values_of web)"
[ "$(cm_field web greeting) $(cm_field web color) $(cm_field web size) $(cm_field web chart)" = "hi from java teal large $chart-0.2.0" ] ||
  fail "ConfigMap web-settings: $(kubectl -n "$NS" get configmap web-settings -o jsonpath='{.data}')"
kubectl -n "$NS" get serviceaccount web-app >/dev/null || fail "ServiceAccount web-app missing"
[ "$(hq_phase web)" = Synced ] || fail "kubectl: phase $(hq_phase web)"
notes=$(js get helmrequest "$NS" web | jq_py 'o["status"].get("notes", "")')
[ "$notes" = "$(helm get notes -n "$NS" web | sed '/^NOTES:$/d')" ] || fail "status.notes '$notes' differs from helm get notes"
ok "HelmRequest Synced: helm ls deployed 1 at the newest version, values = valuesFrom (ConfigMap, Secret) under values, objects rendered"

log "upgrade by a JSON merge patch, through v1alpha1"
js helmrequest-patch v1alpha1 "$NS" web '{"spec": {"values": {"greeting": "patched"}}}' >/dev/null || fail "helmrequest-patch"
js wait helmrequest/v1alpha1 "$NS" web Synced 120 >/dev/null || fail "web not Synced after the patch"
history_is web "1:superseded 2:deployed" || fail "helm history after the patch: $(helm_history helm web)"
[ "$(values_of web)" = '{"color": "teal", "extra": "from-secret", "greeting": "patched", "size": "large"}' ] || fail "values after the patch: $(values_of web)"
[ "$(cm_field web greeting)" = patched ] || fail "ConfigMap after the patch: greeting $(cm_field web greeting)"
ok "merge patch (v1alpha1): revision 2 with the patched values"

log "upgrade by get + replace, through v1: version 0.1.0, new values"
js helmrequest-replace v1 "$NS" web '{"version": "0.1.0", "values": {"greeting": "replaced"}}' >/dev/null || fail "helmrequest-replace"
js wait helmrequest "$NS" web Synced 120 >"$WORK/web.json" || fail "web not Synced after the replace"
history_is web "1:superseded 2:superseded 3:deployed" || fail "helm history after the replace: $(helm_history helm web)"
[ "$(helm ls -n "$NS" -o json --filter '^web$' | jq_py 'o[0]["chart"]')" = "$chart-0.1.0" ] || fail "helm ls after the replace: not $chart-0.1.0"
# Without an inline color, the Secret's (listed later) wins over the ConfigMap's.
[ "$(values_of web)" = '{"color": "violet", "extra": "from-secret", "greeting": "replaced", "size": "large"}' ] || fail "values after the replace: $(values_of web)"
[ "$(cm_field web greeting) $(cm_field web color) $(cm_field web chart)" = "replaced violet $chart-0.1.0" ] ||
  fail "ConfigMap after the replace: $(kubectl -n "$NS" get configmap web-settings -o jsonpath='{.data}')"
[ "$(jq_py 'o["status"]["version"]' <"$WORK/web.json")" = 0.1.0 ] || fail "status.version after the replace: $(jq_py 'o["status"]' <"$WORK/web.json")"
ok "replace (v1): revision 3 at chart 0.1.0, the replaced values (color from the later valuesFrom, the Secret)"

log "a change of the valuesFrom ConfigMap's data"
printf 'size: huge\ncolor: green\n' >"$WORK/values-2.yaml"
js configmap-apply "$NS" store-values values.yaml "$WORK/values-2.yaml" >/dev/null || fail "configmap-apply (change)"
wait_for 120 "revision 4 after the valuesFrom change" history_is web "1:superseded 2:superseded 3:superseded 4:deployed"
[ "$(cm_field web size)" = huge ] || fail "ConfigMap after the valuesFrom change: size $(cm_field web size)"
[ "$(values_of web)" = '{"color": "violet", "extra": "from-secret", "greeting": "replaced", "size": "huge"}' ] || fail "values after the valuesFrom change: $(values_of web)"
js wait helmrequest "$NS" web Synced 60 >/dev/null || fail "web not Synced after the valuesFrom change"
ok "valuesFrom ConfigMap changed: revision 4 with its new data"

log "roll back to revision 2 (annotation app.alauda.io/rollback-to)"
js rollback v1 "$NS" web 2 >/dev/null || fail "rollback"
wait_for 120 "revision 5 after the rollback" history_is web "1:superseded 2:superseded 3:superseded 4:superseded 5:deployed"
[ "$(values_of web 5)" = "$(values_of web 2)" ] || fail "revision 5 values $(values_of web 5), want revision 2's $(values_of web 2)"
[ "$(helm ls -n "$NS" -o json --filter '^web$' | jq_py 'o[0]["chart"]')" = "$chart-0.2.0" ] || fail "helm ls after the rollback: not revision 2's chart $chart-0.2.0"
[ "$(cm_field web greeting) $(cm_field web chart)" = "patched $chart-0.2.0" ] || fail "ConfigMap after the rollback: $(kubectl -n "$NS" get configmap web-settings -o jsonpath='{.data}')"
desc=$(helm history -n "$NS" web -o json | jq_py 'o[-1]["description"]')
echo "revision 5: $desc"
js wait helmrequest "$NS" web Synced 60 >/dev/null || fail "web not Synced after the rollback"
ok "rollback: helm history shows revision 5 with revision 2's chart and values"

js rollback v1 "$NS" web "" >/dev/null || fail "rollback (clear)"
wait_for 120 "revision 6 once the rollback annotation is gone" history_is web "1:superseded 2:superseded 3:superseded 4:superseded 5:superseded 6:deployed"
[ "$(values_of web)" = '{"color": "violet", "extra": "from-secret", "greeting": "replaced", "size": "huge"}' ] || fail "values after leaving the rollback: $(values_of web)"
[ "$(cm_field web chart)" = "$chart-0.1.0" ] || fail "chart after leaving the rollback: $(cm_field web chart)"
ok "rollback annotation removed: revision 6 follows the spec again"

log "delete with propagationPolicy Foreground"
js delete helmrequest "$NS" web Foreground >"$WORK/deleted.json" || fail "delete"
# The server took the policy: the object waits on its dependents (foregroundDeletion) and on our finalizer.
fin=$(jq_py 'o["metadata"].get("finalizers", [])' <"$WORK/deleted.json")
[[ $fin == *'"foregroundDeletion"'* ]] || fail "the delete's answer has no foregroundDeletion finalizer: $fin"
js wait-gone helmrequest "$NS" web 120 >/dev/null || fail "HelmRequest web was not deleted"
[ "$(helm_status helm web)" = absent ] || fail "helm ls after the delete: $(helm_status helm web)"
[ -z "$(kubectl -n "$NS" get secrets -l owner=helm,name=web -o name)" ] || fail "release records of web left"
kubectl -n "$NS" get configmap web-settings >/dev/null 2>&1 && fail "ConfigMap web-settings left after the delete"
kubectl -n "$NS" get serviceaccount web-app >/dev/null 2>&1 && fail "ServiceAccount web-app left after the delete"
ok "Foreground delete: HelmRequest, release records and objects gone"

# ---- the same with kubectl alone ----

log "kubectl: ChartRepo store2 (HTTPS under Harbor's prefix, a Secret holding only ca.crt)"
kubectl apply -n "$NS" -f - >/dev/null <<Y
apiVersion: v1
kind: Secret
metadata: {name: store2-ca}
data: {ca.crt: $(b64 "$SRV_CA")}
---
apiVersion: app.alauda.io/v1alpha1
kind: ChartRepo
metadata: {name: store2}
spec:
  type: Chart
  url: $SRV_HTTPS_URL/chartrepo/library
  secret: {name: store2-ca, namespace: $NS}
Y
kubectl -n "$NS" wait chartrepos.app.alauda.io/store2 --for=jsonpath='{.status.phase}'=Synced --timeout=90s >/dev/null ||
  fail "ChartRepo store2 not Synced: $(kubectl -n "$NS" get chartrepos.app.alauda.io store2 -o jsonpath='{.status}')"
kubectl_charts() {
  got2=$(kubectl -n "$NS" get charts.app.alauda.io -l repo=store2 -o json |
    jq_py 'sorted({(v["name"], v["version"], v.get("appVersion", ""), v.get("description", "")) for c in o["items"] for v in c["spec"]["versions"]})') &&
    [ "$got2" = "$want_charts" ]
}
until_ok 60 kubectl_charts || fail "kubectl: Charts of store2: got $got2, want $want_charts"
ok "kubectl: ChartRepo (v1alpha1) Synced, its Charts (versions, app versions, descriptions) those of helm search"

log "kubectl: HelmRequest app (v1alpha1) store2/$chart 0.1.0 with values"
kubectl apply -n "$NS" -f - >/dev/null <<Y
apiVersion: app.alauda.io/v1alpha1
kind: HelmRequest
metadata: {name: app}
spec:
  chart: store2/$chart
  version: 0.1.0
  values: {greeting: from kubectl}
  valuesFrom: [{configMapKeyRef: {name: store-values}}]
Y
kubectl_synced() {
  local gen obs
  gen=$(kubectl -n "$NS" get helmrequests.app.alauda.io "$1" -o jsonpath='{.metadata.generation}')
  obs=$(kubectl -n "$NS" get helmrequests.app.alauda.io "$1" -o jsonpath='{.status.observedGeneration}')
  [ "$gen" = "$obs" ] && [ "$(hq_phase "$1")" = Synced ]
}
wait_for 120 "kubectl: HelmRequest app Synced" kubectl_synced app
[ "$(helm_status helm app)" = "deployed 1" ] || fail "helm ls app: $(helm_status helm app)"
[ "$(cm_field app greeting) $(cm_field app size) $(cm_field app chart)" = "from kubectl huge $chart-0.1.0" ] ||
  fail "ConfigMap app-settings: $(kubectl -n "$NS" get configmap app-settings -o jsonpath='{.data}')"
ok "kubectl apply: HelmRequest Synced, helm ls deployed 1"

kubectl -n "$NS" patch helmrequests.app.alauda.io app --type merge -p '{"spec":{"values":{"greeting":"kubectl patch"}}}' >/dev/null
wait_for 120 "kubectl patch: revision 2" history_is app "1:superseded 2:deployed"
wait_for 60 "kubectl patch: Synced" kubectl_synced app
[ "$(cm_field app greeting)" = "kubectl patch" ] || fail "ConfigMap after kubectl patch: $(cm_field app greeting)"
ok "kubectl patch --type merge: revision 2"

# get + replace carries the resourceVersion read: a status write in between is a conflict, so try again.
kubectl_replace_version() {
  kubectl -n "$NS" get helmrequests.app.alauda.io app -o json |
    python3 -c 'import json,sys; o=json.load(sys.stdin); o["spec"]["version"]=sys.argv[1]; print(json.dumps(o))' "$1" |
    kubectl replace -f - >/dev/null
}
until_ok 30 kubectl_replace_version 0.2.0 || fail "kubectl replace of HelmRequest app failed: $(kubectl_replace_version 0.2.0 2>&1)"
wait_for 120 "kubectl replace: revision 3" history_is app "1:superseded 2:superseded 3:deployed"
wait_for 60 "kubectl replace: Synced" kubectl_synced app
[ "$(cm_field app chart)" = "$chart-0.2.0" ] || fail "ConfigMap after kubectl replace: chart $(cm_field app chart)"
ok "kubectl replace: revision 3 at 0.2.0"

kubectl -n "$NS" annotate helmrequests.app.alauda.io app app.alauda.io/rollback-to=1 >/dev/null
wait_for 120 "kubectl annotate rollback: revision 4" history_is app "1:superseded 2:superseded 3:superseded 4:deployed"
[ "$(values_of app 4)" = "$(values_of app 1)" ] || fail "revision 4 values $(values_of app 4), want revision 1's $(values_of app 1)"
[ "$(cm_field app greeting) $(cm_field app chart)" = "from kubectl $chart-0.1.0" ] || fail "ConfigMap after the kubectl rollback: $(kubectl -n "$NS" get configmap app-settings -o jsonpath='{.data}')"
ok "kubectl annotate app.alauda.io/rollback-to=1: revision 4 is revision 1's"

kubectl -n "$NS" delete helmrequests.app.alauda.io app --cascade=foreground --timeout=120s >/dev/null || fail "kubectl delete --cascade=foreground"
[ "$(helm_status helm app)" = absent ] || fail "helm ls after kubectl delete: $(helm_status helm app)"
kubectl -n "$NS" get configmap app-settings >/dev/null 2>&1 && fail "ConfigMap app-settings left after kubectl delete"
ok "kubectl delete --cascade=foreground: release and objects gone"

# The Java client's view of what kubectl made, and the driver's own error for a missing object.
kubectl -n "$NS" delete chartrepos.app.alauda.io store2 >/dev/null
js wait-gone chartrepo "$NS" store2 60 >/dev/null || fail "ChartRepo store2 not deleted"
err=$(js get helmrequest "$NS" app 2>&1 >/dev/null) && fail "get of a deleted HelmRequest succeeded"
[[ $err == *"HTTP 404"* ]] || fail "get of a deleted HelmRequest: $err"
ok "ChartRepo deleted; the driver reports a missing object as HTTP 404"

js_close
stop_controller
ok "the driver and the controller exit cleanly"
