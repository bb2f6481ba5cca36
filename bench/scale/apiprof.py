#!/usr/bin/env python3
"""bench/scale/apiprof.py - the API server's CPU profiles over the floor's timed phases.

  apiprof.py follow --log FLOOR_LOG --dir DIR --server URL --ca F --cert F --key F [--seconds S]
  apiprof.py top DIR

follow: reads FLOOR_LOG as bench/scale/floor writes it (until killed) and, at each
"floor: phase NAME begins" line, fetches the API server's /debug/pprof/profile over the next S
seconds (default 20) into DIR/NAME.pprof (measure.py --apiserver-profile does the same for a
controller's install and upgrade). top: writes `go tool pprof -top` of every DIR/*.pprof beside
it as .txt (flat and cumulative, the 40 heaviest functions) and prints the first lines of each.
"""
import argparse
import glob
import http.client
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse


def fetch(server, ca, cert, key, seconds, path, name):
    """The API server's CPU profile over the next seconds into path (name: what the log lines say)."""
    u = urllib.parse.urlsplit(server)
    ctx = ssl.create_default_context(cafile=ca)
    ctx.load_cert_chain(cert, key)
    c = http.client.HTTPSConnection(u.hostname, u.port or 443, context=ctx, timeout=seconds + 60)
    try:
        c.request("GET", f"/debug/pprof/profile?seconds={seconds}")
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            print(f"apiprof: {name}: HTTP {r.status}: {body[:200]!r}", file=sys.stderr, flush=True)
            return
        with open(path, "wb") as f:
            f.write(body)
        print(f"apiprof: {name}: {path} ({len(body)} bytes)", file=sys.stderr, flush=True)
    except (OSError, http.client.HTTPException) as e:
        print(f"apiprof: {name}: {e}", file=sys.stderr, flush=True)
    finally:
        c.close()


def follow(a):
    os.makedirs(a.dir, exist_ok=True)
    while not os.path.exists(a.log):
        time.sleep(0.1)
    with open(a.log) as f:
        buf = ""
        while True:
            chunk = f.readline()
            if not chunk:
                time.sleep(0.05)
                continue
            buf += chunk
            if not buf.endswith("\n"):
                continue
            line, buf = buf.strip(), ""
            if line.startswith("floor: phase ") and line.endswith(" begins"):
                name = line[len("floor: phase "):-len(" begins")]
                threading.Thread(target=fetch, daemon=True,
                                 args=(a.server, a.ca, a.cert, a.key, a.seconds, os.path.join(a.dir, name + ".pprof"),
                                       name)).start()


def top(a):
    go = os.environ.get("GO", "go")
    for p in sorted(glob.glob(os.path.join(a.dir, "*.pprof"))):
        out = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=40", p], capture_output=True, text=True)
        text = out.stdout if out.returncode == 0 else out.stderr
        with open(p[:-len(".pprof")] + ".txt", "w") as f:
            f.write(text)
        print(f"# {os.path.basename(p)}")
        for line in text.splitlines()[:16]:
            print("#   " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("follow")
    f.add_argument("--log", required=True)
    f.add_argument("--dir", required=True)
    f.add_argument("--server", required=True)
    f.add_argument("--ca", required=True)
    f.add_argument("--cert", required=True)
    f.add_argument("--key", required=True)
    f.add_argument("--seconds", type=int, default=20)
    t = sub.add_parser("top")
    t.add_argument("dir")
    a = ap.parse_args()
    follow(a) if a.cmd == "follow" else top(a)


if __name__ == "__main__":
    main()
