#!/usr/bin/env bash
# Makes sure the database servers the tests use answer on loopback: PostgreSQL (5432, trust,
# database "test") and MariaDB (3306, root without password, database "test"). This machine
# kind starts them before every run; if one is down (or missing) it is installed and started.
set -euo pipefail

answers() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

wait_for() {
  local port=$1 name=$2
  for _ in $(seq 1 60); do answers "$port" && return 0; sleep 1; done
  echo "error: $name does not answer on 127.0.0.1:$port" >&2
  return 1
}

apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! answers 5432; then
  command -v pg_ctlcluster >/dev/null || apt_install postgresql
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  wait_for 5432 PostgreSQL
fi
if ! psql -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1; then
  su postgres -c "psql -c 'create database test'" >/dev/null 2>&1 || psql -h 127.0.0.1 -U postgres -c 'create database test' >/dev/null
fi

if ! answers 3306; then
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || apt_install mariadb-server
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  wait_for 3306 MariaDB
fi
mariadb -h 127.0.0.1 -u root -e 'create database if not exists test' >/dev/null

if ! answers 6379; then
  command -v redis-server >/dev/null || apt_install redis-server
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' >/dev/null
  wait_for 6379 Redis
fi
echo "services: Redis answers on 127.0.0.1:6379"

echo "services: PostgreSQL and MariaDB answer on 127.0.0.1"
