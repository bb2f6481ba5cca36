#!/usr/bin/env bash
# A `kind: List` document is applied item by item, as helm 4 applies it; the
# stored manifest equals what `helm install` stores, and uninstall removes the
# items.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/t"
cat >"$WORK/t/list.yaml" <<'Y'
apiVersion: v1
kind: List
metadata:
  name: bundle
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: item-one
  data: {k: "1"}
- apiVersion: v1
  kind: ServiceAccount
  metadata:
    name: item-two
Y
start_controller
hr_inline listed listed 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "listed Ready" hr_ready listed
[ "$(cm_data "$NS" item-one k)" = 1 ] || fail "the List's ConfigMap was not applied"
kubectl -n "$NS" get serviceaccount item-two >/dev/null || fail "the List's ServiceAccount was not applied"
[ "$(kubectl -n "$NS" get configmap item-one -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" = listed ] ||
  fail "the item does not carry the release's metadata"
ok "a List document is applied item by item, with the release's metadata"
write_chart "$WORK/c" listed 1.0.0 "$WORK/t"/*.yaml
oracle_manifest listed "$WORK/c" "$WORK/want.yaml"
helm get manifest listed -n "$NS" >"$WORK/got.yaml"
diff -u "$WORK/want.yaml" "$WORK/got.yaml" >&2 || fail "manifest differs from helm install's"
ok "the stored manifest equals helm install's"
kubectl -n "$NS" delete helmrelease listed --wait=false >/dev/null
wait_for 60 "listed gone" bash -c "! kubectl -n $NS get helmrelease listed >/dev/null 2>&1"
kubectl -n "$NS" get configmap item-one >/dev/null 2>&1 && fail "uninstall left the List's items"
ok "uninstall removes the items"
stop_controller
