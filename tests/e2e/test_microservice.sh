#!/usr/bin/env bash
# The Microservice front door (micro.hello.com/v1alpha1) with the classic example: a Deployment and
# a Service, the Service naming `namespace: test`. kubectl apply -> `helm ls` shows the release
# deployed, its manifest and record equal what `helm install` stores for the same chart (named
# after the object, version 0.0.0, one template <name>.yaml), the Service is in namespace test;
# an edit of spec.resources -> revision 2, spec.values -> revision 3 (`helm history`, `helm get
# values`); phase, revision and Ready in the status and the printer columns; a template error, a
# name longer than a release name may be and broken YAML -> phase Failed with the reason, nothing
# applied; kubectl delete -> the objects (in both namespaces) and the release records are gone.
. "$(dirname "$0")/lib.sh"

ms_field() { kubectl -n "$NS" get microservice "$1" -o jsonpath="$2"; }
ms_cond() { ms_field "$1" "{.status.conditions[?(@.type==\"$2\")].$3}"; }
# ms_phase NAME PHASE: the status is PHASE for the current generation.
ms_phase() {
  [ "$(ms_field "$1" '{.metadata.generation}')" = "$(ms_field "$1" '{.status.observedGeneration}')" ] &&
    [ "$(ms_field "$1" '{.status.phase}')" = "$2" ]
}
# ms_yaml NAME FILE [VALUES_JSON]: a Microservice whose spec.resources is FILE's text.
ms_yaml() {
  python3 - "$1" "$NS" "$2" "${3:-}" <<'PY'
import json, sys
name, ns, path, values = sys.argv[1:5]
spec = {"resources": open(path).read()}
if values:
    spec["values"] = json.loads(values)
print(json.dumps({"apiVersion": "micro.hello.com/v1alpha1", "kind": "Microservice",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
created_test_ns=
finish() {
  local rc=$?
  for ms in $(kubectl -n "$NS" get microservices -o name 2>/dev/null); do
    kubectl -n "$NS" patch "$ms" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
  kubectl -n "$NS" patch configmap web-config --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  [ -z "$created_test_ns" ] || kubectl delete namespace test --wait=false >/dev/null 2>&1 || true
  (exit $rc)
  cleanup
}
trap finish EXIT

# The classic example; the Deployment's name and labels are template actions, rendered as Helm does.
mkdir -p "$WORK/r1" "$WORK/r2"
cat >"$WORK/r1/web.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels:
    app: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas | default 1 }}
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: test
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
Y
if ! kubectl get namespace test >/dev/null 2>&1; then
  kubectl create namespace test >/dev/null
  created_test_ns=1
fi

# The oracle first (the Service it makes in namespace test is gone again before ours).
write_chart "$WORK/chart1" web 0.0.0 "$WORK/r1/web.yaml"
oracle_manifest web "$WORK/chart1" "$WORK/want1.yaml"
wait_for 30 "the oracle's Service gone" bash -c "! kubectl -n test get service web"

# The CRD documents its fields.
# (What kubectl explain reads is published a moment after the CRD is established.)
wait_for 30 "kubectl explain microservice" kubectl explain microservice
out=$(kubectl explain microservice.spec.resources)
grep -q "One or more Kubernetes YAML documents" <<<"$out" || fail "kubectl explain microservice.spec.resources: $out"
out=$(kubectl explain microservice.status.phase)
grep -q "Deleting" <<<"$out" || fail "kubectl explain microservice.status.phase: $out"
ok "kubectl explain documents spec.resources and status.phase"

start_controller
ms_yaml web "$WORK/r1/web.yaml" | kubectl apply -f - >/dev/null
wait_for 90 "Microservice web Deployed" ms_phase web Deployed
ok "Microservice web: phase Deployed"
[ "$(helm_status helm web)" = "deployed 1" ] || fail "helm ls: $(helm_status helm web), want deployed 1"
[ "$(helm_status helm3 web)" = "deployed 1" ] || fail "helm3 ls: $(helm_status helm3 web), want deployed 1"
ok "helm ls (v4 and v3): web deployed at revision 1"
helm ls -n "$NS" -o json | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; sys.exit(r["chart"] != "web-0.0.0")' ||
  fail "helm ls chart: $(helm ls -n "$NS" -o json)"
ok "the chart is web-0.0.0"
helm get manifest web -n "$NS" >"$WORK/got1.yaml"
diff -u "$WORK/want1.yaml" "$WORK/got1.yaml" >&2 || fail "helm get manifest differs from what helm install stores for the same chart"
ok "helm get manifest equals helm install's for the chart web-0.0.0 with templates/web.yaml"
release_record "$NS" sh.helm.release.v1.web.v1 >"$WORK/got1.record"
diff <(python3 -m json.tool "$WORK/want1.yaml.record") <(python3 -m json.tool "$WORK/got1.record") >&2 ||
  fail "release record differs from the one helm install writes"
ok "release record equals helm install's (times and namespace masked)"

kubectl -n "$NS" get deployment web >/dev/null || fail "deployment web missing in $NS"
m=$(kubectl -n test get service web -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name} {.metadata.annotations.meta\.helm\.sh/release-namespace}') ||
  fail "service web is not in namespace test"
[ "$m" = "web $NS" ] || fail "service test/web ownership metadata: '$m'"
kubectl -n "$NS" get service web >/dev/null 2>&1 && fail "service web was applied in $NS, not where it says"
ok "the Deployment is in $NS, the Service in namespace test where it says (Helm's ownership metadata)"
wait_for 90 "deployment web ready (kwok nodes)" \
  bash -c "[ \"\$(kubectl -n $NS get deployment web -o jsonpath='{.status.readyReplicas}')\" = 1 ]"
ok "deployment web has 1 ready replica"
[ "$(ms_field web '{.status.revision}')" = 1 ] || fail "status.revision: $(ms_field web '{.status.revision}')"
[ "$(ms_cond web Ready status)" = True ] || fail "Ready: $(ms_cond web Ready status)"
[ "$(ms_cond web Ready reason)" = InstallSucceeded ] || fail "Ready reason: $(ms_cond web Ready reason)"
kubectl -n "$NS" get microservice web -o json | python3 -c '
import json, sys
f = json.load(sys.stdin)["metadata"]["finalizers"]
sys.exit(f != ["micro.hello.com/finalizer"])' || fail "finalizers: $(ms_field web '{.metadata.finalizers}')"
ok "status: revision 1, Ready=True (InstallSucceeded); finalizer micro.hello.com/finalizer"
cols=$(kubectl -n "$NS" get microservice web --no-headers | awk '{print $2, $3, $4}')
[ "$cols" = "Deployed 1 True" ] || fail "kubectl get microservice: $(kubectl -n "$NS" get microservice web)"
out=$(kubectl -n "$NS" get microservice web)
grep -Eq '^NAME +PHASE +REVISION +READY +AGE$' <<<"${out%%$'\n'*}" || fail "printer columns: $out"
ok "kubectl get microservice: PHASE Deployed, REVISION 1, READY True"

# Edit spec.resources: a ConfigMap more -> revision 2.
cp "$WORK/r1/web.yaml" "$WORK/r2/web.yaml"
# Its finalizer holds the uninstall later, so that phase Deleting can be seen.
printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  finalizers: [e2e.rudder.dev/hold]\ndata:\n  greeting: hello\n' >>"$WORK/r2/web.yaml"
ms_yaml web "$WORK/r2/web.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "Microservice web upgraded" bash -c "[ \"\$(kubectl -n $NS get microservice web -o jsonpath='{.status.revision}')\" = 2 ]"
wait_for 30 "Microservice web Deployed again" ms_phase web Deployed
[ "$(helm_history helm web)" = "1:superseded 2:deployed" ] || fail "helm history: $(helm_history helm web)"
ok "edit of spec.resources: revision 2 (helm history 1 superseded, 2 deployed)"
[ "$(cm_data "$NS" web-config greeting)" = hello ] || fail "configmap web-config not applied"
[ "$(ms_cond web Ready reason)" = UpgradeSucceeded ] || fail "Ready reason: $(ms_cond web Ready reason)"
ok "the new ConfigMap is applied; Ready=True (UpgradeSucceeded), status.revision 2"

# spec.values -> revision 3, seen by the template actions and by helm get values.
ms_yaml web "$WORK/r2/web.yaml" '{"replicas": 3}' | kubectl apply -f - >/dev/null
wait_for 60 "Microservice web at revision 3" bash -c "[ \"\$(kubectl -n $NS get microservice web -o jsonpath='{.status.revision}')\" = 3 ]"
wait_for 30 "Microservice web Deployed at generation 3" ms_phase web Deployed
[ "$(kubectl -n "$NS" get deployment web -o jsonpath='{.spec.replicas}')" = 3 ] || fail "deployment replicas not 3"
helm get values web -n "$NS" -o json | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin) != {"replicas": 3})' ||
  fail "helm get values: $(helm get values web -n "$NS" -o json)"
[ "$(helm_history helm web)" = "1:superseded 2:superseded 3:deployed" ] || fail "helm history: $(helm_history helm web)"
ok "spec.values: revision 3, replicas 3, helm get values {replicas: 3}"

# A template error: Failed with the renderer's message; revision 3 stays deployed, nothing applied.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  k: {{ .Values.replicas | nosuchfunction }}\n' >"$WORK/bad.yaml"
ms_yaml web "$WORK/bad.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "Microservice web Failed" ms_phase web Failed
msg=$(ms_cond web Ready message)
[ "$(ms_cond web Ready status)" = False ] || fail "Ready: $(ms_cond web Ready status)"
grep -q 'web.yaml' <<<"$msg" && grep -q 'nosuchfunction' <<<"$msg" || fail "Ready message does not name the file and the function: $msg"
ok "template error: phase Failed, Ready=False ($(ms_cond web Ready reason)): $msg"
[ "$(ms_field web '{.status.revision}')" = 3 ] || fail "status.revision changed: $(ms_field web '{.status.revision}')"
[ "$(helm_status helm web)" = "deployed 3" ] || fail "helm ls: $(helm_status helm web)"
kubectl -n "$NS" get configmap broken >/dev/null 2>&1 && fail "configmap broken was applied"
ok "revision 3 stays deployed, nothing applied"
ms_yaml web "$WORK/r2/web.yaml" '{"replicas": 3}' | kubectl apply -f - >/dev/null
wait_for 60 "Microservice web Deployed after the fix" ms_phase web Deployed

# Bad input the API server accepts: a name too long for a release, broken YAML.
long=a123456789b123456789c123456789d123456789e123456789f1234
ms_yaml "$long" "$WORK/r1/web.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "Microservice $long Failed" ms_phase "$long" Failed
[ "$(ms_cond "$long" Ready reason)" = InvalidSpec ] || fail "reason: $(ms_cond "$long" Ready reason)"
[ "$(ms_cond "$long" Ready message)" = "metadata.name: \"$long\" is longer than 53 characters, the longest name a Helm release may have (the release is named after the Microservice)" ] ||
  fail "message: $(ms_cond "$long" Ready message)"
ok "a 54-character name: phase Failed, InvalidSpec naming metadata.name"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-bad\ndata: [unclosed\n' >"$WORK/yaml.yaml"
ms_yaml yamlbad "$WORK/yaml.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "Microservice yamlbad Failed" ms_phase yamlbad Failed
msg=$(ms_cond yamlbad Ready message)
grep -q 'yamlbad.yaml' <<<"$msg" || fail "broken YAML: the message does not name the template: $msg"
ok "broken YAML: phase Failed ($(ms_cond yamlbad Ready reason)): $msg"
n=$(kubectl -n "$NS" get secrets -l owner=helm -o name | grep -c -e "\.$long\." -e '\.yamlbad\.') || true
[ "$n" = 0 ] || fail "$n release records written for bad input"
kubectl -n "$NS" get configmap yaml-bad >/dev/null 2>&1 && fail "configmap yaml-bad was applied"
ok "nothing applied and no release record for bad input"
# What the schema can reject, the API server rejects.
out=$(kubectl apply -f - 2>&1 <<<"{\"apiVersion\":\"micro.hello.com/v1alpha1\",\"kind\":\"Microservice\",\"metadata\":{\"name\":\"typed\",\"namespace\":\"$NS\"},\"spec\":{\"resources\":[\"kind: x\"]}}") &&
  fail "a non-string spec.resources was accepted"
grep -q 'spec.resources' <<<"$out" || fail "the API server's refusal does not name spec.resources: $out"
ok "a non-string spec.resources is refused by the API server, naming the field"
kubectl -n "$NS" delete microservice "$long" yamlbad --wait=true --timeout=60s >/dev/null

# Delete: the objects (both namespaces), then the release records, then the Microservice.
kubectl -n "$NS" delete microservice web --wait=false >/dev/null
wait_for 60 "Microservice web Deleting" bash -c "[ \"\$(kubectl -n $NS get microservice web -o jsonpath='{.status.phase}')\" = Deleting ]"
wait_for 30 "configmap web-config terminating" bash -c "[ -n \"\$(kubectl -n $NS get configmap web-config -o jsonpath='{.metadata.deletionTimestamp}')\" ]"
kubectl -n "$NS" get microservice web >/dev/null || fail "the Microservice went before its objects"
ok "phase Deleting while the uninstall waits for an object held by a finalizer"
kubectl -n "$NS" patch configmap web-config --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
wait_for 60 "Microservice web gone" bash -c "! kubectl -n $NS get microservice web"
ok "Microservice web deleted (finalizer removed after the uninstall)"
for obj in "$NS deployment/web" "$NS configmap/web-config" "test service/web"; do
  set -- $obj
  kubectl -n "$1" get "$2" >/dev/null 2>&1 && fail "$1 $2 still exists after the uninstall"
done
ok "release objects deleted, the Service in namespace test too"
n=$(kubectl -n "$NS" get secrets -l owner=helm,name=web -o name | wc -l)
[ "$n" = 0 ] || fail "$n release secrets left"
[ "$(helm_status helm web)" = absent ] || fail "helm ls still lists web"
ok "release records deleted; helm ls no longer lists web"
stop_controller
