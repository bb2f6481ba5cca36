#!/usr/bin/env python3
"""tests/servers/token.py - the token issuer of the token-auth test registry.

Usage:
  token.py --tls CERT KEY --sign-cert PEM --sign-key PEM --htpasswd FILE
           --issuer NAME [--host 127.0.0.1] [--ttl 300]

Listens on a free port of --host with TLS and prints 'token PORT' on stdout
once listening. It speaks the registry token protocol that the distribution
registry's `auth.token` points clients to:

  GET  /token?service=S&scope=repository:NAME:ACTIONS[&scope=...]
       with Authorization: Basic (user:password of --htpasswd)
  POST /token  (OAuth2 form: grant_type=password with username/password, or
       grant_type=refresh_token with a refresh_token issued here;
       service, scope, client_id)

and answers {"token", "access_token", "expires_in", "issued_at"} (plus
"refresh_token" for the POST password grant or ?offline_token=true): a JWT
signed RS256 by --sign-key (through the openssl CLI), its certificate in the
x5c header, so a registry whose rootcertbundle holds the CA of --sign-cert
accepts it. An authenticated user is granted every action asked for; missing
or wrong credentials get 401 with a Basic challenge (a request without
credentials is refused, not answered with an anonymous token). The
--htpasswd file holds 'user:password' lines in clear (test credentials only).
Every request is logged on stderr, without credentials.
"""

import argparse
import base64
import hmac
import http.server
import json
import secrets
import socketserver
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def pem_to_der(path):
    lines = open(path).read().split("\n")
    body, inside = [], False
    for l in lines:
        if l.startswith("-----BEGIN CERTIFICATE"):
            inside = True
        elif l.startswith("-----END CERTIFICATE"):
            break
        elif inside:
            body.append(l.strip())
    return base64.b64decode("".join(body))


class Issuer:
    def __init__(self, a):
        self.key = a.sign_key
        self.x5c = [base64.b64encode(pem_to_der(a.sign_cert)).decode()]
        self.issuer, self.ttl = a.issuer, a.ttl
        self.users = {}
        for line in open(a.htpasswd):
            line = line.rstrip("\n")
            if ":" in line:
                u, p = line.split(":", 1)
                self.users[u] = p
        self.refresh = {}
        self.lock = threading.Lock()

    def check(self, user, password):
        want = self.users.get(user)
        return want is not None and hmac.compare_digest(want.encode(), (password or "").encode())

    def sign(self, user, service, scopes):
        access = []
        for scope in scopes:
            # type:name:actions, where the name may hold ':' (a port) only in odd cases
            parts = scope.split(":")
            if len(parts) < 3:
                continue
            typ, actions = parts[0], parts[-1]
            name = ":".join(parts[1:-1])
            acts = sorted(set(x for x in actions.split(",") if x))
            access.append({"type": typ, "name": name, "actions": acts})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": self.x5c}
        claims = {"iss": self.issuer, "sub": user, "aud": service, "exp": now + self.ttl,
                  "nbf": now - 10, "iat": now, "jti": secrets.token_hex(16), "access": access}
        signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
                         b64url(json.dumps(claims, separators=(",", ":")).encode()))
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.key],
                             input=signing_input.encode(), capture_output=True, check=True).stdout
        return signing_input + "." + b64url(sig), now

    def new_refresh(self, user):
        t = secrets.token_urlsafe(24)
        with self.lock:
            self.refresh[t] = user
        return t

    def refresh_user(self, token):
        with self.lock:
            return self.refresh.get(token)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "rudder-token/1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))

    def reply(self, status, doc, headers=()):
        body = json.dumps(doc).encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def unauthorized(self, why):
        sys.stderr.write("refused: %s\n" % why)
        self.reply(401, {"errors": [{"code": "UNAUTHORIZED", "message": why}]},
                   [("WWW-Authenticate", 'Basic realm="rudder test token issuer"')])

    def issue(self, user, service, scopes, offline):
        iss = self.server.issuer
        token, now = iss.sign(user, service, scopes)
        doc = {"token": token, "access_token": token, "expires_in": iss.ttl,
               "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))}
        if offline:
            doc["refresh_token"] = iss.new_refresh(user)
        sys.stderr.write("issued a token to %s for %s: %s\n" % (user, service, " ".join(scopes) or "(no scope)"))
        self.reply(200, doc)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/token":
            return self.reply(404, {"errors": [{"code": "NOT_FOUND", "message": url.path}]})
        q = urllib.parse.parse_qs(url.query)
        scopes = [s for v in q.get("scope", []) for s in v.split(" ") if s]
        auth = self.headers.get("Authorization", "")
        if not auth.lower().startswith("basic "):
            return self.unauthorized("no credentials")
        try:
            user, _, password = base64.b64decode(auth[6:].strip()).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return self.unauthorized("malformed basic credentials")
        if not self.server.issuer.check(user, password):
            return self.unauthorized("wrong credentials for user %r" % user)
        self.issue(user, q.get("service", [""])[0], scopes, q.get("offline_token", [""])[0] == "true")

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        n = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(n).decode("utf-8", "replace")) if n > 0 else {}
        if url.path != "/token":
            return self.reply(404, {"errors": [{"code": "NOT_FOUND", "message": url.path}]})
        f = lambda k: form.get(k, [""])[0]
        scopes = [s for v in form.get("scope", []) for s in v.split(" ") if s]
        grant = f("grant_type")
        if grant == "password":
            if not self.server.issuer.check(f("username"), f("password")):
                return self.unauthorized("wrong credentials for user %r" % f("username"))
            return self.issue(f("username"), f("service"), scopes, True)
        if grant == "refresh_token":
            user = self.server.issuer.refresh_user(f("refresh_token"))
            if user is None:
                return self.unauthorized("unknown refresh token")
            return self.issue(user, f("service"), scopes, False)
        self.reply(400, {"error": "unsupported_grant_type", "error_description": grant})


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, ctx, issuer):
        self.ctx, self.issuer = ctx, issuer
        super().__init__(addr, Handler)

    def finish_request(self, request, client_address):
        request.settimeout(30)
        try:
            request = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            sys.stderr.write("tls handshake from %s failed: %s\n" % (client_address[0], e))
            return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if isinstance(e, (ConnectionError, ssl.SSLError, TimeoutError)):
            sys.stderr.write("connection from %s: %s\n" % (client_address[0], e))
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), required=True)
    ap.add_argument("--sign-cert", required=True)
    ap.add_argument("--sign-key", required=True)
    ap.add_argument("--htpasswd", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--ttl", type=int, default=300)
    a = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.tls[0], a.tls[1])
    srv = Server((a.host, 0), ctx, Issuer(a))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("token %d" % srv.server_address[1], flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
