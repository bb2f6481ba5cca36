#!/usr/bin/env bash
# Every manifest under examples/ is accepted by the API server as it stands (server-side dry run
# against the installed CRDs: every field known to their schemas, no typo left in an example).
. "$(dirname "$0")/lib.sh"
shopt -s nullglob
files=("$RUDDER_SOURCE_DIR"/examples/*.yaml)
((${#files[@]} >= 3)) || fail "expected the examples (helmrelease, microservice, captain-appstore) under examples/"
# A dry run does not create the Namespaces an example declares: those missing are made for the test.
for n in $(awk '/^---/ {ns = 0} /^kind: Namespace$/ {ns = 1} ns && /^  name: / {print $2; ns = 0}' "${files[@]}"); do
  if ! kubectl get namespace "$n" >/dev/null 2>&1; then
    kubectl create namespace "$n" >/dev/null
    EXTRA_NAMESPACES+=("$n")
  fi
done
for f in "${files[@]}"; do
  out=$(kubectl apply --dry-run=server --validate=strict -f "$f" 2>&1) || fail "$(basename "$f") refused by the API server: $out"
  ok "$(basename "$f"): accepted by the API server ($(grep -c ' (server dry run)' <<<"$out") objects)"
done
