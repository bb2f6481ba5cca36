#!/usr/bin/env bash
# Malformed templates: the status says what is wrong and where (template file
# and line); nothing is applied and the previous revision stays in place.
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/good" "$WORK/bad"
cat >"$WORK/good/configmap.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  level: "1"
Y
start_controller

# 1. Broken YAML on a fresh release: Ready=False naming file and line, nothing applied.
cat >"$WORK/bad/broken.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: broken
data:
  key: [unclosed
Y
cp "$WORK/good/configmap.yaml" "$WORK/bad/"
hr_inline fresh fresh 1.0.0 "$WORK/bad"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease fresh failed" hr_failed fresh
msg=$(hr_cond_msg fresh Ready)
echo "$msg" | grep -q "templates/broken.yaml" || fail "message does not name the file: $msg"
echo "$msg" | grep -Eq "line [0-9]+" || fail "message does not give a line: $msg"
ok "broken YAML reported: $msg"
kubectl -n "$NS" get configmap settings >/dev/null 2>&1 && fail "configmap settings applied despite the error"
[ "$(kubectl -n "$NS" get secrets -l owner=helm,name=fresh -o name | wc -l)" = 0 ] || fail "release record written despite the error"
ok "nothing applied, no release record"

# 2. A good release, then bad updates: revision 1 stays deployed, objects unchanged.
hr_inline keep keep 1.0.0 "$WORK/good"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease keep Ready" hr_ready keep
ok "release keep deployed"

check_bad() { # FILE-CONTENT EXPECTED-REGEX DESCRIPTION
  rm -f "$WORK/bad"/*
  cp "$WORK/good/configmap.yaml" "$WORK/bad/"
  sed -i 's/level: "1"/level: "2"/' "$WORK/bad/configmap.yaml"
  printf '%s\n' "$1" >"$WORK/bad/extra.yaml"
  hr_inline keep keep 1.0.1 "$WORK/bad"/*.yaml | kubectl apply -f - >/dev/null
  wait_for 60 "HelmRelease keep failed ($3)" hr_failed keep
  local m; m=$(hr_cond_msg keep Ready)
  echo "$m" | grep -Eq "$2" || fail "$3: message '$m' does not match /$2/"
  [ "$(kubectl -n "$NS" get configmap settings -o jsonpath='{.data.level}')" = 1 ] || fail "$3: configmap changed"
  [ "$(helm_history helm keep)" = "1:deployed" ] || fail "$3: history $(helm_history helm keep)"
  ok "$3 reported ($m); nothing changed"
}
check_bad $'apiVersion: v1\nmetadata:\n  name: nokind' 'templates/extra.yaml.*kind' "document without kind"
check_bad $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}' 'templates/extra.yaml.*name' "document without name"
check_bad $'apiVersion: nowhere.example/v9\nkind: Gadget\nmetadata:\n  name: g' 'templates/extra.yaml.*(Gadget|nowhere)' "unknown kind"
check_bad $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n\tdata: tab' 'templates/extra.yaml.*line [0-9]+' "tab-indented YAML"

# 3. Fixing the input recovers.
hr_inline keep keep 1.0.2 "$WORK/good"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "HelmRelease keep Ready again" hr_ready keep
ok "fixed input recovers Ready"
stop_controller
