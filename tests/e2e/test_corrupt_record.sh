#!/usr/bin/env bash
# A release record that cannot be read — data that does not decode, JSON that does not parse, a
# storage format or apply method of a newer Helm — stops the release: Ready=False (RecordUnreadable)
# names the Secret and what is wrong, nothing is applied over it and the deployed objects stay;
# deleting or fixing the record lets the next reconcile go on.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/t"
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rec-cm\ndata:\n  v: "%s"\n' "$1" >"$WORK/t/cm.yaml"; }
reason() { kubectl -n "$NS" get helmrelease rec -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}'; }
apply_v() { cm "$1"; hr_inline rec rec "1.0.$1" "$WORK/t/cm.yaml" | kubectl apply -f - >/dev/null; }
rev() { hr_field rec '{.status.lastAppliedRevision}'; }
# secret_like REV NEWREV [type=T] [release=TEXT-for-data.release (already base64 once)] [json=PY-EXPR on the record]
secret_like() {
  kubectl -n "$NS" get secret "sh.helm.release.v1.rec.v$1" -o json | python3 -c '
import base64, gzip, json, sys
s = json.load(sys.stdin); new = sys.argv[1]; opts = dict(a.split("=", 1) for a in sys.argv[2:])
for k in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "annotations"): s["metadata"].pop(k, None)
s["metadata"]["name"] = "sh.helm.release.v1.rec.v" + new
s["metadata"]["labels"]["version"] = new
if "type" in opts: s["type"] = opts["type"]
rel = json.loads(gzip.decompress(base64.b64decode(base64.b64decode(s["data"]["release"]))))
rel["version"] = int(new)
if "json" in opts: exec(opts["json"])
data = base64.b64encode(gzip.compress(json.dumps(rel).encode())).decode()
if "release" in opts: data = opts["release"]
s["data"]["release"] = base64.b64encode(data.encode()).decode()
print(json.dumps(s))' "$2" "${@:3}"
}
start_controller
apply_v 1
wait_for 60 "rec Ready" hr_ready rec

# 1. Data that does not decode: a new revision 2 appears; the release stops, nothing is applied.
secret_like 1 2 'release=%%% not base64 %%%' | kubectl create -f - >/dev/null
apply_v 2
wait_for 60 "RecordUnreadable" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = RecordUnreadable ]"
msg=$(hr_cond_msg rec Ready)
echo "$msg" | grep -q "release record Secret $NS/sh.helm.release.v1.rec.v2: " || fail "the message does not name the Secret: $msg"
echo "$msg" | grep -qi "base64" || fail "the message does not say what is wrong: $msg"
[ "$(hr_cond rec Ready)" = False ] || fail "Ready is not False"
[ "$(cm_data "$NS" rec-cm v)" = 1 ] || fail "something was applied over the unreadable record"
[ -z "$(kubectl -n "$NS" get secret sh.helm.release.v1.rec.v3 -o name 2>/dev/null)" ] || fail "a record was written over it"
ok "undecodable data: Ready=False naming the Secret, nothing applied: $msg"
kubectl -n "$NS" delete secret sh.helm.release.v1.rec.v2 >/dev/null
wait_for 60 "rec Ready after the record was deleted" hr_ready rec
[ "$(cm_data "$NS" rec-cm v)" = 2 ] || fail "not upgraded after the record was deleted"
[ "$(rev)" = 2 ] || fail "revision $(rev)"
ok "deleting the record lets the release go on (revision 2 applied)"

# 2. A storage format of a newer Helm (another Secret type).
secret_like 2 3 type=helm.sh/release.v2 | kubectl create -f - >/dev/null
apply_v 3
wait_for 60 "RecordUnreadable (type)" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = RecordUnreadable ]"
msg=$(hr_cond_msg rec Ready)
echo "$msg" | grep -q "sh.helm.release.v1.rec.v3: storage format \"helm.sh/release.v2\" is not helm.sh/release.v1" || fail "message: $msg"
[ "$(cm_data "$NS" rec-cm v)" = 2 ] || fail "something was applied"
ok "a newer storage format: $msg"
kubectl -n "$NS" delete secret sh.helm.release.v1.rec.v3 >/dev/null
wait_for 60 "rec Ready (revision 3)" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.lastAppliedRevision}')\" = 3 ]"

# 3. A record of a newer Helm's apply method.
secret_like 3 4 'json=rel["apply_method"]="xsa"' | kubectl create -f - >/dev/null
apply_v 4
wait_for 60 "RecordUnreadable (apply method)" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = RecordUnreadable ]"
msg=$(hr_cond_msg rec Ready)
echo "$msg" | grep -q 'sh.helm.release.v1.rec.v4: apply_method "xsa" is neither ssa nor csa' || fail "message: $msg"
ok "an unknown apply method: $msg"
kubectl -n "$NS" delete secret sh.helm.release.v1.rec.v4 >/dev/null
wait_for 60 "rec revision 4" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.lastAppliedRevision}')\" = 4 ]"

# 4. The deployed record's JSON damaged in place, then fixed: the release goes on.
kubectl -n "$NS" get secret sh.helm.release.v1.rec.v4 -o jsonpath='{.data.release}' >"$WORK/good"
bad=$(printf '{"name":"rec","version":4,' | gzip | base64 -w0 | base64 -w0)
kubectl -n "$NS" patch secret sh.helm.release.v1.rec.v4 --type merge -p "{\"data\":{\"release\":\"$bad\"}}" >/dev/null
apply_v 5
wait_for 60 "RecordUnreadable (JSON)" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = RecordUnreadable ]"
msg=$(hr_cond_msg rec Ready)
echo "$msg" | grep -q "sh.helm.release.v1.rec.v4: " || fail "message: $msg"
[ "$(cm_data "$NS" rec-cm v)" = 4 ] || fail "something was applied over the damaged record"
ok "damaged JSON: $msg"
kubectl -n "$NS" patch secret sh.helm.release.v1.rec.v4 --type merge -p "{\"data\":{\"release\":\"$(cat "$WORK/good")\"}}" >/dev/null
wait_for 60 "rec revision 5" bash -c "[ \"\$(kubectl -n $NS get helmrelease rec -o jsonpath='{.status.lastAppliedRevision}')\" = 5 ]"
wait_for 30 "rec Ready" hr_ready rec
[ "$(cm_data "$NS" rec-cm v)" = 5 ] || fail "not upgraded after the record was fixed"
[ "$(helm_history helm rec)" = "1:superseded 2:superseded 3:superseded 4:superseded 5:deployed" ] || fail "history: $(helm_history helm rec)"
ok "fixing the record lets the release go on (revision 5, helm history agrees)"

kubectl -n "$NS" delete helmrelease rec --wait=false >/dev/null
wait_for 60 "rec uninstalled" bash -c "! kubectl -n $NS get helmrelease rec >/dev/null 2>&1"
stop_controller
