#!/usr/bin/env bash
# CRDs from crds/ (inline charts carry them as crds/ files too: spec.chart.inline.crds):
# applied before the templates and waited for until their kinds are served;
# policies Create (install default: an existing CRD is left alone), CreateReplace
# (upgrade default: replaced) and Skip; never deleted on uninstall.
. "$(dirname "$0")/lib.sh"
group="w${RANDOM}${RANDOM}.e2e.rudder.test"
crd_name="widgets.$group"
trap 'kubectl delete crd "$crd_name" --wait=false >/dev/null 2>&1 || true; cleanup' EXIT

crd() { # DESCRIPTION
  cat <<Y
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $crd_name
spec:
  group: $group
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: "$1"
        x-kubernetes-preserve-unknown-fields: true
Y
}
mkdir -p "$WORK/t"
printf 'apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n' "$group" >"$WORK/t/widget.yaml"
# hr_crds NAME VERSION CRD-TEXT [SPEC-JSON]: a HelmRelease with one template and one CRD.
hr_crds() {
  python3 - "$1" "$NS" "$2" "$3" "${4:-{\}}" "$WORK/t/widget.yaml" <<'PY'
import json, sys
name, ns, version, crd, extra, tpl = sys.argv[1:7]
spec = {"chart": {"inline": {"chartName": name, "chartVersion": version,
                             "templates": {"widget.yaml": open(tpl).read()}, "crds": {"widget.yaml": crd}}}}
spec.update(json.loads(extra))
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
desc() { kubectl get crd "$crd_name" -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.description}'; }
start_controller

hr_crds wid 1.0.0 "$(crd one)" | kubectl apply -f - >/dev/null
wait_for 60 "wid Ready" hr_ready wid
[ "$(desc)" = one ] || fail "CRD not created"
kubectl -n "$NS" get "widgets.$group" w1 >/dev/null || fail "the custom resource was not applied"
ok "install: CRD created and established before the custom resource that needs it"

hr_crds wid 1.0.1 "$(crd two)" | kubectl apply -f - >/dev/null
wait_for 60 "wid upgraded" bash -c "[ \"\$(kubectl -n $NS get helmrelease wid -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"
[ "$(desc)" = two ] || fail "upgrade (CreateReplace) did not replace the CRD"
ok "upgrade: CreateReplace replaces the CRD"

hr_crds wid 1.0.2 "$(crd three)" '{"upgrade":{"crds":"Skip"}}' | kubectl apply -f - >/dev/null
wait_for 60 "wid upgraded again" bash -c "[ \"\$(kubectl -n $NS get helmrelease wid -o jsonpath='{.status.lastAppliedRevision}')\" = 3 ]"
[ "$(desc)" = two ] || fail "Skip changed the CRD"
ok "upgrade with crds: Skip leaves the CRD alone"

hr_crds wid2 1.0.0 "$(crd four)" '{"releaseName":"wid2","install":{"takeOwnership":true}}' | kubectl apply -f - >/dev/null
wait_for 60 "wid2 Ready" hr_ready wid2
[ "$(desc)" = two ] || fail "install (Create) replaced an existing CRD"
ok "install: Create leaves an existing CRD alone"

kubectl -n "$NS" delete helmrelease wid wid2 --wait=false >/dev/null
wait_for 60 "uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
kubectl get crd "$crd_name" >/dev/null || fail "uninstall deleted the CRD"
ok "uninstall never deletes CRDs"
stop_controller
