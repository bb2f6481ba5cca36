#!/usr/bin/env bash
# A release never reaches past itself: objects that belong to nobody or to
# another release are not taken over without spec.install.takeOwnership (Helm's
# "invalid ownership metadata" refusal), objects a record names but that carry
# another release's metadata are never deleted (a forged or stale record), two
# HelmReleases cannot manage one release, and when targetNamespace changes the
# objects that left are deleted where they were applied, not in the new
# namespace.
. "$(dirname "$0")/lib.sh"

cmf() { # NAME KEY VALUE > file
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  %s: "%s"\n' "$1" "$2" "$3"
}
mkdir -p "$WORK/a" "$WORK/b" "$WORK/f1" "$WORK/f2" "$WORK/m1" "$WORK/m2"
start_controller

# 1. An object that belongs to nobody.
kubectl -n "$NS" create configmap taken --from-literal=owner=someone >/dev/null
cmf taken owner rudder >"$WORK/a/taken.yaml"
hr_inline grab grab 1.0.0 "$WORK/a"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "grab refused" hr_failed grab
msg=$(hr_cond_msg grab Ready)
echo "$msg" | grep -q 'ConfigMap "taken" in namespace "'"$NS"'" exists and cannot be imported into the current release: invalid ownership metadata' ||
  fail "not Helm's ownership refusal: $msg"
[ "$(cm_data "$NS" taken owner)" = someone ] || fail "the unowned ConfigMap was changed"
[ -z "$(kubectl -n "$NS" get secrets -l owner=helm,name=grab -o name)" ] || fail "a record was written for a refused install"
ok "unowned object refused: $msg"
HR_SPEC='{"install":{"takeOwnership":true}}' hr_inline grab grab 1.0.0 "$WORK/a"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "grab Ready with takeOwnership" hr_ready grab
[ "$(cm_data "$NS" taken owner)" = rudder ] || fail "takeOwnership did not apply"
[ "$(kubectl -n "$NS" get configmap taken -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" = grab ] ||
  fail "the adopted object does not carry the release's metadata"
ok "install.takeOwnership adopts it"

# 2. An object of another release.
cmf shared by one >"$WORK/b/shared.yaml"
hr_inline one one 1.0.0 "$WORK/b"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "one Ready" hr_ready one
cmf shared by two >"$WORK/b/shared.yaml"
hr_inline two two 1.0.0 "$WORK/b"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "two refused" hr_failed two
hr_cond_msg two Ready | grep -q 'key "meta.helm.sh/release-name" must equal "two": current value is "one"' ||
  fail "refusal does not name the other release: $(hr_cond_msg two Ready)"
[ "$(cm_data "$NS" shared by)" = one ] || fail "another release's object was changed"
kubectl -n "$NS" delete helmrelease two --wait=false >/dev/null
wait_for 60 "two gone" bash -c "! kubectl -n $NS get helmrelease two >/dev/null 2>&1"
[ "$(cm_data "$NS" shared by)" = one ] || fail "deleting two removed one's object"
ok "another release's object: refused, and left alone on uninstall"

# 3. Two HelmReleases naming one release.
HR_SPEC='{"releaseName":"one"}' hr_inline hijack one 9.9.9 "$WORK/b"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "hijack refused" hr_failed hijack
hr_cond_msg hijack Ready | grep -q "is managed by HelmRelease $NS/one" || fail "does not name the owner: $(hr_cond_msg hijack Ready)"
[ "$(helm_status helm one)" = "deployed 1" ] || fail "the release was changed by the second HelmRelease"
kubectl -n "$NS" delete helmrelease hijack --wait=false >/dev/null
wait_for 60 "hijack gone" bash -c "! kubectl -n $NS get helmrelease hijack >/dev/null 2>&1"
[ "$(helm_status helm one)" = "deployed 1" ] || fail "deleting the second HelmRelease uninstalled the release"
ok "a second HelmRelease for the same release is refused, and its deletion leaves the release alone"

# 4. A record naming an object of another release (forged, or stale): never deleted.
cmf forged-own k v >"$WORK/f1/own.yaml"
cmf victim k v >"$WORK/f1/victim.yaml"
write_chart "$WORK/fc" forged 1.0.0 "$WORK/f1"/*.yaml
helm install forged "$WORK/fc" -n "$NS" >/dev/null
# victim now belongs to release "one" as far as its metadata says
kubectl -n "$NS" annotate configmap victim --overwrite meta.helm.sh/release-name=one >/dev/null
cp "$WORK/f1/own.yaml" "$WORK/f2/"
HR_SPEC='{"upgrade":{"takeOwnership":true}}' hr_inline forged forged 1.0.1 "$WORK/f2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "forged Ready" hr_ready forged
kubectl -n "$NS" get configmap victim >/dev/null 2>&1 || fail "an object of another release was pruned"
kubectl -n "$NS" delete helmrelease forged --wait=false >/dev/null
wait_for 60 "forged gone" bash -c "! kubectl -n $NS get helmrelease forged >/dev/null 2>&1"
kubectl -n "$NS" get configmap victim >/dev/null 2>&1 || fail "uninstall deleted an object of another release"
kubectl -n "$NS" get configmap forged-own >/dev/null 2>&1 && fail "uninstall left the release's own object"
ok "objects whose metadata names another release are never pruned or uninstalled"

# 5. targetNamespace changes: what left is deleted where it was applied.
kubectl create namespace "$NS-x1" >/dev/null
kubectl create namespace "$NS-x2" >/dev/null
trap 'rc=$?; kubectl delete namespace "$NS-x1" "$NS-x2" --wait=false >/dev/null 2>&1 || true; cleanup $rc' EXIT
cmf stays k v >"$WORK/m1/stays.yaml"
cmf leaves k v >"$WORK/m1/leaves.yaml"
cp "$WORK/m1/stays.yaml" "$WORK/m2/"
HR_SPEC='{"targetNamespace":"'"$NS-x1"'"}' hr_inline mover mover 1.0.0 "$WORK/m1"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "mover Ready" hr_ready mover
kubectl -n "$NS-x2" create configmap leaves --from-literal=unrelated=yes >/dev/null
HR_SPEC='{"targetNamespace":"'"$NS-x2"'"}' hr_inline mover mover 1.0.1 "$WORK/m2"/*.yaml | kubectl apply -f - >/dev/null
wait_for 60 "mover moved" bash -c "kubectl -n $NS-x2 get configmap stays >/dev/null 2>&1"
wait_for 60 "mover Ready after the move" hr_ready mover
kubectl -n "$NS-x2" get configmap leaves >/dev/null 2>&1 || fail "an unrelated object in the new namespace was deleted"
wait_for 30 "old object deleted where it was" bash -c "! kubectl -n $NS-x1 get configmap leaves >/dev/null 2>&1"
ok "targetNamespace change: the old object is deleted in the old namespace, the unrelated one in the new stays"
# Without releaseName the release is "<targetNamespace>-<name>" (as Flux names it): the move is a new
# release, and the one managed before is uninstalled (its records too), with an Event saying so.
[ "$(helm_status helm "$NS-x2-mover")" = "deployed 1" ] || fail "the moved release: $(helm_status helm "$NS-x2-mover")"
[ "$(helm_status helm "$NS-x1-mover")" = absent ] || fail "the release before the move is still there: $(helm_status helm "$NS-x1-mover")"
[ "$(hr_field mover '{.status.releaseName}')" = "$NS-x2-mover" ] || fail "status.releaseName: $(hr_field mover '{.status.releaseName}')"
case " $(hr_events mover) " in *" PreviousReleaseUninstalled "*) ;; *) fail "no PreviousReleaseUninstalled Event: $(hr_events mover)" ;; esac
ok "the release is named <targetNamespace>-<name>; renamed by the move, the one before is uninstalled (helm ls: $NS-x2-mover deployed 1, $NS-x1-mover gone)"

for hr in grab one mover; do kubectl -n "$NS" delete helmrelease "$hr" --wait=false >/dev/null; done
wait_for 60 "all uninstalled" bash -c "[ -z \"\$(kubectl -n $NS get helmreleases -o name)\" ]"
stop_controller
