#!/usr/bin/env bash
# Installs the Debian peers the benchmarks compare Atrium with (nginx, rclone).
# Idempotent: does nothing when both are already on PATH. Needs root (or sudo).
set -euo pipefail

need=()
command -v nginx  >/dev/null 2>&1 || need+=(nginx)
command -v rclone >/dev/null 2>&1 || need+=(rclone)
command -v curl   >/dev/null 2>&1 || need+=(curl)

if [ ${#need[@]} -eq 0 ]; then
  echo "bench/setup.sh: nginx, rclone and curl already present"
  nginx -v 2>&1 | sed 's/^/  /'
  rclone version 2>/dev/null | head -1 | sed 's/^/  /'
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "bench/setup.sh: need root to install: ${need[*]}" >&2; exit 1
  fi
fi

echo "bench/setup.sh: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${need[@]}"

# The Debian package starts a system nginx on port 80; the benchmarks run their own
# instance with a private config, so stop the system one when it was just started.
if [[ " ${need[*]} " == *" nginx "* ]] && command -v systemctl >/dev/null 2>&1; then
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
fi

nginx -v 2>&1 | sed 's/^/  /'
rclone version 2>/dev/null | head -1 | sed 's/^/  /'
