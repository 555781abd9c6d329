#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and install ghostswap in the guest root the way a user would: by
# DKMS (dkms add, build, install) for every kernel the guest boots (the
# 7.x one, 6.12 LTS, the PREEMPT_RT one). Also builds the guest test
# helpers. Prints TAP lines for each step on stdout.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kver=$(gs_kver)
ver=$(gs_version)
[ -n "$ver" ] || gs_die "no PACKAGE_VERSION in dkms.conf"
# One DKMS build in the guest root at a time (make test, make bench, make
# demo may run side by side): they share /usr/src and /var/lib/dkms.
exec 8>"$GS_CACHE/.build.lock"
flock 8
TAP_LOGS=${GS_LOGDIR:-$GS_CACHE/logs}
mkdir -p "$TAP_LOGS"

# Stage a clean copy of the sources as DKMS expects: /usr/src/NAME-VERSION.
stage() {
	local dst=$GS_ROOT/usr/src/ghostswap-$ver
	gs_chroot sh -c 'for v in $(dkms status ghostswap 2>/dev/null |
		sed -n "s|^ghostswap/\([^,:]*\).*|\1|p" | sort -u); do
		dkms remove -m ghostswap -v "$v" --all; done' || true
	rm -rf "$dst"
	mkdir -p "$dst"
	(cd "$GS_TOP" && cp -r dkms.conf Kbuild Makefile module "$dst/")
}

dkms_add() { gs_chroot dkms add -m ghostswap -v "$ver"; }
# DKMS's build log for kernel $1: .../build/make.log before dkms 3.2, per
# kernel and architecture since.
dkms_log() {
	local d=$GS_ROOT/var/lib/dkms/ghostswap/$ver f
	for f in "$d/$1/$(uname -m)/log/make.log" "$d/build/make.log"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	echo "no DKMS build log under $d" >&2
	return 1
}
dkms_build() {
	local log rc=0
	gs_chroot dkms build -m ghostswap -v "$ver" -k "$1" || rc=$?
	log=$(dkms_log "$1") || return 1
	[ $rc = 0 ] || { cat "$log"; return 1; }
	# The build must be warning free (and its log must be there to say so).
	grep -c ' CC \| LD ' "$log" && ! grep -E 'warning:|error:' "$log"
}
dkms_install() {
	local v
	gs_chroot dkms install -m ghostswap -v "$ver" -k "$1" &&
		gs_chroot modinfo -k "$1" ghostswap | grep -E '^(filename|vermagic|version)' ||
		return 1
	# MODULE_VERSION is dkms.conf's PACKAGE_VERSION (Kbuild).
	v=$(gs_chroot modinfo -k "$1" -F version ghostswap)
	[ "$v" = "$ver" ] || { echo "modinfo says version $v, dkms.conf $ver"; return 1; }
}
helpers() {
	local ctl=/tmp/ghostswapctl f srcs=()

	cp "$GS_TOP/tests/guest/gsverify.c" "$GS_TOP/tests/guest/pagegen.h" \
		"$GS_TOP/tests/guest/gsparallel.c" "$GS_ROOT/tmp/" &&
	gs_chroot gcc -O2 -Wall -Werror -o /usr/local/bin/gsverify /tmp/gsverify.c &&
	gs_chroot gcc -O2 -Wall -Werror -pthread -o /usr/local/bin/gsparallel \
		/tmp/gsparallel.c || return 1
	# ghostswapctl: every tools/*.c, as the Makefile builds it.
	rm -rf "$GS_ROOT$ctl" && mkdir -p "$GS_ROOT$ctl" &&
		cp "$GS_TOP"/tools/*.c "$GS_TOP"/tools/*.h "$GS_ROOT$ctl/" || return 1
	for f in "$GS_TOP"/tools/*.c; do
		srcs+=("$ctl/${f##*/}")
	done
	gs_chroot gcc -std=c11 -O2 -Wall -Wextra -Werror -DGS_VERSION="\"$ver\"" \
		-o /usr/local/sbin/ghostswapctl "${srcs[@]}"
}

tap_step "dkms stage sources ghostswap-$ver" dkms-stage stage
tap_step "dkms add" dkms-add dkms_add
# Every kernel of the guest root: the 7.x one first, then the others it
# boots (6.12 LTS, PREEMPT_RT).
for k in $kver $(gs_kvers | grep -vxF "$kver"); do
	tap_step "dkms build for $k, no warnings" "dkms-build-$k" dkms_build "$k"
	tap_step "dkms install for $k" "dkms-install-$k" dkms_install "$k"
done
tap_step "build guest helpers (gsverify, gsparallel, ghostswapctl)" helpers helpers
tap_plan
exit $tap_rc
