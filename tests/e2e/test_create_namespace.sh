#!/usr/bin/env bash
# spec.createNamespace: the install creates the target namespace as `helm install --create-namespace`
# does (the same labels, compared with what the real helm CLI creates); an existing namespace is
# used as it is; without it, a missing target namespace fails the install with the API server's
# message; the namespace stays when the release is uninstalled (as with helm).
. "$(dirname "$0")/lib.sh"

T1="$NS-made"; T2="$NS-oracle-made"; T3="$NS-missing"
trap 'rc=$?; kubectl delete namespace "$T1" "$T2" --wait=false >/dev/null 2>&1 || true; cleanup $rc' EXIT
cat >"$WORK/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cn
data:
  a: b
Y
start_controller
HR_SPEC="{\"targetNamespace\": \"$T1\", \"createNamespace\": true}" hr_inline made cn 1.0.0 "$WORK/cm.yaml" |
  kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease made Ready" hr_ready made
[ "$(kubectl -n "$T1" get configmap cn -o jsonpath='{.data.a}')" = b ] || fail "the ConfigMap is not in $T1"
ok "createNamespace: the target namespace was created and the release installed into it"

write_chart "$WORK/chart" cn 1.0.0 "$WORK/cm.yaml"
helm install made "$WORK/chart" -n "$T2" --create-namespace >/dev/null
labels() { kubectl get namespace "$1" -o json | python3 -c '
import json,sys; ns=sys.argv[1]; l=json.load(sys.stdin)["metadata"].get("labels",{})
print(json.dumps({k: ("<ns>" if v == ns else v) for k, v in sorted(l.items())}))' "$1"; }
[ "$(labels "$T1")" = "$(labels "$T2")" ] || fail "labels differ from helm's: $(labels "$T1") vs $(labels "$T2")"
ok "the namespace carries the labels helm install --create-namespace gives ($(labels "$T1"))"
helm uninstall made -n "$T2" >/dev/null

HR_SPEC="{\"targetNamespace\": \"$T3\"}" hr_inline missing cn 1.0.0 "$WORK/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease missing failed" hr_failed missing
case "$(hr_cond_msg missing Ready)" in *"$T3"*not*found*|*"namespaces \"$T3\" not found"*) ;; *) fail "message: $(hr_cond_msg missing Ready)" ;; esac
kubectl get namespace "$T3" >/dev/null 2>&1 && fail "namespace $T3 was created without createNamespace"
ok "without createNamespace a missing target namespace fails with the API server's message"

kubectl -n "$NS" delete helmrelease made --wait=true --timeout=60s >/dev/null
kubectl get namespace "$T1" >/dev/null || fail "the created namespace went with the release"
ok "uninstall leaves the namespace in place, as helm does"
stop_controller
