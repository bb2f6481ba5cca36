#!/usr/bin/env python3
"""Renders charts N times with `rudder template` and with the pinned `helm template` in the same
run and prints wall time (median of N direct runs) and peak memory (max RSS of each process over
N more runs under /usr/bin/time, see run_once) side by side.

Charts: a generated large chart (200 templates over 4 subcharts, deep values, helpers, a
library chart) and the largest test chart (tests/charts/huge-values with its ~7 MB values file).
No thresholds: the figures are printed, nothing is asserted.

Usage: bench/template/chart_bench.py [-n N] [--rudder PATH] [--helm PATH] [--keep DIR]
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def gen_chart(d, ntemplates=200, nsubs=4, depth=12):
    """Writes a chart with ntemplates templates spread over the top chart and nsubs subcharts."""
    def w(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    deps = "".join("  - name: sub%d\n    version: 1.0.0\n" % i for i in range(nsubs))
    deps += "  - name: lib\n    version: 1.0.0\n"
    w(d + "/Chart.yaml", "apiVersion: v2\nname: big\nversion: 1.0.0\ndependencies:\n" + deps)
    # deep values: a chain `depth` levels deep plus wide lists and maps
    deep = "leaf: bottom\n"
    for i in reversed(range(depth)):
        deep = "l%d:\n" % i + "".join("  " + line + "\n" for line in deep.splitlines()) + "n%d: %d\n" % (i, i)
    vals = "global:\n  env: prod\n  registry: registry.example.com\n"
    vals += "deep:\n" + "".join("  " + line + "\n" for line in deep.splitlines())
    vals += "services:\n" + "".join(
        "  - name: svc-%03d\n    port: %d\n    replicas: %d\n    labels: {tier: t%d, team: team-%d}\n"
        "    env: {A: \"1\", B: \"two\", C: \"true\"}\n" % (i, 8000 + i, i % 5 + 1, i % 3, i % 7) for i in range(100))
    vals += "config:\n" + "".join("  key%03d: value-%03d\n" % (i, i) for i in range(300))
    w(d + "/values.yaml", vals)
    w(d + "/charts/lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 1.0.0\ntype: library\n")
    w(d + "/charts/lib/templates/_helpers.tpl", """{{- define "lib.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | trunc 63 | trimSuffix "-" }}
env: {{ .Values.global.env | default "dev" | quote }}
{{- end -}}
{{- define "lib.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
""")
    tpl = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "lib.fullname" . }}-%(i)d
  labels:
{{ include "lib.labels" . | indent 4 }}
  annotations:
    checksum/config: {{ toJson .Values | sha256sum }}
spec:
  replicas: {{ add 1 (mod %(i)d 3) }}
  template:
    spec:
      containers:
{{- range $j, $s := .Values.services }}
{{- if lt $j 10 }}
        - name: {{ $s.name }}
          image: "{{ $.Values.global.registry }}/{{ $s.name }}:{{ $.Chart.Version }}"
          ports:
            - containerPort: {{ $s.port }}
          env:
{{- range $k, $v := $s.env }}
            - name: {{ $k }}
              value: {{ $v | quote }}
{{- end }}
{{- end }}
{{- end }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "lib.fullname" . }}-cfg-%(i)d
data:
{{- range $k, $v := .Values.config }}
  {{ $k }}: {{ $v | upper | quote }}
{{- end }}
  deep: |
{{ toYaml .Values.deep | indent 4 }}
"""
    charts = [d] + [d + "/charts/sub%d" % s for s in range(nsubs)]
    for s in range(nsubs):
        sd = charts[s + 1]
        w(sd + "/Chart.yaml", "apiVersion: v2\nname: sub%d\nversion: 1.0.0\ndependencies:\n"
          "  - name: lib\n    version: 1.0.0\n" % s)
        w(sd + "/values.yaml", vals.replace("global:\n  env: prod\n  registry: registry.example.com\n", ""))
        shutil.copytree(d + "/charts/lib", sd + "/charts/lib", dirs_exist_ok=True)
    for i in range(ntemplates):
        w(charts[i % len(charts)] + "/templates/t%03d.yaml" % i, tpl % {"i": i})


def run_once(argv, rss_file=None):
    """Runs argv; returns (wall seconds, max RSS KiB or None).

    The peak RSS must not come from wait4 on a child of this Python process: Linux carries the
    pre-exec memory of the forked (or vforked) Python image into the child's ru_maxrss, so every
    process would look at least as big as the interpreter (~14 MiB). With rss_file the command runs
    under /usr/bin/time, which forks from a ~1 MiB image, and its %M (the command's own ru_maxrss)
    is read back. Wall time is only taken from direct runs (the launcher adds ~2 ms)."""
    if rss_file:
        argv = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + argv
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, _ = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("FAIL: %s exited %d:\n%s" % (" ".join(argv), code, err[:2000]))
    rss = None
    if rss_file:
        with open(rss_file) as f:
            rss = int(f.read().split()[-1])
    return wall, rss


def bench(name, n, rudder, helm, args, tmp):
    res = {}
    rss_file = os.path.join(tmp, "maxrss")
    for tool, argv in (("rudder", [rudder, "template"] + args), ("helm", [helm, "template"] + args)):
        run_once(argv)  # warm the page cache
        walls, rss = [], []
        for _ in range(n):
            walls.append(run_once(argv)[0])
            rss.append(run_once(argv, rss_file)[1])
        res[tool] = (statistics.median(walls), sum(walls), max(rss))
    r, h = res["rudder"], res["helm"]
    print("%-28s %6s %12s %12s %10s" % (name, "", "rudder", "helm", "helm/rudder"))
    print("%-28s %6s %10.1fms %10.1fms %9.1fx" % ("", "median", r[0] * 1e3, h[0] * 1e3, h[0] / r[0]))
    print("%-28s %6s %11.2fs %11.2fs %9.1fx" % ("", "total", r[1], h[1], h[1] / r[1]))
    print("%-28s %6s %9.1fMiB %9.1fMiB %9.1fx" % ("", "maxRSS", r[2] / 1024, h[2] / 1024, h[2] / r[2]))
    sys.stdout.flush()


def arg_parser(runs, keep_help):
    """The options both chart benchmarks take: -n, --rudder, --helm, --keep."""
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=runs, help="runs per tool and chart (default %d)" % runs)
    ap.add_argument("--rudder", default=os.path.join(ROOT, "build", "rudder"))
    ap.add_argument("--helm", default=None, help="default: $(tests/cluster/build --print-bin-dir)/helm")
    ap.add_argument("--keep", default=None, help=keep_help)
    return ap


def find_tools(rudder, helm):
    """The helm to run (given, or the pinned one from tests/cluster/build); exits unless rudder,
    helm and /usr/bin/time are there."""
    if not helm:
        bindir = subprocess.run([os.path.join(ROOT, "tests/cluster/build"), "--print-bin-dir"],
                                capture_output=True, text=True).stdout.strip()
        helm = os.path.join(bindir, "helm")
    for tool in (rudder, helm, "/usr/bin/time"):
        if not os.access(tool, os.X_OK):
            sys.exit("FAIL: %s is missing (build rudder; run tests/cluster/build for helm)" % tool)
    return helm


def main():
    a = arg_parser(10, "write the generated chart here and keep it").parse_args()
    helm = find_tools(a.rudder, a.helm)
    tmp = tempfile.mkdtemp(prefix="chart-bench-")
    try:
        env_home = os.path.join(tmp, "home")
        os.makedirs(env_home)
        for k in ("HOME", "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
            os.environ[k] = env_home
        big = a.keep or os.path.join(tmp, "big")
        gen_chart(big)
        subprocess.run([os.path.join(ROOT, "tests/charts/huge-values.gen"), tmp], check=True)
        print("renders per tool: %d; helm: %s; rudder: %s" % (a.n, helm, a.rudder))
        bench("generated (200 templates)", a.n, a.rudder, helm, ["rel", big], tmp)
        bench("huge-values (7 MB values)", a.n, a.rudder, helm,
              ["rel", os.path.join(ROOT, "tests/charts/huge-values"), "-f", os.path.join(tmp, "huge.yaml")], tmp)
        bench("umbrella (test chart)", a.n, a.rudder, helm,
              ["rel", os.path.join(ROOT, "tests/charts/umbrella")] +
              [l.replace("$DIR", os.path.join(ROOT, "tests/charts")) for l in
               open(os.path.join(ROOT, "tests/charts/umbrella.args")).read().split("\n") if l], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
