#!/usr/bin/env bash
# rudder diff of HelmReleases whose chart is fetched (a HelmRepository over HTTP from the nginx
# chart repository; one over OCI from the registry with basic auth and the test CA; a repository
# named by spec.chart.url; a .tgz URL; a packaged chart in a ConfigMap and in a Secret) and whose values come from valuesFrom ConfigMaps (a YAML key, a
# targetPath, an optional one that is missing), as the controller reads them: with nothing
# changed the diff is empty; after the ConfigMaps change, the diff shows exactly the fields that
# the controller's upgrade then changes in the live objects (each changed field's old and new
# value, no other line, no other object), and `helm get values` shows the values it merged. A
# missing ConfigMap, a missing chart version and a missing HelmRepository fail with the reason
# and status 2.
# fixtures: cluster servers
. "$(dirname "$0")/lib.sh"
servers_env
R() { "$RUDDER_BIN" "$@" --kubeconfig "$KUBECONFIG" -n "$NS"; }

kubectl -n "$NS" create secret generic basic --from-literal=username="$SRV_USER" --from-literal=password="$SRV_PASS" >/dev/null
kubectl -n "$NS" create secret generic ca --from-file=ca.crt="$SRV_CA" >/dev/null
kubectl apply -n "$NS" -f - >/dev/null <<Y
apiVersion: rudder.dev/v1alpha1
kind: HelmRepository
metadata: {name: plain}
spec: {url: "$SRV_HTTP_URL"}
---
apiVersion: rudder.dev/v1alpha1
kind: HelmRepository
metadata: {name: reg}
spec: {url: "oci://$SRV_REGISTRY/charts", secretRef: {name: basic}, certSecretRef: {name: ca}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: base}
data:
  values.yaml: |
    message: first
    podLabels: {tier: one}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: port}
data: {port: "80"}
Y
hr() { # NAME CHART-JSON [EXTRA-SPEC-JSON]
  python3 - "$1" "$2" "${3:-{\}}" "$NS" <<'PY' | kubectl apply -f - >/dev/null
import json, sys
name, chart, extra, ns = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
spec = {"chart": chart, "interval": "1h", "values": {"replicaCount": 0},
        "valuesFrom": [{"kind": "ConfigMap", "name": "base"},
                       {"kind": "ConfigMap", "name": "port", "valuesKey": "port", "targetPath": "service.port"},
                       {"kind": "ConfigMap", "name": "absent", "optional": True}]}
spec.update(extra)
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}
start_controller
hr web '{"repository": {"name": "plain"}, "name": "podlike", "version": "0.1.0"}'
hr oci '{"repository": {"name": "reg"}, "name": "podlike", "version": "0.1.0"}'
hr byurl "{\"url\": \"$SRV_HTTP_URL\", \"name\": \"podlike\", \"version\": \"0.1.0\"}"
hr direct "{\"url\": \"$SRV_HTTP_URL/podlike-0.1.0.tgz\"}"
kubectl -n "$NS" create configmap packaged --from-file=chart.tgz="$SRV_REPO_DIR/podlike-0.1.0.tgz" >/dev/null
kubectl -n "$NS" create secret generic packaged --from-file=app.tgz="$SRV_REPO_DIR/podlike-0.2.0.tgz" >/dev/null
hr fromcm '{"configMapRef": {"name": "packaged"}}'
hr fromsecret '{"secretRef": {"name": "packaged", "key": "app.tgz"}}'
all="web oci byurl direct fromcm fromsecret"
for r in $all; do wait_for 120 "$r Ready" hr_ready "$r"; done

# ---- unchanged inputs: nothing to show (the same chart, values and objects as the controller's)
for r in $all; do
  set +e; R diff "$r" >"$WORK/d0.$r" 2>"$WORK/err"; rc=$?; set -e
  [ "$rc" = 0 ] && [ ! -s "$WORK/d0.$r" ] || fail "diff of unchanged $r: status $rc: $(cat "$WORK/d0.$r" "$WORK/err")"
done
ok "rudder diff of releases from a HelmRepository (HTTP and OCI), a repository URL, a .tgz URL, a ConfigMap and a Secret, values from valuesFrom: empty, status 0"

# ---- the ConfigMaps change (the releases suspended, so that the controller waits)
for r in web oci; do R suspend "$r" >/dev/null; done
objs="deployment/web-podlike service/web-podlike serviceaccount/web-podlike"
kubectl -n "$NS" get $objs -o json >"$WORK/before.json"
kubectl -n "$NS" patch configmap base --type merge \
  -p '{"data":{"values.yaml":"message: second\npodLabels: {tier: two}\n"}}' >/dev/null
kubectl -n "$NS" patch configmap port --type merge -p '{"data":{"port":"8080"}}' >/dev/null
for r in web oci; do
  set +e; R diff "$r" >"$WORK/d1.$r" 2>"$WORK/err"; rc=$?; set -e
  [ "$rc" = 1 ] || fail "diff of $r after the ConfigMaps changed: status $rc: $(cat "$WORK/d1.$r" "$WORK/err")"
done
cat "$WORK/d1.web"
# The same changes for the OCI chart: its removed and added lines (context lines hold names and
# creation times of its own).
changes() { grep '^[-+]' "$1" | sed -e "s/$2-podlike/NAME-podlike/g"; }
diff <(changes "$WORK/d1.web" web) <(changes "$WORK/d1.oci" oci) >&2 || fail "the OCI release's diff does not change what the HTTP one's does"
kubectl -n "$NS" get $objs -o json | cmp -s - "$WORK/before.json" || fail "rudder diff changed the live objects"
ok "after the ConfigMaps changed: a diff (status 1), the same for the OCI chart; nothing changed on the server"

# ---- the real upgrade: the controller's changes are exactly the diff's
R resume web --timeout 120s >"$WORK/resume.txt" 2>&1 || fail "resume web: $(cat "$WORK/resume.txt")"
grep -q "revision 2" "$WORK/resume.txt" || fail "resume did not upgrade: $(cat "$WORK/resume.txt")"
kubectl -n "$NS" get $objs -o json >"$WORK/after.json"
python3 - "$WORK/before.json" "$WORK/after.json" "$WORK/d1.web" <<'PY' || fail "the diff is not what the upgrade changed"
import json, sys, yaml
before, after, diff = [json.load(open(f))["items"] for f in sys.argv[1:3]] + [open(sys.argv[3]).read()]
# What only the server or other controllers change: not the upgrade's doing.
def skip(p):
    return p[:1] == ("status",) or p[:2] in (("metadata", "resourceVersion"), ("metadata", "managedFields")) or \
        p == ("metadata", "annotations", "deployment.kubernetes.io/revision")
def flat(v, p=()):
    if isinstance(v, dict):
        for k, x in v.items(): yield from flat(x, p + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v): yield from flat(x, p + (i,))
    elif not skip(p):
        yield p, v
key = lambda o: "%s %s/%s" % (o["kind"], o["metadata"]["namespace"], o["metadata"]["name"])
want = {}
for b, a in zip(before, after):
    fb, fa = dict(flat(b)), dict(flat(a))
    ch = {p: (fb.get(p), fa.get(p)) for p in set(fb) | set(fa) if fb.get(p) != fa.get(p)}
    if ch: want[key(b)] = ch
# The diff: per object, the removed and added lines as {key: value}.
got, cur = {}, None
for line in diff.splitlines():
    if line.startswith("--- "): cur = got.setdefault(line[4:].rsplit(" (", 1)[0], {"-": [], "+": []})
    elif line.startswith("+++ ") or line.startswith("@@"): continue
    elif line[:1] in "-+":
        text = line[1:].strip()
        while text.startswith("- "): text = text[2:]
        cur[line[0]].append(yaml.safe_load(text))
assert set(got) == set(want), ("objects", sorted(got), sorted(want))
for obj, ch in want.items():
    olds = sorted(json.dumps({p[-1]: o}) for p, (o, n) in ch.items() if o is not None)
    news = sorted(json.dumps({p[-1]: n}) for p, (o, n) in ch.items() if n is not None)
    assert sorted(json.dumps(x) for x in got[obj]["-"]) == olds, (obj, got[obj]["-"], olds)
    assert sorted(json.dumps(x) for x in got[obj]["+"]) == news, (obj, got[obj]["+"], news)
    print("%s: %s" % (obj, ", ".join("%s %s -> %s" % (".".join(map(str, p)), o, n) for p, (o, n) in sorted(ch.items(), key=str))))
PY
helm get values web -n "$NS" -o json >"$WORK/vals.json"
python3 -c '
import json, sys
got = json.load(open(sys.argv[1]))
want = {"message": "second", "podLabels": {"tier": "two"}, "service": {"port": 8080}, "replicaCount": 0}
assert got == want, got' "$WORK/vals.json" || fail "helm get values: $(cat "$WORK/vals.json")"
set +e; R diff web >"$WORK/d2" 2>&1; rc=$?; set -e
[ "$rc" = 0 ] && [ ! -s "$WORK/d2" ] || fail "diff after the upgrade: status $rc: $(cat "$WORK/d2")"
ok "the controller's upgrade changed exactly the fields the diff showed, old and new values alike; helm get values shows the merged valuesFrom; the diff is empty again"

# ---- errors: status 2 and the reason
hr nocm '{"repository": {"name": "plain"}, "name": "podlike", "version": "0.1.0"}' \
  '{"suspend": true, "valuesFrom": [{"kind": "ConfigMap", "name": "missing"}]}'
hr nover '{"repository": {"name": "plain"}, "name": "podlike", "version": "9.9.9"}' '{"suspend": true}'
hr norepo '{"repository": {"name": "nothere"}, "name": "podlike", "version": "0.1.0"}' '{"suspend": true}'
hr ocinover '{"repository": {"name": "reg"}, "name": "podlike", "version": "9.9.9"}' '{"suspend": true}'
expect_err() { # NAME TEXT
  set +e; R diff "$1" >"$WORK/e.out" 2>"$WORK/e.err"; local rc=$?; set -e
  echo "$1: $(cat "$WORK/e.err")"
  [ "$rc" = 2 ] && [ ! -s "$WORK/e.out" ] && grep -qF -- "rudder diff: HelmRelease $NS/$1: " "$WORK/e.err" &&
    grep -qF -- "$2" "$WORK/e.err" || fail "diff $1: status $rc, stderr: $(cat "$WORK/e.err"), want: $2"
}
expect_err nocm "spec.valuesFrom[0]: cannot read ConfigMap $NS/missing: "
expect_err nover "9.9.9"
expect_err ocinover "9.9.9"
set +e; R diff norepo >"$WORK/e.out" 2>"$WORK/e.err"; rc=$?; set -e
[ "$rc" = 2 ] && grep -qx "rudder diff: spec.chart.repository: HelmRepository $NS/nothere not found" "$WORK/e.err" ||
  fail "diff norepo: status $rc: $(cat "$WORK/e.err")"
ok "a missing valuesFrom ConfigMap, a chart version the repository (HTTP or OCI) lacks, a missing HelmRepository: status 2 and the reason"
stop_controller
