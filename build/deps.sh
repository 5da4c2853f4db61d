#!/usr/bin/env bash
# Installs, from the distribution's packages (apt-get, through sudo when not
# root), what wagraph needs and the machine lacks; with nothing missing it
# installs nothing and needs no network. The Makefile runs it before
# anything else:
#
#   build/deps.sh run       building and running (make build, run, sandbox):
#                           gcc and libc6-dev (go-sqlite3 is cgo), ffmpeg
#                           (voice notes, video thumbnails), git (the build
#                           stamps its revision), and what build/go.sh needs
#                           to download Go: curl, unzip, ca-certificates
#   build/deps.sh postgres  PostgreSQL's server (.ci/postgres.sh starts a
#                           throwaway one; Debian puts it under
#                           /usr/lib/postgresql/<version>/bin)
#   build/deps.sh test      the tests (make test): run's and postgres's, plus
#                           Chromium (the browser tests drive it through
#                           chromedp), nodejs and npm, and `npm ci` in each
#                           test tool directory that has a package-lock.json
#                           when its node_modules is missing or older
#   build/deps.sh test-short  the tests make test-short runs: run's only
#                           (-short skips the browser tests and the tests of
#                           the npm tools; the PostgreSQL pass is make test's)
#
# Go itself is not installed: build/go.sh unpacks Go 1.26 from the module
# proxy under the repository's .toolchain/ (with curl and unzip, which run
# installs), needing no older Go, and leaves PATH as it was. The README
# names every package this script installs (internal/packaging checks it).
# Everything it prints goes to stderr: stdout is make's (`make -s toolchain`
# prints a path there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
	echo "usage: $0 run|postgres|test|test-short" >&2
	exit 2
}
[ $# -eq 1 ] || usage

missing=()
# need PACKAGE CHECK...: PACKAGE is missing when CHECK fails.
need() {
	local pkg=$1
	shift
	"$@" >/dev/null 2>&1 || missing+=("$pkg")
}
has() { command -v "$1"; }
has_postgres() { ls /usr/lib/postgresql/*/bin/initdb; }

need_run() {
	need gcc has gcc
	need libc6-dev test -f /usr/include/stdio.h
	need ffmpeg has ffmpeg
	need git has git
	need curl has curl
	need unzip has unzip
	need ca-certificates test -f /etc/ssl/certs/ca-certificates.crt
}
need_postgres() { need postgresql has_postgres; }
need_test() {
	need_run
	need_postgres
	need chromium has chromium
	need nodejs has node
	need npm has npm
}
need_test_short() { need_run; }

case "$1" in
run) need_run ;;
postgres) need_postgres ;;
test) need_test ;;
test-short) need_test_short ;;
*) usage ;;
esac

if [ ${#missing[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "$0: missing ${missing[*]}, and no apt-get to install them with: install them, then run make again" >&2
		exit 1
	fi
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "== installing ${missing[*]}" >&2
	$sudo apt-get update >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi

# The npm tools of the tests, exactly as their lockfiles pin them. The
# stamp is written after a whole `npm ci`: an interrupted one is redone.
if [ "$1" = test ]; then
	for d in restcompat/testdata/tools graph/testdata/codegen; do
		[ -f "$d/package-lock.json" ] || continue
		stamp=$d/node_modules/.wagraph-npm-ci
		if [ ! -f "$stamp" ] || [ "$d/package-lock.json" -nt "$stamp" ] || [ "$d/package.json" -nt "$stamp" ]; then
			echo "== npm ci in $d" >&2
			(cd "$d" && npm ci --no-audit --no-fund) >&2
			mkdir -p "$d/node_modules"
			touch "$stamp"
		fi
	done
fi
