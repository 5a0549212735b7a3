#!/usr/bin/env bash
# Debian packages the tests use, installed when missing (apt-get update first, once).
set -euo pipefail
PACKAGES=(ffmpeg openssh-client aria2 qbittorrent-nox transmission-daemon litmus rclone chromium s3cmd restic)
PACKAGES+=(sshpass openssh-server lftp curl)
# Driver conformance peers (test/drivers/).
PACKAGES+=(pure-ftpd openssl nginx samba smbclient)
# Archives (src/archive/, test/archive/): fixtures and codecs; 7-Zip for 7z; bsdtar checks the generated rar fixtures and is a benchmark peer.
PACKAGES+=(zip unzip bzip2 xz-utils zstd 7zip libarchive-tools python3)
# LDAP sign-in tests (test/api/ldap.test.ts) run their own slapd.
PACKAGES+=(slapd ldap-utils)
# Thumbnails (src/thumbs/): PDF first pages; vipsthumbnail is the thumbnail benchmark's peer (bench/thumbs.ts).
PACKAGES+=(poppler-utils libvips-tools)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "packages: ${PACKAGES[*]} installed"
