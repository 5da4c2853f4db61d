#!/usr/bin/env bash
# Builds, as a directory, the filesystem of the Dockerfile's final stage,
# from this machine's files instead of Debian's packages (no container
# engine needed):
#
#   build/rootfs.sh [--no-ffmpeg] BINARY DEST
#
#   /usr/local/bin/wagraph   BINARY (built as the Dockerfile's build stage
#                            does: CGO_ENABLED=1 go build)
#   its shared libraries     exactly those ldd lists, at the paths ldd gives
#   ffmpeg                   with its libraries, unless --no-ffmpeg
#   /etc/ssl/certs/ca-certificates.crt
#   /etc/passwd, /etc/group  root and the non-root user the image runs as
#   /etc/nsswitch.conf       files for users, files then DNS for hosts
#   /tmp (1777), /data (0700, the user's)
#
# No zoneinfo: wagraph loads no time zone (its times are UTC). The layout
# follows the host's (Debian's merged /usr: /bin, /lib, /lib64 and /sbin are
# links into /usr), so the dynamic loader finds the libraries where ldd did.
# Run as root, /data belongs to the user's uid; otherwise to the caller (a
# user namespace maps it).
#
#   build/rootfs.sh --print-config
#
# prints the image's facts (KEY=value lines) that the Dockerfile states
# too; internal/packaging checks that the two agree and starts the server in
# DEST with them.
set -euo pipefail

USER_NAME=wagraph
USER_ID=10001
GROUP_ID=10001
DATA_DIR=/data
ADDR=0.0.0.0:8080
BIN_PATH=/usr/local/bin/wagraph
PACKAGES="ca-certificates ffmpeg"
HEALTHCHECK_PATH=/readyz
IMAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() {
	echo "build/rootfs.sh: $*" >&2
	exit 1
}
usage() {
	echo "usage: $0 [--no-ffmpeg] BINARY DEST | $0 --print-config" >&2
	exit 2
}

if [ "${1:-}" = --print-config ]; then
	[ $# -eq 1 ] || usage
	cat <<CONFIG
USER_NAME=$USER_NAME
USER_ID=$USER_ID
GROUP_ID=$GROUP_ID
DATA_DIR=$DATA_DIR
ADDR=$ADDR
BIN_PATH=$BIN_PATH
PACKAGES=$PACKAGES
HEALTHCHECK_PATH=$HEALTHCHECK_PATH
IMAGE_PATH=$IMAGE_PATH
CONFIG
	exit 0
fi

ffmpeg=yes
if [ "${1:-}" = --no-ffmpeg ]; then
	ffmpeg=no
	shift
fi
[ $# -eq 2 ] || usage
binary=$1
dest=$2
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
	die "$binary is not an executable file"
fi
if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ]; then
	die "$dest is not empty"
fi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd -P)
chmod 0755 "$dest"

# The host's merged-/usr links first, so that what is copied to /lib/…
# lands in /usr/lib/… as on Debian.
for d in bin sbin lib lib64; do
	if [ -L "/$d" ]; then
		target=$(readlink "/$d")
		mkdir -p "$dest/$(dirname "$target")/$(basename "$target")"
		ln -s "$target" "$dest/$d"
	fi
done

# copy HOST_PATH [DEST_PATH]: the file's content (links followed) and mode.
copy() {
	local to=$dest${2:-$1}
	mkdir -p "$(dirname "$to")"
	cp -L --preserve=mode "$1" "$to"
}

# copy_program HOST_PATH [DEST_PATH]: the program and every library ldd
# lists for it (the loader included), each at the path ldd gives.
copy_program() {
	local program=$1 libs lib
	copy "$program" "${2:-}"
	# A static program has no libraries (ldd says so and fails).
	libs=$(LC_ALL=C ldd "$program" 2>&1) || {
		grep -q 'not a dynamic executable' <<<"$libs" && return
		die "ldd $program: $libs"
	}
	if grep -q 'not found' <<<"$libs"; then
		die "$program links libraries this machine lacks: $(grep 'not found' <<<"$libs" | tr -s '\t\n' ' ')"
	fi
	while read -r lib; do
		[ -e "$dest$lib" ] || copy "$lib"
	done < <(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' <<<"$libs")
}

# tool NAME: NAME's path on this machine.
tool() { command -v "$1" || die "$1 is not installed (the image installs it; build/deps.sh run installs it here)"; }

copy_program "$binary" "$BIN_PATH"
if [ "$ffmpeg" = yes ]; then
	copy_program "$(tool ffmpeg)" /usr/bin/ffmpeg
fi
[ -f /etc/ssl/certs/ca-certificates.crt ] || die "no /etc/ssl/certs/ca-certificates.crt: install ca-certificates"
copy /etc/ssl/certs/ca-certificates.crt

mkdir -p "$dest/etc"
cat >"$dest/etc/passwd" <<PASSWD
root:x:0:0:root:/root:/bin/sh
$USER_NAME:x:$USER_ID:$GROUP_ID::$DATA_DIR:/usr/sbin/nologin
PASSWD
cat >"$dest/etc/group" <<GROUP
root:x:0:
$USER_NAME:x:$GROUP_ID:
GROUP
cat >"$dest/etc/nsswitch.conf" <<NSS
passwd: files
group: files
hosts: files dns
NSS
chmod 0644 "$dest/etc/passwd" "$dest/etc/group" "$dest/etc/nsswitch.conf"

mkdir -p "$dest/tmp" "$dest$DATA_DIR"
chmod 1777 "$dest/tmp"
chmod 0700 "$dest$DATA_DIR"
if [ "$(id -u)" = 0 ]; then
	chown "$USER_ID:$GROUP_ID" "$dest$DATA_DIR"
fi
