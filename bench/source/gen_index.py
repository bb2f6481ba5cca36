#!/usr/bin/env python3
"""Writes a large, realistic Helm repository index.yaml (deterministic for a given size).

  bench/source/gen_index.py OUT [MB=26]

Charts named chart-0000.. with 25 versions each, every version carrying the fields a big
public repository's index has (description, keywords, maintainers, sources, annotations,
dependencies, urls, digest, created), laid out as `helm repo index` writes them. The charts
the benchmark asks for (chart-0007, chart-0400, chart-0700 when present) are ordinary ones."""
import hashlib
import sys

out = sys.argv[1]
target = int(float(sys.argv[2] if len(sys.argv) > 2 else 26) * 1000 * 1000)
VERSIONS = 25


def version_entry(c, v):
    name = "chart-%04d" % c
    ver = "%d.%d.%d" % (v // 10, v % 10, (c + v) % 7)
    if v % 9 == 4:
        ver += "-rc.%d" % (v % 3)
    digest = hashlib.sha256(("%s-%s" % (name, ver)).encode()).hexdigest()
    lines = [
        "  - annotations:",
        "      category: Infrastructure",
        "      images: |",
        "        - name: %s" % name,
        "          image: registry.example/library/%s:%s-debian-12-r%d" % (name, ver, v),
        "      licenses: Apache-2.0",
        "    apiVersion: v2",
        "    appVersion: %d.%d.%d" % (1 + v // 5, v % 5, c % 10),
        "    created: \"2026-%02d-%02dT%02d:%02d:%02d.%06d+00:00\"" % (1 + v % 12, 1 + c % 28, v % 24, c % 60, v % 60, c * 1000 + v),
        "    dependencies:",
        "    - name: common",
        "      repository: oci://registry.example/charts",
        "      tags:",
        "      - library-charts",
        "      version: 2.x.x",
        "    - condition: redis.enabled",
        "      name: redis",
        "      repository: oci://registry.example/charts",
        "      version: 19.x.x",
        "    description: %s is a generated chart for the index benchmark; this sentence stands in for the" % name,
        "      long descriptions real charts carry, which wrap over two or three lines in an index.",
        "    digest: %s" % digest,
        "    home: https://charts.example/%s" % name,
        "    icon: https://charts.example/icons/%s.svg" % name,
        "    keywords:",
        "    - %s" % name,
        "    - benchmark",
        "    - http",
        "    - web",
        "    kubeVersion: '>= 1.23.0-0'",
        "    maintainers:",
        "    - name: Example Maintainers",
        "      url: https://github.com/example/charts",
        "    name: %s" % name,
        "    sources:",
        "    - https://github.com/example/charts/tree/main/%s" % name,
        "    - https://github.com/example/containers/tree/main/%s" % name,
        "    urls:",
        "    - https://charts.example/%s-%s.tgz" % (name, ver),
        "    version: %s" % ver,
    ]
    return "\n".join(lines) + "\n"


size = 0
with open(out, "w") as f:
    f.write("apiVersion: v1\nentries:\n")
    c = 0
    while size < target:
        f.write("  chart-%04d:\n" % c)
        for v in range(VERSIONS):
            e = version_entry(c, v)
            f.write(e)
            size += len(e)
        c += 1
    f.write("generated: \"2026-12-01T00:00:00.000000000Z\"\n")
print("%s: %d charts, %d versions, %d bytes" % (out, c, c * VERSIONS, size), file=sys.stderr)
