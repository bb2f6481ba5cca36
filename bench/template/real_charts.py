#!/usr/bin/env python3
"""Real-shaped benchmark charts (issue 18 §2), written for this benchmark in the style of the big
public chart libraries, rendered with `rudder template` and the pinned `helm template` side by side:
CPU (user + system), wall time and peak RSS of each process, and whether the outputs are identical.

Charts (all generated, deterministic):
  library   an umbrella of 30 subcharts, each bundling a copy of one library chart `common` of ~290
            named templates (names, labels, images, capabilities, affinities, resource presets,
            tplvalues, validations, ~250 helpers that call each other); 9 templates per subchart
            (Deployment, Service, ConfigMap, Secret, ServiceAccount, Ingress, HPA, PDB,
            NetworkPolicy), all built from the library's helpers.
  crds      a CRD bundle: 40 CRDs in crds/ (--include-crds) and 40 more read by a template through
            .Files.Glob/.Files.Get with labels added, ~100 KB of openAPIV3Schema each.
  files     ConfigMaps and Secrets from .Files: 150 JSON dashboards by (.Files.Glob ...).AsConfig,
            100 config files by AsSecrets, Get, Lines, a checksum of every file, tpl of a templated
            config file.
  tpl       deep include chains with tpl: 60 ConfigMaps of 25 keys, each key a value string that tpl
            renders and that includes a helper chain 12 deep, whose helpers tpl values again.

Usage: bench/template/real_charts.py [-n N] [--rudder PATH] [--helm PATH] [--keep DIR] [CHART...]
No thresholds: the figures are printed, nothing is asserted (except identical output).
"""
import json, os, random, shutil, statistics, subprocess, sys, tempfile, time

import chart_bench

ROOT = chart_bench.ROOT


def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def indent(text, n):
    return "".join(" " * n + line + "\n" if line else "\n" for line in text.splitlines())


# ---- the library chart ------------------------------------------------------------------------

HERE = os.path.dirname(os.path.abspath(__file__))


def read(*path):
    with open(os.path.join(HERE, "real_charts", *path)) as f:
        return f.read()


# The library's hand-written helpers (bench/template/real_charts/common.tpl; @PRESETS@ is filled in
# by presets_text) and a subchart's templates (real_charts/sub/*.yaml: Python %-formats, see gen_library).
COMMON_HELPERS = read("common.tpl")


PRESETS = [("nano", "100m", "128Mi", "150m", "192Mi"), ("micro", "250m", "256Mi", "375m", "384Mi"),
           ("small", "500m", "512Mi", "750m", "768Mi"), ("medium", "500m", "1024Mi", "750m", "1536Mi"),
           ("large", "1.0", "2048Mi", "1.5", "3072Mi")]


def presets_text():
    """The resource presets dict of common.resources.preset, one entry per size."""
    return "".join('  "%s" (dict\n      "requests" (dict "cpu" "%s" "memory" "%s" "ephemeral-storage" "50Mi")\n'
                   '      "limits" (dict "cpu" "%s" "memory" "%s" "ephemeral-storage" "2Gi")\n   )\n' % p for p in PRESETS)


def gen_helpers(r, count):
    """`count` generated helpers in the library's style: each formats, trims and quotes a piece of
    the context and includes the next few, so that chains are several includes deep."""
    out = []
    ops = ['trunc 63 | trimSuffix "-"', 'lower', 'upper | lower', 'replace "_" "-"', 'trimPrefix "x-"', 'quote | trimAll "\\""',
           'b64enc | b64dec', 'nospace', 'snakecase | kebabcase']
    for i in range(count):
        op = r.choice(ops)
        body = '{{- printf "%%s-%s" (include "common.names.fullname" .) | %s -}}' % ("h%03d" % i, op)
        if i % 5 and i > 0:
            j = r.randrange(max(0, i - 20), i)
            body = '{{- printf "%%s.%%s" (include "common.gen.h%03d" .) "%d" | %s -}}' % (j, i, op)
        if i % 7 == 3:
            body = ('{{- $v := dict "n" (include "common.names.name" .) "i" %d -}}\n'
                    '{{- if gt (int $v.i) 100 -}}{{ printf "%%s-%%v" $v.n $v.i | trunc 63 }}{{- else -}}'
                    '{{ $v.n | %s }}{{- end -}}' % (i, op))
        out.append('{{- define "common.gen.h%03d" -}}\n%s\n{{- end -}}\n' % (i, body))
    return "".join(out)


SUB_TEMPLATES = {name: read("sub", name) for name in sorted(os.listdir(os.path.join(HERE, "real_charts", "sub")))}


def sub_values(r, i):
    v = {
        "nameOverride": "", "fullnameOverride": "", "namespaceOverride": "",
        "commonLabels": {"team": "team-%d" % (i % 6), "tier": "{{ .Release.Name }}-tier"},
        "commonAnnotations": {"owner": "platform@example.com"},
        "replicaCount": 1 + i % 3, "revisionHistoryLimit": 5,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        "podLabels": {"svc": "svc%02d" % i},
        "podAnnotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "{{ (index .Values.ports 0).port }}"},
        "image": {"registry": "docker.io", "repository": "example/svc%02d" % i, "tag": "1.%d.0" % i, "digest": "",
                  "pullPolicy": "IfNotPresent", "pullSecrets": ["regcred-%d" % (i % 3)]},
        "sidecar": {"image": {"registry": "docker.io", "repository": "example/proxy", "tag": "2.4.1", "pullSecrets": []},
                    "args": ["--upstream={{ include \"common.names.fullname\" . }}:%d" % (8000 + i),
                             "--namespace={{ .Release.Namespace }}", "--log-level=info"]},
        "podAntiAffinityPreset": "soft",
        "nodeAffinityPreset": {"type": "hard", "key": "topology.kubernetes.io/zone", "values": ["zone-a", "zone-b", "zone-c"]},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "{{ .Chart.Name }}", "effect": "NoSchedule"}],
        "podSecurityContext": {"enabled": True, "fsGroup": 1001, "fsGroupChangePolicy": "Always"},
        "containerSecurityContext": {"enabled": True, "runAsUser": 1001, "runAsNonRoot": True, "readOnlyRootFilesystem": True,
                                     "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
        "env": {"log.level": "info", "app.mode": "production", "release": "{{ .Release.Name }}",
                "db.host": "{{ .Release.Name }}-db.{{ .Release.Namespace }}.svc"},
        "extraEnvVars": [{"name": "EXTRA_%d" % k, "value": "{{ .Chart.Name }}-%d" % k} for k in range(4)],
        "ports": [{"name": "http", "port": 8000 + i}, {"name": "metrics", "port": 9000 + i}, {"name": "grpc", "port": 7000 + i}],
        "resources": {} if i % 2 else {"requests": {"cpu": "200m", "memory": "256Mi"}},
        "resourcesPreset": ["nano", "micro", "small", "medium", "large"][i % 5],
        "livenessProbe": {"enabled": True, "httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 10},
        "readinessProbe": {"enabled": True, "httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
        "extraVolumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
        "config": {"server": {"port": 8000 + i, "name": "{{ include \"common.names.fullname\" . }}"},
                   "features": {"f%02d" % k: bool(k % 2) for k in range(20)},
                   "upstreams": ["svc%02d.{{ .Release.Namespace }}.svc:%d" % (k, 8000 + k) for k in range(10)]},
        "service": {"type": "ClusterIP", "annotations": {"service.beta.kubernetes.io/x": "{{ .Chart.Name }}"}},
        "serviceAccount": {"create": True, "name": "", "automountServiceAccountToken": False},
        "ingress": {"enabled": i % 2 == 0, "ingressClassName": "nginx", "annotations": {"cert-manager.io/cluster-issuer": "letsencrypt"},
                    "hosts": [{"name": "svc%02d-%d.{{ .Release.Namespace }}.example.com" % (i, k), "path": "/"} for k in range(3)]},
        "autoscaling": {"enabled": i % 3 == 0, "minReplicas": 2, "maxReplicas": 10, "targetCPU": 70},
        "pdb": {"maxUnavailable": 1},
        "networkPolicy": {"allowFrom": ["svc%02d" % ((i + k) % 30) for k in range(1, 5)]},
        "auth": {"password": "", "extra": {"k%d" % k: "value-%d" % k for k in range(6)}},
    }
    return v


def gen_library(d, nsubs=30, nhelpers=260):
    r = random.Random(18)
    common = COMMON_HELPERS.replace("@PRESETS@", presets_text()) + gen_helpers(r, nhelpers)
    deps = "".join("  - name: svc%02d\n    version: 1.0.0\n" % i for i in range(nsubs))
    w(d + "/Chart.yaml", "apiVersion: v2\nname: platform\nversion: 3.1.0\nappVersion: \"3.1.0\"\n"
      "dependencies:\n  - name: common\n    version: 2.x.x\n" + deps)
    w(d + "/values.yaml", "global:\n  imageRegistry: registry.example.com\n  imagePullSecrets: [global-cred]\n")
    w(d + "/charts/common/Chart.yaml", "apiVersion: v2\nname: common\nversion: 2.20.0\ntype: library\n")
    w(d + "/charts/common/templates/_names.tpl", common)
    w(d + "/templates/NOTES.txt", "Platform {{ .Release.Name }} installed: {{ len .Subcharts }} services.\n")
    for i in range(nsubs):
        sd = d + "/charts/svc%02d" % i
        w(sd + "/Chart.yaml", "apiVersion: v2\nname: svc%02d\nversion: 1.%d.0\nappVersion: \"1.%d.0\"\n"
          "dependencies:\n  - name: common\n    version: 2.x.x\n" % (i, i, i))
        w(sd + "/values.yaml", json.dumps(sub_values(r, i), indent=2, sort_keys=True) + "\n")
        shutil.copytree(d + "/charts/common", sd + "/charts/common", dirs_exist_ok=True)
        hs = " ".join(str(r.randrange(nhelpers)) for _ in range(8))
        for name, text in SUB_TEMPLATES.items():
            w(sd + "/templates/" + name, text % {"h1": r.randrange(nhelpers), "hs": hs} if "%(" in text or "%%" in text else text)


# ---- the CRD bundle ---------------------------------------------------------------------------

def schema(r, depth, width):
    if depth == 0:
        t = r.choice(["string", "integer", "boolean", "string"])
        s = {"type": t, "description": "Field %d: %s" % (r.randrange(10 ** 6), " ".join(
            r.choice(["the", "value", "of", "this", "field", "controls", "how", "the", "operator", "reconciles", "resource"])
            for _ in range(r.randrange(6, 30))))}
        if t == "string" and r.random() < 0.3:
            s["enum"] = ["A%d" % k for k in range(r.randrange(2, 6))]
        if t == "integer":
            s["format"] = "int32"
            s["minimum"] = 0
        return s
    props = {"field%02d" % k: schema(r, depth - 1 if r.random() < 0.6 else 0, width) for k in range(width)}
    s = {"type": "object", "description": "An object at depth %d." % depth, "properties": props}
    if r.random() < 0.3:
        s = {"type": "array", "items": s, "description": "A list."}
    if r.random() < 0.3 and s["type"] == "object":
        s["required"] = sorted(props)[:2]
    return s


def crd_doc(r, group, kind):
    plural = kind.lower() + "s"
    spec = schema(r, 3, 6)
    body = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (plural, group), "annotations": {"controller-gen.kubebuilder.io/version": "v0.16.1"}},
        "spec": {"group": group, "names": {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower()},
                 "scope": "Namespaced",
                 "versions": [{"name": v, "served": True, "storage": v == "v1", "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
                                   "spec": spec, "status": schema(r, 2, 5)}}}} for v in ("v1beta1", "v1")]},
    }
    return body


def to_yaml(obj, ind=0):
    """A small block-YAML writer for the generated CRDs (strings quoted, keys sorted)."""
    pad = " " * ind
    out = []
    if isinstance(obj, dict):
        for k in sorted(obj):
            v = obj[k]
            if isinstance(v, (dict, list)) and v:
                out.append("%s%s:\n%s" % (pad, k, to_yaml(v, ind + 2)))
            else:
                out.append("%s%s: %s\n" % (pad, k, scalar(v)))
    else:
        for v in obj:
            if isinstance(v, (dict, list)) and v:
                inner = to_yaml(v, ind + 2)
                out.append("%s- %s" % (pad, inner[ind + 2:]))
            else:
                out.append("%s- %s\n" % (pad, scalar(v)))
    return "".join(out)


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return json.dumps(v)


def gen_crds(d, n=40):
    r = random.Random(7)
    w(d + "/Chart.yaml", "apiVersion: v2\nname: operator-crds\nversion: 0.75.0\nappVersion: \"0.75.0\"\n")
    w(d + "/values.yaml", "crds:\n  enabled: true\n  annotations:\n    helm.sh/resource-policy: keep\n"
      "  labels:\n    app.kubernetes.io/part-of: operator\n")
    for i in range(n):
        w(d + "/crds/crd-%02d.yaml" % i, "---\n" + to_yaml(crd_doc(r, "monitoring%d.example.com" % (i % 4), "Thing%02d" % i)))
        w(d + "/files/crds/crd-%02d.yaml" % i, to_yaml(crd_doc(r, "extra%d.example.com" % (i % 4), "Extra%02d" % i)))
    w(d + "/templates/crds.yaml", r'''{{- if .Values.crds.enabled }}
{{- range $path, $_ := .Files.Glob "files/crds/*.yaml" }}
{{- $crd := $.Files.Get $path | fromYaml }}
---
apiVersion: {{ $crd.apiVersion }}
kind: {{ $crd.kind }}
metadata:
  name: {{ $crd.metadata.name }}
  annotations:
    {{- toYaml (merge (dict) $crd.metadata.annotations $.Values.crds.annotations) | nindent 4 }}
  labels:
    {{- toYaml $.Values.crds.labels | nindent 4 }}
    app.kubernetes.io/version: {{ $.Chart.AppVersion | quote }}
spec:
{{ toYaml $crd.spec | indent 2 }}
{{- end }}
{{- end }}
''')


# ---- ConfigMaps from .Files -------------------------------------------------------------------

def gen_files(d, ndash=150, nconf=100):
    r = random.Random(11)
    w(d + "/Chart.yaml", "apiVersion: v2\nname: dashboards\nversion: 5.2.0\nappVersion: \"11.2.0\"\n")
    w(d + "/values.yaml", "datasource: prometheus\nrefresh: 30s\nextraLabels:\n  grafana_dashboard: \"1\"\n"
      "server:\n  port: 3000\n  domain: grafana.example.com\n")
    for i in range(ndash):
        panels = [{"id": k, "type": r.choice(["timeseries", "stat", "table", "gauge"]), "title": "Panel %d.%d" % (i, k),
                   "gridPos": {"h": 8, "w": 12, "x": (k % 2) * 12, "y": k * 8},
                   "targets": [{"expr": "sum(rate(http_requests_total{job=\"svc%02d\", code=~\"%dxx\"}[5m])) by (instance)" % (i % 30, c),
                                "legendFormat": "{{instance}} %dxx" % c, "refId": chr(65 + c)} for c in range(2, 6)],
                   "fieldConfig": {"defaults": {"unit": "reqps", "thresholds": {"mode": "absolute", "steps": [
                       {"color": "green", "value": None}, {"color": "red", "value": 80}]}}, "overrides": []}}
                  for k in range(r.randrange(8, 20))]
        dash = {"title": "Service %03d" % i, "uid": "svc-%03d" % i, "schemaVersion": 39, "tags": ["generated", "svc"],
                "time": {"from": "now-6h", "to": "now"}, "panels": panels,
                "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]}}
        w(d + "/files/dashboards/svc-%03d.json" % i, json.dumps(dash, indent=2) + "\n")
    for i in range(nconf):
        lines = ["# generated config %d" % i] + ["key.%d.%d = value-%d-%d" % (i, k, i, r.randrange(1000)) for k in range(r.randrange(40, 120))]
        w(d + "/files/conf/app-%03d.properties" % i, "\n".join(lines) + "\n")
    w(d + "/files/grafana.ini.tpl", "[server]\nhttp_port = {{ .Values.server.port }}\ndomain = {{ .Values.server.domain }}\n"
      "root_url = https://{{ .Values.server.domain }}/\n[dashboards]\nmin_refresh_interval = {{ .Values.refresh }}\n"
      + "".join("[section%d]\nname = {{ .Release.Name }}-%d\nnamespace = {{ .Release.Namespace }}\n" % (k, k) for k in range(40)))
    w(d + "/templates/dashboards.yaml", r'''{{- range $i, $group := list "svc-0" "svc-1" }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ printf "%s-dashboards-%d" $.Release.Name $i }}
  labels:
    {{- toYaml $.Values.extraLabels | nindent 4 }}
data:
{{ ($.Files.Glob (printf "files/dashboards/%s*.json" $group)).AsConfig | indent 2 }}
{{- end }}
''')
    w(d + "/templates/conf.yaml", r'''apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-conf
type: Opaque
data:
{{ (.Files.Glob "files/conf/*.properties").AsSecrets | indent 2 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-checksums
data:
  {{- range $path, $_ := .Files.Glob "files/**" }}
  {{ base $path }}: {{ $.Files.Get $path | sha256sum | quote }}
  {{- end }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-ini
data:
  grafana.ini: |
    {{- tpl (.Files.Get "files/grafana.ini.tpl") . | nindent 4 }}
  first-lines: |
    {{- range $path, $_ := .Files.Glob "files/conf/app-00*.properties" }}
    {{- range $j, $l := $.Files.Lines $path }}{{ if lt $j 3 }}
    {{ $l }}{{ end }}{{ end }}
    {{- end }}
''')


# ---- include chains with tpl ------------------------------------------------------------------

def gen_tpl(d, nmaps=60, nkeys=25, depth=12):
    w(d + "/Chart.yaml", "apiVersion: v2\nname: tplchain\nversion: 1.0.0\n")
    helpers = []
    for k in range(depth):
        nxt = ('{{ include "chain.l%d" . }}' % (k + 1)) if k + 1 < depth else "{{ .Release.Name }}"
        helpers.append('{{- define "chain.l%d" -}}\n{{- tpl (index .Values.levels %d) . }}-%s\n{{- end -}}\n' % (k, k, nxt))
    helpers.append('{{- define "chain.render" -}}\n{{- $v := typeIs "string" .value | ternary .value (.value | toYaml) -}}\n'
                   '{{- if contains "{{" $v }}{{ tpl $v .context }}{{ else }}{{ $v }}{{ end -}}\n{{- end -}}\n')
    w(d + "/templates/_chain.tpl", "".join(helpers))
    vals = ["levels:"] + ['  - "{{ .Chart.Name | upper | trunc %d }}"' % (3 + k) for k in range(depth)]
    vals.append("entries:")
    for m in range(nmaps):
        vals.append("  map%02d:" % m)
        for k in range(nkeys):
            if k % 3 == 0:
                v = '{{ include \\"chain.l%d\\" . }}/%d' % (k % depth, k)
            elif k % 3 == 1:
                v = '{{ printf \\"%%s-%%d\\" .Release.Name %d | quote }} {{ include \\"chain.render\\" (dict \\"value\\" .Values.nested \\"context\\" .) | sha1sum }}' % k
            else:
                v = 'plain-value-%d-%d' % (m, k)
            vals.append('    key%02d: "%s"' % (k, v))
    vals.append("nested:\n  a: \"{{ .Release.Namespace }}\"\n  b: [\"{{ .Chart.Version }}\", \"x\"]\n  c: {d: \"{{ include \\\"chain.l%d\\\" . }}\"}" % (depth - 3))
    w(d + "/values.yaml", "\n".join(vals) + "\n")
    w(d + "/templates/maps.yaml", r'''{{- range $name, $entries := .Values.entries }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ $name }}
data:
  {{- range $k, $v := $entries }}
  {{ $k }}: {{ include "chain.render" (dict "value" $v "context" $) | quote }}
  {{- end }}
{{- end }}
''')


CHARTS = {
    "library": (gen_library, [], "library chart, 30 subcharts"),
    "crds": (gen_crds, ["--include-crds"], "CRD bundle, 80 CRDs"),
    "files": (gen_files, [], ".Files ConfigMaps"),
    "tpl": (gen_tpl, [], "include chains with tpl"),
}


def run(argv, rss_file=None):
    """Runs argv; returns (wall s, cpu s, max RSS KiB or None, stdout bytes). The peak RSS is read from
    /usr/bin/time's %M (see chart_bench.run_once for why not from wait4 here); CPU is the child's
    user + system time from wait4, which the forked interpreter does not inflate."""
    if rss_file:
        argv = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + argv
    errf = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.stdout.close()
    errf.seek(0)
    err = errf.read().decode(errors="replace")
    errf.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("FAIL: %s exited %d:\n%s" % (" ".join(argv), os.waitstatus_to_exitcode(status), err[:3000]))
    rss = None
    if rss_file:
        with open(rss_file) as f:
            rss = int(f.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss, out


def bench(name, label, n, rudder, helm, args, tmp):
    rss_file = os.path.join(tmp, "maxrss")
    res, outs = {}, {}
    for tool, argv in (("rudder", [rudder, "template"] + args), ("helm", [helm, "template"] + args)):
        outs[tool] = run(argv)[3]  # also warms the page cache
        walls, cpus, rss = [], [], []
        for _ in range(n):
            wl, cpu, _, _ = run(argv)
            walls.append(wl)
            cpus.append(cpu)
            rss.append(run(argv, rss_file)[2])
        res[tool] = (statistics.median(cpus), statistics.median(walls), max(rss))
    r, h = res["rudder"], res["helm"]
    same = "yes" if outs["rudder"] == outs["helm"] else "NO"
    print("%-9s %-28s %10.1f %10.1f %7.1fx %9.1f %9.1f %7.1fx %8.1f %8.1f %6.1fx %9.2f %s" % (
        name, label, r[0] * 1e3, h[0] * 1e3, h[0] / r[0], r[1] * 1e3, h[1] * 1e3, h[1] / r[1],
        r[2] / 1024, h[2] / 1024, h[2] / r[2], len(outs["helm"]) / 1e6, same))
    sys.stdout.flush()
    return same == "yes"


def main():
    ap = chart_bench.arg_parser(5, "write the charts under this directory and keep them")
    ap.add_argument("charts", nargs="*", default=list(CHARTS))
    a = ap.parse_args()
    helm = chart_bench.find_tools(a.rudder, a.helm)
    tmp = tempfile.mkdtemp(prefix="real-charts-")
    ok = True
    try:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        for k in ("HOME", "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
            os.environ[k] = home
        base = a.keep or tmp
        print("runs per tool: %d; helm: %s; rudder: %s; load average at start: %s" % (
            a.n, helm, a.rudder, " ".join(open("/proc/loadavg").read().split()[:3])))
        print("%-9s %-28s %10s %10s %8s %9s %9s %8s %8s %8s %7s %9s %s" % (
            "chart", "", "cpu ms", "helm", "helm/r", "wall ms", "helm", "helm/r", "MiB", "helm", "helm/r", "out MB", "same"))
        for name in a.charts:
            gen, args, label = CHARTS[name]
            d = os.path.join(base, name)
            shutil.rmtree(d, ignore_errors=True)
            gen(d)
            ok &= bench(name, label, a.n, a.rudder, helm, ["rel", d] + args, tmp)
        print("load average at end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
