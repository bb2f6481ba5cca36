#!/usr/bin/env bash
# Observing the controller: /metrics read by the real `promtool check metrics` (tests/promtool/build)
# and its values checked against the API server and helm (reconcile totals grow, the Ready gauge
# follows the HelmRelease's condition, the revision gauge follows `helm ls`); /healthz and
# /readyz (a leader and a standby are both ready); the HTTP server's limits (oversized request,
# too many headers, too many connections, a slow client, 404, 405, keep-alive and pipelining);
# --log-format json (every line parses, a reconcile's lines carry the release and a reconcile_id,
# no Secret value and no credential in the log at debug level); bad addresses and a port in use.
. "$(dirname "$0")/lib.sh"

PROMTOOL=$("$RUDDER_SOURCE_DIR/tests/promtool/build") || fail "cannot build promtool (tests/promtool/build)"
SECRET_VALUE="pw-$RANDOM-$RANDOM-do-not-log"

# addr FLAG LOG: the address a controller logged for --metrics-addr or --health-addr.
addr() {
  python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[2]):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("msg") == "serving HTTP" and sys.argv[1] in j.get("flag", ""):
        print(j["address"]); break
PY
}
# http ADDR PATH: "STATUS BODY" of a GET.
http() {
  python3 - "$1" "$2" <<'PY'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen("http://%s%s" % (sys.argv[1], sys.argv[2]), timeout=5)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
}
# metric NAME LABELS...: the value of the sample with (at least) these label="value" pairs, or "absent".
metric() {
  python3 - "$MADDR" "$@" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=5).read().decode()
name, want = sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
for line in text.splitlines():
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
    if not m or m.group(1) != name:
        continue
    labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
    if all(labels.get(k) == v for k, v in want.items()):
        print(m.group(4)); break
else:
    print("absent")
PY
}
ge() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2"; }
gt() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)' "$1" "$2"; }
eq() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) else 1)' "$1" "$2"; }

# ---- flags ----
out=$("$RUDDER_BIN" controller --metrics-addr nowhere:80 2>&1) && fail "a bad --metrics-addr was accepted"
case "$out" in *'--metrics-addr: "nowhere:80": the host is not an IP address or localhost'*) ;; *) fail "bad address message: $out" ;; esac
out=$("$RUDDER_BIN" controller --health-addr :99999 2>&1) && fail "a bad --health-addr was accepted"
case "$out" in *'--health-addr: ":99999": the port is not a number from 0 to 65535'*) ;; *) fail "bad port message: $out" ;; esac
out=$("$RUDDER_BIN" controller --log-format yaml 2>&1) && fail "a bad --log-format was accepted"
[ "$out" = 'rudder controller: --log-format: "yaml" is not logfmt or json' ] || fail "bad log format message: $out"
ok "bad --metrics-addr, --health-addr and --log-format are refused, saying what and where"

# ---- a leader with metrics, probes and JSON logs ----
CTRL_ARGS=(--metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --log-format json --leader-elect
           --leader-election-namespace "$NS" --leader-election-id metrics-test)
start_controller
wait_for 20 "the controller to log its addresses" bash -c "[ \$(grep -c 'serving HTTP' '$CTRL_LOG') -ge 2 ]"
MADDR=$(addr --metrics-addr "$CTRL_LOG")
HADDR=$(addr --health-addr "$CTRL_LOG")
[ -n "$MADDR" ] && [ -n "$HADDR" ] || fail "no addresses logged: $(grep 'serving HTTP' "$CTRL_LOG")"
[ "$(http "$HADDR" /healthz)" = "200 ok" ] || fail "/healthz: $(http "$HADDR" /healthz)"
ok "/healthz answers 200 ok (the loop is alive)"
wait_for 30 "/readyz 200" bash -c "[ \"\$(python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(\"http://$HADDR/readyz\", timeout=5).status)' 2>/dev/null)\" = 200 ]"
ok "/readyz answers 200 once leading with its caches synced"
wait_for 20 "leader gauge 1" eq "$(metric leader_election_master_status name=metrics-test)" 1
ok "leader_election_master_status{name=metrics-test} is 1 on the leader"

# A release whose values come from a Secret (its value must never reach the log).
kubectl -n "$NS" create secret generic creds --from-literal=pw="$SECRET_VALUE" >/dev/null
cat >"$WORK/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-out
data:
  pw: {{ .Values.db.password | quote }}
  n: {{ .Values.n | default 1 | quote }}
Y
HR_SPEC='{"valuesFrom": [{"kind": "Secret", "name": "creds", "valuesKey": "pw", "targetPath": "db.password"}]}' \
  hr_inline web web 1.0.0 "$WORK/cm.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "web Ready" hr_ready web
[ "$(helm_status helm web)" = "deployed 1" ] || fail "helm ls: $(helm_status helm web)"

scrape() { python3 -c 'import urllib.request,sys; sys.stdout.write(urllib.request.urlopen("http://'"$MADDR"'/metrics", timeout=5).read().decode())'; }
scrape >"$WORK/metrics-1.txt"
"$PROMTOOL" check metrics <"$WORK/metrics-1.txt" >"$WORK/promtool.out" 2>&1 || {
  cat "$WORK/promtool.out" >&2; fail "promtool check metrics found problems"; }
ok "promtool check metrics accepts /metrics ($(wc -l <"$WORK/metrics-1.txt") lines)"

for name in controller_runtime_reconcile_total controller_runtime_reconcile_time_seconds controller_runtime_reconcile_errors_total \
  workqueue_depth workqueue_adds_total workqueue_retries_total workqueue_queue_duration_seconds \
  workqueue_work_duration_seconds workqueue_unfinished_work_seconds workqueue_longest_running_processor_seconds \
  rest_client_requests_total leader_election_master_status rudder_releases rudder_release_revision \
  rudder_render_duration_seconds rudder_chart_cache_hits_total rudder_chart_cache_misses_total rudder_watch_streams \
  process_resident_memory_bytes process_cpu_seconds_total process_open_fds process_max_fds \
  process_virtual_memory_bytes process_start_time_seconds; do
  grep -q "^# TYPE $name " "$WORK/metrics-1.txt" || fail "no $name in /metrics"
done
grep -q '^# TYPE controller_runtime_reconcile_time_seconds histogram$' "$WORK/metrics-1.txt" || fail "reconcile time is not a histogram"
grep -q '^controller_runtime_reconcile_time_seconds_bucket{controller="helmrelease",le="0.005"} ' "$WORK/metrics-1.txt" ||
  fail "reconcile time buckets are not controller-runtime's"
grep -q '^workqueue_queue_duration_seconds_bucket{name="helmrelease",controller="helmrelease",le="1e-08"} ' "$WORK/metrics-1.txt" ||
  fail "workqueue buckets are not client-go's"
ok "every metric operators graph for controller-runtime controllers is there, with its type and buckets"

s1=$(metric controller_runtime_reconcile_total controller=helmrelease result=success)
ge "$s1" 1 || fail "reconcile_total success: $s1"
[ "$(metric rudder_releases controller=helmrelease ready=True)" = 1 ] || fail "rudder_releases True: $(metric rudder_releases controller=helmrelease ready=True)"
[ "$(metric rudder_release_revision controller=helmrelease namespace="$NS" name=web)" = 1 ] || fail "revision gauge is not helm's 1"
gt "$(metric workqueue_adds_total name=helmrelease)" 0 || fail "no workqueue adds"
gt "$(metric rest_client_requests_total code=200 method=GET)" 0 || fail "no GET 200 counted"
gt "$(metric rest_client_requests_total code=201 method=POST)" 0 || fail "no POST 201 counted (the release record)"
ge "$(metric rudder_watch_streams)" 3 || fail "watch streams: $(metric rudder_watch_streams)"
gt "$(metric controller_runtime_reconcile_time_seconds_count controller=helmrelease)" 0 || fail "no reconcile timed"
ge "$(metric rudder_render_duration_seconds_count)" 1 || fail "no render timed"
gt "$(metric process_resident_memory_bytes)" 1000000 || fail "resident memory: $(metric process_resident_memory_bytes)"
ok "after the install: reconciles counted (success $s1), Ready gauge True=1, revision 1 as helm ls, requests, watches, render, RSS"

# An upgrade: totals grow, the revision follows helm.
kubectl -n "$NS" patch helmrelease web --type merge -p '{"spec":{"values":{"n":"2"}}}' >/dev/null
rev2() { [ "$(helm_status helm web)" = "deployed 2" ]; }
wait_for 60 "revision 2" rev2
wait_for 30 "web Ready at generation 2" hr_ready web
[ "$(helm_status helm web)" = "deployed 2" ] || fail "helm ls: $(helm_status helm web)"
wait_for 10 "revision gauge 2" eq "$(metric rudder_release_revision controller=helmrelease namespace="$NS" name=web)" 2
gt "$(metric controller_runtime_reconcile_total controller=helmrelease result=success)" "$s1" || fail "reconcile_total did not grow"
ok "after an upgrade: reconcile_total grew and the revision gauge is 2, as helm ls says"

# A failing release: Ready=False on the object, counted as False and as errors.
e1=$(metric controller_runtime_reconcile_errors_total controller=helmrelease); [ "$e1" = absent ] && e1=0
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ fail "broken on purpose" }}\n' >"$WORK/bad.yaml"
hr_inline bad bad 1.0.0 "$WORK/bad.yaml" | kubectl apply -f - >/dev/null
wait_for 60 "bad Ready=False" hr_failed bad
wait_for 10 "False gauge 1" eq "$(metric rudder_releases controller=helmrelease ready=False)" 1
[ "$(metric rudder_releases controller=helmrelease ready=True)" = 1 ] || fail "True gauge changed"
t1=$(metric controller_runtime_terminal_reconcile_errors_total controller=helmrelease)
ge "$t1" 1 || fail "a render failure (stalled) is not a terminal error: $t1"
gt "$(metric controller_runtime_reconcile_errors_total controller=helmrelease)" "$e1" || fail "errors_total did not grow"
ok "a release that fails to render: Ready gauge False=1 (as its condition), errors and terminal errors counted"
kubectl -n "$NS" delete helmrelease bad --wait=true >/dev/null
wait_for 30 "False gauge 0" eq "$(metric rudder_releases controller=helmrelease ready=False)" 0
ok "a deleted release leaves the Ready gauge"

# ---- the HTTP server's limits ----
python3 - "$MADDR" <<'PY' || fail "HTTP server checks failed"
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
def conn():
    s = socket.create_connection((host, port), timeout=20)
    return s
def read_all(s):
    data = b""
    while True:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        data += d
    return data
def status(data):
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
# keep-alive and pipelining: three requests in one write, three answers in order on one connection
s = conn()
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = read_all(s)
assert data.count(b"HTTP/1.1 200 OK") == 2 and b"HTTP/1.1 404 Not Found" in data, data[:300]
assert data.index(b"HTTP/1.1 404") > data.rindex(b"HTTP/1.1 200"), "answers out of order"
print("ok pipelined GET, HEAD and 404 on one keep-alive connection")
# 405 with Allow
s = conn(); s.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
d = read_all(s); assert status(d) == 405 and b"Allow: GET, HEAD" in d, d[:200]
print("ok POST is 405 with Allow: GET, HEAD")
# an oversized request: 431, closed
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
d = read_all(s); assert status(d) == 431 and b"Connection: close" in d, d[:200]
print("ok a 20 kB request is 431 and closed")
# too many header fields: 431
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(100)) + b"\r\n")
d = read_all(s); assert status(d) == 431, d[:200]
print("ok 100 header fields are 431")
# a body on a GET larger than the limit: 413
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000)
d = read_all(s); assert status(d) == 413, d[:200]
print("ok a 100 kB body is 413")
# too many connections: the default limit is 32; the ones over it are answered 503 and closed
held = [conn() for _ in range(40)]
time.sleep(0.5)
refused = 0
for c in held:
    c.settimeout(0.5)
    try:
        d = c.recv(4096)
    except socket.timeout:
        continue
    if status(d) == 503:
        refused += 1
assert refused == 8, "refused %d of 40 (limit 32)" % refused
for c in held:
    c.close()
time.sleep(0.5)
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert status(read_all(s)) == 200
print("ok 40 connections: 8 over the limit of 32 answered 503; served again once they closed")
# a slow client (slowloris): one byte a second never finishes its request within 10 s: 408, closed
s = conn(); s.settimeout(30)
s.sendall(b"GET /metrics HTTP/1.1\r\n")
start = time.time()
closed_at = None
for i in range(25):
    try:
        s.sendall(b"X-Slow-%d: 1\r\n" % i)
    except OSError:
        closed_at = time.time(); break
    s.settimeout(1)
    try:
        d = s.recv(4096)
        if d:
            assert status(d) == 408, d[:200]
            closed_at = time.time(); break
    except socket.timeout:
        pass
assert closed_at is not None and 9 <= closed_at - start <= 14, "slow client not cut at ~10 s: %r" % (closed_at and closed_at - start)
print("ok a client sending a header line a second is answered 408 after %.1f s" % (closed_at - start))
PY
ok "HTTP server: keep-alive, pipelining, 404, 405, 413, 431, 503 over 32 connections, 408 for a slow client"

# ---- a standby is ready too ----
"$RUDDER_BIN" controller --kubeconfig "$KUBECONFIG" --namespace "$NS" --leader-elect --leader-election-namespace "$NS" \
  --leader-election-id metrics-test --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --log-format json \
  --storage-path "$WORK/charts2" >"$WORK/standby.log" 2>&1 &
EXTRA_PIDS+=($!)
wait_for 20 "the standby's addresses" bash -c "[ \$(grep -c 'serving HTTP' '$WORK/standby.log') -ge 2 ]"
SM=$(addr --metrics-addr "$WORK/standby.log"); SH=$(addr --health-addr "$WORK/standby.log")
wait_for 20 "standby /readyz 200" bash -c "[ \"\$(python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://$SH/readyz\", timeout=5).status)' 2>/dev/null)\" = 200 ]"
[ "$(MADDR=$SM metric leader_election_master_status name=metrics-test)" = 0 ] || fail "the standby's leader gauge is not 0"
[ "$(MADDR=$SM metric controller_runtime_reconcile_total)" = absent ] || fail "the standby reconciled"
ok "a standby: /readyz 200, leader_election_master_status 0, no reconciles"

# A port in use: the controller stops at once, naming the flag and the address.
out=$(timeout 20 "$RUDDER_BIN" controller --kubeconfig "$KUBECONFIG" --namespace "$NS" --metrics-addr "$MADDR" \
  --health-addr 0 2>&1) && fail "a controller started on a port in use"
case "$out" in *"--metrics-addr $MADDR: cannot listen: address already in use"*) ;; *) fail "port in use message: $out" ;; esac
ok "a --metrics-addr in use stops the controller: \"--metrics-addr $MADDR: cannot listen: address already in use\""

# ---- the log ----
stop_controller
python3 - "$CTRL_LOG" "$NS/web" "$SECRET_VALUE" "$KUBECONFIG" <<'PY' || fail "log checks failed"
import base64, json, re, sys
path, key, secret, kubeconfig = sys.argv[1:5]
lines = open(path, "rb").read().splitlines()
recs = []
for i, raw in enumerate(lines):
    j = json.loads(raw)  # every line is one JSON object
    assert isinstance(j, dict) and {"ts", "level", "msg"} <= j.keys(), raw
    recs.append(j)
uuid = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
mine = [r for r in recs if r.get("release") == key]
assert mine, "no line names the release"
# Lines of a reconcile: from its "reconcile" line (debug) to the next one, every line naming the release has an id.
ids = set()
for r in mine:
    if r["msg"] == "release records changed":
        continue  # a watch event of its records, outside any reconcile
    assert "reconcile_id" in r, "a line naming the release has no reconcile_id: %r" % r
    assert uuid.match(r["reconcile_id"]), r
    ids.add(r["reconcile_id"])
starts = [r for r in mine if r["msg"] == "reconcile"]
assert len(ids) == len(starts) >= 2, (len(ids), len(starts))
for r in mine:
    if r["msg"] in ("action", "installed", "upgraded"):
        assert r["reconcile_id"] in {s["reconcile_id"] for s in starts}
print("ok %d lines name %s; each has one of %d reconcile ids, one per reconcile" % (len(mine), key, len(ids)))
text = open(path, "rb").read()
assert secret.encode() not in text and base64.b64encode(secret.encode()) not in text, "the Secret's value is in the log"
# Nothing of the kubeconfig's credentials either (client key, certificate, token), as written or decoded.
creds = 0
for line in open(kubeconfig):
    k, _, v = line.strip().partition(":")
    v = v.strip().strip('"')
    if k in ("client-key-data", "client-certificate-data", "token") and len(v) > 16:
        creds += 1
        assert v.encode() not in text, k + " is in the log"
        if k != "token":
            pem = base64.b64decode(v)
            for body in pem.split(b"\n")[1:3]:
                assert body not in text, k + " (decoded) is in the log"
assert creds, "no credential found in the kubeconfig to look for"
print("ok neither the Secret's value nor the kubeconfig's %d credentials are in the debug log" % creds)
PY
ok "JSON log: every line parses; every reconcile line carries the release and its reconcile_id; no secret in it"
