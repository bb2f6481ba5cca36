#!/usr/bin/env bash
# spec.driftDetection: objects a release applied and someone else changed or deleted are seen from
# watch events and corrected within seconds (mode enabled), reported as condition Drifted and an
# Event (warn), or left alone (disabled, ignore rules, the per-object annotation). Fields other
# managers own (a HorizontalPodAutoscaler's replicas) are not drift. Corrections write no release
# record (helm history is unchanged), and with nothing changing the controller sends nothing.
. "$(dirname "$0")/lib.sh"

deployment_template "$WORK/deploy.yaml"
cat >"$WORK/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
data:
  color: blue
  size: large
Y
cat >"$WORK/svc.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-svc
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80}]
Y
cat >"$WORK/optout.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-free
  annotations:
    rudder.dev/drift-detection: disabled
data:
  color: blue
Y

replicas() { kubectl -n "$NS" get deployment "$1" -o jsonpath='{.spec.replicas}'; }
cm_is() { [ "$(cm_data "$NS" "$1" "$2")" = "$3" ]; }
replicas_is() { [ "$(replicas "$1")" = "$2" ]; }
has_event() { case " $(hr_events "$1") " in *" $2 "*) return 0 ;; esac; return 1; }
drifted_is() { [ "$(hr_cond "$1" Drifted)" = "$2" ]; }
# elapsed NAME CMD...: seconds (to 0.1 s) until CMD succeeds, at most 30.
elapsed() {
  local t0 t1; t0=$(date +%s.%N)
  wait_for 30 "$1" "${@:2}"
  t1=$(date +%s.%N)
  python3 -c "print('%.1f' % ($t1 - $t0))"
}

start_controller
HR_SPEC='{"driftDetection": {"mode": "enabled"}}' hr_inline web web 1.0.0 "$WORK/deploy.yaml" "$WORK/cm.yaml" \
  "$WORK/svc.yaml" "$WORK/optout.yaml" | kubectl apply -f - >/dev/null
HR_SPEC='{"driftDetection": {"mode": "warn"}}' hr_inline warn warn 1.0.0 "$WORK/cm.yaml" | kubectl apply -f - >/dev/null
HR_SPEC='{"driftDetection": {"mode": "disabled"}}' hr_inline off off 1.0.0 "$WORK/cm.yaml" | kubectl apply -f - >/dev/null
HR_SPEC='{"driftDetection": {"mode": "enabled", "ignore": [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment"}}]}}' \
  hr_inline ign ign 1.0.0 "$WORK/deploy.yaml" "$WORK/cm.yaml" | kubectl apply -f - >/dev/null
for r in web warn off ign; do wait_for 120 "HelmRelease $r Ready" hr_ready "$r"; done
[ "$(kubectl -n "$NS" get configmap web-cfg -o jsonpath='{.metadata.labels.rudder\.dev/release-name}')" = web ] ||
  fail "the applied ConfigMap does not carry the label rudder.dev/release-name=web"
[ "$(kubectl -n "$NS" get configmap web-cfg -o jsonpath='{.metadata.labels.rudder\.dev/release-namespace}')" = "$NS" ] ||
  fail "the applied ConfigMap does not carry the label rudder.dev/release-namespace"
ok "every applied object carries the release's labels (the drift watches select them)"
wait_for 30 "the drift watches have listed the objects" grep -q 'watching owned objects for drift' "$CTRL_LOG"
sleep 2

# Nothing changes: nothing is sent.
before=$(grep -c '"request sent"\|request sent' "$CTRL_LOG" || true)
sleep 8
after=$(grep -c '"request sent"\|request sent' "$CTRL_LOG" || true)
[ "$before" = "$after" ] || fail "$((after - before)) requests sent in 8 s with nothing changing: $(grep 'request sent' "$CTRL_LOG" | tail -n $((after - before)))"
ok "with nothing changing, no request is sent in 8 s (drift is seen from watch events, not polled)"

# enabled: a Deployment scaled by hand, a ConfigMap edited, a Service deleted.
kubectl -n "$NS" scale deployment web --replicas=3 >/dev/null
s=$(elapsed "replicas back to 1" replicas_is web 1)
ok "a Deployment scaled by hand (kubectl scale) is brought back to replicas 1 in ${s}s"
kubectl -n "$NS" patch configmap web-cfg --type merge -p '{"data":{"color":"red"}}' >/dev/null
s=$(elapsed "color back to blue" cm_is web-cfg color blue)
ok "a ConfigMap edited by hand (kubectl patch) is corrected in ${s}s"
kubectl -n "$NS" patch configmap web-cfg --type json -p '[{"op":"remove","path":"/data/size"}]' >/dev/null
s=$(elapsed "size back" cm_is web-cfg size large)
ok "a key removed from the ConfigMap is put back in ${s}s"
uid=$(kubectl -n "$NS" get service web-svc -o jsonpath='{.metadata.uid}')
kubectl -n "$NS" delete service web-svc --wait=true >/dev/null
svc_back() { local u; u=$(kubectl -n "$NS" get service web-svc -o jsonpath='{.metadata.uid}') && [ -n "$u" ] && [ "$u" != "$uid" ]; }
s=$(elapsed "the Service recreated" svc_back)
ok "a deleted Service is recreated in ${s}s"
wait_for 20 "event DriftCorrected" has_event web DriftCorrected
msg=$(kubectl -n "$NS" get events --field-selector involvedObject.name=web,reason=DriftCorrected -o jsonpath='{.items[*].message}')
case "$msg" in *"Deployment $NS/web: .spec.replicas corrected"*) ;; *) fail "DriftCorrected does not name the Deployment's field: $msg" ;; esac
case "$msg" in *"Service $NS/web-svc: deleted, recreated"*) ;; *) fail "DriftCorrected does not name the deleted Service: $msg" ;; esac
ok "Event DriftCorrected names the objects and fields ($(echo "$msg" | head -c 200)...)"
[ "$(helm_history helm web)" = "1:deployed" ] || fail "corrections wrote records: $(helm_history helm web)"
[ -z "$(hr_cond web Drifted)" ] || fail "mode enabled left a Drifted condition"
ok "corrections write no release record (helm history: 1:deployed) and leave no Drifted condition"

# Fields rudder does not own are not drift: an annotation someone adds stays.
kubectl -n "$NS" annotate configmap web-cfg team=blue >/dev/null
kubectl -n "$NS" patch configmap web-cfg --type merge -p '{"data":{"color":"green"}}' >/dev/null
wait_for 30 "color back to blue" cm_is web-cfg color blue
[ "$(kubectl -n "$NS" get configmap web-cfg -o jsonpath='{.metadata.annotations.team}')" = blue ] ||
  fail "a correction removed an annotation rudder never applied"
ok "a correction keeps what other managers added (an annotation)"

# The per-object annotation opts out.
kubectl -n "$NS" patch configmap web-free --type merge -p '{"data":{"color":"red"}}' >/dev/null
kubectl -n "$NS" patch configmap web-cfg --type merge -p '{"data":{"color":"pink"}}' >/dev/null
wait_for 30 "color back to blue" cm_is web-cfg color blue
sleep 2
cm_is web-free color red || fail "an object annotated rudder.dev/drift-detection=disabled was corrected"
ok "an object annotated rudder.dev/drift-detection: disabled is left as edited"

# warn: reported, not corrected; put back by hand, the report goes.
kubectl -n "$NS" patch configmap warn-cfg --type merge -p '{"data":{"color":"red"}}' >/dev/null
wait_for 30 "Drifted=True" drifted_is warn True
msg=$(hr_cond_msg warn Drifted)
[ "$msg" = "ConfigMap $NS/warn-cfg: .data.color" ] || fail "Drifted message: $msg"
cm_is warn-cfg color red || fail "mode warn corrected the ConfigMap"
wait_for 20 "event DriftDetected" has_event warn DriftDetected
[ "$(hr_cond warn Ready)" = True ] || fail "drift made the release not Ready"
ok "mode warn: condition Drifted=True names the object and field ($msg), an Event, nothing corrected"
kubectl -n "$NS" patch configmap warn-cfg --type merge -p '{"data":{"color":"blue"}}' >/dev/null
wait_for 30 "Drifted gone" drifted_is warn ""
ok "mode warn: once put back by hand, the Drifted condition goes"
kubectl -n "$NS" delete configmap warn-cfg >/dev/null
wait_for 30 "Drifted=True" drifted_is warn True
[ "$(hr_cond_msg warn Drifted)" = "ConfigMap $NS/warn-cfg: deleted" ] || fail "Drifted message: $(hr_cond_msg warn Drifted)"
ok "mode warn: a deleted object is reported ($(hr_cond_msg warn Drifted))"

# disabled: nothing happens.
kubectl -n "$NS" patch configmap off-cfg --type merge -p '{"data":{"color":"red"}}' >/dev/null
# ignore rules: replicas stay as scaled while another field is still corrected.
kubectl -n "$NS" scale deployment ign --replicas=4 >/dev/null
kubectl -n "$NS" patch configmap ign-cfg --type merge -p '{"data":{"color":"red"}}' >/dev/null
wait_for 30 "ign-cfg corrected" cm_is ign-cfg color blue
kubectl -n "$NS" patch deployment ign --type json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.local/web:9"}]' >/dev/null
img() { [ "$(kubectl -n "$NS" get deployment ign -o jsonpath='{.spec.template.spec.containers[0].image}')" = "$1" ]; }
wait_for 30 "ign image corrected" img registry.local/web:1.0
sleep 2
replicas_is ign 4 || fail "an ignored field (/spec/replicas) was corrected: $(replicas ign)"
ok "ignore rule /spec/replicas (target kind Deployment): replicas stay 4 while the image and the ConfigMap are corrected"
cm_is off-cfg color red || fail "mode disabled corrected the ConfigMap"
[ -z "$(hr_cond off Drifted)" ] || fail "mode disabled reported drift"
ok "mode disabled: an edited object is left alone and not reported"

# A HorizontalPodAutoscaler owns replicas of a Deployment whose chart does not set them: not drift.
sed '/replicas: 1/d' "$WORK/deploy.yaml" >"$WORK/deploy-hpa.yaml"
cat >"$WORK/hpa.yaml" <<'Y'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ .Release.Name }}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: {{ .Release.Name }}}
  minReplicas: 2
  maxReplicas: 5
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
Y
HR_SPEC='{"driftDetection": {"mode": "enabled"}}' hr_inline auto auto 1.0.0 "$WORK/deploy-hpa.yaml" "$WORK/hpa.yaml" \
  "$WORK/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 120 "HelmRelease auto Ready" hr_ready auto
wait_for 60 "the autoscaler scaled to 2" replicas_is auto 2
manager=$(kubectl -n "$NS" get deployment auto --show-managed-fields -o json | python3 -c '
import json,sys
for e in json.load(sys.stdin)["metadata"]["managedFields"]:
    if "f:replicas" in json.dumps(e.get("fieldsV1", {})): print(e["manager"])')
kubectl -n "$NS" patch configmap auto-cfg --type merge -p '{"data":{"color":"red"}}' >/dev/null
wait_for 30 "auto-cfg corrected" cm_is auto-cfg color blue
sleep 2
replicas_is auto 2 || fail "the autoscaler's replicas were changed: $(replicas auto)"
msg=$(kubectl -n "$NS" get events --field-selector involvedObject.name=auto,reason=DriftCorrected -o jsonpath='{.items[*].message}')
case "$msg" in *Deployment*) fail "the autoscaled Deployment was counted as drift: $msg" ;; esac
ok "replicas owned by the autoscaler ($manager) are not drift: kept at 2 while the release's ConfigMap is corrected"

# A restart: objects changed while the controller was down are compared once it is back.
stop_controller
kubectl -n "$NS" patch configmap web-cfg --type merge -p '{"data":{"color":"red"}}' >/dev/null
kubectl -n "$NS" delete service web-svc --wait=true >/dev/null
start_controller
wait_for 60 "color back to blue after the restart" cm_is web-cfg color blue
wait_for 60 "the Service back after the restart" kubectl -n "$NS" get service web-svc
ok "changes made while the controller was down are corrected once it is back"

kubectl -n "$NS" delete helmrelease web warn off ign auto --wait=true --timeout=90s >/dev/null
left=$(kubectl -n "$NS" get deployments,configmaps,services -l rudder.dev/release-name -o name)
[ -z "$left" ] || fail "objects left after the releases were deleted: $left"
ok "deleting the releases leaves none of their objects"
stop_controller
