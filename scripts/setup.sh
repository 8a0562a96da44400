#!/usr/bin/env bash
# Installs everything Aalis reach needs on a fresh Debian machine: the system packages the
# sandboxes and their tests use, pnpm at the pinned version, and the node packages from the
# lockfile. Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=$(node -p "require('./package.json').packageManager.split('@')[1]")
# Each package that needs system packages lists them, one a line, in system-packages.txt.
APT_PACKAGES=(bubblewrap git)
for list in packages/*/system-packages.txt; do
  [ -f "$list" ] || continue
  while read -r p; do [ -n "$p" ] && [ "${p#\#}" = "$p" ] && APT_PACKAGES+=("$p"); done <"$list"
done

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"
fi

if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  echo "setup: installing pnpm $PNPM_VERSION"
  as_root npm install -g --allow-scripts=pnpm "pnpm@$PNPM_VERSION"
fi

echo "setup: installing node packages from the lockfile"
pnpm install --frozen-lockfile

# Each package that needs a service or an artefact before its tests (a running dockerd, a locally
# built image) does it in scripts/prepare.sh; these run in name order and must be idempotent.
for prepare in packages/*/scripts/prepare.sh; do
  [ -f "$prepare" ] || continue
  echo "setup: $prepare"
  bash "$prepare"
done
