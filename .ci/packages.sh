#!/usr/bin/env bash
# Debian packages the tests use, installed when missing (apt-get update first, once).
set -euo pipefail
PACKAGES=(ffmpeg openssh-client aria2 qbittorrent-nox transmission-daemon litmus rclone chromium)
PACKAGES+=(sshpass openssh-server lftp curl)
# Driver conformance peers (test/drivers/).
PACKAGES+=(pure-ftpd openssl)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "packages: ${PACKAGES[*]} installed"
