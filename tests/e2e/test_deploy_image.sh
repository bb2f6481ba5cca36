#!/usr/bin/env bash
# The container image (top-level Containerfile), built offline with buildah (tests/image/build:
# a build base made locally with mmdebstrap, vfs storage, chroot isolation), holds only rudder,
# the shared objects it loads, the CA bundle and a passwd naming its unprivileged user; its
# rudder controller, run from the image's root file system mounted read-only (a tmpfs on /tmp,
# as the Deployment's emptyDir) as uid 65532, brings a release to Ready against the local
# control plane. Prints the image's size and the build time; the size must stay under 25 MB.
. "$(dirname "$0")/lib.sh"
src=${RUDDER_SOURCE_DIR:?}

t0=$SECONDS
img=$("$src/tests/image/build" localhost/rudder:e2e)
build_secs=$((SECONDS - t0))
. "$src/tests/image/common.sh"
exec 9>&- # the storage lock: held by the builds, not needed to read the image
ROOT=$WORK/root
CTR=
image_cleanup() {
  stop_controller KILL
  if [ -n "$CTR" ]; then bah umount "$CTR" >/dev/null 2>&1 || true; bah rm "$CTR" >/dev/null 2>&1 || true; fi
}
trap 'rc=$?; image_cleanup; cleanup $rc' EXIT

size=$(bah images --format '{{.Size}}' "$img")
CTR=$(bah from --pull=never "$img")
mnt=$(bah mount "$CTR")
bytes=$(du -sb "$mnt" | cut -f1)
echo "image $img: $bytes bytes unpacked ($((bytes / 1024)) KiB; buildah images: $size), built in ${build_secs}s"
((bytes < 25 * 1000 * 1000)) || fail "the image is $bytes bytes, over the 25 MB goal"
ok "the image is under 25 MB ($bytes bytes)"

user=$(bah inspect --type image --format '{{.OCIv1.Config.User}}' "$img")
entry=$(bah inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$img")
[ "$user" = 65532:65532 ] || fail "the image runs as '$user', not 65532:65532"
[ "$entry" = '[/usr/local/bin/rudder]' ] || fail "entrypoint: $entry"
grep -q '^rudder:x:65532:65532:' "$mnt/etc/passwd" || fail "no rudder user in /etc/passwd"
ok "the image runs rudder as the unprivileged user 65532"

# Exactly: the binary, what ldd says it loads (as the image's own loader resolves it), the CA
# bundle, passwd and group, and an empty /tmp. No shell, no package manager.
loader=$(cd "$mnt" && find . -name 'ld-linux*.so*' -type f | sed 's/^\.//' | head -1)
[ -n "$loader" ] || fail "the image holds no dynamic loader"
want=$( {
  printf '%s\n' /usr/local/bin/rudder /etc/ssl/certs/ca-certificates.crt /etc/passwd /etc/group
  chroot "$mnt" "$loader" --list /usr/local/bin/rudder |
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
} | sort)
have=$(cd "$mnt" && find . \( -type f -o -type l \) | sed 's/^\.//' | sort)
[ "$have" = "$want" ] || fail "the image's files are not only what rudder needs: $(diff <(echo "$want") <(echo "$have"))"
[ -d "$mnt/tmp" ] && [ "$(stat -c %a "$mnt/tmp")" = 1777 ] && [ -z "$(ls -A "$mnt/tmp")" ] || fail "/tmp should be an empty 1777 directory"
echo "files:"; (cd "$mnt" && find . -type f -printf '  %p %s\n' | sort)
ok "the image holds only rudder, the $(echo "$want" | grep -c '\.so') shared objects it loads, the CA bundle, passwd and group"

# The image's file system read-only, in a mount namespace of its own; /tmp a tmpfs holding the
# kubeconfig (its certificates inline: nothing of the host is visible inside).
mkdir -p "$ROOT"
kubectl config view --raw --flatten --minify >"$WORK/kubeconfig"
cat >"$WORK/release.yaml" <<Y
apiVersion: v1
kind: ConfigMap
metadata:
  name: from-image
data:
  by: {{ .Release.Service }}
Y
hr_inline web web 0.1.0 "$WORK/release.yaml" | kubectl apply -f - >/dev/null
unshare --mount sh -ec '
  mount --make-rprivate /
  mount --bind "$1" "$2"; mount -o remount,bind,ro "$2"
  mount -t tmpfs -o mode=1777 tmpfs "$2/tmp"
  install -m 0644 "$3" "$2/tmp/kubeconfig"
  ! touch "$2/probe" 2>/dev/null || { echo "the root file system is writable" >&2; exit 1; }
  exec chroot --userspec=65532:65532 "$2" /usr/local/bin/rudder controller \
    --kubeconfig /tmp/kubeconfig --namespace "$4" --log-level debug' \
  sh "$mnt" "$ROOT" "$WORK/kubeconfig" "$NS" >>"$CTRL_LOG" 2>&1 &
CTRL_PID=$!
log "the image's controller started (pid $CTRL_PID)"
wait_for 60 "the controller running as 65532" bash -c "[ \"\$(ps -o uid= -p $CTRL_PID | tr -d ' ')\" = 65532 ]"
wait_for 90 "web Ready" hr_ready web
[ "$(helm_status helm web)" = "deployed 1" ] || fail "helm ls: $(helm_status helm web)"
[ "$(cm_data "$NS" from-image by)" = Helm ] || fail "the release's ConfigMap was not applied"
ok "the image's controller, read-only root and uid 65532, brought a release to Ready (helm ls: deployed 1)"

stop_controller TERM
ok "the image's controller stopped cleanly on SIGTERM"
