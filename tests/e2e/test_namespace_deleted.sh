#!/usr/bin/env bash
# A namespace deleted with releases in it: the namespace controller deletes the HelmReleases and,
# at the same time, the release records beside them. Every release is still uninstalled, its
# cluster-scoped objects included (the status keeps the deployed revision's objects outside the
# records' namespace, status.outsideObjects), nothing is left behind and the namespace goes.
# Objects marked helm.sh/resource-policy=keep stay, as with helm.
. "$(dirname "$0")/lib.sh"

GONE="$NS-gone"
kubectl create namespace "$GONE" >/dev/null
mkdir -p "$WORK/t"
cat >"$WORK/t/cr.yaml" <<Y
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $GONE-{{ .Release.Name }}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $GONE-{{ .Release.Name }}-kept
  annotations:
    helm.sh/resource-policy: keep
rules: []
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-elsewhere
  namespace: $NS
data: {a: b}
Y
cat >"$WORK/t/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data: {a: b}
Y
"$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$KUBECONFIG" --namespace "$GONE" --log-level debug \
  --storage-path "$WORK/charts" >>"$CTRL_LOG" 2>&1 &
CTRL_PID=$!
for r in one two three; do
  NS=$GONE hr_inline "$r" nsdel 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
done
ready_in() { NS=$GONE hr_ready "$1"; }
for r in one two three; do wait_for 60 "$r Ready" ready_in "$r"; done
got=$(kubectl -n "$GONE" get helmrelease one -o jsonpath='{.status.outsideObjects}')
want='[{"apiVersion":"v1","kind":"ConfigMap","name":"one-elsewhere","namespace":"'"$NS"'"},{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","name":"'"$GONE"'-one"}]'
[ "$(python3 -c 'import json,sys; print(json.dumps(sorted(json.loads(sys.argv[1]), key=lambda o: o["kind"]), sort_keys=True))' "$got")" = \
  "$(python3 -c 'import json,sys; print(json.dumps(sorted(json.loads(sys.argv[1]), key=lambda o: o["kind"]), sort_keys=True))' "$want")" ] ||
  fail "status.outsideObjects: $got"
# in Helm's uninstall order of kinds (the list is sorted, whether the render or a parse of the record made it)
kinds=$(python3 -c 'import json,sys; print(",".join(o["kind"] for o in json.loads(sys.argv[1])))' "$got")
[ "$kinds" = "ClusterRole,ConfigMap" ] || fail "status.outsideObjects not in uninstall order: $kinds"
ok "three releases Ready in $GONE; the status lists the objects outside it (not the kept one), in uninstall order"

kubectl delete namespace "$GONE" --wait=false >/dev/null
wait_for 120 "namespace $GONE gone" bash -c "! kubectl get namespace $GONE >/dev/null 2>&1"
left=$(kubectl get clusterroles -o name | grep "/$GONE-" | grep -vc -- "-kept$" || true)
[ "$left" = 0 ] || fail "ClusterRoles left behind: $(kubectl get clusterroles -o name | grep "/$GONE-")"
[ -z "$(kubectl -n "$NS" get configmaps -o name | grep -- -elsewhere)" ] || fail "ConfigMaps left in $NS: $(kubectl -n "$NS" get configmaps -o name)"
[ "$(kubectl get clusterroles -o name | grep -c -- "/$GONE-.*-kept$")" = 3 ] || fail "the kept ClusterRoles went"
kubectl get clusterroles -o name | grep -- "/$GONE-.*-kept$" | xargs kubectl delete >/dev/null
ok "namespace deleted: every release uninstalled (ClusterRoles and objects of other namespaces gone, kept ones kept), the namespace gone"
stop_controller
