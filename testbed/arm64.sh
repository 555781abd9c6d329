#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 guest of tests/kernel-lane.sh arm64, made on this x86-64
# host without running any arm64 code on it:
# - the root, $GS_ARM64_ROOT: Debian trixie for arm64, debootstrap's
#   first stage (--foreign) with every package it fetched unpacked and
#   none configured. What their maintainer scripts would have made, the
#   lane's tests need only a little of, made here: users and groups, the
#   alternatives (awk, which), poweroff for virtme-ng's init.
# - the kernel: Debian's arm64 package of the 7.x header set that the
#   build matrix (tests/compat-build.sh, set 7.3/trixie-backports/arm64)
#   builds the module against, the same version, fetched in that
#   matrix's trixie chroot;
# - ghostswap: that build (cross-compiled, W=1 and sparse clean, the
#   way DKMS runs make), installed under /lib/modules/KVER/updates with
#   the host's depmod; the guest helpers (gsverify, gsparallel,
#   ghostswapctl) cross-compiled in the same chroot with the root as
#   their sysroot.
# The emulator, qemu-system-aarch64, comes with the x86 one
# (testbed/provision.sh). Each step is redone until its stamp exists.
# Prints TAP, a line per step; exits non-zero on any failure. The
# caller holds $GS_CACHE/.arm64.lock (tests/kernel-lane.sh).
#
# usage: testbed/arm64.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || gs_die "the arm64 guest needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || PATH=$PATH:/usr/sbin:/sbin
TAP_LOGS=${GS_LOGDIR:-$GS_CACHE/logs}
mkdir -p "$TAP_LOGS"
R=$GS_ARM64_ROOT
compat=$GS_CACHE/compat
set_name=7.3/trixie-backports/arm64
# Bump when the recipe of the root changes: the root is made again.
recipe=3
# What the lane's tests run: the guest library (bash, python3, udev),
# module loading, fio, swap and block tools, dm-flakey's dmsetup, a
# filesystem, the dictionaries' zstd; libc6-dev is the helpers' sysroot;
# busybox-static virtme-ng's initramfs.
pkgs="kmod fio util-linux udev procps python3 busybox-static dmsetup e2fsprogs
zstd libc6-dev"

root_make() {
	local tmp=$GS_CACHE/root-arm64-tmp d f
	gs_rm_root "$tmp"
	echo "$(date +%T) debootstrap --foreign --arch=arm64 trixie"
	debootstrap --foreign --arch=arm64 --variant=minbase \
		--include="$(echo $pkgs | tr ' ' ,)" trixie "$tmp" "$GS_MIRROR" ||
		return 1
	# The first stage leaves proc a symlink to the host's /proc (its
	# second stage would make it a directory): a directory, for the
	# guest's own.
	rm -f "$tmp/proc" && mkdir "$tmp/proc" || return 1
	echo "$(date +%T) unpacking $(ls "$tmp"/var/cache/apt/archives/*.deb | wc -l) packages"
	for d in "$tmp"/var/cache/apt/archives/*.deb; do
		dpkg-deb --fsys-tarfile "$d" |
			tar -x --keep-directory-symlink -C "$tmp" || return 1
		# The alternatives each package's postinst would install,
		# where it names them on one line.
		dpkg-deb -I "$d" postinst 2>/dev/null |
			sed -n 's/.*update-alternatives --install \(\/[^ ]*\) [^ ]* \(\/[^ ]*\) [0-9].*/\1 \2/p'
	done >"$tmp/.gs-alternatives"
	while read -r f d; do
		[ -e "$tmp$f" ] || [ -L "$tmp$f" ] || ln -s "$d" "$tmp$f"
	done <"$tmp/.gs-alternatives"
	# base-passwd's postinst: the system's users and groups.
	for f in passwd group; do
		[ -s "$tmp/etc/$f" ] ||
			cp "$tmp/usr/share/base-passwd/$f.master" "$tmp/etc/$f"
	done
	# virtme-ng's init ends with poweroff -f; busybox has it.
	[ -e "$tmp/usr/sbin/poweroff" ] || ln -s ../bin/busybox "$tmp/usr/sbin/poweroff"
	echo ghostswap-arm64 >"$tmp/etc/hostname"
	rm -rf "$tmp/debootstrap" "$tmp"/var/cache/apt/archives/*.deb
	mkdir -p "$tmp/opt/gs-src" "$tmp/opt/gs-out" "$tmp/usr/local/bin" \
		"$tmp/usr/local/sbin"
	echo "$recipe" >"$tmp/.gs-provisioned"
	gs_rm_root "$R"
	mv "$tmp" "$R"
	du -sh "$R"
}

root() {
	[ "$(cat "$R/.gs-provisioned" 2>/dev/null)" = "$recipe" ] && {
		echo "$R: made before"
		return 0
	}
	root_make
}

# compat_locked CMD...: CMD holding the build matrix's lock (its
# chroots and build directories change only under it).
compat_locked() {
	(
		flock 7
		"$@"
	) 7>"$compat/.lock"
}

# The matrix's arm64 7.x set: "PACKAGE VERSION SUITE" of its headers.
set_line() {
	local line
	line=$(grep -m1 "^$set_name " "$compat/trixie.sets" 2>/dev/null) || return 1
	read -r _ _ pkg ver suite <<<"$line"
	[ -n "${suite:-}" ]
}

# The module built for those headers (tests/compat-build.sh prints its
# own TAP line, with the lane's name in front here).
module_build() {
	"$GS_TOP/tests/compat-build.sh" "$set_name" >"$TAP_LOGS/arm64-matrix.tap"
}

# The kernel of those headers, unpacked into the root (the image
# package and the binary, modules and base packages it depends on: the
# image, the modules, the config), modules.dep made by the host's depmod.
kernel() {
	local kv b=$GS_CACHE/arm64-debs p deps
	set_line || { echo "the build matrix resolved no $set_name headers"; return 1; }
	kv=${pkg#linux-headers-}
	if [ "$(cat "$R/.gs-kernel" 2>/dev/null)" = "$kv $ver" ]; then
		echo "linux-image-$kv $ver: unpacked before"
		return 0
	fi
	rm -rf "$b" && mkdir -p "$b" || return 1
	# shellcheck disable=SC2016
	compat_locked gs_ns_run "$compat/trixie" ro "$b" sh -ec '
		cd /tmp/gs
		deps=$(apt-cache show "linux-image-$1:arm64=$2" |
			sed -n "s/^Depends: //p" | head -n 1 | tr -d " " | tr , "\n" |
			sed -n "s/^\(linux-\(binary\|modules\|base\)-[0-9][^(]*\).*/\1:arm64=$2/p")
		apt-get download -q "linux-image-$1:arm64=$2" $deps' \
		fetch "$kv" "$ver" || return 1
	for p in "$b"/*.deb; do
		echo "unpacking ${p##*/}"
		dpkg-deb --fsys-tarfile "$p" | tar -x --keep-directory-symlink -C "$R" ||
			return 1
	done
	rm -rf "$b"
	# Where kernel-install would put the image and the config (7.x
	# packages ship them beside the modules).
	cp "$R/usr/lib/modules/$kv/vmlinuz" "$R/boot/vmlinuz-$kv" &&
		cp "$R/usr/lib/modules/$kv/config" "$R/boot/config-$kv" || return 1
	depmod -b "$R" "$kv" || return 1
	grep -E 'CONFIG_(ARM64_VA_BITS|PGTABLE_LEVELS|ARM64_4K_PAGES)=' "$R/boot/config-$kv"
	echo "$kv $ver" >"$R/.gs-kernel"
}

# ghostswap.ko from the matrix's build directory, taken under its lock.
module_install() {
	local kv ko=$compat/build/${set_name//\//-}/src/ghostswap.ko v want
	kv=$(gs_kver_arm64)
	[ -n "$kv" ] || { echo "no kernel in $R"; return 1; }
	mkdir -p "$R/lib/modules/$kv/updates"
	compat_locked cp "$ko" "$R/lib/modules/$kv/updates/ghostswap.ko" ||
		return 1
	depmod -b "$R" "$kv" || return 1
	modinfo -b "$R" -k "$kv" ghostswap | grep -E '^(filename|vermagic|version)'
	v=$(modinfo -b "$R" -k "$kv" -F vermagic ghostswap)
	[ "${v%% *}" = "$kv" ] || { echo "vermagic $v, kernel $kv"; return 1; }
	want=$(gs_version)
	v=$(modinfo -b "$R" -k "$kv" -F version ghostswap)
	[ "$v" = "$want" ] || { echo "version $v, dkms.conf $want"; return 1; }
}

# The guest helpers, as testbed/build.sh builds them for the x86 guest,
# with the cross compiler the kernel's .config names.
helpers() {
	local cc b=$R/tmp/gs-helpers
	set_line || return 1
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' \
		"$compat/trixie/usr/src/$pkg/.config")
	[ -n "$cc" ] || { echo "no compiler named in $pkg's .config"; return 1; }
	rm -rf "$b" && mkdir -p "$b" || return 1
	cp "$GS_TOP"/tests/guest/gsverify.c "$GS_TOP"/tests/guest/pagegen.h \
		"$GS_TOP"/tests/guest/gsparallel.c "$GS_TOP"/tools/*.c \
		"$GS_TOP"/tools/*.h "$b/" || return 1
	# shellcheck disable=SC2016
	compat_locked gs_ns_run "$compat/trixie" ro "$R" sh -ec '
		cc="$1 --sysroot=/tmp/gs"; b=/tmp/gs/tmp/gs-helpers; cd $b
		$cc -O2 -Wall -Werror -o /tmp/gs/usr/local/bin/gsverify gsverify.c
		$cc -O2 -Wall -Werror -pthread -o /tmp/gs/usr/local/bin/gsparallel gsparallel.c
		mv gsverify.c gsparallel.c ..
		$cc -std=c11 -O2 -Wall -Wextra -Werror -DGS_VERSION="\"$2\"" \
			-o /tmp/gs/usr/local/sbin/ghostswapctl *.c' \
		helpers "$cc" "$(gs_version)" || return 1
	rm -rf "$b" "$R/tmp/gsverify.c" "$R/tmp/gsparallel.c"
	file "$R/usr/local/bin/gsverify" "$R/usr/local/sbin/ghostswapctl" | cut -c1-120
}

tap_step "arm64: the guest root (Debian trixie, arm64, unpacked)" arm64-root root
rc=0
module_build || rc=$?
sed -E 's/^(ok|not ok)( [0-9]+)? - /\1 - arm64: /' "$TAP_LOGS/arm64-matrix.tap" \
	>"$TAP_LOGS/arm64-matrix.lane.tap"
tap_append "$TAP_LOGS/arm64-matrix.lane.tap"
[ $rc = 0 ] || grep -q '^not ok' "$TAP_LOGS/arm64-matrix.tap" ||
	tap_not_ok "arm64: the build matrix's $set_name build (exit $rc)"
tap_step "arm64: Debian's arm64 kernel of those headers, in the root" arm64-kernel kernel
tap_step "arm64: ghostswap.ko installed for that kernel" arm64-module module_install
tap_step "arm64: guest helpers cross-built (gsverify, gsparallel, ghostswapctl)" \
	arm64-helpers helpers
tap_plan
exit $tap_rc
