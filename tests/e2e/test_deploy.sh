#!/usr/bin/env bash
# deploy/ (kubectl apply -k deploy/): the API server accepts every manifest (server-side dry run
# first, then for real; the Deployment's pod passes the namespace's "restricted" Pod Security
# admission); the service account it creates can do what the controller needs: the controller
# run with that account's token, with the Deployment's own flags, watching every namespace,
# brings releases to Ready as the tenants' service accounts (the default one and a
# spec.serviceAccountName), a Microservice too, and uninstalls; a release whose namespace gave
# its service account nothing fails "forbidden" instead of acting as rudder; and nothing more
# (kubectl auth can-i, positive and negative). The cluster-admin component renders, is accepted,
# and drops --default-service-account.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deploy_lib.sh"
src=${RUDDER_SOURCE_DIR:?}
RNS=rudder-system
SA_USER=system:serviceaccount:$RNS:rudder

if kubectl get namespace "$RNS" >/dev/null 2>&1; then # left by an interrupted run
  kubectl delete namespace "$RNS" --wait=false >/dev/null
  wait_for 120 "namespace $RNS of an earlier run gone" bash -c "! kubectl get namespace $RNS"
fi
deploy_cleanup() {
  stop_controller KILL
  [ -f "$WORK/live.json" ] && kubectl delete -f "$WORK/live.json" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap 'rc=$?; deploy_cleanup; cleanup $rc' EXIT

kubectl kustomize "$src/deploy" >"$WORK/all.yaml"
kinds=$(to_json "$WORK/all.yaml" | python3 -c 'import json, sys; print(" ".join(sorted({d["kind"] for d in json.load(sys.stdin)})))')
[ "$kinds" = "ClusterRole ClusterRoleBinding CustomResourceDefinition Deployment Namespace Role RoleBinding Service ServiceAccount" ] ||
  fail "kubectl kustomize deploy/: kinds $kinds"
ncrd=$(docs_of CustomResourceDefinition "$WORK/all.yaml" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$ncrd" = "$(ls "$src"/deploy/crds/*.yaml | wc -l)" ] || fail "kustomize holds $ncrd CRDs, deploy/crds has $(ls "$src"/deploy/crds/*.yaml | wc -l)"
ok "kubectl kustomize deploy/ renders the namespace, the $ncrd CRDs, RBAC, the Deployment and the metrics Service"

# The CRDs are the fixture's (other tests use them): checked by the dry run, never deleted.
pick_kinds keep "$WORK/all.yaml" Namespace | kubectl apply -f - >/dev/null
kubectl apply --dry-run=server -f "$WORK/all.yaml" >"$WORK/dry.txt" 2>"$WORK/dry.err" ||
  fail "server-side dry run refused deploy/: $(cat "$WORK/dry.txt" "$WORK/dry.err")"
grep -q 'deployment.apps/rudder created (server dry run)' "$WORK/dry.txt" || fail "dry run: $(cat "$WORK/dry.txt")"
ok "kubectl apply --dry-run=server accepts every manifest of deploy/ ($(wc -l <"$WORK/dry.txt") objects)"

pick_kinds drop "$WORK/all.yaml" CustomResourceDefinition >"$WORK/live.json"
kubectl apply -f "$WORK/live.json" >/dev/null
pod_created() { [ -n "$(kubectl -n "$RNS" get pods -l app.kubernetes.io/name=rudder -o name)" ]; }
wait_for 60 "the Deployment's pod created" pod_created
if kubectl -n "$RNS" get events --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}' | grep -q .; then
  fail "the ReplicaSet could not create the pod: $(kubectl -n "$RNS" get events --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}')"
fi
[ "$(kubectl get namespace "$RNS" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" = restricted ] ||
  fail "namespace $RNS does not enforce the restricted Pod Security Standard"
# ...and the admission is on: a pod that may escalate is refused there.
if kubectl -n "$RNS" run probe --image=rudder:0.1.0 --restart=Never --dry-run=server >/dev/null 2>"$WORK/psa.err"; then
  fail "a pod without the restricted securityContext was admitted in $RNS"
fi
grep -q 'violates PodSecurity "restricted' "$WORK/psa.err" || fail "refused, but not by Pod Security: $(cat "$WORK/psa.err")"
ok "applied for real: the pod of the Deployment is admitted under Pod Security \"restricted\" (a plain pod is not)"

can_i_checks "$SA_USER" "$RNS" rudder-controller

# Tenants: helm-release (the Deployment's --default-service-account) in $NS may write
# ConfigMaps, Secrets (release records) and Deployments there; "tenant" too, for a release that
# names it; in $NS-bare the namespace's owner granted helm-release nothing.
for sa in helm-release tenant; do
  kubectl apply -f - >/dev/null <<Y
apiVersion: v1
kind: ServiceAccount
metadata: {name: $sa, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: $sa, namespace: $NS}
rules:
- apiGroups: ["", "apps"]
  resources: ["configmaps", "secrets", "deployments"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: $sa, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: $sa}
subjects: [{kind: ServiceAccount, name: $sa, namespace: $NS}]
Y
done
EXTRA_NAMESPACES+=("$NS-bare")
kubectl create namespace "$NS-bare" >/dev/null

mkdir -p "$WORK/t"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  k: v1\n' >"$WORK/t/cm.yaml"
hr_inline own own 0.1.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
HR_SPEC='{"serviceAccountName": "tenant"}' hr_inline named named 0.1.0 "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null
hr_inline bare bare 0.1.0 "$WORK/t/cm.yaml" | sed "s/\"namespace\": \"$NS\"/\"namespace\": \"$NS-bare\"/" | kubectl apply -f - >/dev/null
kubectl apply -f - >/dev/null <<Y
apiVersion: micro.hello.com/v1alpha1
kind: Microservice
metadata: {name: micro, namespace: $NS}
spec:
  resources: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: micro
    data:
      k: v1
Y

sa_kubeconfig "$RNS" rudder "$WORK/sa.kubeconfig"
mapfile -t args < <(controller_args "$WORK/all.yaml")
log "controller flags from deploy/deployment.yaml: ${args[*]}"
printf '%s\n' "${args[@]}" | grep -qx -- --default-service-account=helm-release || fail "the Deployment does not set --default-service-account"
"$RUDDER_BIN" controller --kubeconfig "$WORK/sa.kubeconfig" --storage-path "$WORK/charts" "${args[@]}" >>"$CTRL_LOG" 2>&1 &
CTRL_PID=$!
log "controller started with rudder's token (pid $CTRL_PID)"

wait_for 90 "own Ready" hr_ready own
wait_for 60 "named Ready" hr_ready named
[ "$(cm_data "$NS" own k)" = v1 ] && [ "$(cm_data "$NS" named k)" = v1 ] || fail "the releases' ConfigMaps were not applied"
[ "$(helm_status helm own)" = "deployed 1" ] && [ "$(helm_status helm named)" = "deployed 1" ] ||
  fail "helm ls: own $(helm_status helm own), named $(helm_status helm named)"
grep -q "acting as a service account for its releases.*system:serviceaccount:$NS:helm-release" "$CTRL_LOG" ||
  fail "the controller did not act as the default service account"
grep -q "acting as a service account for its releases.*system:serviceaccount:$NS:tenant" "$CTRL_LOG" ||
  fail "the controller did not act as spec.serviceAccountName"
[[ " $(hr_events own) " == *" InstallSucceeded "* ]] || fail "no InstallSucceeded Event for own: $(hr_events own)"
ok "with rudder's token, releases reach Ready as the default service account and as spec.serviceAccountName"

# Drift detection of a tenant's release watches as the tenant (rudder itself may not list
# Deployments): a Deployment scaled by hand is put back.
deployment_template "$WORK/t/dep.yaml"
HR_SPEC='{"driftDetection": {"mode": "enabled"}}' hr_inline driftee driftee 0.1.0 "$WORK/t/dep.yaml" | kubectl apply -f - >/dev/null
wait_for 90 "driftee Ready" hr_ready driftee
wait_for 30 "drift watches as the tenant" grep -q "drift watches as a service account.*system:serviceaccount:$NS:helm-release" "$CTRL_LOG"
sleep 2
kubectl -n "$NS" scale deployment driftee --replicas=3 >/dev/null
wait_for 30 "driftee scaled back" bash -c "[ \"\$(kubectl -n $NS get deployment driftee -o jsonpath='{.spec.replicas}')\" = 1 ]"
ok "drift detection watches as the release's service account (rudder may not list Deployments): a hand scale is put back"

ms_deployed() { [ "$(kubectl -n "$NS" get microservice micro -o jsonpath='{.status.phase}')" = Deployed ]; }
wait_for 60 "Microservice micro Deployed" ms_deployed
[ "$(cm_data "$NS" micro k)" = v1 ] || fail "the Microservice's ConfigMap was not applied"
ok "a Microservice is deployed too (another kind's informer, status and finalizer)"

bare_failed() { [ "$(kubectl -n "$NS-bare" get helmrelease bare -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = False ]; }
wait_for 60 "bare failed" bare_failed
msg=$(kubectl -n "$NS-bare" get helmrelease bare -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}')
[[ "$msg" == *forbidden* && "$msg" == *"system:serviceaccount:$NS-bare:helm-release"* ]] ||
  fail "bare: the message should be the API server's forbidden for its default service account: $msg"
! kubectl -n "$NS-bare" get configmap bare >/dev/null 2>&1 || fail "bare: applied although its service account may not"
ok "a release whose namespace granted its service account nothing is refused as that account (not done as rudder)"

holder=$(kubectl -n "$RNS" get lease rudder-controller -o jsonpath='{.spec.holderIdentity}')
[ -n "$holder" ] || fail "no leader Lease rudder-controller in $RNS"
ok "leader election holds the Lease $RNS/rudder-controller ($holder)"

kubectl -n "$NS" delete helmrelease own --wait=false >/dev/null
kubectl -n "$NS" delete microservice micro --wait=false >/dev/null
wait_for 60 "own uninstalled" bash -c "! kubectl -n $NS get helmrelease own >/dev/null 2>&1 && ! kubectl -n $NS get configmap own >/dev/null 2>&1"
wait_for 60 "micro uninstalled" bash -c "! kubectl -n $NS get microservice micro >/dev/null 2>&1"
[ "$(helm_status helm own)" = absent ] || fail "own: helm ls after delete: $(helm_status helm own)"
ok "deleting a HelmRelease and a Microservice uninstalls them and their finalizers go"

# Nothing the controller does as itself was refused: the only forbidden answers are the bare
# release's, as its service account.
if grep -i forbidden "$CTRL_LOG" | grep -v "system:serviceaccount:$NS-bare:helm-release" | grep -q .; then
  fail "the controller was refused something: $(grep -i forbidden "$CTRL_LOG" | grep -v "$NS-bare:helm-release" | head -5)"
fi
stop_controller TERM
ok "no request the controller made as itself was forbidden; it stopped cleanly"

# The component for releases that act as rudder itself.
mkdir -p "$WORK/broad"
rel=$(realpath --relative-to="$WORK/broad" "$src/deploy")
printf 'resources: [%s]\ncomponents: [%s/cluster-admin]\n' "$rel" "$rel" >"$WORK/broad/kustomization.yaml"
kubectl kustomize "$WORK/broad" >"$WORK/broad.yaml"
kubectl apply --dry-run=server -f "$WORK/broad.yaml" >/dev/null 2>"$WORK/dry.err" || fail "server-side dry run refused deploy/ with the cluster-admin component"
docs_of ClusterRoleBinding "$WORK/broad.yaml" | python3 -c '
import json, sys
b = [d for d in json.load(sys.stdin) if d["roleRef"]["name"] == "cluster-admin"]
assert len(b) == 1 and b[0]["subjects"] == [{"kind": "ServiceAccount", "name": "rudder", "namespace": "rudder-system"}], b
' || fail "the cluster-admin component does not bind rudder to cluster-admin"
args=$(deploy_args "$WORK/broad.yaml" | tr '\n' ' ')
[[ "$args" != *--default-service-account* && "$args" == *--leader-elect* ]] || fail "with the component, the args are: $args"
ok "the cluster-admin component binds rudder to cluster-admin and drops --default-service-account (accepted by the server)"
