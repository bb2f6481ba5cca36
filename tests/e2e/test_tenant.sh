#!/usr/bin/env bash
# A tenant's release acts as the tenant: spec.serviceAccountName (and the controller's
# --default-service-account) is impersonated for everything the release applies, reads back,
# looks up and deletes. With a service account allowed only its own namespace: a release of its
# own installs, upgrades and uninstalls; one that would bind cluster-admin, write another
# namespace or read another namespace's Secret through `lookup` fails with the API server's
# "forbidden" naming the service account, and nothing of it is applied.
. "$(dirname "$0")/lib.sh"

kubectl apply -f - >/dev/null <<Y
apiVersion: v1
kind: ServiceAccount
metadata: {name: tenant, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: tenant, namespace: $NS}
rules:
- apiGroups: ["", "apps", "batch"]
  resources: ["configmaps", "secrets", "services", "serviceaccounts", "deployments", "jobs", "pods"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: tenant, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: tenant}
subjects: [{kind: ServiceAccount, name: tenant, namespace: $NS}]
Y
kubectl create namespace "$NS-other" >/dev/null
kubectl -n "$NS-other" create secret generic private --from-literal=token=do-not-read >/dev/null

mkdir -p "$WORK/own" "$WORK/escalate" "$WORK/elsewhere" "$WORK/peek"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\ndata:\n  k: v1\n' >"$WORK/own/cm.yaml"
cat >"$WORK/escalate/crb.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: escalate-first
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: tenant-is-admin
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: tenant, namespace: default}]
Y
cat >"$WORK/elsewhere/cm.yaml" <<Y
apiVersion: v1
kind: ConfigMap
metadata:
  name: planted
  namespace: $NS-other
Y
cat >"$WORK/peek/cm.yaml" <<Y
apiVersion: v1
kind: ConfigMap
metadata:
  name: peek
data:
  stolen: {{ (lookup "v1" "Secret" "$NS-other" "private").data | toJson | quote }}
Y

HR_SPEC='{"serviceAccountName": "tenant"}' hr_inline own own 0.1.0 "$WORK/own/cm.yaml" | kubectl apply -f - >/dev/null
# The others name no service account: the controller's default is the tenant.
hr_inline escalate escalate 0.1.0 "$WORK/escalate/crb.yaml" | kubectl apply -f - >/dev/null
hr_inline elsewhere elsewhere 0.1.0 "$WORK/elsewhere/cm.yaml" | kubectl apply -f - >/dev/null
hr_inline peek peek 0.1.0 "$WORK/peek/cm.yaml" | kubectl apply -f - >/dev/null
CTRL_ARGS=(--default-service-account tenant)
start_controller

wait_for 60 "own Ready" hr_ready own
[ "$(cm_data "$NS" own k)" = v1 ] || fail "own: ConfigMap not applied"
[ "$(helm_status helm own)" = "deployed 1" ] || fail "own: helm ls: $(helm_status helm own)"
ok "a release of the tenant's own namespace installs as the tenant"

for r in escalate elsewhere; do wait_for 60 "$r failed" hr_failed "$r"; done
for r in escalate elsewhere; do
  msg=$(hr_cond_msg "$r" Ready); echo "$r: $msg"
  [[ "$msg" == *forbidden* && "$msg" == *"system:serviceaccount:$NS:tenant"* ]] ||
    fail "$r: the message should be the API server's forbidden for the tenant: $msg"
done
! kubectl get clusterrolebinding tenant-is-admin >/dev/null 2>&1 || fail "escalate: the ClusterRoleBinding was created"
! kubectl -n "$NS-other" get configmap planted >/dev/null 2>&1 || fail "elsewhere: a ConfigMap was written in another namespace"
ok "binding cluster-admin and writing another namespace are refused as the tenant would be refused"

peek_decided() { [ -n "$(hr_cond peek Ready)" ] && [ "$(hr_cond peek Ready)" != Unknown ]; }
wait_for 60 "peek decided" peek_decided
if [ "$(hr_cond peek Ready)" = True ]; then
  stolen=$(cm_data "$NS" peek stolen)
  [[ "$stolen" != *ZG8tbm90LXJlYWQ* ]] || fail "peek: lookup read another namespace's Secret: $stolen"
  ok "lookup of another namespace's Secret finds nothing as the tenant (stolen='$stolen')"
else
  echo "peek: $(hr_cond_msg peek Ready)"
  [[ "$(hr_cond_msg peek Ready)" == *forbidden* ]] || fail "peek: $(hr_cond_msg peek Ready)"
  ok "lookup of another namespace's Secret is forbidden as the tenant"
fi

# Upgrade and uninstall as the tenant too.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\ndata:\n  k: v2\n' >"$WORK/own/cm.yaml"
HR_SPEC='{"serviceAccountName": "tenant"}' hr_inline own own 0.1.1 "$WORK/own/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "own upgraded" bash -c "[ \"\$(kubectl -n $NS get configmap own -o jsonpath='{.data.k}')\" = v2 ]"
kubectl -n "$NS" delete helmrelease own escalate elsewhere peek --wait=false >/dev/null
wait_for 60 "own uninstalled" bash -c "! kubectl -n $NS get configmap own >/dev/null 2>&1"
wait_for 60 "all gone" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
grep -q "acting as a service account for its releases.*system:serviceaccount:$NS:tenant" "$CTRL_LOG" ||
  fail "the controller did not say whom it acts as"
stop_controller
kubectl delete namespace "$NS-other" --wait=false >/dev/null
ok "upgraded and uninstalled as the tenant"
