#!/usr/bin/env bash
# A release first installed by the helm CLI from a chart directory is taken
# over by a HelmRelease carrying the same templates only when the HelmRelease
# opts in (spec.upgrade.takeOwnership): without it the release is left alone;
# with it rudder upgrades it to revision 2, helm's history stays intact, and the
# objects keep their owners.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t"
cat >"$WORK/t/configmap.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: legacy
data:
  mode: original
Y
cat >"$WORK/t/deployment.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: legacy
spec:
  replicas: 1
  selector:
    matchLabels: {app: legacy}
  template:
    metadata:
      labels: {app: legacy}
    spec:
      containers:
      - name: app
        image: busybox:1.36
Y
write_chart "$WORK/chart" legacy 0.3.0 "$WORK/t"/*.yaml
helm install legacy "$WORK/chart" -n "$NS" >/dev/null
[ "$(helm_status helm legacy)" = "deployed 1" ] || fail "helm install did not deploy revision 1"
ok "helm install: revision 1 deployed"

sed -i 's/mode: original/mode: managed/' "$WORK/t/configmap.yaml"
start_controller
hr_inline legacy legacy 0.3.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease legacy refused" hr_failed legacy
[ "$(hr_cond legacy Stalled)" = True ] || fail "a refused takeover is not Stalled"
msg=$(hr_cond_msg legacy Ready)
echo "$msg" | grep -q "takeOwnership" || fail "the refusal does not say how to opt in: $msg"
[ "$(helm_history helm legacy)" = "1:deployed" ] || fail "history changed without the opt-in: $(helm_history helm legacy)"
[ "$(kubectl -n "$NS" get configmap legacy -o jsonpath='{.data.mode}')" = original ] || fail "configmap changed without the opt-in"
ok "without takeOwnership the helm CLI's release is left alone: $msg"
kubectl -n "$NS" patch helmrelease legacy --type merge -p '{"spec":{"upgrade":{"takeOwnership":true}}}' >/dev/null
wait_for 60 "HelmRelease legacy Ready" hr_ready legacy
kubectl -n "$NS" get events --field-selector involvedObject.name=legacy -o jsonpath='{.items[*].reason}' | grep -q TakingOver ||
  fail "no TakingOver event"
[ "$(helm_history helm legacy)" = "1:superseded 2:deployed" ] || fail "history after takeover: $(helm_history helm legacy)"
ok "taken over: helm history shows 1 superseded, 2 deployed"
[ "$(kubectl -n "$NS" get configmap legacy -o jsonpath='{.data.mode}')" = managed ] || fail "configmap not updated"
ok "the change was applied"
[ "$(hr_field legacy '{.status.lastAppliedRevision}')" = 2 ] || fail "status.lastAppliedRevision != 2"
ok "status records revision 2"
write_chart "$WORK/chart2" legacy 0.3.0 "$WORK/t"/*.yaml
oracle_manifest legacy "$WORK/chart2" "$WORK/want.yaml"
helm get manifest legacy -n "$NS" >"$WORK/got.yaml"
diff -u "$WORK/want.yaml" "$WORK/got.yaml" >&2 || fail "manifest differs from what helm install stores"
ok "helm get manifest equals what helm install stores"
# helm itself can still operate on the release rudder wrote.
helm upgrade legacy "$WORK/chart2" -n "$NS" >/dev/null 2>"$WORK/helm-upgrade.err" || fail "helm upgrade on rudder's release failed: $(cat "$WORK/helm-upgrade.err")"
[ "$(helm_history helm legacy)" = "1:superseded 2:superseded 3:deployed" ] || fail "history after helm upgrade: $(helm_history helm legacy)"
ok "helm upgrade works on the release rudder wrote"
stop_controller
