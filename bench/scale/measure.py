#!/usr/bin/env python3
"""bench/scale/measure.py - the measuring half of bench/scale/run.sh.

run.sh starts the control plane and the controller(s) under test; this
program creates the N releases, watches them become Ready, waits through one
resync interval, deletes them, and prints what each phase cost as
`name value unit` lines on stdout (progress goes to stderr).

Figures come from the kernel and the API server only:
- wall times from this program's clock; readiness from one list of all
  HelmReleases per second (the request `kubectl get helmreleases -A -o json`
  makes), never one request per release;
- CPU seconds (utime+stime) and RSS (VmRSS, VmHWM) from /proc/PID;
- the controllers' API requests from the API server's audit log, which the
  harness' policy (audit-policy.yaml) fills with one event per request of the
  controllers' users and nothing else; each auditID is counted once.

The harness talks to the API server with its own small client (threads with
one kept-alive TLS connection each, as the admin user, which the audit policy
does not log), so that creating 1,000 objects is not itself the bottleneck.
"""
import argparse
import signal
import collections
import datetime
import subprocess
import http.client
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import apiprof  # bench/scale/apiprof.py, beside this file

HZ = os.sysconf("SC_CLK_TCK")


def log(msg):
    print("measure: " + msg, file=sys.stderr, flush=True)


# --- API client -------------------------------------------------------------


class Kube:
    def __init__(self, server, ca, cert, key):
        u = urllib.parse.urlsplit(server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.local = threading.local()
        self.bytes_in = 0
        self.lock = threading.Lock()

    def _conn(self):
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)
            self.local.conn = c
        return c

    def req(self, method, path, body=None, ok=(200, 201, 202), ctype="application/json", accept="application/json"):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": accept}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in range(5):
            c = self._conn()
            try:
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                raw = r.read()
            except (OSError, http.client.HTTPException) as e:
                c.close()
                self.local.conn = None
                if attempt == 4:
                    raise
                log(f"{method} {path}: {e}; retrying")
                time.sleep(0.5)
                continue
            with self.lock:
                self.bytes_in += len(raw)
            if r.status == 429 or r.status >= 500:
                time.sleep(float(r.getheader("Retry-After") or 1))
                continue
            if r.status not in ok:
                raise RuntimeError(f"{method} {path}: HTTP {r.status}: {raw[:300]!r}")
            return r.status, (json.loads(raw) if raw else None)
        raise RuntimeError(f"{method} {path}: gave up after retries")


def parallel(items, fn, threads):
    """Run fn(item) on `threads` threads; returns when all are done; re-raises the first error."""
    it = iter(items)
    lock = threading.Lock()
    errors = []

    def worker():
        while not errors:
            with lock:
                try:
                    x = next(it)
                except StopIteration:
                    return
            try:
                fn(x)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
                return

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


# --- /proc ------------------------------------------------------------------


def proc_cpu(pid, gone=None):
    """utime + stime of pid; `gone` when pid has exited and was reaped (else the error)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        if gone is None:
            raise
        return gone
    return (int(rest[11]) + int(rest[12])) / HZ  # utime, stime


def proc_kib(pid, key, gone=None):
    """A /proc/PID/status figure in KiB; `gone` when pid has exited and was reaped (else the error)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        if gone is None:
            raise
        return gone
    return 0


# --- audit log --------------------------------------------------------------


def audit_time(ts):
    """An audit event's RFC 3339 timestamp, in epoch seconds."""
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def audit_key(ev):
    """An audit event's (user, verb, resource): the subresource after a slash; the URI's path for a
    request that names no resource (/version, discovery)."""
    ref = ev.get("objectRef") or {}
    res = ref.get("resource")
    if res:
        if ref.get("subresource"):
            res += "/" + ref["subresource"]
    else:
        res = urllib.parse.urlsplit(ev.get("requestURI", "")).path or "?"
    return ev.get("user", {}).get("username", ""), ev.get("verb", "?"), res


class Audit:
    """Reads the audit log incrementally; each auditID is counted once."""

    def __init__(self, path, users, name_re):
        self.path, self.users, self.name_re = path, set(users), re.compile(name_re)
        self.pos = 0
        self.seen = set()
        self.buf = b""
        self.last_received = None  # requestReceivedTimestamp (epoch seconds) of the newest request read
        # Per release name: (received, answered, verb, resource) of every request naming it, for waits().
        self.timeline = collections.defaultdict(list)

    def take(self):
        """Requests logged since the last call: Counter of (user, verb, resource), Counter of release names
        (each request counts once for each release its URI names)."""
        counts = collections.Counter()
        names = collections.Counter()
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self.pos:
                    # Rotated (the server's log writer rotates at its maxsize):
                    # what was written between the last read and the rotation is lost.
                    log("WARNING: the audit log was rotated; request counts from here on are short")
                    self.pos, self.buf = 0, b""
                f.seek(self.pos)
                data = f.read()
                self.pos = f.tell()
        except FileNotFoundError:
            return counts, names
        data = self.buf + data
        lines = data.split(b"\n")
        self.buf = lines.pop()  # an unfinished line waits for the next call
        for line in lines:
            if not line.strip():
                continue
            ev = json.loads(line)
            user = ev.get("user", {}).get("username", "")
            if user not in self.users or ev["auditID"] in self.seen:
                continue
            self.seen.add(ev["auditID"])
            ts = ev.get("requestReceivedTimestamp")
            if ts:
                t = audit_time(ts)
                if self.last_received is None or t > self.last_received:
                    self.last_received = t
            ref = ev.get("objectRef") or {}
            key = audit_key(ev)
            res = key[2]
            counts[key] += 1
            uri_names = set(self.name_re.findall(urllib.parse.unquote(ev.get("requestURI", ""))))
            for m in uri_names:
                names[m] += 1
            # The request's release: named in its URI, or (a create) in its object reference's name.
            owner = uri_names or set(self.name_re.findall(ref.get("name") or ""))
            st = ev.get("stageTimestamp")
            if ts and st and len(owner) == 1:
                t1 = audit_time(st)
                self.timeline[owner.pop()].append((t, t1, ev.get("verb", "?"), res))
        return counts, names

    def waits(self, since):
        """Per release: seconds from the answer of its last object apply (a patch of anything but its
        HelmRelease) to its release record's update (which follows the readiness wait), for the
        first such update received after since (epoch seconds)."""
        out = []
        for evs in self.timeline.values():
            last = None
            for t0, t1, verb, res in sorted(evs):
                if t0 < since:
                    continue
                if verb == "patch" and not res.startswith("helmreleases"):
                    last = t1
                elif verb == "update" and res == "secrets" and last is not None:
                    out.append(t0 - last)
                    break
        return out


# --- the run ------------------------------------------------------------------


class Out:
    def __init__(self, prefix):
        self.prefix = prefix

    def __call__(self, name, value, unit):
        if isinstance(value, float):
            value = f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
        print(f"{self.prefix}_{name} {value} {unit}", flush=True)


def ready_of(item, ready_reason_ok=None):
    """True once the object's Ready condition is True for its current generation."""
    st = item.get("status") or {}
    gen = item["metadata"].get("generation")
    if st.get("observedGeneration") != gen:
        return False
    for c in st.get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True" and c.get("observedGeneration", gen) == gen
    return False


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return 0.0
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peer", required=True, help="name printed before every figure (rudder, flux)")
    ap.add_argument("--server", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--releases", type=int, required=True)
    ap.add_argument("--namespaces", type=int, required=True)
    ap.add_argument("--objects", required=True, help="JSON file: a list of HelmRelease objects, without metadata.namespace")
    ap.add_argument("--group-version", required=True, help="e.g. rudder.dev/v1alpha1")
    ap.add_argument("--controller-pid", action="append", required=True, metavar="NAME=PID")
    ap.add_argument("--apiserver-pid", type=int, required=True)
    ap.add_argument("--etcd-pid", type=int, required=True)
    ap.add_argument("--plane-pid", action="append", default=[], metavar="NAME=PID",
                    help="another process of the control plane whose CPU counts in the run's total (repeatable)")
    ap.add_argument("--audit-log", required=True)
    ap.add_argument("--interval", type=float, required=True, help="the releases' spec.interval, seconds")
    ap.add_argument("--resync-slack", type=float, default=5.0)
    ap.add_argument("--create-threads", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=3600.0, help="give up waiting after this long (a safety, not a threshold)")
    ap.add_argument("--poll", choices=("table", "json"), default="table",
                    help="list the releases as the server-side table (Ready column; default) or as whole objects (-o json)")
    ap.add_argument("--chart-objects", type=int, default=4, help="objects each release applies")
    ap.add_argument("--drift-edits", type=int, default=0,
                    help="after the resync window: scale this many releases' Deployments by hand, one at a time, "
                         "and time each until the controller has put replicas back (drift detection on)")
    ap.add_argument("--save-release", metavar="DIR",
                    help="after the install: write release 0's record Secret (DIR/record.json) and its HelmRelease "
                         "(DIR/release.json) there, as bench/scale/floor takes them; after the upgrade its "
                         "HelmRelease again (DIR/release-upgraded.json)")
    ap.add_argument("--upgrade", action="store_true",
                    help="after the resync window (and drift): change every release's values (a new image tag, "
                         "one merge patch of spec.values each) and time each until it is Ready at its new generation")
    ap.add_argument("--restart-cmd", metavar="FILE",
                    help='JSON {"argv": [...], "log": PATH}: after the upgrade, stop the (first) controller with '
                         "--restart-signal and start it again with this command line, its output appended to PATH; "
                         "time until caught up, and the requests (writes above all) it sends")
    ap.add_argument("--restart-signal", choices=("KILL", "TERM"), default="KILL")
    ap.add_argument("--perf", metavar="FILE",
                    help="record the (first) controller with `perf record -g` from the first create until all are Ready "
                         "into FILE, and over the upgrade into FILE.upgrade, then print each flat profile (perf report) "
                         "on stderr and to FILE.txt, FILE.upgrade.txt")
    ap.add_argument("--apiserver-profile", metavar="PREFIX",
                    help="take the API server's CPU profile (its /debug/pprof/profile) over the first "
                         "--apiserver-profile-seconds of the install and of the upgrade, into PREFIX.install.pprof "
                         "and PREFIX.upgrade.pprof (the admin client's credentials)")
    ap.add_argument("--apiserver-profile-seconds", type=int, default=20)
    ap.add_argument("--restart-quiet", type=float, default=10.0,
                    help="restart: caught up once /readyz answers 200 and no request has come for this long")
    a = ap.parse_args()
    # run.sh stops this program with SIGTERM: leave through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    restarted = {}  # "proc": the controller this program started (stopped on every exit path)
    try:
        run(a, restarted)
    finally:
        proc = restarted.get("proc")
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def proc_gone(pid):
    """True once pid has exited (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


def run(a, restarted):

    out = Out(a.peer)
    kube = Kube(a.server, a.ca, a.cert, a.key)
    ctrl = []
    for spec in a.controller_pid:
        n, p = spec.split("=", 1)
        ctrl.append((n, int(p)))
    users = [n for n, _ in ctrl]
    audit = Audit(a.audit_log, users, r"app-\d{5}")
    objs = json.load(open(a.objects))
    assert len(objs) == a.releases
    plural = "/apis/" + a.group_version + "/"
    nss = [f"scale-{i + 1}" for i in range(a.namespaces)]
    for i, o in enumerate(objs):
        o["metadata"]["namespace"] = nss[i % len(nss)]

    def alive():
        for n, p in ctrl:
            if not os.path.exists(f"/proc/{p}"):
                raise SystemExit(f"measure: the controller {n} (pid {p}) exited; see its log")

    def snap():
        time.sleep(0.3)  # let the API server write the events of requests just answered
        c, names = audit.take()
        return {
            "t": time.monotonic(),
            "ctrl_cpu": {n: proc_cpu(p, 0.0) for n, p in ctrl},
            "api_cpu": proc_cpu(a.apiserver_pid),
            "etcd_cpu": proc_cpu(a.etcd_pid),
            "plane_cpu": sum(proc_cpu(int(x.split("=", 1)[1]), 0.0) for x in a.plane_pid),
            "harness_cpu": sum(os.times()[:2]),
            "rss": {n: proc_kib(p, "VmRSS", 0) for n, p in ctrl},
            "hwm": {n: proc_kib(p, "VmHWM", 0) for n, p in ctrl},
            "req": c,
            "names": names,
        }

    def report(phase, s0, s1, n_rel, detail=True):
        reqs = s1["req"]
        total = sum(reqs.values())
        out(f"{phase}_requests", total, "requests")
        out(f"{phase}_requests_per_release", total / n_rel, "requests")
        if len(users) > 1:
            for u in users:
                out(f"{phase}_requests_{u}", sum(v for (uu, _, _), v in reqs.items() if uu == u), "requests")
        if detail:
            by = collections.Counter()
            for (u, verb, res), v in reqs.items():
                by[(u if len(users) > 1 else None, verb, res)] += v
            for (u, verb, res), v in sorted(by.items(), key=lambda kv: (-kv[1], kv[0][1:])):
                nm = f"{phase}_requests_by." + (u + "." if u else "") + verb + "." + res.replace("/", "_").strip("_")
                out(nm, v, "requests")
        cc = sum(s1["ctrl_cpu"].values()) - sum(s0["ctrl_cpu"].values())
        out(f"{phase}_controller_cpu_seconds", cc, "s")
        out(f"{phase}_controller_cpu_ms_per_release", 1000 * cc / n_rel, "ms")
        if len(users) > 1:
            for n, _ in ctrl:
                out(f"{phase}_controller_cpu_seconds_{n}", s1["ctrl_cpu"][n] - s0["ctrl_cpu"][n], "s")
        ac = s1["api_cpu"] - s0["api_cpu"]
        out(f"{phase}_apiserver_cpu_seconds", ac, "s")
        out(f"{phase}_apiserver_cpu_ms_per_release", 1000 * ac / n_rel, "ms")
        ec = s1["etcd_cpu"] - s0["etcd_cpu"]
        out(f"{phase}_etcd_cpu_seconds", ec, "s")
        # Everything the run spends: the controller(s), the API server, etcd, the rest of the control
        # plane (controller manager, scheduler, kwok) and this harness.
        pc = s1["plane_cpu"] - s0["plane_cpu"]
        hc = s1["harness_cpu"] - s0["harness_cpu"]
        out(f"{phase}_plane_cpu_seconds", pc, "s")
        out(f"{phase}_harness_cpu_seconds", hc, "s")
        tot = cc + ac + ec + pc + hc
        out(f"{phase}_total_cpu_seconds", tot, "s")
        if tot > 0:
            out(f"{phase}_controller_cpu_share_percent", 100 * cc / tot, "%")
        for n, _ in ctrl:
            sfx = "" if len(ctrl) == 1 else "_" + n
            out(f"{phase}_controller_rss_kib{sfx}", s1["rss"][n], "KiB")

    def waits_out(phase, w):
        """The readiness wait per release as the audit log shows it (Audit.waits): what the cluster's own
        controllers take to make the objects ready, not a request of the controller's."""
        if w:
            out(f"{phase}_wait_p50_seconds", pct(w, 50), "s")
            out(f"{phase}_wait_p90_seconds", pct(w, 90), "s")
            out(f"{phase}_wait_releases", len(w), "count")

    def list_releases():
        """[(name, ready)] of every HelmRelease, from one list request (names are unique across the namespaces)."""
        if a.poll == "json":
            _, body = kube.req("GET", plural + a.plural)
            return [(it["metadata"]["name"], ready_of(it)) for it in body["items"]]
        # The server-side table: only the CRD's printer columns (Name, and
        # both peers' CRDs have Ready: the Ready condition's status), instead
        # of every whole object.
        _, body = kube.req("GET", plural + a.plural + "?includeObject=None",
                           accept="application/json;as=Table;v=v1;g=meta.k8s.io")
        cols = [c["name"] for c in body["columnDefinitions"]]
        name, ready = cols.index("Name"), cols.index("Ready")
        return [(r["cells"][name], r["cells"][ready] == "True") for r in body.get("rows") or []]

    def list_upgraded(verify=False):
        """[(name, upgraded)]: Ready at lastAppliedRevision 2 from the table (its Revision column), or with
        verify (and for a CRD without that column) Ready for the current generation from whole objects."""
        if a.poll == "table" and not verify:
            _, body = kube.req("GET", plural + a.plural + "?includeObject=None",
                               accept="application/json;as=Table;v=v1;g=meta.k8s.io")
            cols = [c["name"] for c in body["columnDefinitions"]]
            if "Revision" in cols:
                name, ready, rev = cols.index("Name"), cols.index("Ready"), cols.index("Revision")
                return [(r["cells"][name], r["cells"][ready] == "True" and r["cells"][rev] == 2)
                        for r in body.get("rows") or []]
        _, body = kube.req("GET", plural + a.plural)
        return [(it["metadata"]["name"], ready_of(it) and (it.get("status") or {}).get("lastAppliedRevision", 2) == 2)
                for it in body["items"]]

    def poll_until(listing, t0, what, seen, check=None):
        """Lists once a second (listing() gives [(name, done)]) until every release is in seen (name: the
        time of the first poll that saw it done) and check() (one more request) agrees; returns the polls."""
        polls = 0
        next_poll = time.monotonic()
        while True:
            alive()
            items = listing()
            polls += 1
            now = time.monotonic()
            for k, done in items:
                if done and k not in seen:
                    seen[k] = now
            if len(seen) >= a.releases:
                if check is None:
                    return polls
                polls += 1
                if check():
                    return polls
            if now - t0 > a.timeout:
                raise SystemExit(f"measure: {a.peer}: only {len(seen)} of {a.releases} {what} after {a.timeout:.0f}s; giving up")
            if polls % 15 == 0:
                log(f"{a.peer}: {len(seen)}/{a.releases} {what} after {now - t0:.0f}s")
            next_poll += 1.0
            time.sleep(max(0.0, next_poll - time.monotonic()))

    def time_to_ready(phase, start_at, done_at):
        """p50/p90/max of each release's time from its write (start_at) to the poll that saw it done."""
        lat = [done_at[k] - start_at[k] for k in done_at]
        for p in (50, 90):
            out(f"{phase}_time_to_ready_p{p}_seconds", pct(lat, p), "s")
        out(f"{phase}_time_to_ready_max_seconds", max(lat), "s")

    def count(path, selector):
        q = "?labelSelector=" + urllib.parse.quote(selector)
        _, body = kube.req("GET", path + q)
        return len(body["items"])

    a.plural = "helmreleases"
    out("releases", a.releases, "count")
    out("namespaces", len(nss), "count")

    # --- namespaces, then the starting point ---------------------------------
    for ns in nss:
        kube.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, ok=(201, 409))
    alive()
    s_start = snap()  # everything since the controller started: its start-up lists and watches
    out("startup_requests", sum(s_start["req"].values()), "requests")
    base_rss = {n: s_start["rss"][n] for n, _ in ctrl}
    for n, _ in ctrl:
        sfx = "" if len(ctrl) == 1 else "_" + n
        out(f"idle_controller_rss_kib{sfx}", base_rss[n], "KiB")

    # --- install ---------------------------------------------------------------
    log(f"{a.peer}: creating {a.releases} HelmReleases in {len(nss)} namespaces")
    created_at = {}
    def apiprof_start(phase):
        """A thread fetching the API server's CPU profile of the next seconds into PREFIX.PHASE.pprof."""
        if not a.apiserver_profile:
            return None
        path = f"{a.apiserver_profile}.{phase}.pprof"
        t = threading.Thread(target=apiprof.fetch, daemon=True,
                             args=(a.server, a.ca, a.cert, a.key, a.apiserver_profile_seconds, path,
                                   f"{a.peer} {phase}"))
        t.start()
        return t

    def perf_start(path):
        if not a.perf:
            return None
        # DWARF unwinding: the RelWithDebInfo build has no frame pointers. 499 Hz keeps the cost small.
        p = subprocess.Popen(["perf", "record", "-q", "-F", "499", "--call-graph", "dwarf,16384", "-o", path,
                              "-p", str(ctrl[0][1])], stdout=subprocess.DEVNULL)
        time.sleep(1.0)  # attached before the clock starts
        return p

    def perf_stop(p, path, phase):
        if not p:
            return
        p.send_signal(signal.SIGINT)
        p.wait()
        flat = subprocess.run(["perf", "report", "-i", path, "--stdio", "--no-children", "--sort", "dso,symbol",
                               "-g", "none", "--percent-limit", "0.5"], capture_output=True, text=True).stdout
        with open(path + ".txt", "w") as f:
            f.write(flat)
        log(f"{a.peer}: the controller's profile over the {phase} (perf report, symbols over 0.5 %; {path}):\n" +
            "\n".join(l for l in flat.splitlines() if l and not l.startswith("#")))

    perf = perf_start(a.perf)
    aprof = apiprof_start("install")
    t0 = time.monotonic()
    wall_install = time.time()

    def create(o):
        ns = o["metadata"]["namespace"]
        kube.req("POST", f"{plural}namespaces/{ns}/{a.plural}", o, ok=(201,))
        created_at[o["metadata"]["name"]] = time.monotonic()

    parallel(objs, create, a.create_threads)
    t_created = time.monotonic()
    out("install_create_seconds", t_created - t0, "s")
    out("install_creates_per_second", a.releases / max(t_created - t0, 1e-9), "1/s")

    ready_at = {}
    poll_bytes0 = kube.bytes_in
    polls = poll_until(list_releases, t0, "Ready", ready_at)
    t_ready = time.monotonic()
    perf_stop(perf, a.perf, "install")
    if aprof:
        aprof.join()
    s_ready = snap()
    log(f"window {a.peer}_install {wall_install:.3f} {wall_install + (t_ready - t0):.3f}")
    out("install_ready_seconds", t_ready - t0, "s")
    time_to_ready("install", created_at, ready_at)
    out("install_polls", polls, "requests")
    out("install_poll_mib", (kube.bytes_in - poll_bytes0) / 1048576, "MiB")
    report("install", s_start, s_ready, a.releases)
    waits_out("install", audit.waits(wall_install - 1))
    for n, _ in ctrl:
        sfx = "" if len(ctrl) == 1 else "_" + n
        out(f"install_controller_peak_rss_kib{sfx}", s_ready["hwm"][n], "KiB")
        out(f"install_controller_kib_per_release{sfx}", (s_ready["hwm"][n] - base_rss[n]) / a.releases, "KiB")

    # What the releases left in the cluster: release records and objects.
    sel_helm = "app.kubernetes.io/managed-by=Helm"
    secrets = count("/api/v1/secrets", "owner=helm")
    objects = sum(count(p, sel_helm) for p in ("/apis/apps/v1/deployments", "/api/v1/services",
                                                 "/api/v1/serviceaccounts", "/apis/networking.k8s.io/v1/ingresses"))
    out("install_release_secrets", secrets, "count")
    out("install_objects", objects, "count")
    if objects != a.chart_objects * a.releases:
        log(f"{a.peer}: WARNING: {objects} objects, expected {a.chart_objects * a.releases}")
    if secrets < a.releases:
        log(f"{a.peer}: WARNING: {secrets} release Secrets, expected at least {a.releases}")
    if a.save_release:
        o = objs[0]
        ns, nm = o["metadata"]["namespace"], o["metadata"]["name"]
        _, sec = kube.req("GET", f"/api/v1/namespaces/{ns}/secrets/sh.helm.release.v1.{nm}.v1")
        _, hr = kube.req("GET", f"{plural}namespaces/{ns}/{a.plural}/{nm}")
        os.makedirs(a.save_release, exist_ok=True)
        for fn, body in (("record.json", sec), ("release.json", hr)):
            with open(os.path.join(a.save_release, fn), "w") as f:
                json.dump(body, f)
        out("install_record_data_bytes", len(sec["data"]["release"]), "B")
    s_check = snap()  # the resync window starts after the harness' own checks above
    stragglers = sum(s_check["req"].values())  # controller requests answered during the checks

    # --- resync of unchanged releases ----------------------------------------
    window = a.interval + a.resync_slack
    log(f"{a.peer}: all Ready; watching one resync interval ({window:.0f}s)")
    end = time.monotonic() + window
    while time.monotonic() < end:
        alive()
        time.sleep(min(1.0, max(0.0, end - time.monotonic())))
    s_resync = snap()
    out("resync_window_seconds", s_resync["t"] - s_check["t"], "s")
    touched = s_resync["names"]
    out("resync_releases_touched", len(touched), "count")
    out("resync_releases_touched_more_than_once", sum(1 for v in touched.values() if v > 1), "count")
    out("resync_requests_naming_one_release_max", max(touched.values()) if touched else 0, "requests")
    report("resync", s_check, s_resync, a.releases)
    for n, _ in ctrl:
        sfx = "" if len(ctrl) == 1 else "_" + n
        out(f"steady_controller_rss_kib{sfx}", s_resync["rss"][n], "KiB")

    # --- drift: hand edits, each timed until corrected ---------------------------
    s_before_delete = s_resync
    if a.drift_edits:
        log(f"{a.peer}: scaling {a.drift_edits} Deployments by hand, one at a time")
        lat = []
        for i in range(min(a.drift_edits, a.releases)):
            o = objs[(i * 37) % a.releases]
            ns, name = o["metadata"]["namespace"], o["metadata"]["name"]
            sel = urllib.parse.quote(f"app.kubernetes.io/instance={name}")
            _, body = kube.req("GET", f"/apis/apps/v1/namespaces/{ns}/deployments?labelSelector={sel}")
            d = body["items"][0]
            dep, want = d["metadata"]["name"], d["spec"].get("replicas", 1)
            path = f"/apis/apps/v1/namespaces/{ns}/deployments/{dep}"
            t_edit = time.monotonic()
            kube.req("PATCH", path + "/scale", {"spec": {"replicas": want + 2}}, ctype="application/merge-patch+json")
            while True:
                _, cur = kube.req("GET", path)
                if cur["spec"].get("replicas", 1) == want:
                    break
                if time.monotonic() - t_edit > 60:
                    raise SystemExit(f"measure: {a.peer}: {ns}/{dep} not corrected 60 s after a hand edit")
                time.sleep(0.02)
            lat.append(time.monotonic() - t_edit)
        s_drift = snap()
        out("drift_edits", len(lat), "count")
        out("drift_correction_p50_seconds", pct(lat, 50), "s")
        out("drift_correction_p90_seconds", pct(lat, 90), "s")
        out("drift_correction_max_seconds", max(lat), "s")
        report("drift", s_resync, s_drift, len(lat), detail=True)
        s_before_delete = s_drift
        for n, p in ctrl:  # rudder logs its memory line (drift watches' caches included) on SIGUSR1
            os.kill(p, signal.SIGUSR1)
        time.sleep(0.5)

    # --- upgrade all: a values change on every release -------------------------------
    counted = [s_start, s_ready, s_resync] + ([s_drift] if a.drift_edits else [])
    if a.upgrade:
        log(f"{a.peer}: a new image tag for all {a.releases} (a merge patch of spec.values each)")
        patched_at = {}
        perf = perf_start(a.perf + ".upgrade" if a.perf else None)
        aprof = apiprof_start("upgrade")
        t_up = time.monotonic()
        wall_upgrade = time.time()

        def patch(o):
            ns, nm = o["metadata"]["namespace"], o["metadata"]["name"]
            tag = "2.5." + nm.rsplit("-", 1)[1][-1]
            kube.req("PATCH", f"{plural}namespaces/{ns}/{a.plural}/{nm}", {"spec": {"values": {"image": {"tag": tag}}}},
                     ctype="application/merge-patch+json")
            patched_at[nm] = time.monotonic()

        parallel(objs, patch, a.create_threads)
        out("upgrade_patch_seconds", time.monotonic() - t_up, "s")
        up_at = {}
        # Once the table says so for all, one list of whole objects checks observedGeneration too.
        polls = poll_until(list_upgraded, t_up, "upgraded", up_at,
                           check=lambda: all(done for _, done in list_upgraded(verify=True)))
        t_upd = time.monotonic()
        perf_stop(perf, a.perf + ".upgrade" if a.perf else None, "upgrade")
        if aprof:
            aprof.join()
        s_up = snap()
        counted.append(s_up)
        log(f"window {a.peer}_upgrade {wall_upgrade:.3f} {wall_upgrade + (max(up_at.values()) - t_up):.3f}")
        out("upgrade_ready_seconds", max(up_at.values()) - t_up, "s")
        out("upgrade_verified_seconds", t_upd - t_up, "s")
        time_to_ready("upgrade", patched_at, up_at)
        out("upgrade_polls", polls, "requests")
        report("upgrade", s_before_delete, s_up, a.releases)
        if a.save_release:  # the status rudder wrote at revision 2, for floor --upgrade-status
            o = objs[0]
            _, hr = kube.req("GET", f"{plural}namespaces/{o['metadata']['namespace']}/{a.plural}/{o['metadata']['name']}")
            with open(os.path.join(a.save_release, "release-upgraded.json"), "w") as f:
                json.dump(hr, f)
        waits_out("upgrade", audit.waits(wall_upgrade))
        for n, _ in ctrl:
            sfx = "" if len(ctrl) == 1 else "_" + n
            out(f"upgrade_controller_peak_rss_kib{sfx}", s_up["hwm"][n], "KiB")
        out("upgrade_release_secrets", count("/api/v1/secrets", "owner=helm"), "count")
        s_before_delete = snap()
        stragglers += sum(s_before_delete["req"].values())

    # --- restart: the controller stopped and started again with the N in place ----------
    cpu_before, hwm_before = 0.0, 0
    if a.restart_cmd:
        with open(a.restart_cmd) as f:
            cmd = json.load(f)
        name, old = ctrl[0]
        hwm_before = proc_kib(old, "VmHWM")
        sig = signal.SIGKILL if a.restart_signal == "KILL" else signal.SIGTERM
        log(f"{a.peer}: SIG{a.restart_signal} to the controller (pid {old}), then starting it again")
        cpu_before = proc_cpu(old)  # run.sh may reap it at once: read now, again below if it can
        t_kill = time.monotonic()
        os.kill(old, sig)
        while not proc_gone(old):
            if time.monotonic() - t_kill > 60:
                raise SystemExit(f"measure: {a.peer}: the controller (pid {old}) still runs 60 s after SIG{a.restart_signal}")
            time.sleep(0.01)
        out("restart_stop_seconds", time.monotonic() - t_kill, "s")
        cpu_before = proc_cpu(old, cpu_before)  # a zombie's /proc/PID/stat still has its times
        s_dead = snap()  # what it sent while stopping (SIGTERM), counted on its own
        counted.append(s_dead)
        out("restart_stop_requests", sum(s_dead["req"].values()), "requests")
        log_off = os.path.getsize(cmd["log"])
        wall0, t_start = time.time(), time.monotonic()
        with open(cmd["log"], "ab") as logf:
            proc = subprocess.Popen(cmd["argv"], stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        restarted["proc"] = proc
        ctrl[0] = (name, proc.pid)
        # Synced: /readyz answers 200 once every informer has listed (loop/controller.c), at the
        # address the new process logs (its --health-addr is port 0).
        addr, t_synced = None, None
        while t_synced is None:
            if proc.poll() is not None:
                raise SystemExit(f"measure: {a.peer}: the restarted controller exited ({proc.returncode}); see its log")
            if time.monotonic() - t_start > a.timeout:
                raise SystemExit(f"measure: {a.peer}: the restarted controller was not ready after {a.timeout:.0f}s")
            if addr is None:
                with open(cmd["log"], "rb") as f:
                    f.seek(log_off)
                    m = re.search(rb'msg="serving HTTP".*flag=--health-addr.*address=([0-9.:]+)', f.read())
                addr = m and m.group(1).decode()
            else:
                try:
                    with urllib.request.urlopen(f"http://{addr}/readyz", timeout=2) as r:
                        if r.status == 200:
                            t_synced = time.monotonic()
                except (urllib.error.URLError, OSError):
                    pass
            time.sleep(0.02)
        # Caught up: no request for --restart-quiet seconds after it was synced.
        acc, acc_names = collections.Counter(), collections.Counter()
        while True:
            alive()
            time.sleep(0.5)
            c, names = audit.take()
            acc.update(c)
            acc_names.update(names)
            last = max(audit.last_received or 0, wall0)
            quiet_from = max(last, wall0 + (t_synced - t_start))
            if time.time() - quiet_from >= a.restart_quiet:
                break
            if time.monotonic() - t_start > a.timeout:
                raise SystemExit(f"measure: {a.peer}: the restarted controller still sends requests after {a.timeout:.0f}s")
        items = list_releases()
        s_rs = snap()
        s_rs["req"].update(acc)
        acc_names.update(s_rs["names"])
        counted.append(s_rs)
        out("restart_signal", a.restart_signal, "signal")
        out("restart_synced_seconds", t_synced - t_start, "s")
        out("restart_caught_up_seconds", quiet_from - wall0, "s")
        out("restart_quiet_window_seconds", a.restart_quiet, "s")
        writes = sum(v for (_, verb, _), v in s_rs["req"].items() if verb in ("create", "update", "patch", "delete", "deletecollection"))
        out("restart_writes", writes, "requests")
        out("restart_releases_touched", len(acc_names), "count")
        out("restart_releases_ready", sum(1 for _, r in items if r), "count")
        s0 = dict(s_dead, ctrl_cpu=dict(s_dead["ctrl_cpu"], **{name: 0.0}))  # the new process starts at 0
        report("restart", s0, s_rs, a.releases)
        out("restart_controller_peak_rss_kib", s_rs["hwm"][name], "KiB")
        s_before_delete = s_rs

    # --- delete ------------------------------------------------------------------
    log(f"{a.peer}: deleting all {a.releases}")
    t_del = time.monotonic()
    for ns in nss:  # one deletecollection per namespace
        kube.req("DELETE", f"{plural}namespaces/{ns}/{a.plural}")
    next_poll = time.monotonic()
    polls = 0
    while True:
        alive()
        items = list_releases()
        polls += 1
        if not items:
            break
        if time.monotonic() - t_del > a.timeout:
            raise SystemExit(f"measure: {a.peer}: {len(items)} HelmReleases still there after {a.timeout:.0f}s; giving up")
        if polls % 15 == 0:
            log(f"{a.peer}: {len(items)} left after {time.monotonic() - t_del:.0f}s")
        next_poll += 1.0
        time.sleep(max(0.0, next_poll - time.monotonic()))
    t_gone = time.monotonic()
    s_gone = snap()
    counted.append(s_gone)
    out("delete_seconds", t_gone - t_del, "s")
    report("delete", s_before_delete, s_gone, a.releases)
    left_secrets = count("/api/v1/secrets", "owner=helm")
    left = sum(count(p, sel_helm) for p in ("/apis/apps/v1/deployments", "/api/v1/services",
                                              "/api/v1/serviceaccounts", "/apis/networking.k8s.io/v1/ingresses"))
    out("delete_left_release_secrets", left_secrets, "count")
    out("delete_left_objects", left, "count")

    # --- whole run ---------------------------------------------------------------
    for i, (n, p) in enumerate(ctrl):
        sfx = "" if len(ctrl) == 1 else "_" + n
        before = (hwm_before, cpu_before) if i == 0 and a.restart_cmd else (0, 0.0)
        out(f"controller_peak_rss_kib{sfx}", max(before[0], proc_kib(p, "VmHWM")), "KiB")
        out(f"controller_cpu_seconds_total{sfx}", before[1] + proc_cpu(p), "s")
    out("requests_total", sum(sum(s["req"].values()) for s in counted) + stragglers, "requests")
    proc = restarted.get("proc")
    if proc is not None:
        # The restarted controller is this program's child: stopped here as run.sh stops the first.
        proc.terminate()
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        out("controller_exit_status", 128 - rc if rc < 0 else rc, "code")


if __name__ == "__main__":
    main()
