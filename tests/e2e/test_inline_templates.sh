#!/usr/bin/env bash
# Inline charts with template actions: values from the chart and from
# spec.values, helpers in _helpers.tpl, .Release and .Capabilities, rendered
# exactly as the helm CLI renders the equivalent chart (the manifest and the
# release record compared with a real `helm install`); a values change is an
# upgrade; a template error is reported with the file and line and changes
# nothing.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/chart/templates"
cat >"$WORK/chart/templates/_helpers.tpl" <<'Y'
{{- define "app.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "app.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
Y
cat >"$WORK/chart/templates/configmap.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
data:
  revision: {{ .Release.Revision | quote }}
  upgrade: {{ .Release.IsUpgrade | quote }}
  kube: "{{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}"
  greeting: {{ .Values.greeting | default "hi" | upper | quote }}
  replicas: {{ .Values.replicas | quote }}
  settings.yaml: |
    {{- toYaml .Values.settings | nindent 4 }}
Y
cat >"$WORK/chart/templates/deployment.yaml" <<'Y'
{{- if .Values.deployment.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: {{ .Release.Name }}
    spec:
      containers:
      {{- range $i, $c := .Values.containers }}
      - name: {{ $c.name }}
        image: {{ $c.image }}:{{ $c.tag | default $.Chart.AppVersion }}
      {{- end }}
{{- end }}
Y
printf 'apiVersion: v2\nname: shop\nversion: 2.1.0\nappVersion: "1.4"\n' >"$WORK/chart/Chart.yaml"
cat >"$WORK/values.json" <<'J'
{"replicas": 1, "greeting": "hello", "deployment": {"enabled": true},
 "settings": {"timeout": 30, "ratio": 0.25, "big": 1000000, "tags": ["a", "b"], "nested": {"k": "v"}},
 "containers": [{"name": "web", "image": "nginx"}, {"name": "sidecar", "image": "busybox", "tag": "1.36"}]}
J
cp "$WORK/values.json" "$WORK/chart/values.yaml"   # JSON is YAML

# hr_templated NAME USER-VALUES-JSON: the HelmRelease carrying the chart above.
hr_templated() {
  python3 - "$1" "$NS" "$WORK/chart" "$2" <<'PY'
import json, os, sys
name, ns, chart, user = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
tdir = os.path.join(chart, "templates")
templates = {f: open(os.path.join(tdir, f)).read() for f in sorted(os.listdir(tdir))}
spec = {"chart": {"inline": {"chartName": "shop", "chartVersion": "2.1.0", "appVersion": "1.4",
                             "values": json.load(open(os.path.join(chart, "..", "values.json"))),
                             "templates": templates}}}
if user: spec["values"] = user
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}

start_controller
user1='{"replicas": 3, "settings": {"timeout": 45}}'
hr_templated shop "$user1" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease shop Ready" hr_ready shop
ok "templated inline chart installed"

echo "$user1" >"$WORK/user1.json"
kubectl create namespace "$NS-oracle" >/dev/null
helm install shop "$WORK/chart" -n "$NS-oracle" -f "$WORK/user1.json" >/dev/null
helm get manifest shop -n "$NS-oracle" >"$WORK/want.yaml"
release_record "$NS-oracle" sh.helm.release.v1.shop.v1 >"$WORK/want.record"
helm get manifest shop -n "$NS" >"$WORK/got.yaml"
diff -u "$WORK/want.yaml" "$WORK/got.yaml" >&2 || fail "rendered manifest differs from helm install's"
ok "rendered manifest equals what helm install stores (values, helpers, Release, Capabilities)"
release_record "$NS" sh.helm.release.v1.shop.v1 >"$WORK/got.record"
diff <(python3 -m json.tool "$WORK/want.record") <(python3 -m json.tool "$WORK/got.record") >&2 ||
  fail "release record differs from helm install's"
ok "release record (chart, values, config, manifest) equals helm install's"
[ "$(kubectl -n "$NS" get deployment shop-shop -o jsonpath='{.spec.replicas}')" = 3 ] || fail "user value replicas=3 not applied"
[ "$(kubectl -n "$NS" get configmap shop-shop -o jsonpath='{.data.revision}')" = 1 ] || fail "revision not rendered"
ok "objects carry the rendered values"

# Upgrade: change values only; the revision and IsUpgrade are rendered too.
user2='{"replicas": 2, "greeting": "bonjour", "deployment": {"enabled": false}}'
hr_templated shop "$user2" | kubectl apply -f - >/dev/null
wait_for 60 "upgrade to revision 2" bash -c "[ \"\$(kubectl -n $NS get helmrelease shop -o jsonpath='{.status.lastAppliedRevision}')\" = 2 ]"
wait_for 30 "HelmRelease shop Ready after upgrade" hr_ready shop
[ "$(kubectl -n "$NS" get configmap shop-shop -o jsonpath='{.data.greeting} {.data.revision} {.data.upgrade}')" = "BONJOUR 2 true" ] ||
  fail "configmap after upgrade: $(kubectl -n "$NS" get configmap shop-shop -o jsonpath='{.data}')"
ok "values change upgraded to revision 2 (Release.Revision and IsUpgrade rendered)"
wait_for 30 "deployment removed (disabled by values)" bash -c "! kubectl -n $NS get deployment shop-shop"
ok "object disabled by values was deleted"
echo "$user2" >"$WORK/user2.json"
helm upgrade shop "$WORK/chart" -n "$NS-oracle" -f "$WORK/user2.json" >/dev/null
diff -u <(helm get manifest shop -n "$NS-oracle") <(helm get manifest shop -n "$NS") >&2 || fail "revision 2 manifest differs from helm upgrade's"
ok "revision 2 manifest equals helm upgrade's"

# A template error: reported with Helm's message (file and line), nothing changes.
python3 - "$WORK/chart/templates/configmap.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace("replicas: {{ .Values.replicas | quote }}", "replicas: {{ .Values.missing.deep | quote }}")
open(p, "w").write(s)
PY
hr_templated shop "$user2" | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease shop failed" hr_failed shop
msg=$(hr_cond_msg shop Ready)
# The oracle: helm's own error for the same chart and values (after "Error: ").
helm template shop "$WORK/chart" -f "$WORK/user2.json" >/dev/null 2>"$WORK/helm.err" && fail "helm template accepted the broken chart"
want=$(sed -n '1s/^Error: //p; 2,3p' "$WORK/helm.err")
[ "$msg" = "$want" ] || fail "message differs from helm's: got '$msg', want '$want'"
echo "$msg" | grep -q "shop/templates/configmap.yaml:[0-9]*:[0-9]*" || fail "message does not name file and line: $msg"
[ "$(helm_history helm shop)" = "1:superseded 2:deployed" ] || fail "history changed: $(helm_history helm shop)"
ok "template error reported ($msg); nothing changed"

# Helm's warnings (here a coalesce warning: a table given for a key whose chart value is not one)
# become an Event of the release, word for word as `helm template` prints them.
mkdir -p "$WORK/warnchart/templates"
printf 'apiVersion: v2\nname: warnc\nversion: 1.0.0\n' >"$WORK/warnchart/Chart.yaml"
printf 'q: plain\n' >"$WORK/warnchart/values.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: warnc\ndata:\n  q: {{ .Values.q | quote }}\n' >"$WORK/warnchart/templates/cm.yaml"
helm template warnc "$WORK/warnchart" --set q.a=1 2>"$WORK/warn.err" >/dev/null
want=$(sed -n 's/^level=INFO msg="\(.*\)"$/\1/p' "$WORK/warn.err")
[ -n "$want" ] || fail "helm printed no warning: $(cat "$WORK/warn.err")"
python3 - "$NS" "$WORK/warnchart" <<'PY' | kubectl apply -f - >/dev/null
import json, os, sys
ns, d = sys.argv[1], sys.argv[2]
tpl = {"cm.yaml": open(os.path.join(d, "templates/cm.yaml")).read()}
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease", "metadata": {"name": "warnc", "namespace": ns},
                  "spec": {"chart": {"inline": {"chartName": "warnc", "chartVersion": "1.0.0", "templates": tpl,
                                                "values": {"q": "plain"}}}, "values": {"q": {"a": 1}}}}))
PY
wait_for 60 "HelmRelease warnc Ready" hr_ready warnc
warn_event() { kubectl -n "$NS" get events --field-selector involvedObject.name=warnc,reason=RenderWarnings -o jsonpath='{.items[0].message}'; }
wait_for 20 "event RenderWarnings" bash -c "[ -n \"\$(kubectl -n $NS get events --field-selector involvedObject.name=warnc,reason=RenderWarnings -o name)\" ]"
[ "$(warn_event)" = "$want" ] || fail "RenderWarnings: got '$(warn_event)', helm printed '$want'"
ok "Helm's render warnings become an Event, as helm template prints them ($want)"
# A document with an unknown hook event is dropped, as Helm drops it, and said so (helm: INFO
# "skipping unknown hooks" hookTypes=...).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\n  annotations:\n    "helm.sh/hook": pre-install,bogus-hook\ndata: {}\n' >"$WORK/warnchart/templates/odd.yaml"
helm template warnc "$WORK/warnchart" 2>"$WORK/hook.err" >/dev/null
types=$(sed -n 's/^level=INFO msg="skipping unknown hooks" hookTypes=//p' "$WORK/hook.err")
[ -n "$types" ] || fail "helm printed no unknown-hook warning: $(cat "$WORK/hook.err")"
python3 - "$NS" "$WORK/warnchart" <<'PY' | kubectl apply -f - >/dev/null
import json, os, sys
ns, d = sys.argv[1], sys.argv[2]
tpl = {"odd.yaml": open(os.path.join(d, "templates", "odd.yaml")).read(),
       "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hookc\ndata: {}\n"}
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease", "metadata": {"name": "hookc", "namespace": ns},
                  "spec": {"chart": {"inline": {"chartName": "hookc", "chartVersion": "1.0.0", "templates": tpl}}}}))
PY
wait_for 60 "HelmRelease hookc Ready" hr_ready hookc
hook_event() { kubectl -n "$NS" get events --field-selector involvedObject.name=hookc,reason=RenderWarnings -o jsonpath='{.items[0].message}'; }
wait_for 20 "event RenderWarnings of hookc" bash -c "[ -n \"\$(kubectl -n $NS get events --field-selector involvedObject.name=hookc,reason=RenderWarnings -o name)\" ]"
[ "$(hook_event)" = "skipping unknown hooks (hookTypes=$types)" ] || fail "hookc: RenderWarnings '$(hook_event)', helm: hookTypes=$types"
kubectl -n "$NS" get configmap odd >/dev/null 2>&1 && fail "the document with an unknown hook was applied"
ok "a document with an unknown hook event is dropped as helm drops it, and an Event says so (hookTypes=$types)"
stop_controller
