#!/usr/bin/env bash
# Installs the Debian peers the benchmarks compare Atrium with (nginx, rclone).
# Idempotent: does nothing when both are already on PATH. Needs root (or sudo).
set -euo pipefail

need=()
command -v nginx  >/dev/null 2>&1 || need+=(nginx)
command -v rclone >/dev/null 2>&1 || need+=(rclone)
command -v curl   >/dev/null 2>&1 || need+=(curl)
# The `sftp` area: OpenSSH's client and a private sshd with Debian's sftp-server; sshpass.
command -v sftp   >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v sshpass >/dev/null 2>&1 || need+=(sshpass)
command -v wrk    >/dev/null 2>&1 || need+=(wrk)   # the load area

# The `write` area uploads to nginx with WebDAV PUT: core ngx_http_dav_module, built into
# Debian's nginx (no extra package; PROPFIND would need libnginx-mod-http-dav-ext, unused).
check_dav() {
  if nginx -V 2>&1 | grep -q -- '--with-http_dav_module'; then
    echo "  nginx has http_dav_module (WebDAV PUT for the write area)"
  else
    echo "  WARNING: this nginx lacks http_dav_module: the write area's nginx peer will fail" >&2
  fi
}

if [ ${#need[@]} -eq 0 ]; then
  echo "bench/setup.sh: nginx, rclone and curl already present"
  nginx -v 2>&1 | sed 's/^/  /'
  check_dav
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
check_dav
rclone version 2>/dev/null | head -1 | sed 's/^/  /'
