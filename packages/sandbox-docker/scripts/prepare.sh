#!/usr/bin/env bash
# Makes a Docker Engine answer and builds the local test image, without any registry.
# Idempotent: an engine that already answers is left alone, an image already built is kept.
# Run as root by scripts/setup.sh (CI runs it before the tests in the same job).
set -euo pipefail

LOG=${AALIS_DOCKERD_LOG:-/var/log/aalis-dockerd.log}
WAIT_SECONDS=${AALIS_DOCKERD_WAIT:-60}
BUSYBOX=${AALIS_BUSYBOX:-/bin/busybox}

say() { echo "sandbox-docker prepare: $*"; }
die() { echo "sandbox-docker prepare: ERROR: $*" >&2; exit 1; }

command -v docker >/dev/null || die "no docker CLI on PATH; install the docker.io package (apt-get install -y docker.io)"

if docker info >/dev/null 2>&1; then
  say "engine already answers (${DOCKER_HOST:-default socket})"
else
  [ -n "${DOCKER_HOST:-}" ] && die "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine, or unset DOCKER_HOST to use a local dockerd"
  command -v dockerd >/dev/null || die "no dockerd; install the docker.io package (apt-get install -y docker.io)"
  [ "$(id -u)" = 0 ] || die "starting dockerd needs root; run this script as root or start the engine yourself"
  say "starting dockerd in the background, log in $LOG"
  # setsid: dockerd must not die with this script's session; CI runs the tests afterwards.
  setsid nohup dockerd >>"$LOG" 2>&1 </dev/null &
  for _ in $(seq 1 "$WAIT_SECONDS"); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { tail -n 30 "$LOG" >&2 || true; die "dockerd did not answer within ${WAIT_SECONDS}s; see $LOG"; }
  say "engine answers"
fi

# The test image: a busybox root filesystem with an unprivileged user 10001, imported from a
# tarball made here (no registry can be reached). Its tag is a hash of this recipe and of the
# busybox binary, so a changed recipe builds a new image and an unchanged one is reused.
[ -x "$BUSYBOX" ] || die "no static busybox at $BUSYBOX; install busybox-static"
file_hash=$( { sed -n '/^# recipe:begin/,/^# recipe:end/p' "$0"; sha256sum "$BUSYBOX"; } | sha256sum | cut -c1-12)
IMAGE="aalis/sandbox-test:$file_hash"
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  say "image $IMAGE present"
else
  say "building $IMAGE"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
# recipe:begin
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,work,home/sandbox,proc,sys,dev}
  chmod 1777 "$root/tmp"
  cp "$BUSYBOX" "$root/bin/busybox"
  for applet in $("$BUSYBOX" --list-full); do
    [ "$applet" = bin/busybox ] || ln -sf /bin/busybox "$root/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:10001:10001:sandbox:/home/sandbox:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nsandbox:x:10001:\nnogroup:x:65534:\n' >"$root/etc/group"
  chown 10001:10001 "$root/home/sandbox"
# recipe:end
  tar -C "$root" --numeric-owner -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'USER 10001:10001' --change 'WORKDIR /tmp' --change 'CMD ["/bin/sh"]' \
    - "$IMAGE" >/dev/null
  say "built $IMAGE"
fi
docker tag "$IMAGE" aalis/sandbox-test:latest
say "test image aalis/sandbox-test:latest -> $IMAGE"

# The builder image (002: tools are compiled offline in the builder profile): the same busybox
# root plus gcc and the C library's development files, copied from the host's own Debian
# packages (their installed dependency closure), so nothing is downloaded. Tagged by a hash of
# this recipe and of the packages' versions.
command -v gcc >/dev/null || die "no gcc on this host; install the gcc and libc6-dev packages (system-packages.txt)"
BUILDER_PACKAGES=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances gcc libc6-dev 2>/dev/null | grep -v '^ ' | grep -v '<' | sort -u)
builder_hash=$( { sed -n '/^# builder:begin/,/^# builder:end/p' "$0"; sha256sum "$BUSYBOX"; dpkg-query -W $BUILDER_PACKAGES; } | sha256sum | cut -c1-12)
BUILDER="aalis/sandbox-builder:$builder_hash"
if docker image inspect "$BUILDER" >/dev/null 2>&1; then
  say "image $BUILDER present"
else
  say "building $BUILDER from the host's packages: $(echo $BUILDER_PACKAGES | wc -w) packages"
  broot=$(mktemp -d)
  trap 'rm -rf "${root:-}" "$broot"' EXIT
# builder:begin
  mkdir -p "$broot"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,tmp,work,home/sandbox,proc,sys,dev}
  ln -s usr/bin "$broot/bin"; ln -s usr/sbin "$broot/sbin"; ln -s usr/lib "$broot/lib"; ln -s usr/lib64 "$broot/lib64"
  chmod 1777 "$broot/tmp"
  # Each packaged file at its merged-/usr path (/lib/x -> /usr/lib/x), symlinks kept as links.
  for pkg in $BUILDER_PACKAGES; do dpkg -L "$pkg"; done | sort -u | while IFS= read -r f; do
    [ -f "$f" ] || [ -L "$f" ] || continue
    case "$f" in /usr/share/doc/*|/usr/share/man/*|/usr/share/info/*|/usr/share/locale/*|/usr/share/lintian/*) continue ;; esac
    dir=$(readlink -f "$(dirname "$f")")
    mkdir -p "$broot$dir"
    cp -a --remove-destination "$f" "$broot$dir/"
  done
  cp "$BUSYBOX" "$broot/usr/bin/busybox"
  for applet in $("$BUSYBOX" --list-full); do
    target="$broot/usr/${applet#usr/}"
    [ -e "$target" ] || [ -L "$target" ] || ln -s /usr/bin/busybox "$target"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:10001:10001:sandbox:/home/sandbox:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$broot/etc/passwd"
  printf 'root:x:0:\nsandbox:x:10001:\nnogroup:x:65534:\n' >"$broot/etc/group"
  chown 10001:10001 "$broot/home/sandbox"
# builder:end
  tar -C "$broot" --numeric-owner -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'USER 10001:10001' --change 'WORKDIR /tmp' --change 'CMD ["/bin/sh"]' \
    - "$BUILDER" >/dev/null
  say "built $BUILDER"
fi
docker tag "$BUILDER" aalis/sandbox-builder:latest
say "builder image aalis/sandbox-builder:latest -> $BUILDER"
