#!/usr/bin/env bash
# create -> helm ls (v4 and v3) deployed at revision 1, manifest equal to what
# `helm install` stores for the same chart, ownership metadata on the objects;
# update -> revision 2, history superseded then deployed, removed object gone;
# delete -> objects and release records gone, then the resource itself.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t1" "$WORK/t2"
cat >"$WORK/t1/deployment.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
Y
cat >"$WORK/t1/service.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
Y
cat >"$WORK/t1/config.yaml" <<'Y'
# two documents in one file
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  greeting: hello
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
Y

start_controller
hr_inline web web 1.0.0 "$WORK/t1"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease web Ready" hr_ready web
ok "HelmRelease web became Ready"
# The local API server runs API Priority and Fairness (as every current one does): without --qps,
# the client's own limit is dropped, as Flux's controllers decide.
grep -q "applies flow control (API Priority and Fairness): client-side rate limit off" "$CTRL_LOG" ||
  fail "the controller did not see the API server's flow-control headers"
ok "flow control seen: client-side rate limit off"

[ "$(helm_status helm web)" = "deployed 1" ] || fail "helm ls: $(helm_status helm web), want deployed 1"
ok "helm (v4) ls: deployed at revision 1"
[ "$(helm_status helm3 web)" = "deployed 1" ] || fail "helm3 ls: $(helm_status helm3 web), want deployed 1"
ok "helm (v3) ls: deployed at revision 1"

write_chart "$WORK/chart1" web 1.0.0 "$WORK/t1"/*.yaml
oracle_manifest web "$WORK/chart1" "$WORK/want1.yaml"
helm get manifest web -n "$NS" >"$WORK/got1.yaml"
diff -u "$WORK/want1.yaml" "$WORK/got1.yaml" >&2 || fail "helm get manifest differs from what helm install stores for the same chart"
ok "helm get manifest equals what helm install stores for the equivalent chart"
release_record "$NS" sh.helm.release.v1.web.v1 >"$WORK/got1.record"
diff <(python3 -m json.tool "$WORK/want1.yaml.record") <(python3 -m json.tool "$WORK/got1.record") >&2 ||
  fail "release record differs from the one helm install writes"
cmp -s "$WORK/want1.yaml.record" "$WORK/got1.record" || fail "release record JSON bytes differ from helm's"
ok "release record is byte-identical to helm install's (times and namespace masked)"

for obj in deployment/web service/web configmap/web-config serviceaccount/web; do
  m=$(kubectl -n "$NS" get "$obj" -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by} {.metadata.annotations.meta\.helm\.sh/release-name} {.metadata.annotations.meta\.helm\.sh/release-namespace}')
  [ "$m" = "Helm web $NS" ] || fail "$obj ownership metadata: '$m'"
done
ok "objects carry Helm's ownership metadata"
kubectl -n "$NS" get deployment web -o jsonpath='{.metadata.managedFields[*].manager}' | grep -qw rudder ||
  fail "deployment/web not applied with field manager rudder"
ok "objects applied by server-side apply as field manager rudder"
wait_for 90 "deployment web ready (kwok nodes)" \
  bash -c "[ \"\$(kubectl -n $NS get deployment web -o jsonpath='{.status.readyReplicas}')\" = 2 ]"
ok "deployment web has 2 ready replicas"
[ "$(hr_field web '{.status.lastAppliedRevision}')" = 1 ] || fail "status.lastAppliedRevision != 1"
[ "$(kubectl -n "$NS" get helmrelease web -o jsonpath='{.status.conditions[?(@.type=="Released")].reason}')" = InstallSucceeded ] ||
  fail "Released reason is not InstallSucceeded"
ok "status: revision 1, Released=InstallSucceeded"

# Update: change the Deployment, drop the ConfigMap/ServiceAccount file.
cp "$WORK/t1/deployment.yaml" "$WORK/t1/service.yaml" "$WORK/t2/"
sed -i 's/replicas: 2/replicas: 3/' "$WORK/t2/deployment.yaml"
hr_inline web web 1.1.0 "$WORK/t2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease web upgraded" bash -c "[ \"\$(helm ls -n $NS -o json | grep -o '\"revision\":\"2\"')\" ] && [ \"\$(kubectl -n $NS get helmrelease web -o jsonpath='{.status.observedGeneration}')\" = 2 ]"
wait_for 30 "HelmRelease web Ready after upgrade" hr_ready web
[ "$(helm_history helm web)" = "1:superseded 2:deployed" ] || fail "helm history: $(helm_history helm web)"
ok "helm history: 1 superseded, 2 deployed"
[ "$(helm_history helm3 web)" = "1:superseded 2:deployed" ] || fail "helm3 history: $(helm_history helm3 web)"
ok "helm (v3) history agrees"
wait_for 30 "configmap web-config deleted" bash -c "! kubectl -n $NS get configmap web-config"
wait_for 30 "serviceaccount web deleted" bash -c "! kubectl -n $NS get serviceaccount web"
ok "objects that left the manifest were deleted"
[ "$(kubectl -n "$NS" get deployment web -o jsonpath='{.spec.replicas}')" = 3 ] || fail "deployment not updated"
ok "deployment updated to 3 replicas"
write_chart "$WORK/chart2" web 1.1.0 "$WORK/t2"/*.yaml
oracle_manifest web "$WORK/chart2" "$WORK/want2.yaml"
helm get manifest web -n "$NS" >"$WORK/got2.yaml"
diff -u "$WORK/want2.yaml" "$WORK/got2.yaml" >&2 || fail "revision 2 manifest differs from what helm install stores"
ok "revision 2 manifest equals what helm install stores"
[ "$(hr_field web '{.status.conditions[?(@.type=="Released")].reason}')" = UpgradeSucceeded ] || fail "Released reason is not UpgradeSucceeded"
ok "status: Released=UpgradeSucceeded"

# Delete: objects, then release records, then the resource.
kubectl -n "$NS" delete helmrelease web --wait=false >/dev/null
wait_for 60 "HelmRelease web gone" bash -c "! kubectl -n $NS get helmrelease web"
ok "HelmRelease web deleted (finalizer removed)"
for obj in deployment/web service/web; do
  kubectl -n "$NS" get "$obj" >/dev/null 2>&1 && fail "$obj still exists after uninstall"
done
ok "release objects deleted"
n=$(kubectl -n "$NS" get secrets -l owner=helm,name=web -o name | wc -l)
[ "$n" = 0 ] || fail "$n release secrets left"
[ "$(helm_status helm web)" = absent ] || fail "helm ls still lists web"
ok "release records deleted; helm ls no longer lists the release"
stop_controller
