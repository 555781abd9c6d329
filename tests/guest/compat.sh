# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# zram's users, replayed: the sysfs writes that systemd's zram-generator,
# Android's fs_mgr with ZramWriteback, and Android's mmd make to set up and
# maintain /dev/zram0, in their order and with their values, against
# /dev/ghostswap. Each write must end as it does on zram (7.3), or as the
# comment says and why; swap works through what they set up. Each test
# leaves the module loaded, swap off, the device reset. Sources, read
# 2026-11-27: zram-generator src/setup.rs (run_device_setup, v1.2.1);
# AOSP system/core fs_mgr.cpp (fs_mgr_swapon_all), frameworks/base
# ZramWriteback.java, system/memory/mmd (setup_zram, zram/writeback.rs,
# zram/recompression.rs).

# The guest's helpers: fail, sysw, gs_fresh, the stat readers, $SYS,
# $DEV, $CTL.
. /opt/gs-src/tests/guest/lib.sh

# put ATTR VALUE [ERROR]: write VALUE as the tools do (one write(2), no
# newline); it must succeed, or fail with ERROR (strerror's text). Busy
# where no error is expected: udev probing the device after a reset (its
# blkid holds it open, and an open device refuses reconfiguration, which
# zram does not): settle and write once more, as sysfs_write does.
put() {
	local out rc
	out=$( (printf '%s' "$2" >"$SYS/$1") 2>&1)
	rc=$?
	if [ $rc != 0 ] && [ -z "${3:-}" ] && [[ $out == *"resource busy"* ]]; then
		udevadm settle 2>/dev/null
		echo "$1 <- '$2': busy, retried after udevadm settle"
		out=$( (printf '%s' "$2" >"$SYS/$1") 2>&1)
		rc=$?
	fi
	if [ $rc = 0 ]; then
		[ -z "${3:-}" ] || fail "$1 <- '$2': accepted, want '$3'"
		echo "$1 <- '$2': ok"
	else
		case $out in
		*"${3:-no error expected}"*) echo "$1 <- '$2': ${3} (as on zram)" ;;
		*) fail "$1 <- '$2': $out" ;;
		esac
	fi
}

# swapping SECONDS: a verified workload in a memory cgroup, in the
# background, that swaps its pages out and in again for SECONDS (several
# passes): the maintenance runs beside it. $bg: its pid.
swapping() {
	run_cg gs-replay "$(wl_limit 32)" gsverify "$(wl 96)" "$1" 17 str \
		>/tmp/replay.log 2>&1 &
	bg=$!
}
# stored MIB: wait (at most 5 minutes) until the device holds MIB of
# swapped-out data, so that the maintenance has pages to work on.
stored() {
	for _ in $(seq 300); do
		[ "$(mstat orig)" -ge $(($1 << 20)) ] && return 0
		sleep 1
	done
	fail "the workload did not swap $1 MiB out: $(cat $SYS/mm_stat)"
}
swapped() {
	wait "$bg" || { cat /tmp/replay.log; fail "the workload beside the maintenance"; }
	cat /tmp/replay.log
}

replay_end() {
	swapoff $DEV || fail swapoff
	put reset 1
	gs_check
}

# zram-generator, with its example configuration
# (compression-algorithm = lzo-rle zstd(level=3) (type=idle)), a
# writeback device and its defaults: zram-size min(ram / 2, 4096),
# zram-resident-limit 0, swap-priority 100, the swap unit's discard.
# Then compression-algorithm = zstd(level=3), whose parameters go to
# algorithm_params.
t_zram_generator() {
	local size
	gs_fresh || fail fresh
	size=$(awk '$1 == "MemTotal:" { m = $2 * 1024 / 2; if (m > 4096 * 1048576) m = 4096 * 1048576; printf "%d", m }' /proc/meminfo)
	put comp_algorithm lzo-rle
	put recomp_algorithm "algo=zstd priority=1"
	# zram: EINVAL before disksize (not initialised), and zram-generator
	# only warns (its issue #215). Here: EINVAL too, for "level" is no
	# key of recompress, zram's or ours.
	put recompress "level=3 priority=1" "Invalid argument"
	put backing_dev "$(vdisk gsback)"
	put mem_limit 0
	put disksize "$size"
	mkswap $DEV >/dev/null || fail mkswap
	swapon --priority 100 --discard $DEV || fail "swapon --discard"
	grep "^$DEV " /proc/swaps
	run_cg gs-replay "$(wl_limit 32)" gsverify "$(wl 96)" 1 17 str || fail "workload"
	grep -q '\[lzo-rle\]' $SYS/comp_algorithm || fail "comp_algorithm: $(cat $SYS/comp_algorithm)"
	grep -q '#1: .*\[zstd\]' $SYS/recomp_algorithm || fail "recomp_algorithm: $(cat $SYS/recomp_algorithm)"
	replay_end
	# compression-algorithm = zstd(level=3): the primary's parameters.
	put comp_algorithm zstd
	put algorithm_params "algo=zstd level=3"
	put mem_limit 0
	put disksize "$size"
	mkswap $DEV >/dev/null || fail mkswap
	swapon --priority 100 --discard $DEV || fail "swapon --discard"
	run_cg gs-replay "$(wl_limit 32)" gsverify "$(wl 48)" 1 19 str || fail "workload"
	replay_end
}

# Android before mmd: vendor init writes comp_algorithm; fs_mgr's
# swapon_all the backing device (a loop device over a file in
# /data/per_boot; here a disk), disksize with a newline, then mkswap and
# swapon; ZramWriteback, 20 minutes after boot and then daily, marks all
# pages idle, writes the idle ones back, and marks all idle again.
# (max_comp_streams, which fs_mgr opens read-only and so never writes,
# is not here.)
t_android_fs_mgr() {
	gs_fresh || fail fresh
	put comp_algorithm lz4
	put backing_dev "$(vdisk gsback)"
	put disksize "$((1 << 30))
"
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	swapping 5
	stored "$(wl 32)"
	put idle all
	put writeback idle
	put idle all
	swapped
	echo "bd_stat: $(cat $SYS/bd_stat)"
	[ "$(bdstat writes)" -gt 0 ] || fail "nothing written back"
	replay_end
}

# mmd: setup_zram (writeback on: the limit switch, then the backing
# device; recompression on with its default zstd, written only while
# recomp_algorithm reads empty; the configured comp_algorithm; disksize),
# its probe of idle ages (u32 max: EINVAL would mean no age tracking),
# then one maintenance pass: recompression (huge_idle, idle, huge, each
# with threshold=1024, after an idle mark by age), then writeback (the
# day's limit, read back; huge_idle, idle, huge).
t_android_mmd() {
	local limit
	gs_fresh || fail fresh
	put writeback_limit_enable 1
	put backing_dev "$(vdisk gsback)"
	[ -z "$(cat $SYS/recomp_algorithm)" ] || fail "recomp_algorithm not empty: $(cat $SYS/recomp_algorithm)"
	put recomp_algorithm algo=zstd
	put comp_algorithm lz4
	put disksize $((1 << 30))
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	put idle 4294967295
	swapping 5
	stored "$(wl 32)"
	put idle 7200
	put recompress "type=huge_idle threshold=1024"
	put idle 7200
	put recompress "type=idle threshold=1024"
	put recompress "type=huge threshold=1024"
	limit=$(((64 << 20) / 4096))
	put writeback_limit "$limit"
	[ "$(cat $SYS/writeback_limit)" = "$limit" ] || fail "writeback_limit reads $(cat $SYS/writeback_limit)"
	put idle 72000
	put writeback huge_idle
	put idle 72000
	put writeback idle
	put writeback huge
	swapped
	echo "bd_stat: $(cat $SYS/bd_stat); writeback_limit $(cat $SYS/writeback_limit); comp_stat: $(head -n 3 $SYS/comp_stat)"
	# Nothing is 20 hours idle: only "huge" wrote, within the limit.
	[ "$(bdstat writes)" -gt 0 ] || fail "writeback huge wrote nothing"
	[ $((limit - $(cat $SYS/writeback_limit))) = "$(bdstat writes)" ] ||
		fail "the limit fell by $((limit - $(cat $SYS/writeback_limit))), $(bdstat writes) pages written"
	grep -q '#1: .*\[zstd\]' $SYS/recomp_algorithm || fail "recomp_algorithm: $(cat $SYS/recomp_algorithm)"
	replay_end
}
