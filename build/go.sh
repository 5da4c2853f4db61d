#!/usr/bin/env bash
# Prints the path of a `go` command of at least the version in go.mod's `go`
# line, so that a fresh machine needs nothing but git, make and a shell:
#
#   - the `go` on PATH when it is new enough;
#   - otherwise Go $GO_VERSION under the repository ($WAGRAPH_TOOLCHAIN_DIR,
#     default .toolchain/, git-ignored), downloaded when missing.
#
# The download comes from the Go module proxy's golang.org/toolchain module,
# the source the go command's own GOTOOLCHAIN switching uses, and from
# nowhere else: the first URL in GOPROXY; when GOPROXY is unset, in what an
# older go on PATH says it is (`go env GOPROXY`), else in the go command's
# configuration file ($GOENV, default ~/.config/go/env: `go env -w` writes
# it, and it outlives an uninstalled go), else Go's built-in default,
# https://proxy.golang.org. So no Go is needed to get Go: nothing is
# installed for it, and PATH is left as it was (the toolchain is not put on
# it; `make toolchain` prints its path).
# The zip is checked against the SHA-256 pinned below rather than against
# the checksum database, which need not be reachable (the pins were taken from the
# proxy's zips, whose bin/go and compiler match the go.dev release), and
# refused on any mismatch. It is kept in $WAGRAPH_TOOLCHAIN_CACHE (default
# the same directory) so a second unpacking downloads nothing.
#
# Only the path goes to stdout (the Makefile reads it); every message goes
# to stderr.
#
#   build/go.sh               the path, downloading when needed
#   build/go.sh --no-download the path it would print, without downloading
#                             (make -n); when that Go is not there yet, it
#                             says on stderr where it would come from
#
# Moving to a newer Go: change GO_VERSION and both sums (download the two
# zips from the URL below and sha256sum them); internal/packaging fails when
# go.mod asks for more than GO_VERSION.
set -euo pipefail

GO_VERSION=1.26.8
declare -A GO_SHA256=(
	[amd64]=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7
	[arm64]=02b36b6787b3ac767668f630e2998df45a3b1f9ffee08d1bf3ef6487cd658d99
)

say() { echo "build/go.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

download=yes
case "${1:-}" in
"") ;;
--no-download) download=no ;;
*)
	echo "usage: $0 [--no-download]" >&2
	exit 2
	;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
dir=${WAGRAPH_TOOLCHAIN_DIR:-$repo/.toolchain}
cache=${WAGRAPH_TOOLCHAIN_CACHE:-$dir}

# want is go.mod's `go` line: the least version that builds the module.
want=$(sed -n 's/^go[[:space:]]\{1,\}\([0-9][0-9.]*\)[[:space:]]*$/\1/p' "$repo/go.mod" | head -n 1)
[ -n "$want" ] || die "no 'go' line in $repo/go.mod"

# version_at_least A B: A >= B, both 1.N[.P] (a pre-release such as 1.27rc1
# counts as 1.27.0, newer than any 1.26.x).
version_at_least() {
	local a b i x y
	IFS=. read -r -a a <<<"$(sed -E 's/(rc|beta)[0-9]+$//' <<<"$1")"
	IFS=. read -r -a b <<<"$2"
	for i in 0 1 2; do
		x=${a[i]:-0} y=${b[i]:-0}
		[[ $x =~ ^[0-9]+$ && $y =~ ^[0-9]+$ ]] || return 1
		if ((10#$x != 10#$y)); then
			((10#$x > 10#$y))
			return
		fi
	done
	return 0
}

if ! version_at_least "$GO_VERSION" "$want"; then
	die "go.mod asks for Go $want, this script pins Go $GO_VERSION: update GO_VERSION and its sums"
fi

# The go on PATH, asked for its own version (GOTOOLCHAIN=local: no switch
# to a downloaded toolchain) from / (an old go refuses this go.mod). Why it
# is passed over is said while the toolchain is not there yet, not on every
# make after.
older=
if path_go=$(command -v go 2>/dev/null); then
	have=$(cd / 2>/dev/null && GOTOOLCHAIN=local GOFLAGS='' "$path_go" env GOVERSION 2>/dev/null) || have=
	if [[ $have =~ ^go([0-9][0-9a-z.]*)$ ]] && version_at_least "${BASH_REMATCH[1]}" "$want"; then
		echo "$path_go"
		exit 0
	fi
	older="the go on PATH ($path_go: ${have:-no version}) is older than go.mod's $want: using Go $GO_VERSION under $dir"
fi

case "$(uname -s)/$(uname -m)" in
Linux/x86_64 | Linux/amd64) arch=amd64 ;;
Linux/aarch64 | Linux/arm64) arch=arm64 ;;
*) die "no pinned Go toolchain for $(uname -s)/$(uname -m): install Go $want or newer and put it on PATH" ;;
esac

root=$dir/go$GO_VERSION
go=$root/bin/go
if [ -x "$go" ]; then
	echo "$go"
	exit 0
fi
[ -z "$older" ] || say "$older"

name=v0.0.1-go$GO_VERSION.linux-$arch.zip
sum=${GO_SHA256[$arch]}

# GOPROXY as the go command would see it, without a go to ask: the
# environment, else the older go's own setting, else its configuration
# file, else the built-in default.
goproxy=${GOPROXY:-} from="GOPROXY"
if [ -z "$goproxy" ] && [ -n "${path_go:-}" ]; then
	goproxy=$(cd / && GOTOOLCHAIN=local GOFLAGS='' "$path_go" env GOPROXY 2>/dev/null) || goproxy=
	from="$path_go env GOPROXY"
fi
if [ -z "$goproxy" ]; then
	goenv=${GOENV:-}
	if [ -z "$goenv" ] && { [ -n "${XDG_CONFIG_HOME:-}" ] || [ -n "${HOME:-}" ]; }; then
		goenv=${XDG_CONFIG_HOME:-$HOME/.config}/go/env
	fi
	if [ -n "$goenv" ] && [ "$goenv" != off ] && [ -f "$goenv" ]; then
		goproxy=$(sed -n 's/^[[:space:]]*GOPROXY[[:space:]]*=[[:space:]]*//p' "$goenv" | tail -n 1)
		from=$goenv
	fi
fi
if [ -z "$goproxy" ]; then
	goproxy=https://proxy.golang.org,direct from="Go's default"
fi
# The first proxy URL of it (entries split by , or |); "direct" and "off"
# fetch nothing from a proxy, so they are passed over.
proxy=
IFS=',|' read -r -a entries <<<"$goproxy"
for e in "${entries[@]}"; do
	case "$e" in
	https://* | http://* | file://*)
		proxy=${e%/}
		break
		;;
	esac
done
if [ "$download" = no ]; then
	if [ -n "$proxy" ]; then
		say "Go $GO_VERSION is not in $root yet: it would be downloaded from $proxy/golang.org/toolchain/@v/$name ($from)"
	fi
	echo "$go"
	exit 0
fi
if [ -z "$proxy" ]; then
	die "no Go module proxy to download Go $GO_VERSION from (GOPROXY=$goproxy, from $from): set GOPROXY to your module proxy's URL, or install Go $want or newer"
fi
url=$proxy/golang.org/toolchain/@v/$name

mkdir -p "$dir" "$cache"
# One bootstrap at a time (make and a test may start together); the lock
# goes when this script ends.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$dir/.lock"
	flock 9
	if [ -x "$go" ]; then
		echo "$go"
		exit 0
	fi
fi

zip=$cache/$name
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$zip" ] && [ "$(sha "$zip")" != "$sum" ]; then
	say "the cached $zip does not match its pinned SHA-256: downloading it again"
	rm -f "$zip"
fi
if [ ! -f "$zip" ]; then
	say "downloading Go $GO_VERSION ($arch) from $url"
	part=$(mktemp "$cache/.$name.XXXXXX")
	trap 'rm -f "$part"' EXIT
	# A progress bar for a person; quiet in a log.
	curl_progress=-sS wget_progress=
	if [ -t 2 ]; then
		curl_progress=--progress-bar wget_progress=--show-progress
	fi
	if command -v curl >/dev/null 2>&1; then
		curl -fL --retry 3 "$curl_progress" -o "$part" "$url" >&2 || die "download of $url failed"
	elif command -v wget >/dev/null 2>&1 && [[ $url != file://* ]]; then
		wget -q $wget_progress -O "$part" "$url" >&2 || die "download of $url failed"
	else
		die "neither curl nor wget is installed: run 'make deps-run' or 'apt-get install curl ca-certificates'"
	fi
	got=$(sha "$part")
	if [ "$got" != "$sum" ]; then
		die "refusing $url: its SHA-256 is $got, the pinned one is $sum"
	fi
	chmod 0644 "$part"
	mv -f "$part" "$zip"
	trap - EXIT
fi

# Unpacked beside its final place, then renamed into it: a toolchain
# directory exists only whole.
tmp=$(mktemp -d "$dir/.unpack.XXXXXX")
trap 'rm -rf "$tmp" 2>/dev/null || say "could not remove $tmp (left behind, harmless)"' EXIT
say "unpacking $zip"
if command -v unzip >/dev/null 2>&1; then
	unzip -q "$zip" -d "$tmp"
elif command -v python3 >/dev/null 2>&1; then
	python3 -m zipfile -e "$zip" "$tmp"
else
	die "neither unzip nor python3 is installed: run 'make deps-run' or 'apt-get install unzip'"
fi
top=$tmp/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-$arch
[ -f "$top/bin/go" ] || die "$zip holds no bin/go"
# Module zips keep no file modes: the commands get theirs back.
chmod 0755 "$top"/bin/* "$top"/pkg/tool/*/*
# Asked with no HOME and no XDG_CONFIG_HOME: a go command keeps telemetry
# counters in the user's configuration directory and starts a sidecar
# process that outlives it and writes there, which would race the removal
# of $tmp (and fetching Go writes nothing outside the repository). Without
# a configuration directory, Go's telemetry is off: no file, no sidecar.
got=$(unset HOME XDG_CONFIG_HOME && cd / && GOTOOLCHAIN=local "$top/bin/go" env GOVERSION 2>/dev/null || true)
[ "$got" = "go$GO_VERSION" ] || die "the unpacked toolchain reports '${got:-nothing}', not go$GO_VERSION"
if ! mv -T "$top" "$root" 2>/dev/null && [ ! -x "$go" ]; then
	die "could not move the toolchain into $root"
fi
say "Go $GO_VERSION is in $root"
echo "$go"
