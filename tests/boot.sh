#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packaging end to end: a guest root as an admin's machine has it after
# "dkms install" (testbed/build.sh did that in the guest root) and "make
# install" of the tools, with a configuration of a main file and drop-ins
# written and ghostswap.service enabled, boots with systemd as init and
# must come up with swap on /dev/ghostswap set up per the configuration.
# tests/guest/boot.sh checks that inside the guest (and the udev path: the
# device appearing starts the service), writing TAP.
#
# The guest root is not changed: the boot runs on an overlay of it whose
# upper layer is thrown away afterwards.
#
# usage: tests/boot.sh OUTDIR   (prints TAP on stdout)
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

out=$(mkdir -p "$1" && cd "$1" && pwd)
gs_overlay_lock
ov=$GS_CACHE/boot-overlay
merged=$ov/root
TAP_LOGS=$out
# shellcheck disable=SC2064
trap "gs_overlay_remove '$ov'" EXIT

# What an admin does after the DKMS install: make install, the config,
# systemctl enable.
install() {
	local src=$merged/tmp/gs-install
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$GS_TOP" && cp -r Makefile dkms.conf tools man systemd udev etc "$src/")
	GS_ROOT=$merged gs_chroot sh -c 'set -e
		make -C /tmp/gs-install tools install PREFIX=/usr
		rm -rf /tmp/gs-install
		systemctl enable ghostswap.service
		ls -l /etc/systemd/system/swap.target.wants/
		modinfo -n ghostswap'
	# Values unlike the defaults, so that the guest can tell they came
	# from here: the example /etc/ghostswap.conf (lz4, priority 100,
	# zswap off) as make install left it, drop-ins of a vendor and of the
	# admin over it, sizes as expressions of ram (tests/guest/boot.sh
	# checks each).
	mkdir -p "$merged/usr/lib/ghostswap.conf.d" "$merged/etc/ghostswap.conf.d"
	cat >"$merged/usr/lib/ghostswap.conf" <<-EOF
	# hidden whole by /etc/ghostswap.conf
	size = 5G
	writeback_limit = 7
	EOF
	cat >"$merged/usr/lib/ghostswap.conf.d/40-vendor.conf" <<-EOF
	algorithm = zstd
	priority = 77
	EOF
	cat >"$merged/usr/lib/ghostswap.conf.d/50-test.conf" <<-EOF
	# hidden by /etc/ghostswap.conf.d/50-test.conf
	priority = 11
	EOF
	cat >"$merged/etc/ghostswap.conf.d/50-test.conf" <<-EOF
	# written by tests/boot.sh
	size = ram * 3 / 2
	mem_limit = min(ram / 8, 200M)
	EOF
}

tap_step "overlay of the guest root" overlay gs_overlay_mount "$ov" || exit 1
tap_step "make install, /etc/ghostswap.conf, systemctl enable ghostswap.service" \
	install install || exit 1
mkdir -p "$out/guest"
# zswap on at boot (Debian's default is off): the service must turn it off.
GS_BOOT_ROOT=$merged GS_SYSTEMD=1 GS_APPEND="zswap.enabled=1" \
	GS_GUEST_TIMEOUT=${GS_BOOT_TIMEOUT:-1200} \
	"$GS_TOP/testbed/guest.sh" "$out/guest" \
	"bash /opt/gs-src/tests/guest/boot.sh" >"$out/boot.log" 2>&1
[ ! -f "$out/guest/boot.tap" ] || tap_append "$out/guest/boot.tap"
if [ ! -f "$out/guest/boot.done" ]; then
	gs_guest_died "$out/guest" "$out/guest/boot.plan" "$out/guest/boot.tap" \
		>"$out/died.tap"
	tap_append "$out/died.tap"
	grep -E 'Failed|ghostswap' "$out/guest/console.log" 2>/dev/null |
		head -n 20 | sed 's/^/# /'
fi
rm -f "$out"/guest/disk-*.img
tap_plan
exit $tap_rc
