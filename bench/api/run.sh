#!/usr/bin/env bash
# Runs the API-machinery benchmarks (issue 3) and prints `name value unit` lines.
#   bench/api/run.sh                 # all three; starts a throwaway local control plane for
#                                    # watch_streams unless KUBECONFIG is already set
#   bench/api/run.sh decode queue    # only some: streams, decode, queue
# No thresholds: the figures are for the README and for comparison runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$("$root/bench/api/build.sh")
what=("$@")
[ ${#what[@]} -gt 0 ] || what=(streams decode queue)
started=""
cleanup() { [ -z "$started" ] || "$root/tests/cluster/down" "$started" >/dev/null 2>&1 || true; }
trap cleanup EXIT
for w in "${what[@]}"; do
  case $w in
    streams)
      if [ -z "${KUBECONFIG:-}" ]; then
        eval "$("$root/tests/cluster/up" --name "bench-$$")"
        started=$RUDDER_CLUSTER_STATE
      fi
      "$bin/watch_streams" "${RUDDER_BENCH_STREAMS:-1000}" ;;
    decode) "$bin/watch_decode" "${RUDDER_BENCH_EVENTS:-20000}" ;;
    queue) "$bin/queue_bench" "${RUDDER_BENCH_KEYS:-1000000}" ;;
    *) echo "run.sh: unknown benchmark '$w' (streams, decode, queue)" >&2; exit 2 ;;
  esac
done
