#!/usr/bin/env bash
# rudder's own chart (deploy/chart): `helm lint --strict` passes; `rudder template` renders it
# byte for byte as `helm template` does (the oracle) with its defaults and with every value the
# chart offers; the API server accepts what it renders (server-side dry run); its RBAC is the
# kustomize base's (deploy/rbac.yaml), which e2e.deploy proves enough for the controller; and
# `helm install` of it makes a service account allowed exactly that (kubectl auth can-i).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deploy_lib.sh"
src=${RUDDER_SOURCE_DIR:?}
chart=$src/deploy/chart
REL=rudder-$$ # cluster-scoped names carry the release name: no clash with deploy/'s
installed=
chart_cleanup() {
  [ -z "$installed" ] || helm uninstall "$REL" -n "$NS" --wait=false >/dev/null 2>&1 || true
}
trap 'rc=$?; chart_cleanup; cleanup $rc' EXIT

helm lint --strict "$chart" >"$WORK/lint.txt" 2>&1 || fail "helm lint --strict: $(cat "$WORK/lint.txt")"
grep -q '1 chart(s) linted, 0 chart(s) failed' "$WORK/lint.txt" || fail "helm lint: $(cat "$WORK/lint.txt")"
ok "helm lint --strict deploy/chart"

cat >"$WORK/values.yaml" <<'Y'
image: {repository: registry.example/team/rudder, tag: "0.1.0-rc.1", pullPolicy: Always}
imagePullSecrets: [{name: pull}]
replicas: 2
resources: {requests: {cpu: 250m, memory: 128Mi}, limits: {cpu: "1", memory: 1Gi}}
concurrency: 16
log: {level: debug, format: json}
watchLabelSelector: "sharding.fluxcd.io/key in (shard1, shard2)"
extraArgs: ["--qps=100", "--max-render-time=1m"]
podAnnotations: {prometheus.io/scrape: "true"}
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: edge, operator: Exists, effect: NoSchedule}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: arch, operator: In, values: [amd64, arm64]}]}]}}}
storage: {sizeLimit: 2Gi}
metrics: {port: 9090}
health: {port: 9091}
Y
# NAME|ARGS: each case rendered by helm and by rudder with the same arguments.
cases=(
  "defaults|rudder $chart -n $NS"
  "crds|rudder $chart -n $NS --include-crds"
  "values file|shard-a $chart -n $NS -f $WORK/values.yaml"
  "no tenancy, cluster-admin|rudder $chart -n $NS --set tenancy.defaultServiceAccount= --set clusterAdmin=true --set tenancy.allowCrossNamespaceRefs=true"
  "no leader election, no metrics Service|rudder $chart -n $NS --set leaderElection.enabled=false --set metrics.service.enabled=false"
  "lease and names overridden|edge $chart -n $NS --set leaderElection.id=edge-lease --set fullnameOverride=rudder-edge --set nameOverride=rc"
  "a release name without the chart's|platform $chart -n $NS --set-string log.format=logfmt --set concurrency=1"
)
i=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  read -r -a a <<<"${c#*|}"
  i=$((i + 1))
  helm template "${a[@]}" >"$WORK/helm.$i.yaml" 2>"$WORK/helm.$i.err" || fail "helm template ($name): $(cat "$WORK/helm.$i.err")"
  "$RUDDER_BIN" template "${a[@]}" >"$WORK/rudder.$i.yaml" 2>"$WORK/rudder.$i.err" || fail "rudder template ($name): $(cat "$WORK/rudder.$i.err")"
  cmp -s "$WORK/helm.$i.yaml" "$WORK/rudder.$i.yaml" ||
    fail "rudder template differs from helm template ($name): $(diff -u "$WORK/helm.$i.yaml" "$WORK/rudder.$i.yaml" | head -40)"
  kubectl apply --dry-run=server -n "$NS" -f "$WORK/helm.$i.yaml" >"$WORK/dry.$i.txt" 2>"$WORK/dry.$i.err" ||
    fail "server-side dry run refused the chart ($name): $(cat "$WORK/dry.$i.err")"
done
ok "rudder template == helm template, byte for byte, in ${#cases[@]} cases, each accepted by a server-side dry run"

# What the values do, read from the rendered (oracle's) manifests.
deploy_args "$WORK/helm.3.yaml" >"$WORK/args3"
for want in --concurrency=16 --log-level=debug --log-format=json --leader-elect --leader-election-id=shard-a-rudder-controller \
  "--watch-label-selector=sharding.fluxcd.io/key in (shard1, shard2)" --metrics-addr=:9090 --health-addr=:9091 \
  --default-service-account=helm-release --qps=100 --max-render-time=1m; do
  grep -qxF -- "$want" "$WORK/args3" || fail "values file: no argument $want in: $(tr '\n' ' ' <"$WORK/args3")"
done
deploy_args "$WORK/helm.4.yaml" >"$WORK/args4"
! grep -q -- --default-service-account "$WORK/args4" && grep -qx -- --allow-cross-namespace-refs "$WORK/args4" ||
  fail "no tenancy: $(tr '\n' ' ' <"$WORK/args4")"
docs_of ClusterRoleBinding "$WORK/helm.4.yaml" | grep -q '"name": "cluster-admin"' || fail "clusterAdmin=true binds no cluster-admin"
! docs_of ClusterRoleBinding "$WORK/helm.1.yaml" | grep -q '"name": "cluster-admin"' || fail "the defaults bind cluster-admin"
deploy_args "$WORK/helm.5.yaml" | grep -q -- --leader-elect && fail "leaderElection.enabled=false still elects"
[ "$(docs_of Role "$WORK/helm.5.yaml")" = "[]" ] && [ "$(docs_of Service "$WORK/helm.5.yaml")" = "[]" ] ||
  fail "no leader election / no Service: a Role or the Service is still rendered"
grep -q 'resourceNames:.*edge-lease\|- edge-lease' "$WORK/helm.6.yaml" || fail "the Role does not name the lease edge-lease"
[ "$(grep -c '^kind: CustomResourceDefinition' "$WORK/helm.2.yaml")" = "$(ls "$src"/deploy/crds/*.yaml | wc -l)" ] ||
  fail "--include-crds: not every CRD of deploy/crds"
ok "values: image, resources, concurrency, log format, shards, leader election, tenancy and cluster-admin reach the manifests"

# The same permissions as deploy/ (proven enough, and no more, by e2e.deploy).
kubectl kustomize "$src/deploy" >"$WORK/kustomize.yaml"
diff -u <(rbac_rules "$WORK/kustomize.yaml") <(rbac_rules "$WORK/helm.1.yaml") >&2 ||
  fail "the chart's ClusterRole/Role rules differ from deploy/rbac.yaml's"
pod_spec() {
  docs_of Deployment "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]["spec"]["template"]["spec"]
c = d["containers"][0]
print(json.dumps([d["securityContext"], c["securityContext"], c["livenessProbe"], c["readinessProbe"], c["resources"],
                  c["volumeMounts"], [v["emptyDir"] for v in d["volumes"]], [p["containerPort"] for p in c["ports"]], c["args"]],
                 sort_keys=True, indent=1))'
}
diff -u <(pod_spec "$WORK/kustomize.yaml") <(pod_spec "$WORK/helm.1.yaml") >&2 ||
  fail "the chart's Deployment differs from deploy/deployment.yaml's in its pod's security, probes, resources or flags"
ok "the chart's defaults match deploy/: the same RBAC rules, pod security, probes, resources and flags"

helm install "$REL" "$chart" -n "$NS" >"$WORK/install.txt" 2>&1 || fail "helm install: $(cat "$WORK/install.txt")"
installed=1
grep -q "helm-release" "$WORK/install.txt" || fail "helm install printed no NOTES about the default service account: $(cat "$WORK/install.txt")"
[ "$(helm_status helm "$REL")" = "deployed 1" ] || fail "helm ls: $(helm_status helm "$REL")"
ok "helm install $REL deploy/chart: deployed, NOTES say how tenancy works"

can_i_checks "system:serviceaccount:$NS:$REL" "$NS" "$REL-controller"

helm uninstall "$REL" -n "$NS" >/dev/null
installed=
! kubectl get clusterrole "$REL" >/dev/null 2>&1 || fail "helm uninstall left the ClusterRole"
ok "helm uninstall removes it"
