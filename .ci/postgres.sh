#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server: a cluster initialised
# in a temporary directory, listening on 127.0.0.1 on a free port with trust
# authentication for loopback connections only (and its socket in that
# directory), owned by a non-root user, stopped and removed when the command
# ends. The command sees its URL in WAGRAPH_TEST_POSTGRES, so the storage
# tests run on PostgreSQL as well as SQLite (internal/dbtest).
#
#   .ci/postgres.sh make test
#
# The server comes from Debian's postgresql package (installed here through
# build/deps.sh when missing), whose binaries are under
# /usr/lib/postgresql/<version>/bin. PostgreSQL refuses
# to run as root: run as root (as CI may), the cluster belongs to the
# package's `postgres` account, or to PG_USER.
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi

pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bindir=$(pg_bindir)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
	"$(dirname "$0")/../build/deps.sh" postgres
	bindir=$(pg_bindir)
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
	echo "$0: no PostgreSQL server under /usr/lib/postgresql/*/bin after build/deps.sh postgres" >&2
	exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/wagraph-pg.XXXXXX")
as_owner() { "$@"; }
if [ "$(id -u)" = 0 ]; then
	owner=${PG_USER:-postgres}
	if ! id "$owner" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin "$owner"
	fi
	chown "$owner" "$dir"
	as_owner() { runuser -u "$owner" -- "$@"; }
fi
chmod 700 "$dir"

stop() {
	as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap stop EXIT

as_owner "$bindir/initdb" -D "$dir/data" -U wagraph -A trust -E UTF8 --no-instructions >"$dir/initdb.log" 2>&1 || {
	cat "$dir/initdb.log" >&2
	exit 1
}
# Loopback and the socket in $dir only; nothing else may connect.
as_owner tee "$dir/data/pg_hba.conf" >/dev/null <<HBA
local all all trust
host  all all 127.0.0.1/32 trust
HBA
# A throwaway server: durability is not worth the tests' time. Each test
# opens its own database and pool, and packages run at once: room for them.
as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 400
fsync = off
synchronous_commit = off
full_page_writes = off
CONF

# A port that is free now may be taken before the server binds it: a start
# that fails is tried again on another port.
port=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	p=$((20000 + RANDOM % 40000))
	if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -o "-p $p" start >/dev/null 2>&1; then
		port=$p
		break
	fi
done
if [ -z "$port" ]; then
	echo "$0: the PostgreSQL server did not start:" >&2
	cat "$dir/server.log" >&2 || true
	exit 1
fi

export WAGRAPH_TEST_POSTGRES="postgres://wagraph@127.0.0.1:$port/postgres?sslmode=disable"
echo "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') for the tests at 127.0.0.1:$port (WAGRAPH_TEST_POSTGRES)"
"$@"
