# Shared by the tests of deploy/ (test_deploy.sh: the kustomize base; test_deploy_chart.sh: the
# chart): what rudder's service account must and must not be allowed, and the pieces to run the
# controller with that service account's token. Sourced after lib.sh.

# to_json FILE: FILE's YAML documents as one JSON list (kubectl reads the YAML: no YAML module needed).
to_json() {
  kubectl create --dry-run=client --validate=false -o json -f "$1" |
    python3 -c '
import json, sys
text, docs, i = sys.stdin.read(), [], 0
while text[i:].strip():  # one JSON object after another
    d, i = json.JSONDecoder().raw_decode(text, len(text) - len(text[i:].lstrip()))
    docs += d["items"] if d.get("kind") == "List" else [d]
print(json.dumps(docs))'
}

# docs_of KIND FILE: the documents of that kind in a YAML file, as a JSON list.
docs_of() {
  to_json "$2" | python3 -c 'import json, sys; print(json.dumps([d for d in json.load(sys.stdin) if d["kind"] == sys.argv[1]], sort_keys=True))' "$1"
}

# pick_kinds keep|drop FILE KIND...: FILE's documents of (keep) or but those of (drop) the given
# kinds, as a JSON List for kubectl.
pick_kinds() {
  local mode=$1 file=$2; shift 2
  to_json "$file" | python3 -c '
import json, sys
mode, kinds = sys.argv[1], set(sys.argv[2:])
items = [d for d in json.load(sys.stdin) if (d["kind"] in kinds) == (mode == "keep")]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))' "$mode" "$@"
}

# rbac_rules FILE: the rules of every ClusterRole and Role in FILE, names and labels left out
# (to compare the chart's with the kustomize base's), as JSON.
rbac_rules() {
  to_json "$1" | python3 -c '
import json, sys
docs = [d for d in json.load(sys.stdin) if d["kind"] in ("ClusterRole", "Role")]
print(json.dumps(sorted([d["kind"], d["rules"]] for d in docs), sort_keys=True, indent=1))'
}

# deploy_args FILE: the container's arguments of the Deployment in FILE, one a line.
deploy_args() {
  docs_of Deployment "$1" | python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)[0]["spec"]["template"]["spec"]["containers"][0]["args"]))'
}

# controller_args FILE: the controller's flags from the Deployment in FILE, one a line, without
# the subcommand and --storage-path (a test gives its own). Flags this binary does not know yet are
# left out and named on stderr.
controller_args() {
  local help a
  help=$("$RUDDER_BIN" controller --help)
  deploy_args "$1" |
  while IFS= read -r a; do
    case "$a" in controller | --storage-path=*) continue ;; esac
    if grep -q -- "${a%%=*}[ =]" <<<"$help"; then echo "$a"; else echo "note: this rudder has no ${a%%=*} yet: left out" >&2; fi
  done
}

# sa_kubeconfig NS SA OUT: a kubeconfig for the local control plane that authenticates with a token
# of that service account (the TokenRequest API, as a pod's projected token), with NS as the
# context's namespace (as in a pod: the leader election's default namespace).
sa_kubeconfig() {
  local token
  token=$(kubectl -n "$1" create token "$2" --duration 1h)
  kubectl config view --raw --flatten --minify -o json |
    TOKEN=$token python3 -c '
import json, os, sys
c = json.load(sys.stdin)
cl = c["clusters"][0]
print(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "sa",
  "clusters": [{"name": "local", "cluster": cl["cluster"]}],
  "users": [{"name": "sa", "user": {"token": os.environ["TOKEN"]}}],
  "contexts": [{"name": "sa", "context": {"cluster": "local", "user": "sa", "namespace": sys.argv[1]}}]}))
' "$1" >"$3"
}

# can_i_checks USER NS LEASE: what the controller does as itself is allowed (kubectl auth can-i
# asks the API server's authorizer), and what it never does is not.
can_i_checks() {
  local user=$1 ns=$2 lease=$3 c
  local yes=(
    "list helmreleases.rudder.dev -A" "watch helmreleases.rudder.dev -A" "patch helmreleases.rudder.dev -n default"
    "patch helmreleases.rudder.dev --subresource=status -n default" "update helmreleases.rudder.dev --subresource=finalizers -n default"
    "watch helmrepositories.rudder.dev -A" "patch helmrepositories.rudder.dev --subresource=status -n default"
    "watch microservices.micro.hello.com -A" "patch microservices.micro.hello.com --subresource=status -n default"
    "update microservices.micro.hello.com --subresource=finalizers -n default"
    "watch helmrequests.app.alauda.io -A" "patch helmrequests.app.alauda.io --subresource=status -n default"
    "update helmrequests.app.alauda.io --subresource=finalizers -n default"
    "watch chartrepos.app.alauda.io -A" "patch chartrepos.app.alauda.io --subresource=status -n default"
    "create charts.app.alauda.io -n default" "patch charts.app.alauda.io -n default" "delete charts.app.alauda.io -n default"
    "watch customresourcedefinitions.apiextensions.k8s.io" "get customresourcedefinitions.apiextensions.k8s.io"
    "list secrets -A" "watch secrets -A" "get secrets -n default" "watch configmaps -A" "get configmaps -n default"
    "create events -n default" "patch events -n default"
    "impersonate serviceaccounts -n default"
    "create leases.coordination.k8s.io -n $ns" "get leases.coordination.k8s.io/$lease -n $ns"
    "update leases.coordination.k8s.io/$lease -n $ns"
  )
  local no=(
    "create secrets -n default" "update secrets -n default" "patch secrets -n default" "delete secrets -n default"
    "create configmaps -n default" "delete configmaps -n default"
    "create deployments.apps -n default" "get pods -n default" "create pods -n default" "create serviceaccounts/token -n default"
    "create namespaces" "delete namespaces"
    "create clusterrolebindings.rbac.authorization.k8s.io" "create rolebindings.rbac.authorization.k8s.io -n default"
    "bind clusterroles.rbac.authorization.k8s.io" "escalate clusterroles.rbac.authorization.k8s.io"
    "impersonate users" "impersonate groups"
    "create helmreleases.rudder.dev -n default" "delete helmreleases.rudder.dev -n default" "update helmreleases.rudder.dev -n default"
    "delete microservices.micro.hello.com -n default" "delete helmrequests.app.alauda.io -n default"
    "create customresourcedefinitions.apiextensions.k8s.io" "delete customresourcedefinitions.apiextensions.k8s.io"
    "update leases.coordination.k8s.io/other-lease -n $ns" "create leases.coordination.k8s.io -n default"
    "delete events -n default" "* *" "list deployments.apps -A" "watch services -A"
  )
  set -f # "* *" is words, not globs
  for c in "${yes[@]}"; do
    # shellcheck disable=SC2086 # the words of each check are separate arguments
    [ "$(kubectl auth can-i $c --as="$user" 2>/dev/null)" = yes ] || fail "$user should be allowed to $c"
  done
  for c in "${no[@]}"; do
    # shellcheck disable=SC2086
    [ "$(kubectl auth can-i $c --as="$user" 2>/dev/null || true)" = no ] || fail "$user should not be allowed to $c"
  done
  set +f
  ok "kubectl auth can-i as $user: the ${#yes[@]} things the controller does are allowed, ${#no[@]} it never does are not"
}
