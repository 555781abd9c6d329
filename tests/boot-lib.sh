# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# The systemd boot of a guest root with ghostswap installed, shared by
# tests/boot.sh (DKMS and "make install" of the tree) and tests/package.sh
# (the Debian packages): an overlay of that root, a configuration written
# into it and ghostswap.service enabled, a boot with systemd as init, and
# tests/guest/boot.sh checking in the guest that the device came up as
# configured. Sourced after testbed/lib.sh and testbed/tap.sh.

# gs_boot_config ROOT: what an admin does once the module and the tools
# are installed: the configuration, and systemctl enable. Values unlike
# the defaults, so that the guest can tell they came from here: the
# example /etc/ghostswap.conf (lz4, priority 100, zswap off) as installed,
# drop-ins of a vendor and of the admin over it, sizes as expressions of
# ram (tests/guest/boot.sh checks each).
gs_boot_config() {
	local root=$1
	mkdir -p "$root/usr/lib/ghostswap.conf.d" "$root/etc/ghostswap.conf.d"
	cat >"$root/usr/lib/ghostswap.conf" <<-EOC
	# hidden whole by /etc/ghostswap.conf
	size = 5G
	writeback_limit = 7
	EOC
	cat >"$root/usr/lib/ghostswap.conf.d/40-vendor.conf" <<-EOC
	algorithm = zstd
	priority = 77
	EOC
	cat >"$root/usr/lib/ghostswap.conf.d/50-test.conf" <<-EOC
	# hidden by /etc/ghostswap.conf.d/50-test.conf
	priority = 11
	EOC
	cat >"$root/etc/ghostswap.conf.d/50-test.conf" <<-EOC
	# written by tests/boot-lib.sh
	size = ram * 3 / 2
	mem_limit = min(ram / 8, 200M)
	EOC
	# shellcheck disable=SC2016
	GS_ROOT=$root gs_chroot sh -c 'set -e
		systemctl enable ghostswap.service
		ls -l /etc/systemd/system/swap.target.wants/
		modinfo -k "$1" -n ghostswap' sh "$(GS_ROOT=$root gs_kver)"
}

# gs_boot_guest ROOT OUT [VERSION]: boot ROOT (an overlay, thrown away
# afterwards: the boot writes into it) with systemd as init, zswap on
# (Debian's default is off: the service must turn it off), and run
# tests/guest/boot.sh there; VERSION, if given, is the version the
# module and ghostswapctl must have. Its TAP lines are appended to the
# caller's; a guest that died fails, and so does a kernel report in its
# console (gs_console_tap).
gs_boot_guest() {
	local root=$1 out=$2 env=
	[ -z "${3:-}" ] || env="GS_BOOT_VERSION=$3 "
	[ -z "${GS_TEARDOWN_ROUNDS:-}" ] || env="${env}GS_TEARDOWN_ROUNDS=$GS_TEARDOWN_ROUNDS "
	mkdir -p "$out/guest"
	# The root as a machine has it after its first boot: the first boot's
	# updates (ldconfig, hwdb, the journal catalog: ConditionNeedsUpdate=)
	# done, their stamps newer than /usr. Under emulation they take a
	# minute of every boot, and the root here boots for the first time.
	touch "$root/etc/.updated" "$root/var/.updated"
	GS_BOOT_ROOT=$root GS_SYSTEMD=1 GS_APPEND="zswap.enabled=1" GS_DISKS=gssr:512M \
		GS_GUEST_TIMEOUT=${GS_BOOT_TIMEOUT:-2400} \
		"$GS_TOP/testbed/guest.sh" "$out/guest" \
		"${env}bash /opt/gs-src/tests/guest/boot.sh" >"$out/boot.log" 2>&1
	[ ! -f "$out/guest/boot.tap" ] || tap_append "$out/guest/boot.tap"
	if [ ! -f "$out/guest/boot.done" ]; then
		gs_guest_died "$out/guest" "$out/guest/boot.plan" "$out/guest/boot.tap" \
			>"$out/died.tap"
		tap_append "$out/died.tap"
		grep -E 'Failed|ghostswap' "$out/guest/console.log" 2>/dev/null |
			head -n 20 | sed 's/^/# /'
	fi
	gs_console_tap "systemd boot" "$out/guest" >"$out/console.tap"
	tap_append "$out/console.tap"
	rm -f "$out"/guest/disk-*.img
}
