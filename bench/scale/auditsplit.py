#!/usr/bin/env python3
"""bench/scale/auditsplit.py - every user's requests in each timed phase of a scale run.

    bench/scale/run.sh ... --audit-all --keep-logs DIR 2>&1 | tee RUN.log
    bench/scale/auditsplit.py --run-log RUN.log --run-log DIR/floor.log \
        --audit DIR/cluster-rudder/audit.log --releases N

The run logs' `window NAME START END` lines (measure.py's phases on run.sh's output, the floor's
rounds in DIR/floor.log; wall-clock seconds; --run-log may be given more than once) name the
windows; each request of the audit log (each auditID once, at its first event) is counted in the
windows its requestReceivedTimestamp falls in, by user, verb and resource (measure.audit_key, the
key the harness' own figures use). Printed per window: its length, then one line per user, verb and
resource with the count and the count per release, largest first; and per user the total. What a
window has more of than another is then read off side by side (e.g. rudder's upgrade against the
floor's: the harness' patches, the controller manager's ReplicaSets, the watches opened).
"""
import argparse
import collections
import json
import re
import sys

from measure import audit_key, audit_time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-log", required=True, action="append")
    ap.add_argument("--audit", required=True)
    ap.add_argument("--releases", type=int, required=True)
    ap.add_argument("--min", type=int, default=10, help="leave out lines with fewer requests (default 10)")
    a = ap.parse_args()

    windows = []
    for path in a.run_log:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r"\bwindow (\S+) (\d+\.\d+) (\d+\.\d+)$", line.strip())
                if m:
                    windows.append((m.group(1), float(m.group(2)), float(m.group(3))))
    if not windows:
        sys.exit(f"auditsplit: no `window NAME START END` line in {', '.join(a.run_log)} (a run of this tree's run.sh?)")

    counts = [collections.Counter() for _ in windows]
    seen = set()
    with open(a.audit, errors="replace") as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("auditID") in seen:
                continue
            seen.add(ev.get("auditID"))
            t = audit_time(ev["requestReceivedTimestamp"])
            key = audit_key(ev)
            for i, (_, t0, t1) in enumerate(windows):
                if t0 <= t < t1:
                    counts[i][key] += 1

    for (name, t0, t1), c in zip(windows, counts):
        print(f"# {name}: {t1 - t0:.1f} s, {sum(c.values())} requests ({sum(c.values()) / a.releases:.2f} per release)")
        users = collections.Counter()
        for (u, _, _), n in c.items():
            users[u] += n
        ranked = c.most_common()
        for u, n in users.most_common():
            print(f"{name} {u} total {n} {n / a.releases:.3f}")
            for (u2, verb, res), m in ranked:
                if u2 == u and m >= a.min:
                    print(f"{name} {u} {verb} {res} {m} {m / a.releases:.3f}")


if __name__ == "__main__":
    main()
