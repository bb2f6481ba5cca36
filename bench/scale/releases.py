#!/usr/bin/env python3
"""bench/scale/releases.py - writes the N HelmRelease objects of the scale harness as a JSON list.

  releases.py --kind rudder --chart DIR --values-json FILE --releases N --interval 1m
  releases.py --kind rudder --chart DIR --releases N --interval 1m --repository NAME
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
flux: helm.toolkit.fluxcd.io/v2 with the chart from a HelmRepository named
NAME in each release's namespace, Helm's waits off unless --wait.
"""
import argparse
import json
import os
import re
import sys


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
    ap.add_argument("--releases", type=int, required=True)
    ap.add_argument("--interval", required=True)
    ap.add_argument("--repository", help="the HelmRepository in each release's namespace (flux: default scale; rudder: instead of inline)")
    ap.add_argument("--wait", action="store_true", help="flux: keep Helm's readiness waits (Flux's default)")
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
        if not a.values_json:
            sys.exit("releases.py: --kind rudder needs --values-json")
        with open(a.values_json) as f:
            chart_values = json.load(f)
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
    json.dump(objs, sys.stdout)


if __name__ == "__main__":
    main()
