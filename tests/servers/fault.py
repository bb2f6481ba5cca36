#!/usr/bin/env python3
"""tests/servers/fault.py - an HTTP(S) server that misbehaves on purpose.

Usage:
  fault.py [--tls CERT KEY] [--listen NAME[:tls] ...] [--host 127.0.0.1]

Each --listen NAME opens one listener on a free port of --host (plain HTTP,
or TLS with CERT/KEY when NAME ends in ':tls'); once all are listening it
prints one line 'NAME PORT' per listener on stdout, in order, and flushes.
Default: one plain listener named 'http'. Python stdlib only; one thread per
connection; HTTP/1.1 with keep-alive.

Paths (any method; HEAD sends no body):
  /status/NNN[?retry-after=S]  answers status NNN (with Retry-After: S)
  /stall                       reads the request, never answers (until the
                               client goes away, or an hour)
  /redirect-loop               302 to itself
  /redirect?to=URL             302 to URL
  /gzip-bomb                   Content-Encoding: gzip, ~1 MiB on the wire that
                               decodes to 1 GiB of zeros (one gzip member)
  /echo                        200, JSON: method, path, query, headers (a list of
                               [name, value] in the order received, and a map
                               of lower-cased names), body length
  /drop                        headers with Content-Length N, N/2 bytes, close
  /big?n=BYTES                 200 with BYTES bytes ('x')
  /index-huge[?charts=C&versions=V]
                               a valid Helm index.yaml with C charts of V
                               versions each (default 100 x 1000 = 100,000)
  /corrupt.tgz                 bytes that are not gzip
  /traversal.tgz               a chart archive with a member '../evil.yaml' (Helm drops the first
                               path segment, so this one loads, as 'evil.yaml')
  /xhost/index.yaml?chart=URL&digest=HEX   an index whose podlike 0.1.0 is at URL (another host)
  /baddigest/index.yaml        an index whose podlike 0.1.0 points at /traversal.tgz with a wrong digest
  /bomb.tgz                    a .tgz that inflates to 1 GiB of zeros
  /stall/index.yaml, /status/NNN/index.yaml, ...   a repository URL under a fault path: its
                               index behaves as the path
  /newline.tgz                 a chart archive with a template named 'a.yaml<LF>---<LF>...' (a
                               document hidden in a file name; Helm loads it)
  /parent.tgz                  a chart archive with a member 'evil/../../evil.yaml' (outside the
                               chart once cleaned: Helm refuses it)
  /etag                        a small body with ETag and Last-Modified; 304 to
                               a matching If-None-Match / If-Modified-Since
  anything else                404
"""

import argparse
import email.utils
import hashlib
import http.server
import io
import json
import select
import socket
import socketserver
import ssl
import sys
import tarfile
import threading
import time
import urllib.parse
import zlib

GIB = 1 << 30
ETAG = '"rudder-etag-v1"'
LAST_MODIFIED = "Tue, 01 Dec 2026 00:00:00 GMT"
ETAG_BODY = b"etag body v1\n"


class Lazy:
    """A value computed once, on first use, under a lock."""

    def __init__(self, fn):
        self.fn, self.lock, self.value, self.done = fn, threading.Lock(), None, False

    def get(self):
        with self.lock:
            if not self.done:
                self.value, self.done = self.fn(), True
            return self.value


def make_gzip_bomb():
    # With a full flush after each MiB the deflate output of every MiB after
    # the first is the same bytes (same all-zero window, same input), so only
    # two chunks are compressed and the rest repeated: one valid gzip member.
    chunk = bytes(1 << 20)
    count = GIB // len(chunk)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    rest = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    tail = c.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = crc.to_bytes(4, "little") + (GIB & 0xFFFFFFFF).to_bytes(4, "little")
    return header + first + rest * (count - 1) + tail + trailer


def make_index(charts, versions):
    out = io.StringIO()
    w = out.write
    w("apiVersion: v1\nentries:\n")
    created = "2026-12-01T00:00:00.000000000Z"
    for c in range(charts):
        name = "huge-%03d" % c
        w("  %s:\n" % name)
        for v in range(versions):
            ver = "%d.%d.%d" % (v // 100, (v // 10) % 10, v % 10)
            digest = hashlib.sha256(("%s-%s" % (name, ver)).encode()).hexdigest()
            w("  - apiVersion: v2\n"
              "    appVersion: \"1.0\"\n"
              "    created: \"%s\"\n"
              "    description: A generated chart entry of the huge test index\n"
              "    digest: %s\n"
              "    name: %s\n"
              "    type: application\n"
              "    urls:\n"
              "    - %s-%s.tgz\n"
              "    version: %s\n" % (created, digest, name, name, ver, ver))
    w("generated: \"%s\"\n" % created)
    return out.getvalue().encode()


def make_traversal(escape="../evil.yaml", tar_format=tarfile.USTAR_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tar_format) as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1764547200
            tar.addfile(info, io.BytesIO(data))
        add("evil/Chart.yaml", b"apiVersion: v2\nname: evil\nversion: 0.1.0\n")
        add("evil/templates/cm.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n")
        add(escape, b"escaped: true\n")
    return buf.getvalue()


BOMB = Lazy(make_gzip_bomb)
TRAVERSAL = Lazy(make_traversal)
PARENT = Lazy(lambda: make_traversal("evil/../../evil.yaml"))
# a template whose name holds a line break and a document of its own (Helm loads it as it is)
NEWLINE = Lazy(lambda: make_traversal("evil/templates/a.yaml\n---\napiVersion: v1\nkind: Secret\nmetadata:\n"
                                      "  name: victim\n#.yaml", tar_format=tarfile.PAX_FORMAT))
INDEXES = {}
INDEXES_LOCK = threading.Lock()


def huge_index(charts, versions):
    with INDEXES_LOCK:
        lazy = INDEXES.setdefault((charts, versions), Lazy(lambda: make_index(charts, versions)))
    return lazy.get()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "rudder-fault/1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s %s\n" % (self.log_date_time_string(), self.client_address[0], fmt % args))

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def reply(self, status, body=b"", ctype="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        path = url.path
        # A repository URL under a fault path: its index.yaml behaves as the path itself.
        if path.endswith("/index.yaml") and path != "/index.yaml":
            base = path[: -len("/index.yaml")]
            if base in ("/stall", "/gzip-bomb", "/redirect-loop", "/drop") or base.startswith("/status/"):
                path = base
        body = self.read_body()
        arg = lambda k, d=None: q.get(k, [d])[0]

        if path.startswith("/status/"):
            try:
                code = int(path[len("/status/"):])
                assert 100 <= code <= 599
            except (ValueError, AssertionError):
                return self.reply(400, b"bad status\n")
            hdrs = [("Retry-After", arg("retry-after"))] if arg("retry-after") else []
            return self.reply(code, ("status %d\n" % code).encode() if code not in (204, 304) else b"", headers=hdrs)

        if path == "/stall":
            self.close_connection = True
            deadline = time.monotonic() + 3600
            sock = self.connection
            while time.monotonic() < deadline:
                r, _, _ = select.select([sock], [], [], 1.0)
                if r:
                    try:
                        if not sock.recv(4096):
                            return  # the client went away
                    except (OSError, ssl.SSLError):
                        return
            return

        if path == "/redirect-loop":
            return self.reply(302, b"", headers=[("Location", "/redirect-loop")])

        if path == "/redirect":
            to = arg("to")
            if not to:
                return self.reply(400, b"redirect needs ?to=URL\n")
            return self.reply(302, b"", headers=[("Location", to)])

        if path == "/gzip-bomb":
            return self.reply(200, BOMB.get(), "application/x-yaml",
                              headers=[("Content-Encoding", "gzip")])

        if path == "/echo":
            hl = [[k, v] for k, v in self.headers.items()]
            hm = {}
            for k, v in hl:
                k = k.lower()
                hm[k] = hm[k] + ", " + v if k in hm else v
            doc = {"method": self.command, "path": url.path, "query": url.query,
                   "headers": hl, "header": hm, "body_length": len(body)}
            return self.reply(200, json.dumps(doc, indent=1).encode() + b"\n", "application/json")

        if path == "/drop":
            data = b"d" * 65536
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return

        if path == "/big":
            try:
                n = int(arg("n", "1048576"))
                assert 0 <= n <= 64 * GIB
            except (ValueError, AssertionError):
                return self.reply(400, b"big needs ?n=BYTES\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            if self.command != "HEAD":
                block = b"x" * 65536
                left = n
                while left > 0:
                    k = min(left, len(block))
                    self.wfile.write(block[:k])
                    left -= k
            return

        if path in ("/index-huge", "/index-huge/index.yaml"):
            try:
                charts, versions = int(arg("charts", "100")), int(arg("versions", "1000"))
                assert 0 < charts <= 1000 and 0 < versions <= 1000
            except (ValueError, AssertionError):
                return self.reply(400, b"index-huge: 0 < charts, versions <= 1000\n")
            return self.reply(200, huge_index(charts, versions), "application/x-yaml")

        if path == "/corrupt.tgz":
            return self.reply(200, b"this is not a gzip stream, it only ends in .tgz\n" * 4,
                              "application/gzip")

        if path == "/traversal.tgz":
            return self.reply(200, TRAVERSAL.get(), "application/gzip")

        if path == "/xhost/index.yaml":
            # an index whose podlike 0.1.0 is at ?chart=URL (another host), with ?digest=HEX
            chart, digest = arg("chart"), arg("digest")
            if not chart or not digest:
                return self.reply(400, b"xhost needs ?chart=URL&digest=HEX\n")
            idx = ("apiVersion: v1\nentries:\n  podlike:\n  - apiVersion: v2\n    name: podlike\n"
                   "    version: 0.1.0\n    digest: " + digest + "\n    urls:\n    - " + chart + "\n"
                   "generated: \"2026-12-01T00:00:00Z\"\n")
            return self.reply(200, idx.encode(), "application/x-yaml")

        if path == "/baddigest/index.yaml":
            # podlike 0.1.0 pointing at /traversal.tgz (a loadable chart) with a digest it does not have.
            idx = ("apiVersion: v1\nentries:\n  podlike:\n  - apiVersion: v2\n    name: podlike\n"
                   "    version: 0.1.0\n    digest: " + "0" * 64 + "\n    urls:\n    - /traversal.tgz\n"
                   "generated: \"2026-12-01T00:00:00Z\"\n")
            return self.reply(200, idx.encode(), "application/x-yaml")

        if path == "/bomb.tgz":
            # a "chart archive" that inflates to 1 GiB of zeros
            return self.reply(200, BOMB.get(), "application/gzip")

        if path == "/newline.tgz":
            return self.reply(200, NEWLINE.get(), "application/gzip")

        if path == "/parent.tgz":
            return self.reply(200, PARENT.get(), "application/gzip")

        if path == "/etag":
            hdrs = [("ETag", ETAG), ("Last-Modified", LAST_MODIFIED)]
            inm = self.headers.get("If-None-Match")
            ims = self.headers.get("If-Modified-Since")
            if inm is not None:
                tags = [t.strip() for t in inm.split(",")]
                if "*" in tags or ETAG in tags or "W/" + ETAG in tags:
                    return self.reply(304, b"", headers=hdrs)
            elif ims is not None:
                try:
                    since = email.utils.parsedate_to_datetime(ims)
                    if since >= email.utils.parsedate_to_datetime(LAST_MODIFIED):
                        return self.reply(304, b"", headers=hdrs)
                except (TypeError, ValueError):
                    pass
            return self.reply(200, ETAG_BODY, headers=hdrs)

        return self.reply(404, b"not found\n")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, ctx):
        self.ctx = ctx
        super().__init__(addr, Handler)

    def finish_request(self, request, client_address):
        # The TLS handshake runs in the connection's thread, so a client that
        # never finishes it blocks nobody else.
        if self.ctx is not None:
            request.settimeout(30)
            try:
                request = self.ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write("tls handshake from %s failed: %s\n" % (client_address[0], e))
                return
            request.settimeout(None)
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if isinstance(e, (ConnectionError, ssl.SSLError, TimeoutError)):
            sys.stderr.write("connection from %s: %s\n" % (client_address[0], e))
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--listen", action="append", metavar="NAME[:tls]")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--state", help="ignored; names the state dir in the command line")
    a = ap.parse_args()
    listens = a.listen or ["http"]
    ctx = None
    if any(l.endswith(":tls") for l in listens):
        if not a.tls:
            ap.error("a :tls listener needs --tls CERT KEY")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
    servers = []
    for l in listens:
        name, tls = (l[:-4], True) if l.endswith(":tls") else (l, False)
        srv = Server((a.host, 0), ctx if tls else None)
        servers.append((name, srv))
    for name, srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    for name, srv in servers:
        print("%s %d" % (name, srv.server_address[1]), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
