#!/usr/bin/env bash
# CRDs from crds/ (inline charts carry them as crds/ files too: spec.chart.inline.crds):
# applied before the templates and waited for until their kinds are served;
# policies Create (install default: an existing CRD is left alone), CreateReplace
# (upgrade default: replaced) and Skip; never deleted on uninstall. A CRD applied is waited for
# until Established before the templates: one whose names conflict with an existing CRD
# (NamesAccepted=False) fails the release with Helm's message and the condition's reason.
. "$(dirname "$0")/lib.sh"
group="w${RANDOM}${RANDOM}.e2e.rudder.test"
crd_name="widgets.$group"
trap 'rc=$?; kubectl delete crd "$crd_name" "gadgets.$group" --wait=false >/dev/null 2>&1 || true; cleanup $rc' EXIT

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

# A CRD that never becomes Established: its listKind is taken by widgets.$group.
gadget=$(crd gadgets | sed "s/name: $crd_name/name: gadgets.$group/; s/plural: widgets, singular: widget/plural: gadgets, singular: gadget/")
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gad-cm\n' >"$WORK/t/gad.yaml"
python3 - "$NS" "$gadget" "$WORK/t/gad.yaml" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
ns, crd, tpl = sys.argv[1:4]
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease", "metadata": {"name": "gad", "namespace": ns},
                  "spec": {"chart": {"inline": {"templates": {"gad.yaml": open(tpl).read()}, "crds": {"gadgets.yaml": crd}}}}}))
PY
wait_for 90 "gad failed" hr_failed gad
msg=$(hr_cond_msg gad Ready)
echo "$msg" | grep -q "CustomResourceDefinition \"gadgets.$group\" is not established: resource CustomResourceDefinition//gadgets.$group not ready. status: Failed, message: \"WidgetList\" is already in use" ||
  fail "not the CRD's failure in Helm's words: $msg"
echo "$msg" | grep -q "reason ListKindConflict" || fail "the condition's reason is missing: $msg"
kubectl -n "$NS" get configmap gad-cm >/dev/null 2>&1 && fail "the templates were applied before the CRD was established"
[ -z "$(kubectl -n "$NS" get secrets -l owner=helm,name=gad -o name)" ] || fail "a record was written (helm install fails before it)"
ok "a CRD that never becomes Established fails the release naming it: ${msg:0:240}"
# helm install of the same chart fails the same way.
mkdir -p "$WORK/gc/crds" "$WORK/gc/templates"
printf 'apiVersion: v2\nname: gad\nversion: 0.1.0\n' >"$WORK/gc/Chart.yaml"
printf '%s\n' "$gadget" >"$WORK/gc/crds/gadgets.yaml"
cp "$WORK/t/gad.yaml" "$WORK/gc/templates/"
kubectl create namespace "$NS-oracle" >/dev/null
out=$(helm install gad "$WORK/gc" -n "$NS-oracle" 2>&1) && fail "helm install succeeded"
echo "$msg" | grep -qF "${out#Error: INSTALLATION FAILED: }" || fail "helm said: $out; rudder: $msg"
ok "helm install fails with the same words"

kubectl -n "$NS" delete helmrelease wid wid2 gad --wait=false >/dev/null
wait_for 60 "uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
kubectl get crd "$crd_name" >/dev/null || fail "uninstall deleted the CRD"
ok "uninstall never deletes CRDs"
stop_controller
