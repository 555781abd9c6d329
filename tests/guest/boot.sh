#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in a guest booted with systemd as init (tests/boot.sh): the module
# installed by DKMS, the tools by "make install", ghostswap.service enabled,
# /etc/ghostswap.conf written by tests/boot.sh (size 3G, zstd, mem_limit
# 200M, priority 77, zswap off), zswap on at boot. Checks that the boot
# brought swap up per the configuration, that ghostswapctl status --json
# reports it, that swap works, that stopping the service resets the
# device, and the udev path: the device appearing again (module reloaded)
# starts the service again. TAP in /opt/gs-out/boot.tap.
set -u
# The guest's helpers and TAP: fail, run_cg, $PAGES, $SYS, $DEV, tap_*.
. /opt/gs-src/tests/guest/lib.sh
TAP_OUT=$GS_OUT/boot.tap
TAP_PLAN_FILE=$GS_OUT/boot.plan
: >"$TAP_OUT"

# wait_active UNIT SECONDS
wait_active() {
	local i
	for i in $(seq "$2"); do
		[ "$(systemctl is-active "$1")" = active ] && return 0
		sleep 1
	done
	return 1
}

# The configuration, applied: swap on with priority 77, 3G, zstd, 200M.
swap_per_config() {
	local prio
	grep -q "^$DEV " /proc/swaps || fail "$DEV is not swapped on: $(cat /proc/swaps)"
	prio=$(awk -v d=$DEV '$1 == d { print $5 }' /proc/swaps)
	[ "$prio" = 77 ] || fail "priority $prio, want 77"
	[ "$(cat $SYS/disksize)" = $((3 << 30)) ] || fail "disksize $(cat $SYS/disksize)"
	grep -q '\[zstd\]' $SYS/comp_algorithm || fail "algorithm: $(cat $SYS/comp_algorithm)"
	[ "$(cat $SYS/mem_limit)" = $((200 << 20)) ] || fail "mem_limit $(cat $SYS/mem_limit)"
	cat /proc/swaps
}

t_boot() {
	[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] ||
		[ "$(readlink /proc/1/exe)" = /lib/systemd/systemd ] ||
		fail "PID 1 is $(readlink /proc/1/exe), not systemd"
	systemctl is-enabled ghostswap.service || fail "not enabled"
	wait_active ghostswap.service 120 || {
		systemctl status ghostswap.service --no-pager
		journalctl -b -u ghostswap.service --no-pager
		fail "ghostswap.service did not become active"
	}
	systemctl is-active systemd-udevd.service || fail "udevd not running"
	journalctl -b -u ghostswap.service --no-pager | tail -n 15
}

t_dkms_module() {
	local f
	f=$(modinfo -n ghostswap) || fail "no module"
	echo "module: $f"
	case $f in
	*/updates/dkms/*) ;;
	*) fail "not the DKMS-installed module: $f" ;;
	esac
	[ -d /sys/module/ghostswap ] || fail "not loaded"
}

t_config_applied() {
	swap_per_config
	[ "$(cat /sys/module/zswap/parameters/enabled)" = N ] ||
		fail "zswap still enabled"
}

t_udev_tagged() {
	udevadm info $DEV | grep -E 'TAGS|SYSTEMD_WANTS'
	udevadm info $DEV | grep -q 'SYSTEMD_WANTS=.*ghostswap.service' ||
		fail "no SYSTEMD_WANTS"
	systemctl is-active dev-ghostswap.device || fail "no device unit"
}

t_status_json() {
	local j
	j=$(ghostswapctl status --json --output +PRIORITY,MEM-LIMIT) ||
		fail "status --json: exit $?"
	echo "$j"
	echo "$j" | $PAGES ctl-json - \
		name=/dev/ghostswap algorithm=zstd disksize=$((3 << 30)) \
		mountpoint=[SWAP] priority=77 mem-limit=$((200 << 20)) ||
		fail "status --json does not report the configured device"
}

t_swap_works() {
	run_cg gs-boot 32 gsverify 96 1 5 zstr || fail "verified workload"
	cat $SYS/mm_stat
}

# Stopped, it stays stopped: the uevents of the swapoff and the reset
# must not start it again.
t_stop_resets() {
	systemctl stop ghostswap.service || fail "stop"
	sleep 3
	udevadm settle
	if systemctl is-active ghostswap.service; then
		journalctl -b --no-pager -o short-monotonic | grep ghostswap | tail -n 20
		fail "started again after the stop"
	fi
	grep -q "^$DEV " /proc/swaps && fail "still swapped on"
	[ "$(cat $SYS/disksize)" = "$(default_disksize)" ] || fail "not reset: $(cat $SYS/disksize)"
	grep -q '\[lz4\]' $SYS/comp_algorithm || fail "algorithm not reset"
	echo "stopped: swap off, device reset"
}

# The udev path: the module loaded again, the device appears, udev's
# SYSTEMD_WANTS starts the service, which sets it up again.
t_udev_starts_service() {
	local i
	# udev probes the device after the reset (blkid holds it open, and
	# so the module, for a moment): try again while it does.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		udevadm settle
		rmmod ghostswap 2>/dev/null && break
		sleep 1
	done
	if [ -d /sys/module/ghostswap ]; then
		lsmod | grep ghostswap
		for i in /proc/[0-9]*; do
			ls -l $i/fd 2>/dev/null | grep -q ghostswap &&
				echo "open by $(cat $i/comm) ($i): $(tr '\0' ' ' <$i/cmdline)"
		done
		ls /sys/block/ghostswap/holders /sys/module/ghostswap/holders
		systemctl list-units --all --no-pager | grep -i ghost
		fail "rmmod"
	fi
	systemctl is-active ghostswap.service && fail "service still active"
	modprobe ghostswap || fail "modprobe"
	wait_active ghostswap.service 120 || {
		journalctl -b -u ghostswap.service --no-pager | tail -n 20
		fail "the device appeared, the service did not start"
	}
	swap_per_config
}

TESTS=(
	"systemd boot: ghostswap.service enabled and active" t_boot
	"the module is the one DKMS installed" t_dkms_module
	"swap on /dev/ghostswap per /etc/ghostswap.conf, zswap turned off" t_config_applied
	"udev tagged the device for systemd" t_udev_tagged
	"ghostswapctl status --json reports it" t_status_json
	"a verified workload swaps through it" t_swap_works
	"systemctl stop: swapoff and reset" t_stop_resets
	"udev: the device appearing starts the service" t_udev_starts_service
)
tap_tests /tmp/boot-test.log "${TESTS[@]}"
tap_plan
echo done >"$GS_OUT/boot.done"
