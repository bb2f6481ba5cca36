#!/usr/bin/env bash
# SIGTERM while the API server does not answer (a server that accepts
# connections and never replies): the controller cancels everything in flight
# and exits 0 promptly instead of waiting for request timeouts.
. "$(dirname "$0")/lib.sh"

port_file=$WORK/port
python3 - "$port_file" <<'PY' &
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
conns = []
end = time.time() + 120
while time.time() < end:
    s.settimeout(1)
    try:
        c, _ = s.accept(); conns.append(c)  # accepted, never answered
    except socket.timeout:
        pass
PY
EXTRA_PIDS+=($!)
wait_for 10 "the silent server" test -s "$port_file"
kubectl config view --raw --minify >"$WORK/kc"
python3 - "$WORK/kc" "$(cat "$port_file")" <<'PY'
import re, sys
p, port = sys.argv[1], sys.argv[2]
t = open(p).read()
t = re.sub(r"server: https://[^\n]+", "server: https://127.0.0.1:%s" % port, t)
open(p, "w").write(t)
PY
"$RUDDER_BIN" controller "${NO_TELEMETRY[@]}" --kubeconfig "$WORK/kc" --namespace "$NS" --leader-elect --leader-election-namespace "$NS" \
  >"$WORK/ctl.log" 2>&1 &
pid=$!
EXTRA_PIDS+=("$pid")
sleep 2 # requests (lease, lists, watches) are now hanging on the silent server
kill -0 "$pid" || fail "the controller exited early: $(tail -5 "$WORK/ctl.log")"
kill -TERM "$pid"
start=$SECONDS
wait_for 10 "the controller to exit" bash -c "! kill -0 $pid 2>/dev/null"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc on SIGTERM: $(tail -5 "$WORK/ctl.log")"
ok "SIGTERM with the API server silent: exited 0 after $((SECONDS - start))s (request timeout is 60s)"
