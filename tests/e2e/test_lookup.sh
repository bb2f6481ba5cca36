#!/usr/bin/env bash
# `lookup` in the controller reads the live cluster (the render on the thread
# pool asks, the loop fetches): an object, a list, something absent; the
# manifest equals what `helm install` renders for the same chart and cluster
# state. A lookup of a kind the server does not have fails the render with a
# message naming it.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t" "$WORK/bad"
cat >"$WORK/t/report.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: report
data:
  color: {{ (lookup "v1" "ConfigMap" .Release.Namespace "source").data.color | default "none" | quote }}
  replicas: {{ (lookup "v1" "ConfigMap" .Release.Namespace "source").data.n | default "0" | quote }}
  absent: {{ (lookup "v1" "ConfigMap" .Release.Namespace "no-such-thing") | toJson | quote }}
  names: {{ range (lookup "v1" "ConfigMap" .Release.Namespace "").items }}{{ .metadata.name }},{{ end }}
  ns-kind: {{ (lookup "v1" "Namespace" "" .Release.Namespace).kind | quote }}
Y
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: {{ (lookup "nowhere.example/v1" "Gadget" "" "g") | toJson | quote }}\n' >"$WORK/bad/bad.yaml"
kubectl -n "$NS" create configmap source --from-literal=color=blue --from-literal=n=1000000 >/dev/null
start_controller
hr_inline looker looker 1.0.0 "$WORK/t"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "looker Ready" hr_ready looker
[ "$(cm_data "$NS" report color)" = blue ] || fail "lookup of an object: $(cm_data "$NS" report color)"
ok "lookup reads a live object"
kubectl create namespace "$NS-oracle" >/dev/null
kubectl -n "$NS-oracle" create configmap source --from-literal=color=blue --from-literal=n=1000000 >/dev/null
write_chart "$WORK/c" looker 1.0.0 "$WORK/t"/*.yaml
helm install looker "$WORK/c" -n "$NS-oracle" >/dev/null
helm get manifest looker -n "$NS-oracle" | sed "s/$NS-oracle/<ns>/g" >"$WORK/want.yaml"
helm get manifest looker -n "$NS" | sed "s/$NS/<ns>/g" >"$WORK/got.yaml"
diff -u "$WORK/want.yaml" "$WORK/got.yaml" >&2 || fail "the manifest differs from what helm install renders with the same lookups"
ok "the manifest equals helm install's (object, list, absent, cluster-scoped lookups)"
helm uninstall looker -n "$NS-oracle" >/dev/null

hr_inline badlook badlook 1.0.0 "$WORK/bad"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "badlook failed" hr_failed badlook
msg=$(hr_cond_msg badlook Ready)
echo "$msg" | grep -q 'error calling lookup' || fail "not a template error: $msg"
echo "$msg" | grep -q 'Gadget' || fail "the message does not name the kind: $msg"
ok "a lookup of an unknown kind fails the render: $msg"
for hr in looker badlook; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
