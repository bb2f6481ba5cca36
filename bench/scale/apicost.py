#!/usr/bin/env python3
"""bench/scale/apicost.py - what one request of each kind an install or upgrade sends costs the
API server and etcd, in CPU milliseconds, on a running local control plane.

  apicost.py --state DIR [--releases N] [--concurrency C] [--kinds a,b,...] [--crds DIR] [--namespace NS]

DIR is a control plane of tests/cluster/up (its pki/admin.* and kubeconfig, its pids/ for the
kube-apiserver's and etcd's CPU). In namespace apicost it first makes, untimed, what a scale run
holds for N releases: N release-record Secrets (labels owner=helm, name, status, version; 5,000
bytes of data each, as a record of the scale chart) and N HelmReleases (NS, default apicost, made by
the run) (the CRDs from --crds, the
project's deploy/crds by default). Then for each kind it sends N requests, C in flight (one
kept-alive TLS connection per sender), and prints, as `name value unit` lines, the API server's
and etcd's CPU per request (utime + stime from /proc, before and after) and the requests per
second. The kinds (each request names release i, i = 0..N-1):

  get_missing     GET a Service that does not exist (an install's ownership check of a new object)
  get_secret      GET the release record Secret by name
  list_records    GET secrets?labelSelector=owner=helm,name=app-i (the records of one release)
  list_records_rv the same with resourceVersion=R&resourceVersionMatch=NotOlderThan (R: the
                  namespace list's resourceVersion, read once before the round: served from the
                  watch cache)
  finalizer       merge patch of the HelmRelease's metadata.finalizers
  status          merge patch of the HelmRelease's status subresource
  event           POST an Event about the HelmRelease (core/v1)
  create_secret   POST a second record Secret (5,000 bytes of data)
  update_secret   PUT that Secret back with a label changed
  apply_cm        server-side apply of a ConfigMap of ~1 KB (force, fieldManager rudder): creates
  apply_cm_same   the same apply again (no change)

With --watch, one watch each of the namespace's HelmReleases, Secrets, ConfigMaps and Events is
open during the rounds (what a controller's caches cost the API server per write).

The figures are for comparing kinds with each other on one machine in one run (the CPU of an
idle control plane over the round is included: the round's wall time times the idle rate measured
first is subtracted and printed as `apicost_idle_*`).
"""
import argparse
import base64
import http.client
import json
import os
import queue
import ssl
import subprocess
import sys
import threading
import time

NS = "apicost"  # --namespace
KINDS = ["get_missing", "get_secret", "list_records", "list_records_rv", "finalizer", "status", "event",
         "create_secret", "update_secret", "apply_cm", "apply_cm_same"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / tick


def pid_of(state, name):
    for f in sorted(os.listdir(os.path.join(state, "pids"))):
        if f.endswith(f"-{name}.pid"):
            with open(os.path.join(state, "pids", f)) as fh:
                return int(fh.read().strip())
    sys.exit(f"apicost.py: no pid file for {name} in {state}/pids")


class Api:
    def __init__(self, state):
        with open(os.path.join(state, "kubeconfig")) as f:
            server = next(line.split("server:", 1)[1].strip() for line in f if "server:" in line)
        hostport = server.split("://", 1)[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        ctx = ssl.create_default_context(cafile=os.path.join(state, "pki", "ca.crt"))
        ctx.load_cert_chain(os.path.join(state, "pki", "admin.crt"), os.path.join(state, "pki", "admin.key"))
        self.ctx = ctx

    def conn(self):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)


def send(c, method, path, body=None, ctype="application/json"):
    headers = {"Accept": "application/json", "User-Agent": "rudder-apicost"}
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Type"] = ctype
    c.request(method, path, body=data, headers=headers)
    r = c.getresponse()
    out = r.read()
    return r.status, out


def rec_name(i, v=1):
    return f"sh.helm.release.v1.app-{i:05d}.v{v}"


DATA = base64.b64encode(os.urandom(3750)).decode()  # 5,000 bytes of base64


def record(i, v=1, status="deployed"):
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": rec_name(i, v), "namespace": NS,
                         "labels": {"owner": "helm", "name": f"app-{i:05d}", "status": status, "version": str(v)}},
            "data": {"release": DATA}}


def request_for(kind, i, ctx):
    base = f"/api/v1/namespaces/{NS}"
    hr = f"/apis/rudder.dev/v1alpha1/namespaces/{NS}/helmreleases/app-{i:05d}"
    sel = f"labelSelector=owner%3Dhelm%2Cname%3Dapp-{i:05d}"
    if kind == "get_missing":
        return "GET", f"{base}/services/app-{i:05d}", None, None, (404,)
    if kind == "get_secret":
        return "GET", f"{base}/secrets/{rec_name(i)}", None, None, (200,)
    if kind == "list_records":
        return "GET", f"{base}/secrets?{sel}", None, None, (200,)
    if kind == "list_records_rv":
        return "GET", f"{base}/secrets?{sel}&resourceVersion={ctx['rv']}&resourceVersionMatch=NotOlderThan", None, None, (200,)
    if kind == "finalizer":
        return "PATCH", hr, {"metadata": {"finalizers": ["rudder.dev/finalizer"]}}, "application/merge-patch+json", (200,)
    if kind == "status":
        st = {"status": {"observedGeneration": 1, "lastAppliedRevision": 1,
                         "conditions": [{"type": "Ready", "status": "True", "reason": "InstallSucceeded",
                                         "message": "Helm install succeeded for release app", "observedGeneration": 1,
                                         "lastTransitionTime": "2026-12-02T00:00:00Z"}]}}
        return "PATCH", hr + "/status", st, "application/merge-patch+json", (200,)
    if kind == "event":
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": f"app-{i:05d}.apicost{ctx['round']}", "namespace": NS},
              "involvedObject": {"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease", "namespace": NS,
                                 "name": f"app-{i:05d}", "uid": ctx["uids"][i]},
              "reason": "InstallSucceeded", "message": "Helm install succeeded for release apicost/app", "type": "Normal",
              "source": {"component": "rudder"}, "count": 1,
              "firstTimestamp": "2026-12-02T00:00:00Z", "lastTimestamp": "2026-12-02T00:00:00Z"}
        return "POST", f"{base}/events", ev, None, (201,)
    if kind == "create_secret":
        return "POST", f"{base}/secrets", record(i, 2, "pending-upgrade"), None, (201,)
    if kind == "update_secret":
        return "PUT", f"{base}/secrets/{rec_name(i, 2)}", "UPDATE", None, (200,)
    if kind in ("apply_cm", "apply_cm_same"):
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"app-{i:05d}", "namespace": NS,
                           "labels": {"app.kubernetes.io/managed-by": "Helm"},
                           "annotations": {"meta.helm.sh/release-name": f"app-{i:05d}", "meta.helm.sh/release-namespace": NS}},
              "data": {"config": "x" * 800}}
        return ("PATCH", f"{base}/configmaps/app-{i:05d}?fieldManager=rudder&force=true", cm, "application/apply-patch+yaml",
                (200, 201))
    raise ValueError(kind)


def watch_forever(api, path):
    """Reads a watch of path (from now on) and throws its events away, as long as the process runs."""
    while True:
        c = api.conn()
        st, out = send(c, "GET", path + "?limit=1")
        rv = json.loads(out)["metadata"]["resourceVersion"]
        c.request("GET", f"{path}?watch=1&resourceVersion={rv}&timeoutSeconds=3600",
                  headers={"Accept": "application/json", "User-Agent": "rudder-apicost"})
        r = c.getresponse()
        while r.read(65536):
            pass
        c.close()


def each_release(api, n, conc, fn):
    """Calls fn(conn, i) for i = 0..n-1 from conc senders, each on a kept-alive connection of its
    own; returns the seconds from the first start to the last end."""
    work = queue.Queue()
    for i in range(n):
        work.put(i)

    def worker():
        c = api.conn()
        while True:
            try:
                i = work.get_nowait()
            except queue.Empty:
                break
            fn(c, i)
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(conc)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - t0


def run_round(api, kind, n, conc, ctx):
    errors = []

    def one(c, i):
        m, path, body, ctype, ok = request_for(kind, i, ctx)
        if body == "UPDATE":
            st, out = send(c, "GET", path)
            obj = json.loads(out)
            obj["metadata"]["labels"]["status"] = "deployed"
            body = obj
        st, out = send(c, m, path, body, ctype or "application/json")
        if st not in ok:
            errors.append(f"{kind} {i}: {st} {out[:200]!r}")

    return each_release(api, n, conc, one), errors

def main():
    global NS
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True)
    ap.add_argument("--releases", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=10)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--namespace", default=NS, help="made by the run; must not exist")
    ap.add_argument("--inline-bytes", type=int, default=3500, help="the size of each HelmRelease's inline chart")
    ap.add_argument("--watch", action="store_true", help="watch the namespace's HelmReleases, Secrets and ConfigMaps during the rounds, as a controller would")
    ap.add_argument("--crds", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "crds"))
    a = ap.parse_args()
    NS = a.namespace
    kinds = a.kinds.split(",")
    for k in kinds:
        if k not in KINDS:
            sys.exit(f"apicost.py: unknown kind {k!r} (known: {', '.join(KINDS)})")
    api = Api(a.state)
    apid, epid = pid_of(a.state, "kube-apiserver"), pid_of(a.state, "etcd")
    kubectl = ["kubectl", "--kubeconfig", os.path.join(a.state, "kubeconfig")]
    subprocess.run(kubectl + ["apply", "--server-side", "--field-manager=apicost", "-f", a.crds], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(kubectl + ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"], check=True,
                   stdout=subprocess.DEVNULL)
    c = api.conn()
    st, _ = send(c, "GET", f"/api/v1/namespaces/{NS}")
    if st == 200:
        sys.exit(f"apicost.py: namespace {NS} exists already; use a fresh control plane")
    send(c, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    c.close()

    # The untimed setup: records and HelmReleases, C senders.
    ctx = {"round": 0, "uids": [None] * a.releases}
    errs = []

    def setup_one(cc, i):
        st, out = send(cc, "POST", f"/api/v1/namespaces/{NS}/secrets", record(i))
        if st != 201:
            errs.append(f"record {i}: {st} {out[:200]!r}")
        hr = {"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease",
              "metadata": {"name": f"app-{i:05d}", "namespace": NS},
              "spec": {"interval": "1m", "chart": {"inline": {"name": "app", "version": "1.0.0",
                                                              "templates": {"cm.yaml": "kind: ConfigMap\n" + "#" * a.inline_bytes}}}}}
        st, out = send(cc, "POST", f"/apis/rudder.dev/v1alpha1/namespaces/{NS}/helmreleases", hr)
        if st != 201:
            errs.append(f"helmrelease {i}: {st} {out[:200]!r}")
        else:
            ctx["uids"][i] = json.loads(out)["metadata"]["uid"]

    each_release(api, a.releases, a.concurrency, setup_one)
    if errs:
        sys.exit("apicost.py: setup failed: " + "; ".join(errs[:5]))

    def cpu():
        return cpu_seconds(apid), cpu_seconds(epid)

    if a.watch:
        for res in (f"/apis/rudder.dev/v1alpha1/namespaces/{NS}/helmreleases", f"/api/v1/namespaces/{NS}/secrets",
                    f"/api/v1/namespaces/{NS}/configmaps", f"/api/v1/namespaces/{NS}/events"):
            threading.Thread(target=watch_forever, args=(api, res), daemon=True).start()
    time.sleep(5)
    a0, e0, t0 = *cpu(), time.monotonic()
    time.sleep(10)
    a1, e1, t1 = *cpu(), time.monotonic()
    idle_a, idle_e = (a1 - a0) / (t1 - t0), (e1 - e0) / (t1 - t0)
    print(f"apicost_idle_apiserver_cpu_ms_per_second {idle_a * 1000:.2f} ms")
    print(f"apicost_idle_etcd_cpu_ms_per_second {idle_e * 1000:.2f} ms")
    failed = 0
    for k in kinds:
        ctx["round"] += 1
        if k == "list_records_rv":
            cc = api.conn()
            st, out = send(cc, "GET", f"/api/v1/namespaces/{NS}/secrets?limit=1")
            ctx["rv"] = json.loads(out)["metadata"]["resourceVersion"]
            cc.close()
        time.sleep(2)
        a0, e0 = cpu()
        wall, errors = run_round(api, k, a.releases, a.concurrency, ctx)
        a1, e1 = cpu()
        n = a.releases
        print(f"apicost_{k}_apiserver_cpu_ms_per_request {max(0.0, a1 - a0 - idle_a * wall) * 1000 / n:.3f} ms")
        print(f"apicost_{k}_etcd_cpu_ms_per_request {max(0.0, e1 - e0 - idle_e * wall) * 1000 / n:.3f} ms")
        print(f"apicost_{k}_requests_per_second {n / wall:.0f} 1/s")
        if errors:
            failed += 1
            print(f"apicost_{k}_failed_requests {len(errors)} (first: {errors[0]})", file=sys.stderr)
        sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
