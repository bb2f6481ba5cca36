#!/usr/bin/env bash
# Other clusters (reconcile/clusters.h) with two real control planes at once: the test's own second
# cluster's kubeconfig in a Secret of the chart-repository namespace labelled rudder.dev/cluster.
# A HelmRequest with installToAllClusters is Synced here first, and reaches the second cluster as
# soon as its Secret appears (syncedClusters names both; the real helm lists the release in
# each, records stored in each cluster); clusterName installs only there, and moved back here
# the release is uninstalled there; an upgrade reaches every cluster; a cluster without a
# Secret fails naming what is missing; deleting uninstalls from every cluster before the
# finalizer goes; a kubeconfig that names a file or a command is refused.
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
: "${RUDDER_SERVERS_STATE:?run through ctest (the e2e.servers-up fixture provides the chart servers)}"
. "$RUDDER_SERVERS_STATE/env"

SECOND="$WORK/second"
"$RUDDER_SOURCE_DIR/tests/cluster/up" --nodes 1 --state-dir "$SECOND" >/dev/null 2>"$WORK/second-up.log" ||
  { cat "$WORK/second-up.log" >&2; fail "cannot start the second control plane"; }
trap 'rc=$?; "$RUDDER_SOURCE_DIR/tests/cluster/down" "$SECOND" >/dev/null 2>&1 || true; cleanup $rc' EXIT
K2="$SECOND/kubeconfig"
ok "a second control plane is up ($(KUBECONFIG=$K2 kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])'))"

APPS="$NS-apps"
EXTRA_NAMESPACES+=("$APPS")
kubectl create namespace "$APPS" >/dev/null
KUBECONFIG=$K2 kubectl create namespace "$APPS" >/dev/null

hq_field() { kubectl -n "$NS" get helmrequests.v1.app.alauda.io "$1" -o jsonpath="$2"; }
hq_phase() {
  [ "$(hq_field "$1" '{.metadata.generation}')" = "$(hq_field "$1" '{.status.observedGeneration}')" ] &&
    [ "$(hq_field "$1" '{.status.phase}')" = "$2" ]
}
synced() { [ "$(hq_field "$1" '{.status.syncedClusters}')" = "$2" ] && hq_phase "$1" Synced; }
# in KUBECONFIG NS RELEASE: "<status> <revision>" as the real helm lists it there, or "absent".
in_cluster() {
  KUBECONFIG=$1 helm ls -n "$2" -o json --filter "^$3\$" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join([r[0]["status"], str(r[0]["revision"])]) if r else "absent")'
}
hq() {
  python3 - "$1" "$NS" "$2" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
name, ns, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
print(json.dumps({"apiVersion": "app.alauda.io/v1", "kind": "HelmRequest",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
url="$SRV_HTTP_URL/podlike-0.1.0.tgz"

CTRL_ARGS=(--chartrepo-namespace "$NS" --insecure-kubeconfig-exec)
start_controller

# 1. installToAllClusters before the second cluster is known: Synced here.
hq everywhere "{\"installToAllClusters\": true, \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url\"}}}"
wait_for 60 "everywhere Synced in this cluster" synced everywhere '["global"]'
[ "$(in_cluster "$KUBECONFIG" "$APPS" everywhere)" = "deployed 1" ] || fail "not deployed here"
[ "$(in_cluster "$K2" "$APPS" everywhere)" = absent ] || fail "in the second cluster before it is known"
ok "installToAllClusters with one cluster known: Synced, syncedClusters [global]"

# 2. The second cluster's Secret appears: the release reaches it, records stored there.
KUBECONFIG=$K2 kubectl config view --raw --flatten --minify >"$WORK/k2-flat.yaml"
kubectl -n "$NS" create secret generic second --from-file=kubeconfig="$WORK/k2-flat.yaml" >/dev/null
kubectl -n "$NS" label secret second rudder.dev/cluster=second >/dev/null
wait_for 90 "everywhere Synced in both" synced everywhere '["global","second"]'
[ "$(in_cluster "$K2" "$APPS" everywhere)" = "deployed 1" ] || fail "second cluster: $(in_cluster "$K2" "$APPS" everywhere)"
KUBECONFIG=$K2 kubectl -n "$APPS" get secret sh.helm.release.v1.everywhere.v1 >/dev/null || fail "no record in the second cluster"
KUBECONFIG=$K2 kubectl -n "$APPS" get deployment everywhere-podlike >/dev/null || fail "no Deployment in the second cluster"
ok "a cluster added later gets the release: helm ls there shows it deployed, syncedClusters [global, second]"

# 3. clusterName: only there.
hq there "{\"clusterName\": \"second\", \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url\"}}}"
wait_for 60 "there Synced" synced there '["second"]'
[ "$(in_cluster "$K2" "$APPS" there)" = "deployed 1" ] || fail "there: not in the second cluster"
[ "$(in_cluster "$KUBECONFIG" "$APPS" there)" = absent ] || fail "there: installed here too"
want_version=$(KUBECONFIG=$K2 helm get metadata there -n "$APPS" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
[ "$(hq_field there '{.status.version}')" = "$want_version" ] || fail "there: status.version $(hq_field there '{.status.version}'), helm there says $want_version"
KUBECONFIG=$K2 helm get notes there -n "$APPS" >"$WORK/notes-there.txt"
kubectl -n "$NS" get helmrequest.v1.app.alauda.io there -o jsonpath='{.status.notes}' >"$WORK/status-notes.txt"
[ "$(cat "$WORK/notes-there.txt")" = "NOTES:
$(cat "$WORK/status-notes.txt")" ] || fail "there: status.notes differ from helm get notes in the second cluster"
ok "clusterName: second installs only there (helm ls in each cluster); status.version and notes as helm there prints them"

# 4. An upgrade goes to every cluster.
hq everywhere "{\"installToAllClusters\": true, \"namespace\": \"$APPS\", \"values\": {\"replicaCount\": 0, \"message\": \"v2\"}, \"source\": {\"http\": {\"url\": \"$url\"}}}"
both_rev2() { [ "$(in_cluster "$KUBECONFIG" "$APPS" everywhere)" = "deployed 2" ] && [ "$(in_cluster "$K2" "$APPS" everywhere)" = "deployed 2" ]; }
wait_for 60 "revision 2 in both clusters" both_rev2
wait_for 30 "everywhere Synced again" synced everywhere '["global","second"]'
ok "a values change upgrades the release in both clusters (revision 2 in each)"

# 4b. A change made by hand in the second cluster (helm rollback there) is seen through the watch of
# its records (the interval is 10 minutes) and brought back to the spec: rollback is revision 3,
# rudder's upgrade back to the spec revision 4, and here nothing changes.
# (rudder's server-side apply owns the fields: helm 4 needs --force-conflicts, as in e2e.helm_cli)
KUBECONFIG=$K2 helm rollback everywhere 1 -n "$APPS" --force-conflicts >/dev/null
wait_for 60 "everywhere brought back in the second cluster" bash -c "[ \"\$(KUBECONFIG=$K2 helm ls -n $APPS -o json --filter '^everywhere\$' | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0][\"revision\"], r[0][\"status\"])')\" = '4 deployed' ]"
[ "$(in_cluster "$KUBECONFIG" "$APPS" everywhere)" = "deployed 2" ] || fail "this cluster's release changed: $(in_cluster "$KUBECONFIG" "$APPS" everywhere)"
grep -q 'watching release records in another cluster' "$CTRL_LOG" || fail "no watch of the second cluster's records"
ok "helm rollback by hand in the second cluster is seen at once (its records are watched) and corrected: revision 4 there, this cluster untouched"

# 5. A cluster no longer named: uninstalled there, installed here.
hq there "{\"clusterName\": \"global\", \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url\"}}}"
moved() { [ "$(in_cluster "$K2" "$APPS" there)" = absent ] && [ "$(in_cluster "$KUBECONFIG" "$APPS" there)" = "deployed 1" ]; }
wait_for 60 "there moved to this cluster" moved
wait_for 30 "there Synced here" synced there '["global"]'
[ -z "$(KUBECONFIG=$K2 kubectl -n "$APPS" get deployments there-podlike -o name 2>/dev/null)" ] || fail "there's Deployment left in the second cluster"
ok "clusterName changed to this cluster: uninstalled from the second, installed here"

# 6. A cluster without a Secret; a kubeconfig that names a file.
hq nowhere "{\"clusterName\": \"nosuch\", \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url\"}}}"
wait_for 60 "nowhere Failed" hq_phase nowhere Failed
case "$(hq_field nowhere '{.status.reason}')" in
  *"cluster nosuch: no Secret labelled rudder.dev/cluster=nosuch in namespace $NS"*) ;;
  *) fail "nowhere: reason: $(hq_field nowhere '{.status.reason}')" ;;
esac
cat >"$WORK/filey.yaml" <<Y
apiVersion: v1
kind: Config
current-context: c
clusters: [{name: k, cluster: {server: "https://127.0.0.1:1", certificate-authority: /etc/ssl/private/key.pem}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}}}]
Y
kubectl -n "$NS" create secret generic filey --from-file=kubeconfig="$WORK/filey.yaml" >/dev/null
kubectl -n "$NS" label secret filey rudder.dev/cluster=filey >/dev/null
hq filey "{\"clusterName\": \"filey\", \"namespace\": \"$APPS\", \"source\": {\"http\": {\"url\": \"$url\"}}}"
wait_for 60 "filey Failed" hq_phase filey Failed
case "$(hq_field filey '{.status.reason}')" in
  *"certificate-authority: files are not read for a kubeconfig that is not a local file"*) ;;
  *) fail "filey: reason: $(hq_field filey '{.status.reason}')" ;;
esac
ok "a cluster without a Secret, and a kubeconfig naming a file, fail with the reason"

# 7. A HelmRelease with spec.kubeConfig: its own kubeconfig Secret (key "value", as Flux), in its
# namespace; the release and its records live in that cluster only.
kubectl -n "$NS" create secret generic remote-kc --from-file=value="$WORK/k2-flat.yaml" >/dev/null
cat >"$WORK/kc-cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: kc-{{ .Release.Name }}
data:
  v: {{ .Values.v | quote }}
Y
HR_SPEC="{\"kubeConfig\": {\"secretRef\": {\"name\": \"remote-kc\"}}, \"releaseName\": \"remote\", \"driftDetection\": {\"mode\": \"enabled\"}, \"targetNamespace\": \"$APPS\", \"storageNamespace\": \"$APPS\", \"values\": {\"v\": \"one\"}}" \
  hr_inline remote kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease remote Ready" hr_ready remote
[ "$(in_cluster "$K2" "$APPS" remote)" = "deployed 1" ] || fail "remote: $(in_cluster "$K2" "$APPS" remote) in the second cluster"
[ "$(in_cluster "$KUBECONFIG" "$APPS" remote)" = absent ] || fail "remote: installed here too"
[ "$(KUBECONFIG=$K2 kubectl -n "$APPS" get configmap kc-remote -o jsonpath='{.data.v}')" = one ] || fail "remote: ConfigMap not in the second cluster"
HR_SPEC="{\"kubeConfig\": {\"secretRef\": {\"name\": \"remote-kc\"}}, \"releaseName\": \"remote\", \"driftDetection\": {\"mode\": \"enabled\"}, \"targetNamespace\": \"$APPS\", \"storageNamespace\": \"$APPS\", \"values\": {\"v\": \"two\"}}" \
  hr_inline remote kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "remote upgraded there" bash -c "[ \"\$(KUBECONFIG=$K2 helm ls -n $APPS -o json --filter '^remote\$' | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"revision\"])')\" = 2 ]"
wait_for 30 "HelmRelease remote Ready again" hr_ready remote
remote_status() { [ "$(hr_field remote '{.status.lastAppliedRevision} {.status.history[0].version} {.status.history[0].status}')" = "$1" ]; }
wait_for 30 "remote's status names revision 2" remote_status "2 2 deployed"
[ "$(KUBECONFIG=$K2 helm history remote -n "$APPS" -o json | python3 -c 'import json,sys; h=json.load(sys.stdin); print(h[-1]["revision"], h[-1]["status"])')" = "2 deployed" ] ||
  fail "remote: helm history in the second cluster disagrees with the status"
ok "a release only in the cluster of spec.kubeConfig: status.lastAppliedRevision and history from that cluster's records (as helm history there)"
KUBECONFIG=$K2 kubectl -n "$APPS" patch configmap kc-remote --type merge -p '{"data":{"v":"edited"}}' >/dev/null
wait_for 30 "the edit in the second cluster corrected" bash -c "[ \"\$(KUBECONFIG=$K2 kubectl -n $APPS get configmap kc-remote -o jsonpath='{.data.v}')\" = two ]"
[ "$(KUBECONFIG=$K2 helm history remote -n "$APPS" -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2 ] ||
  fail "the correction wrote a record in the second cluster"
ok "drift detection in the cluster of spec.kubeConfig: a ConfigMap edited there is corrected at once (no new record)"
# 7b. The second cluster stops answering (its API server frozen): only its release waits; a release
# of this cluster upgrades meanwhile; once it answers again, the change made meanwhile reaches it.
HR_SPEC='{"values": {"v": "one"}}' hr_inline near kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease near Ready" hr_ready near
api2=$(cat "$SECOND"/pids/*-kube-apiserver.pid)
kill -STOP "$api2"
trap 'rc=$?; kill -CONT '"$api2"' 2>/dev/null || true; "$RUDDER_SOURCE_DIR/tests/cluster/down" "$SECOND" >/dev/null 2>&1 || true; cleanup $rc' EXIT
HR_SPEC="{\"kubeConfig\": {\"secretRef\": {\"name\": \"remote-kc\"}}, \"releaseName\": \"remote\", \"driftDetection\": {\"mode\": \"enabled\"}, \"targetNamespace\": \"$APPS\", \"storageNamespace\": \"$APPS\", \"values\": {\"v\": \"three\"}}" \
  hr_inline remote kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
HR_SPEC='{"values": {"v": "two"}}' hr_inline near kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 30 "HelmRelease near upgraded while the second cluster is down" hr_ready near
[ "$(kubectl -n "$NS" get configmap kc-near -o jsonpath='{.data.v}')" = two ] || fail "near: not upgraded"
sleep 3
hr_ready remote && fail "remote is Ready at its new generation while its cluster does not answer"
ok "the second cluster frozen: a release of this cluster upgrades at once; the remote one waits (not Ready)"
kill -CONT "$api2"
wait_for 120 "remote upgraded once its cluster answers" bash -c "[ \"\$(KUBECONFIG=$K2 kubectl -n $APPS get configmap kc-remote -o jsonpath='{.data.v}')\" = three ]"
wait_for 60 "HelmRelease remote Ready again" hr_ready remote
[ "$(in_cluster "$K2" "$APPS" remote)" = "deployed 3" ] || fail "remote: $(in_cluster "$K2" "$APPS" remote) after its cluster came back"
ok "the second cluster answers again: the change made meanwhile reaches it (revision 3 there, Ready)"
kubectl -n "$NS" delete helmrelease near --wait=true --timeout=60s >/dev/null
HR_SPEC="{\"kubeConfig\": {\"secretRef\": {\"name\": \"no-such-kc\"}}, \"values\": {\"v\": \"x\"}}" \
  hr_inline lost kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease lost failed" hr_failed lost
case "$(hr_cond_msg lost Ready)" in *"spec.kubeConfig.secretRef: cannot read Secret $NS/no-such-kc"*) ;; *) fail "lost: $(hr_cond_msg lost Ready)" ;; esac
# With --insecure-kubeconfig-exec, a kubeconfig Secret may name an exec credential plugin, run as
# for the main cluster: here a script giving a service account token of the second cluster.
KUBECONFIG=$K2 kubectl -n "$APPS" create serviceaccount deployer >/dev/null
KUBECONFIG=$K2 kubectl create clusterrolebinding "deployer-$NS" --clusterrole=cluster-admin --serviceaccount="$APPS:deployer" >/dev/null
tok=$(KUBECONFIG=$K2 kubectl -n "$APPS" create token deployer --duration=1h)
printf '#!/bin/sh\necho run >>%s\nprintf '"'"'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}'"'"'\n' \
  "$WORK/exec-ran" "$tok" >"$WORK/cred.sh"
chmod +x "$WORK/cred.sh"
python3 - "$WORK/k2-flat.yaml" "$WORK/cred.sh" >"$WORK/k2-exec.yaml" <<'PY'
import json, re, sys
text, cred = open(sys.argv[1]).read(), sys.argv[2]
server = re.search(r"server: (\S+)", text).group(1)
ca = re.search(r"certificate-authority-data: (\S+)", text).group(1)
print(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "x",
                  "clusters": [{"name": "k", "cluster": {"server": server, "certificate-authority-data": ca}}],
                  "contexts": [{"name": "x", "context": {"cluster": "k", "user": "u"}}],
                  "users": [{"name": "u", "user": {"exec": {"command": cred, "apiVersion": "client.authentication.k8s.io/v1",
                                                              "interactiveMode": "Never"}}}]}))
PY
kubectl -n "$NS" create secret generic exec-kc --from-file=value="$WORK/k2-exec.yaml" >/dev/null
HR_SPEC="{\"kubeConfig\": {\"secretRef\": {\"name\": \"exec-kc\"}}, \"releaseName\": \"viaexec\", \"targetNamespace\": \"$APPS\", \"storageNamespace\": \"$APPS\", \"values\": {\"v\": \"x\"}}" \
  hr_inline viaexec kc 1.0.0 "$WORK/kc-cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease viaexec Ready" hr_ready viaexec
[ "$(in_cluster "$K2" "$APPS" viaexec)" = "deployed 1" ] || fail "viaexec: $(in_cluster "$K2" "$APPS" viaexec) in the second cluster"
[ -s "$WORK/exec-ran" ] || fail "the exec plugin was not run"
KUBECONFIG=$K2 kubectl -n "$APPS" get configmap kc-viaexec -o jsonpath='{.metadata.managedFields[*].manager}' | grep -q rudder ||
  fail "viaexec: the ConfigMap in the second cluster was not applied by rudder"
ok "--insecure-kubeconfig-exec: a kubeconfig Secret naming an exec plugin reaches its cluster with the plugin's token"
kubectl -n "$NS" delete helmrelease viaexec --wait=true --timeout=60s >/dev/null
kubectl -n "$NS" delete helmrelease remote lost --wait=true --timeout=60s >/dev/null
[ "$(in_cluster "$K2" "$APPS" remote)" = absent ] || fail "remote still in the second cluster after its deletion"
ok "HelmRelease spec.kubeConfig.secretRef: installed, upgraded and uninstalled in that cluster only; a missing Secret named"

# 8. Deleting uninstalls from every cluster before the finalizer goes.
kubectl -n "$NS" delete helmrequest.app.alauda.io everywhere there nowhere filey --wait=true --timeout=90s >/dev/null
for r in everywhere there; do
  [ "$(in_cluster "$KUBECONFIG" "$APPS" $r)" = absent ] || fail "$r still here"
  [ "$(in_cluster "$K2" "$APPS" $r)" = absent ] || fail "$r still in the second cluster"
done
[ -z "$(KUBECONFIG=$K2 kubectl -n "$APPS" get secrets -l owner=helm -o name)" ] || fail "records left in the second cluster"
[ -z "$(KUBECONFIG=$K2 kubectl -n "$APPS" get deployments -o name)" ] || fail "objects left in the second cluster"
ok "deleted: uninstalled from both clusters (records and objects gone) before the HelmRequests went"
stop_controller
