#!/usr/bin/env python3
"""bench/scale/memory.py - the two halves of bench/scale/memory.sh that talk to the API server and read the logs.

  memory.py load   --server URL --ca F --cert F --key F --objects FILE --namespaces K
                   --controller-pid PID --interval SECONDS
  memory.py report --zero LOG --run LOG --releases N
  memory.py slope  --run LOG --releases N --run LOG --releases M

load: creates the namespaces scale-1..K and the HelmReleases of FILE (releases.py's
output) spread over them, waits until every one is Ready (one server-side table
list per second, the CRD's Ready column), then for a steady state: one resync
interval plus 5 s with nothing changed. It returns then; memory.sh sends the
SIGTERM. With no --objects (the run with 0 releases) it only creates the
namespaces and waits the same interval.

report: reads the `msg=memory` line each controller logged as it began to shut
down (loop/controller.c: informer caches, engine structures, heap, VmRSS and
VmHWM, all at the same moment), and prints `name value unit` lines.

slope: from the steady-state logs of two runs with N < M releases (memory.sh
--keep-logs keeps them as steady.log), what one more release costs: the
differences of RSS, informer cache and heap in use, divided by M - N. The
controller's fixed costs (connections, buffers, malloc's free lists), which
the report's per-release figures spread over N, cancel out.

The API client (measure.Kube, measure.parallel) is bench/scale/measure.py's.
"""
import argparse
import os
import re
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402  (bench/scale/measure.py: the harness' API client)


def log(msg):
    print("memory: " + msg, file=sys.stderr, flush=True)


def load(a):
    kube = measure.Kube(a.server, a.ca, a.cert, a.key)
    nss = [f"scale-{i + 1}" for i in range(a.namespaces)]
    for ns in nss:
        kube.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                 ok=(201, 409))

    def alive():
        if not os.path.exists(f"/proc/{a.controller_pid}"):
            raise SystemExit(f"memory: the controller (pid {a.controller_pid}) exited; see its log")

    objs = []
    if a.objects:
        import json
        with open(a.objects) as f:
            objs = json.load(f)
    plural = "/apis/rudder.dev/v1alpha1/"
    t0 = time.monotonic()
    if objs:
        for i, o in enumerate(objs):
            o["metadata"]["namespace"] = nss[i % len(nss)]
        log(f"creating {len(objs)} HelmReleases in {len(nss)} namespaces")
        measure.parallel(objs, lambda o: kube.req("POST", f"{plural}namespaces/{o['metadata']['namespace']}/helmreleases",
                                                  o, ok=(201,)), 8)
        polls = 0
        while True:
            alive()
            _, body = kube.req("GET", plural + "helmreleases?includeObject=None",
                               accept="application/json;as=Table;v=v1;g=meta.k8s.io")
            cols = [c["name"] for c in body["columnDefinitions"]]
            ready = cols.index("Ready")
            n = sum(1 for r in body.get("rows") or [] if r["cells"][ready] == "True")
            if n >= len(objs):
                break
            polls += 1
            if polls % 15 == 0:
                log(f"{n}/{len(objs)} Ready after {time.monotonic() - t0:.0f}s")
            if time.monotonic() - t0 > a.timeout:
                raise SystemExit(f"memory: only {n} of {len(objs)} Ready after {a.timeout:.0f}s; giving up")
            time.sleep(1.0)
        print(f"{a.prefix}ready_seconds {time.monotonic() - t0:.1f} s", flush=True)
    window = a.interval + 5.0
    log(f"{len(objs)} Ready; waiting one resync interval ({window:.0f}s) for a steady state")
    end = time.monotonic() + window
    while time.monotonic() < end:
        alive()
        time.sleep(min(1.0, max(0.0, end - time.monotonic())))
    print(f"{a.prefix}rss_kib_before_sigterm {measure.proc_kib(a.controller_pid, 'VmRSS')} KiB", flush=True)


def memory_line(path):
    """The fields of the last `msg=memory` line of a controller log, as ints."""
    found = None
    with open(path, errors="replace") as f:
        for line in f:
            if 'msg=memory' in line:
                found = line
    if not found:
        raise SystemExit(f"memory: no msg=memory line in {path} (did the controller get its SIGTERM?)")
    out = {}
    for tok in shlex.split(found):
        k, _, v = tok.partition("=")
        if re.fullmatch(r"[0-9]+", v):
            out[k] = int(v)
    return out


def report(a):
    z, r, n = memory_line(a.zero), memory_line(a.run), a.releases

    def out(name, value, unit):
        if isinstance(value, float):
            value = f"{value:.1f}"
        print(f"rudder_memory_{name} {value} {unit}", flush=True)

    out("releases", n, "count")
    if r.get("objects") != n:
        log(f"WARNING: the controller's cache held {r.get('objects')} HelmReleases, expected {n}")
    for name, line in (("zero", z), ("steady", r)):
        if line.get("reconciles_in_flight"):
            log(f"WARNING: {name}: {line['reconciles_in_flight']} reconciles were in flight at the SIGTERM")
    out("zero_rss_kib", z["vm_rss_kib"], "KiB")
    out("zero_peak_rss_kib", z["vm_hwm_kib"], "KiB")
    out("zero_heap_in_use_bytes", z["heap_in_use_bytes"], "B")
    out("zero_informer_cache_bytes", z["informer_cache_bytes"], "B")
    out("rss_kib", r["vm_rss_kib"], "KiB")
    if "vm_rss_after_trim_kib" in r:
        out("rss_after_malloc_trim_kib", r["vm_rss_after_trim_kib"], "KiB")
    out("peak_rss_kib", r["vm_hwm_kib"], "KiB")
    for k in ("informer_cache_bytes", "objects_cache_bytes", "records_cache_bytes", "engine_bytes", "memo_bytes",
              "index_bytes", "queue_bytes", "events_bytes", "chart_cache_bytes", "heap_in_use_bytes",
              "heap_free_bytes", "heap_mmap_bytes"):
        if k in r:  # events_bytes: controllers from before it was logged have none
            out(k, r[k], "B")
    out("reconciles_in_flight", r["reconciles_in_flight"], "count")
    rss, hwm, zrss = r["vm_rss_kib"] * 1024, r["vm_hwm_kib"] * 1024, z["vm_rss_kib"] * 1024
    cache = r["informer_cache_bytes"]
    out("informer_cache_bytes_per_release", cache / n, "B")
    out("objects_cache_bytes_per_release", r["objects_cache_bytes"] / n, "B")
    out("records_cache_bytes_per_release", r["records_cache_bytes"] / n, "B")
    out("engine_bytes_per_release", r["engine_bytes"] / n, "B")
    if "events_bytes" in r:
        out("events_bytes_per_release", (r["events_bytes"] - z.get("events_bytes", 0)) / n, "B")
    # The figure of the issue: what the controller's RSS holds per release beyond the informer
    # cache, above what the same controller holds with 0 releases.
    out("rss_per_release_beyond_cache_bytes", (rss - cache - zrss) / n, "B")
    out("rss_per_release_bytes", (rss - zrss) / n, "B")
    out("peak_rss_per_release_beyond_cache_bytes", (hwm - cache - zrss) / n, "B")
    out("heap_in_use_per_release_beyond_cache_bytes",
        (r["heap_in_use_bytes"] - cache - z["heap_in_use_bytes"]) / n, "B")


def slope(a):
    if len(a.run) != 2 or len(a.releases) != 2 or a.releases[0] >= a.releases[1]:
        raise SystemExit("memory: slope wants --run LOG --releases N --run LOG --releases M with N < M")
    lo, hi = memory_line(a.run[0]), memory_line(a.run[1])
    d = a.releases[1] - a.releases[0]

    def out(name, value, unit):
        print(f"rudder_memory_slope_{name} {value:.1f} {unit}", flush=True)

    rss = (hi["vm_rss_kib"] - lo["vm_rss_kib"]) * 1024
    cache = hi["informer_cache_bytes"] - lo["informer_cache_bytes"]
    print(f"rudder_memory_slope_releases {a.releases[0]}..{a.releases[1]} count", flush=True)
    out("rss_per_release_bytes", rss / d, "B")
    out("informer_cache_per_release_bytes", cache / d, "B")
    out("rss_per_release_beyond_cache_bytes", (rss - cache) / d, "B")
    out("heap_in_use_per_release_beyond_cache_bytes",
        (hi["heap_in_use_bytes"] - lo["heap_in_use_bytes"] - cache) / d, "B")
    out("engine_per_release_bytes", (hi["engine_bytes"] - lo["engine_bytes"]) / d, "B")
    if "events_bytes" in hi and "events_bytes" in lo:
        out("events_per_release_bytes", (hi["events_bytes"] - lo["events_bytes"]) / d, "B")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lp = sub.add_parser("load")
    lp.add_argument("--server", required=True)
    lp.add_argument("--ca", required=True)
    lp.add_argument("--cert", required=True)
    lp.add_argument("--key", required=True)
    lp.add_argument("--objects", help="releases.py's JSON list (none: 0 releases)")
    lp.add_argument("--namespaces", type=int, default=4)
    lp.add_argument("--controller-pid", type=int, required=True)
    lp.add_argument("--interval", type=float, required=True, help="the releases' spec.interval, seconds")
    lp.add_argument("--timeout", type=float, default=3600.0)
    lp.add_argument("--prefix", default="", help="put before every figure's name")
    rp = sub.add_parser("report")
    rp.add_argument("--zero", required=True, help="the log of the controller run with 0 releases")
    rp.add_argument("--run", required=True, help="the log of the controller run with N releases")
    rp.add_argument("--releases", type=int, required=True)
    sp = sub.add_parser("slope")
    sp.add_argument("--run", action="append", required=True, help="a steady.log (twice)")
    sp.add_argument("--releases", type=int, action="append", required=True, help="its release count (twice)")
    a = ap.parse_args()
    {"load": load, "report": report, "slope": slope}[a.cmd](a)


if __name__ == "__main__":
    main()
