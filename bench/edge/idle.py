#!/usr/bin/env python3
"""bench/edge/idle.py - what an idle controller costs: CPU and resident memory over a window.

  idle.py --pid PID --seconds S --log LOG [--prefix P]

Samples the controller PID once a second for S seconds, with nothing changing in the cluster:
its CPU time (the run time of every thread, from /proc/PID/task/*/schedstat, in nanoseconds;
utime+stime in clock ticks as a cross-check), VmRSS and its parts (RssAnon, RssFile, RssShmem),
its wakeups (voluntary context switches), and at the end where the resident pages are, from
/proc/PID/smaps (the executable, each shared object, the heap, thread stacks, other anonymous
memory). Then sends it SIGUSR1 and reads the `msg=memory` line
it logs (loop/controller.c: informer caches, engine, chart cache, heap, RSS after malloc_trim)
from LOG. Prints `name value unit` lines; no thresholds.

/proc and the memory line are read with bench/scale's helpers (measure.py, memory.py).
"""
import argparse
import glob
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scale"))
import measure  # noqa: E402  (bench/scale/measure.py: /proc readers)
import memory  # noqa: E402  (bench/scale/memory.py: the msg=memory line)


def run_ns(pid):
    """CPU time of every thread of pid so far, in nanoseconds (schedstat's first field)."""
    total = 0
    for p in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(p) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between glob and open
    return total


def status_kib(pid):
    return {k: measure.proc_kib(pid, k) for k in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM")}


def rss_by_mapping(pid, exe):
    """Rss (KiB) of /proc/pid/smaps summed by what is mapped: the executable, each shared object by
    its file name, [heap], [stack], anonymous mappings (thread stacks, mmap'd buffers), the rest."""
    out, what = {}, None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and "-" in parts[0] and ":" in parts[3]:
                path = parts[5] if len(parts) > 5 else ""
                if path == exe:
                    what = "executable"
                elif path.startswith("/"):
                    what = os.path.basename(path).split(".so")[0]
                elif path in ("[heap]", "[stack]"):
                    what = path.strip("[]")
                elif path == "":
                    what = "anonymous"
                else:
                    what = "other"
            elif parts and parts[0] == "Rss:" and what:
                out[what] = out.get(what, 0) + int(parts[1])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--log", required=True, help="the controller's log (logfmt)")
    ap.add_argument("--prefix", default="edge_")
    a = ap.parse_args()
    pid, p = a.pid, a.prefix

    def out(name, value, unit):
        print(f"{p}{name} {value} {unit}", flush=True)

    def alive():
        if not os.path.exists(f"/proc/{pid}"):
            raise SystemExit(f"idle: the controller (pid {pid}) exited; see its log")

    alive()
    t0, ns0, cpu0 = time.monotonic(), run_ns(pid), measure.proc_cpu(pid)
    cs0 = measure.proc_kib(pid, "voluntary_ctxt_switches")
    rss = []
    end = t0 + a.seconds
    while True:
        alive()
        rss.append(measure.proc_kib(pid, "VmRSS"))
        now = time.monotonic()
        if now >= end:
            break
        time.sleep(min(1.0, end - now))
    t1, ns1, cpu1 = time.monotonic(), run_ns(pid), measure.proc_cpu(pid)
    cs1 = measure.proc_kib(pid, "voluntary_ctxt_switches")
    wall = t1 - t0
    st = status_kib(pid)
    out("idle_seconds", f"{wall:.1f}", "s")
    out("idle_cpu_seconds", f"{(ns1 - ns0) / 1e9:.4f}", "s")
    out("idle_cpu_percent", f"{100.0 * (ns1 - ns0) / 1e9 / wall:.4f}", "%")
    out("idle_cpu_ticks_seconds", f"{cpu1 - cpu0:.2f}", "s")
    out("idle_wakeups_per_second", f"{(cs1 - cs0) / wall:.2f}", "1/s")
    out("idle_rss_kib_min", min(rss), "KiB")
    out("idle_rss_kib_mean", f"{sum(rss) / len(rss):.0f}", "KiB")
    out("idle_rss_kib_max", max(rss), "KiB")
    out("idle_rss_mib_max", f"{max(rss) / 1024:.2f}", "MiB")
    out("rss_anon_kib", st["RssAnon"], "KiB")
    out("rss_file_kib", st["RssFile"], "KiB")
    out("rss_shmem_kib", st["RssShmem"], "KiB")
    out("peak_rss_kib", st["VmHWM"], "KiB")
    out("threads", len(glob.glob(f"/proc/{pid}/task/*")), "threads")
    for what, kib in sorted(rss_by_mapping(pid, os.readlink(f"/proc/{pid}/exe")).items(), key=lambda x: -x[1]):
        out("rss_kib_" + re.sub(r"[^A-Za-z0-9]+", "_", what), kib, "KiB")

    # The controller's own account of its memory, logged on SIGUSR1.
    size0 = os.path.getsize(a.log)
    os.kill(pid, signal.SIGUSR1)
    for _ in range(100):
        with open(a.log, errors="replace") as f:
            f.seek(size0)
            if "msg=memory" in f.read():
                break
        time.sleep(0.1)
    m = memory.memory_line(a.log)
    for k in ("informer_cache_bytes", "engine_bytes", "chart_cache_bytes", "events_bytes", "heap_in_use_bytes",
              "heap_free_bytes", "heap_mmap_bytes", "vm_rss_kib", "vm_rss_after_trim_kib", "objects", "records"):
        if k in m:
            out(f"memory_{k}", m[k], "B" if k.endswith("_bytes") else ("KiB" if k.endswith("_kib") else "objects"))


if __name__ == "__main__":
    main()
