#!/usr/bin/env bash
# valuesFrom and dependsOn on the HelmRelease door (both handled by the engine, for every door):
# values read from a ConfigMap and a Secret (one at a targetPath), merged in order under
# spec.values, the manifest equal to what `helm template -f ... --set ...` renders from the same
# inputs; a change of the ConfigMap upgrades the release at once (watched, not at the interval); a
# missing ConfigMap gives Ready=False naming it, and creating it installs the release; a release
# that depends on another is installed only after that one is Ready, and is woken by it; a cycle
# is reported.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/chart/templates"
printf 'apiVersion: v2\nname: vf\nversion: 1.0.0\n' >"$WORK/chart/Chart.yaml"
cat >"$WORK/chart/templates/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-out
data:
  values: {{ toJson .Values | quote }}
Y
tpl=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$WORK/chart/templates/cm.yaml")

cat >"$WORK/base.yaml" <<'Y'
replicas: 2
msg: from-configmap
nested: {a: 1, b: 2}
list: [1, 2]
Y
kubectl -n "$NS" create configmap base --from-file=values.yaml="$WORK/base.yaml" >/dev/null
kubectl -n "$NS" create secret generic creds --from-literal=pw='s3cret' --from-literal=values.yaml='msg: from-secret' >/dev/null

hr() { # hr NAME SPEC-JSON-EXTRA
  python3 - "$1" "$NS" "$tpl" "$2" <<'PY'
import json, sys
name, ns, tpl, extra = sys.argv[1:5]
spec = {"chart": {"inline": {"chartName": "vf", "chartVersion": "1.0.0", "templates": {"cm.yaml": json.loads(tpl)}}}}
spec.update(json.loads(extra))
print(json.dumps({"apiVersion": "rudder.dev/v1alpha1", "kind": "HelmRelease",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
}

start_controller
hr web '{"valuesFrom": [{"kind": "ConfigMap", "name": "base"},
                         {"kind": "Secret", "name": "creds"},
                         {"kind": "Secret", "name": "creds", "valuesKey": "pw", "targetPath": "db.password"},
                         {"kind": "ConfigMap", "name": "absent", "optional": true}],
          "values": {"nested": {"b": 3}}}' | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease web Ready" hr_ready web
ok "a release with valuesFrom (ConfigMap, Secret, targetPath, an optional absent one) became Ready"

printf 'nested: {b: 3}\n' >"$WORK/spec.yaml"
printf 'msg: from-secret\n' >"$WORK/secret.yaml"
helm template web "$WORK/chart" -n "$NS" -f "$WORK/base.yaml" -f "$WORK/secret.yaml" -f "$WORK/spec.yaml" \
  --set db.password=s3cret >"$WORK/want.yaml"
helm get manifest web -n "$NS" >"$WORK/got.yaml"
# helm get manifest ends with the blank lines of the stored manifest; helm template does not.
trim() { python3 -c 'import sys; sys.stdout.write(open(sys.argv[1]).read().rstrip("\n") + "\n")' "$1"; }
diff -u <(trim "$WORK/want.yaml") <(trim "$WORK/got.yaml") >&2 || fail "manifest differs from helm template with the same values"
ok "manifest equal to helm template -f configmap -f secret -f spec-values --set targetPath=secret"
helm get values web -n "$NS" -o json | python3 -c '
import json,sys; v=json.load(sys.stdin)
assert v["db"]["password"] == "s3cret" and v["msg"] == "from-secret" and v["nested"] == {"a": 1, "b": 3}, v' ||
  fail "stored values are not the merged values"
ok "the release record stores the merged values (helm get values)"

# A change of the ConfigMap upgrades at once: the default interval is 10 minutes.
kubectl -n "$NS" create configmap base --from-literal=values.yaml='replicas: 5' --dry-run=client -o yaml |
  kubectl apply -f - >/dev/null 2>&1
rev2() { [ "$(helm_status helm web)" = "deployed 2" ]; }
wait_for 30 "revision 2 after the ConfigMap changed" rev2
[ "$(cm_data "$NS" web-out values | python3 -c 'import json,sys; print(json.load(sys.stdin)["replicas"])')" = 5 ] ||
  fail "the new ConfigMap value is not rendered"
ok "changing the valuesFrom ConfigMap upgraded the release within seconds (revision 2)"
# An unrelated change of the Secret's other key gives no new revision (same merged values).
kubectl -n "$NS" label secret creds touched=yes >/dev/null
sleep 3
[ "$(helm_status helm web)" = "deployed 2" ] || fail "a change that leaves the values alone made a new revision"
ok "a change that leaves the merged values alone is not an upgrade"

# A missing required ConfigMap: Ready=False naming it; creating it installs the release.
hr late '{"valuesFrom": [{"kind": "ConfigMap", "name": "late-values"}]}' | kubectl apply -f - >/dev/null
wait_for 60 "late Ready=False" hr_failed late
msg=$(hr_cond_msg late Ready)
case "$msg" in *"spec.valuesFrom[0]"*"ConfigMap $NS/late-values"*) ;; *) fail "message does not name the ConfigMap: $msg" ;; esac
[ "$(helm_status helm late)" = absent ] || fail "a release was made without its values"
ok "a missing valuesFrom ConfigMap gives Ready=False naming it, nothing installed"
kubectl -n "$NS" create configmap late-values --from-literal=values.yaml='x: 1' >/dev/null
wait_for 30 "late Ready once its ConfigMap exists" hr_ready late
ok "creating the ConfigMap installed the release (watched)"

# dependsOn: app waits for db, which waits for its values.
hr db '{"valuesFrom": [{"kind": "ConfigMap", "name": "db-values"}]}' | kubectl apply -f - >/dev/null
hr app '{"dependsOn": [{"name": "db"}]}' | kubectl apply -f - >/dev/null
wait_for 60 "app waiting for db" bash -c "[ \"\$(kubectl -n $NS get helmrelease app -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = DependencyNotReady ]"
sleep 2
[ "$(helm_status helm app)" = absent ] || fail "app was installed before db is Ready"
case "$(hr_cond_msg app Ready)" in *"dependency '$NS/db' is not ready"*) ;; *) fail "app's message: $(hr_cond_msg app Ready)" ;; esac
ok "a release whose dependency is not Ready waits (DependencyNotReady), nothing installed"
kubectl -n "$NS" create configmap db-values --from-literal=values.yaml='y: 1' >/dev/null
wait_for 30 "db Ready" hr_ready db
wait_for 30 "app Ready once db is" hr_ready app
t_db=$(helm history db -n "$NS" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["updated"])')
t_app=$(helm history app -n "$NS" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["updated"])')
[[ "${t_app:0:19}" > "${t_db:0:19}" || "${t_app:0:19}" == "${t_db:0:19}" ]] || fail "app was installed before db ($t_app < $t_db)"
ok "the dependant was installed after its dependency became Ready, woken by it"

# A diamond: top depends on left and right, both on base; installed in that order (created in
# the opposite order). Then every spec changes at once: the upgrades go in the same order (a
# dependency is Ready at its new generation only once it has upgraded).
first_time() { helm history "$1" -n "$NS" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)['"$2"']["updated"][:23])'; }
for spec in 'base {}' 'left {"dependsOn": [{"name": "base"}]}' 'right {"dependsOn": [{"name": "base"}]}' \
  'top {"dependsOn": [{"name": "left"}, {"name": "right"}]}'; do
  n=${spec%% *}
  hr "$n" "${spec#* }" >"$WORK/$n.json"
done
kubectl apply -f "$WORK/top.json" -f "$WORK/left.json" -f "$WORK/right.json" -f "$WORK/base.json" >/dev/null
for n in base left right top; do wait_for 90 "$n Ready" hr_ready "$n"; done
order_ok() { # order_ok INDEX: revision INDEX of base <= left, right <= top
  local b l r t
  b=$(first_time base "$1"); l=$(first_time left "$1"); r=$(first_time right "$1"); t=$(first_time top "$1")
  [[ ! "$l" < "$b" && ! "$r" < "$b" && ! "$t" < "$l" && ! "$t" < "$r" ]] || { echo "base $b left $l right $r top $t" >&2; return 1; }
}
order_ok 0 || fail "the diamond was not installed in dependency order"
ok "a diamond (top -> left, right -> base) installed in dependency order"
for n in base left right top; do
  python3 - "$WORK/$n.json" <<'PY' >"$WORK/$n-2.json"
import json, sys
o = json.load(open(sys.argv[1])); o["spec"]["values"] = {"generation": 2}; print(json.dumps(o))
PY
done
# (in one kubectl apply, dependencies first: a dependant whose change reaches the API server before
# its dependency's sees that dependency Ready at its then current generation)
kubectl apply -f "$WORK/base-2.json" -f "$WORK/left-2.json" -f "$WORK/right-2.json" -f "$WORK/top-2.json" >/dev/null
all_rev2() { for n in base left right top; do [ "$(helm_status helm "$n")" = "deployed 2" ] || return 1; done; }
wait_for 90 "every release of the diamond at revision 2" all_rev2
for n in base left right top; do wait_for 30 "$n Ready" hr_ready "$n"; done
order_ok 1 || fail "the diamond was not upgraded in dependency order"
ok "all four changed at once: upgraded in dependency order too"

# A cycle is reported.
hr cx '{"dependsOn": [{"name": "cy"}]}' | kubectl apply -f - >/dev/null
hr cy '{"dependsOn": [{"name": "cx"}]}' | kubectl apply -f - >/dev/null
cyc() {
  local r1 r2
  r1=$(kubectl -n "$NS" get helmrelease cx -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')
  r2=$(kubectl -n "$NS" get helmrelease cy -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')
  [ "$r1" = DependencyCycle ] || [ "$r2" = DependencyCycle ]
}
wait_for 60 "a DependencyCycle" cyc
ok "a dependsOn cycle is reported (DependencyCycle)"
[ "$(helm_status helm cx)" = absent ] && [ "$(helm_status helm cy)" = absent ] || fail "a release in a cycle was installed"
ok "nothing in the cycle installed"
stop_controller
