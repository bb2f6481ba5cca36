#!/usr/bin/env python3
"""bench/scale/releases.py - writes the N HelmRelease objects of the scale harness as a JSON list.

  releases.py --kind rudder --chart DIR --values-json FILE --releases N --interval 1m
  releases.py --kind rudder --chart DIR --releases N --interval 1m --repository NAME
  releases.py --kind rudder --chart DIR --rudder BIN --releases N --interval 1m
  releases.py --kind flux   --chart DIR --releases N --interval 1m --repository NAME

Release i is named app-NNNNN (five digits: bench/scale/measure.py finds the
names in the audit log's request URIs) and gets a few values of its own, as a
user's release would: an image tag, a pod annotation and an Ingress host.
metadata.namespace is left out; measure.py spreads the releases over the
namespaces.

rudder: the chart travels inline (spec.chart.inline: every file of
DIR/templates, the chart's values as JSON, name and versions from Chart.yaml);
with --repository, the chart comes from the rudder.dev HelmRepository NAME in
each release's namespace (spec.chart.repository, with the name and the exact
version of DIR/Chart.yaml).
The chart's values as JSON come from --values-json FILE, or with --rudder BIN
from `BIN template` of a copy of the chart whose one template prints them
(YAML read as Helm reads it, by the project's own renderer), which is what
run.sh writes to its values.json.
flux: helm.toolkit.fluxcd.io/v2 with the chart from a HelmRepository named
NAME in each release's namespace, Helm's waits off unless --wait.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def chart_meta(path):
    """name, version and appVersion from a Chart.yaml (plain `key: value` lines only)."""
    meta = {}
    with open(path) as f:
        for line in f:
            m = re.match(r'^(name|version|appVersion):\s*"?([^"#\n]*?)"?\s*$', line)
            if m:
                meta[m.group(1)] = m.group(2)
    for k in ("name", "version"):
        if k not in meta:
            sys.exit(f"releases.py: {path} has no {k}")
    return meta


def chart_values_json(rudder, chart):
    """The chart's values.yaml as JSON, read by `rudder template` (sigs.k8s.io/yaml's reading)."""
    with tempfile.TemporaryDirectory(prefix="rudder-values-") as d:
        os.makedirs(os.path.join(d, "templates"))
        for f in ("Chart.yaml", "values.yaml"):
            shutil.copy(os.path.join(chart, f), d)
        with open(os.path.join(d, "templates", "values.json"), "w") as f:
            f.write('{"kind":"ConfigMap","data":{"values":{{ toJson .Values | toJson }}}}\n')
        out = subprocess.run([rudder, "template", "values", d], check=True, capture_output=True, text=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("{"))
    return json.loads(json.loads(line)["data"]["values"])


def user_values(i):
    return {
        "image": {"tag": f"2.4.{i % 10}"},
        "podAnnotations": {"bench.rudder.dev/index": str(i)},
        "ingress": {"host": f"app-{i:05d}.scale.example.invalid"},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=("rudder", "flux"), required=True)
    ap.add_argument("--chart", required=True)
    ap.add_argument("--values-json")
    ap.add_argument("--rudder", help="instead of --values-json: read the chart's values with this rudder binary")
    ap.add_argument("--releases", type=int, required=True)
    ap.add_argument("--interval", required=True)
    ap.add_argument("--repository", help="the HelmRepository in each release's namespace (flux: default scale; rudder: instead of inline)")
    ap.add_argument("--wait", action="store_true", help="flux: keep Helm's readiness waits (Flux's default)")
    ap.add_argument("--drift", choices=("enabled", "warn", "disabled"), help="spec.driftDetection.mode of every release")
    a = ap.parse_args()
    if a.releases > 99999:
        sys.exit("releases.py: at most 99999 releases (names are app-NNNNN)")
    meta = chart_meta(os.path.join(a.chart, "Chart.yaml"))
    objs = []
    if a.kind == "rudder" and a.repository:
        chart = {"repository": {"name": a.repository}, "name": meta["name"], "version": meta["version"]}
        for i in range(a.releases):
            objs.append({
                "apiVersion": "rudder.dev/v1alpha1",
                "kind": "HelmRelease",
                "metadata": {"name": f"app-{i:05d}"},
                "spec": {"interval": a.interval, "chart": chart, "values": user_values(i)},
            })
    elif a.kind == "rudder":
        if a.values_json:
            with open(a.values_json) as f:
                chart_values = json.load(f)
        elif a.rudder:
            chart_values = chart_values_json(a.rudder, a.chart)
        else:
            sys.exit("releases.py: --kind rudder needs --values-json or --rudder")
        tdir = os.path.join(a.chart, "templates")
        templates = {}
        for n in sorted(os.listdir(tdir)):
            with open(os.path.join(tdir, n)) as f:
                templates[n] = f.read()
        inline = {"chartName": meta["name"], "chartVersion": meta["version"], "templates": templates, "values": chart_values}
        if "appVersion" in meta:
            inline["appVersion"] = meta["appVersion"]
        for i in range(a.releases):
            objs.append({
                "apiVersion": "rudder.dev/v1alpha1",
                "kind": "HelmRelease",
                "metadata": {"name": f"app-{i:05d}"},
                "spec": {"interval": a.interval, "chart": {"inline": inline}, "values": user_values(i)},
            })
    else:
        for i in range(a.releases):
            objs.append({
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": f"app-{i:05d}"},
                "spec": {
                    "interval": a.interval,
                    "chart": {"spec": {
                        "chart": meta["name"],
                        "version": meta["version"],
                        "sourceRef": {"kind": "HelmRepository", "name": a.repository or "scale"},
                        "interval": a.interval,
                    }},
                    "values": user_values(i),
                },
            })
            if not a.wait:
                objs[-1]["spec"]["install"] = {"disableWait": True}
                objs[-1]["spec"]["upgrade"] = {"disableWait": True}
    if a.drift:
        for o in objs:
            o["spec"]["driftDetection"] = {"mode": a.drift}
    json.dump(objs, sys.stdout)


if __name__ == "__main__":
    main()
