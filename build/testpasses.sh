#!/usr/bin/env bash
# make test's passes (see the Makefile's test target, which sets what this
# reads): every package on SQLite and, when WAGRAPH_TEST_POSTGRES names a
# server, the packages that open a test database again on PostgreSQL (where
# the tests marked dbtest.OneBackend, whose subject no backend changes, say
# so and skip), then the cluster test alone.
#
# One after the other: run at the same time (tried this stop), the
# two passes filled both cores, and the crash tests' recovery goals (all
# stored within 30 s of the storage's return) were missed under the load
# (32.3 s): the experiments measure the server, and need the cores they
# were written for. Each pass writes to a log of its own, shown whole when
# it ends. The cluster test runs last and alone: it measures the failover
# time.
#
# Reads: GO, TEST_FLAGS, DB_PKGS (import paths), LOG_DIR, TEST_JSON (a
# prefix: go test -json to <prefix>-<pass>.json instead of the logs), and
# WAGRAPH_TEST_POSTGRES.
set -uo pipefail

: "${GO:?}" "${TEST_FLAGS:?}" "${LOG_DIR:?}"
mkdir -p "$LOG_DIR"

# pass NAME ARGS...: go test with ARGS, its output to NAME's log (or JSON
# file); the exit status is go test's.
pass() {
	local name=$1
	shift
	if [ -n "${TEST_JSON:-}" ]; then
		# shellcheck disable=SC2086 # TEST_FLAGS is a list of flags
		"$GO" test $TEST_FLAGS -json "$@" >"$TEST_JSON-$name.json" 2>"$LOG_DIR/$name.log"
	else
		# shellcheck disable=SC2086
		"$GO" test $TEST_FLAGS "$@" >"$LOG_DIR/$name.log" 2>&1
	fi
}

show() { # show NAME RC: the pass's log and how it ended
	echo "== $1: $( [ "$2" = 0 ] && echo passed || echo "FAILED (exit $2)")"
	cat "$LOG_DIR/$1.log"
	[ -n "${TEST_JSON:-}" ] && echo "(go test -json: $TEST_JSON-$1.json)"
	return 0
}

if [ -z "${WAGRAPH_TEST_POSTGRES:-}" ]; then
	echo "== all tests on SQLite"
	pass sqlite ./...
	rc=$?
	show sqlite $rc
	echo "== the tests on PostgreSQL: not run (WAGRAPH_TEST_POSTGRES is not set; .ci/postgres.sh make test sets it)"
	exit $rc
fi

server=$(echo "$WAGRAPH_TEST_POSTGRES" | sed -E 's#^[a-z]+://([^@/]*@)?([^/?]*).*#\2#')
echo "== all tests on SQLite (log: $LOG_DIR/sqlite.log)"
pass sqlite ./...
rc_sqlite=$?
show sqlite $rc_sqlite
echo "== the $(echo $DB_PKGS | wc -w) packages that open a test database, on PostgreSQL (server $server; log: $LOG_DIR/postgres.log)"
# shellcheck disable=SC2086 # DB_PKGS is a list
WAGRAPH_TEST_BACKEND=postgres pass postgres -skip '^TestClusterFailover$' $DB_PKGS
rc_postgres=$?
show postgres $rc_postgres

rc_failover=0
if [ $rc_postgres = 0 ]; then
	echo "== the cluster test on PostgreSQL, alone and verbose: it prints the failover time"
	WAGRAPH_TEST_BACKEND=postgres pass failover -v -run '^TestClusterFailover$' ./internal/crashtest/
	rc_failover=$?
	show failover $rc_failover
fi
for r in $rc_sqlite $rc_postgres $rc_failover; do
	[ "$r" = 0 ] || exit 1
done
