# Shared by tests/image/base and tests/image/build: the buildah storage they use (vfs, outside the
# repo, kept between runs) and the Debian packages they need, installed when missing.
set -euo pipefail
IMAGE_CACHE=${RUDDER_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rudder/image}
mkdir -p "$IMAGE_CACHE"
# vfs storage and chroot isolation: no overlay mounts, no user namespaces, no daemon.
bah() { buildah --root "$IMAGE_CACHE/storage" --runroot "$IMAGE_CACHE/run" --storage-driver vfs "$@"; }

# image_deps PACKAGE...: installs the Debian packages that are missing (as tests/deps does).
image_deps() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "tests/image: installing ${missing[*]}" >&2
  local sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
}

# One build at a time per cache (the storage is shared).
exec 9>"$IMAGE_CACHE/lock"
flock 9
