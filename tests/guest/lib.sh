# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The guest's helper library, sourced by every script that runs in the
# guest (testbed/guest.sh boots it): the suite and its tiers, the systemd
# boot checks, the demo (tests/guest/) and the benchmarks
# (bench/guest/bench.sh). Sourcing it again is harmless. It sources the
# TAP writer, testbed/tap.sh. The repository is at /opt/gs-src
# (read-only), the host's output folder at $GS_OUT.
[ -z "${GS_GUEST_LIB:-}" ] || return 0
GS_GUEST_LIB=1

GS_OUT=${GS_OUT:-/opt/gs-out}
SYS=/sys/block/ghostswap
DEV=/dev/ghostswap
PAGES="python3 /opt/gs-src/tests/guest/pages.py"
# ghostswapctl, where testbed/build.sh installs it (GS_CTL overrides).
CTL=${GS_CTL:-/usr/local/sbin/ghostswapctl}

# ------------------------------------------------------------------- TAP

# Each script names its stream (TAP_OUT). A test's output follows its
# line, 40 lines at most; test lines go to the kernel log too; the test
# that runs is named in $GS_OUT/running, for the host's report should the
# guest die (gs_guest_died in testbed/lib.sh).
. /opt/gs-src/testbed/tap.sh
TAP_KMSG=1
TAP_LOG_ALWAYS=1
TAP_LOG_LINES=40
TAP_RUNNING=$GS_OUT/running

# fail MESSAGE: end the test, failed (tap_run runs each in a subshell).
fail() {
	echo "FAIL: $*"
	exit 1
}

# ------------------------------------------------------------ the guest

# zswap_off: zswap off, its switch written only if it is on: any write
# of it sets zswap up, and a kernel that ever had zswap set up swaps
# large folios in a page at a time for the rest of the boot (mm/memory.c,
# zswap_never_enabled()).
zswap_off() {
	[ "$(cat /sys/module/zswap/parameters/enabled 2>/dev/null)" != Y ] ||
		echo N >/sys/module/zswap/parameters/enabled
}

# guest_setup: cgroup2 with the memory controller, debugfs, no swap, and
# zswap off (it would sit in front of any swap device).
guest_setup() {
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	zswap_off
	swapoff -a 2>/dev/null
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	# The first memory cgroup turns on the kernel's memcg static keys (a
	# live patch of its text): do it now, while nothing else runs.
	mkdir /sys/fs/cgroup/gs-first && rmdir /sys/fs/cgroup/gs-first
}

# The virtio disk with serial NAME (testbed/guest.sh GS_DISKS).
vdisk() {
	local b
	modprobe virtio_blk 2>/dev/null
	udevadm settle 2>/dev/null
	for b in /sys/block/vd*; do
		[ "$(cat "$b/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/${b##*/}"; return 0; }
	done
	echo "no disk with serial $1" >&2
	return 1
}

# ------------------------------------------------------------ the device

# sysfs_write FILE VALUE: write VALUE (plus newline); the error, if any, on
# stdout. udev probes the device (blkid opens it) after every close of a
# writer, swapoff included: an open device refuses reconfiguration. As
# ghostswapctl does: on EBUSY, let udev settle, then try once more.
sysfs_write() {
	local out
	out=$( (echo "$2" >"$1") 2>&1) && return 0
	if [[ $out == *"resource busy"* ]]; then
		udevadm settle 2>/dev/null
		echo "write '$2' to ${1##*/}: busy, retried after udevadm settle"
		out=$( (echo "$2" >"$1") 2>&1) && return 0
		out+="; open by: $(openers $DEV)"
	fi
	echo "$out"
	return 1
}

# openers DEVICE: the processes that have DEVICE open (pid and command),
# and swap's hold if it is swapped on: who made a write busy.
openers() {
	local f who=
	for f in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = "$1" ] || continue
		f=${f#/proc/}
		who+="${f%%/*} ($(cat /proc/${f%%/*}/comm 2>/dev/null)) "
	done
	grep -q "^$1 " /proc/swaps && who+="swap "
	echo "${who:-nobody}"
}

# sysw FILE VALUE EXPECT: write VALUE (plus newline) and expect the write to
# fail with EXPECT (a strerror text) or succeed (EXPECT = ok); else fail.
sysw() {
	local out
	if [ "$3" = ok ]; then
		out=$(sysfs_write "$1" "$2") || fail "write '$2' to $1: $out"
		[ -z "$out" ] || echo "$out"
		return 0
	fi
	out=$( (echo "$2" >"$1") 2>&1) && fail "write '$2' to $1 was accepted"
	# Busy where another error is expected: udev probing the device
	# after a change (its blkid holds it open); settle and try once more.
	case $out in
	*"Device or resource busy"*)
		if [ "$3" != "Device or resource busy" ]; then
			udevadm settle 2>/dev/null
			echo "write '$2' to ${1##*/}: busy, retried after udevadm settle"
			out=$( (echo "$2" >"$1") 2>&1) && fail "write '$2' to $1 was accepted"
		fi ;;
	esac
	case $out in
	*"$3"*) echo "write '$2' to ${1##*/}: $3 (as expected)" ;;
	*) fail "write '$2' to $1: '$out', want '$3'" ;;
	esac
}

# gs_fresh [ALG]: the module loaded, swap off, the device reset (to
# algorithm ALG). Returns non-zero if any of it fails.
gs_fresh() {
	if grep -q "^$DEV " /proc/swaps; then
		swapoff $DEV || return 1
	fi
	if [ ! -d $SYS ]; then
		modprobe ghostswap || return 1
		udevadm settle 2>/dev/null
	fi
	sysfs_write $SYS/reset 1 || return 1
	# A test that turned the free hook off (t_free_notify_off) and failed.
	[ "$(cat /sys/module/ghostswap/parameters/free_notify 2>/dev/null)" != N ] ||
		echo Y >/sys/module/ghostswap/parameters/free_notify 2>/dev/null
	[ -z "${1:-}" ] || sysfs_write $SYS/comp_algorithm "$1"
}

# zram_fresh [ALG]: zram's device (its sysfs directory $Z) made fresh
# beside ours, for a comparison: the module loaded, its swap off, reset,
# with algorithm ALG if given; its disksize is the caller's.
Z=/sys/block/zram0
zram_fresh() {
	grep -q "^/dev/zram0 " /proc/swaps && swapoff /dev/zram0
	[ -d $Z ] || { modprobe zram num_devices=1 && udevadm settle; } || return 1
	udevadm settle
	echo 1 >$Z/reset || return 1
	[ -z "${1:-}" ] || echo "$1" >$Z/comp_algorithm
}

# swap_on ALG [SIZE]: swap on a fresh device of SIZE (default 1T) with
# algorithm ALG. Returns non-zero if it could not.
swap_on() {
	gs_fresh "$1" && sysfs_write $SYS/disksize "${2:-1T}" &&
		mkswap $DEV >/dev/null && swapon $DEV ||
		{ echo "swapon of $DEV (${2:-1T}, $1) failed"; return 1; }
}

# attach_backing DEV: reset, attach DEV as backing device.
attach_backing() {
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	sysw $SYS/backing_dev "$1" ok
	[ "$(cat $SYS/backing_dev)" = "$1" ] || fail "backing_dev shows $(cat $SYS/backing_dev)"
}

# The module's disksize at load and after reset: 64 GiB, or where the
# swap core allocates memory for every slot (6.12) twice the RAM, at most
# 64 GiB (the module parameter shows the one in use).
default_disksize() { cat /sys/module/ghostswap/parameters/disksize; }

# fio_checked LOG: no job in fio's log died (an assertion) or failed, and
# the trims its job files ask for were done (each of ours trims).
fio_checked() {
	! grep -E 'Assertion|err= *[1-9]' "$1" || { echo "a fio job died or failed"; return 1; }
	grep -qE 'TRIM: bw=[1-9]' "$1" || { echo "fio did no trim"; return 1; }
}

# kernel_reports [FROM]: the kernel log's report lines (from its line FROM
# on), printed; false if there are none. A report made on purpose, between
# "GS-EXPECT-REPORT begin" and "end" lines (t_kernel_log_scan), is not one.
# The host reads the whole console for reports as well, from its start
# (testbed/console-scan.py): this only lets a test name its own.
kernel_reports() {
	dmesg | tail -n +"${1:-1}" |
		awk '/GS-EXPECT-REPORT begin/ { w = 1 } /GS-EXPECT-REPORT end/ { w = 0; next } !w' |
		grep -E 'BUG:|WARNING:|Oops|general protection|INFO: task .* blocked|work func gs_[a-z0-9_]+ .*deprecated workqueue'
}

# True where the swap core allocates memory for every slot at swapon
# (6.12): the module says so at load.
per_slot_swap_core() { dmesg | grep -q 'swap core allocates memory for every slot'; }

# stat_col FILE NAME COLUMN...: the field of FILE in the column that the
# list COLUMN... calls NAME.
stat_col() {
	local file=$1 name=$2 i=0 c
	shift 2
	for c; do
		i=$((i + 1))
		[ "$c" = "$name" ] || continue
		awk -v c=$i '{ print $c }' "$file"
		return
	done
	echo "${file##*/} has no column $name" >&2
	return 1
}

# The device's statistics by column name: cluster_stat; mm_stat (zram's
# columns); io_stat, bd_stat (zram's, then ours).
cstat() {
	stat_col $SYS/cluster_stat "$1" clusters peak slots meta meta_per_slot \
		stream reserve index_reserve
}
mstat() {
	stat_col $SYS/mm_stat "$1" orig compr used limit max same compacted \
		huge huge_since
}
iostat() {
	stat_col $SYS/io_stat "$1" failed_reads failed_writes invalid_io notify_free \
		discard_free
}
bdstat() {
	stat_col $SYS/bd_stat "$1" count reads writes clusters meta werr rerr \
		reloc creads cwrites sumerr discarded discard_errors capacity \
		grow_errors grow_error
}

# mm_stat against itself: used pool memory holds at least the compressed
# bytes and not wildly more; the high water mark is at least today's use.
mm_consistent() {
	local orig used compr max
	read -r orig compr used _ max _ <"${1:-$SYS/mm_stat}"
	[ "$used" -ge "$compr" ] || fail "pool $used < compressed $compr"
	[ "$used" -le $((compr * 2 + (4 << 20))) ] ||
		fail "pool $used far above compressed $compr"
	[ "$max" -ge "$used" ] || fail "mem_used_max $max < mem_used $used"
}

# Mismatches between the table and the reverse map (debugfs), must be 0.
gs_check() {
	local n
	n=$(head -n 1 /sys/kernel/debug/ghostswap/check) || fail "debugfs check"
	[ "$n" = 0 ] || { cat /sys/kernel/debug/ghostswap/check; fail "check: $n mismatches"; }
	echo "consistency check: 0 mismatches ($(bdstat count) pages on the backing device)"
}

# --------------------------------------------------------------- memory

# meminfo FIELD: in bytes.
meminfo() { awk -v k="$1:" '$1 == k { print $2 * 1024 }' /proc/meminfo; }

# A debugging kernel (the debug-kernel lane's, tests/debug-kernel.sh):
# KASAN or kmemleak, whose bookkeeping changes some of the figures below.
debug_kernel() {
	[ -e /sys/kernel/debug/kmemleak ] || grep -qw kasan_report /proc/kallsyms
}

# Free memory as the page allocator sees it: MemFree plus the pages parked
# on per-CPU free lists (which can hold tens of MiB after a burst of frees).
# Under KASAN, freed slab objects wait in a quarantine (up to 1/32 of
# memory) and keep their slabs: shrinking every cache empties it first.
free_bytes() {
	local c
	if debug_kernel; then
		for c in /sys/kernel/slab/*/shrink; do
			echo 1 >"$c" 2>/dev/null
		done
	fi
	awk -v f="$(meminfo MemFree)" '$1 == "count:" { c += $2 }
		END { print f + c * 4096 }' /proc/zoneinfo
}

# slab_obj_size NAME: bytes of one object of slab cache NAME as the kernel
# reports it (slabinfo's objsize, the slot). Under KASAN the slot also
# holds its redzone and allocation records: there, the object size the
# cache was made with, as kmem_cache_size() gives it.
slab_obj_size() {
	if debug_kernel; then
		cat "/sys/kernel/slab/$1/object_size"
	else
		awk -v c="$1" '$1 == c { print $4 }' /proc/slabinfo
	fi
}

# Bytes of one cluster header, from the module's own slab cache.
cluster_obj_size() { slab_obj_size gs_cluster; }

# Bytes of one node of the cluster index, an XArray (module/gs_index.h):
# sizeof(struct xa_node) on 64-bit, what the kernel's radix_tree_node
# slab, shared with the rest of the kernel, charges for it.
index_obj_size() { echo 576; }

# Spare nodes of the cluster index at rest, for the device's disksize:
# H + 4 * (H - 1), H the levels of 6 bits of the highest cluster number
# (at least one).
index_spares() {
	local max=$(( ($(cat $SYS/disksize) / 4096 - 1) >> 9 )) bits=0 h
	while [ $max -gt 0 ]; do
		bits=$((bits + 1))
		max=$((max >> 1))
	done
	h=$(((bits + 5) / 6))
	[ $h = 0 ] && h=1
	echo $((h + 4 * (h - 1)))
}

# Live objects of slab cache NAME that KFENCE handed out from its own pool
# (the guest runs with KFENCE on): /proc/slabinfo does not count them.
# debugfs lists every KFENCE object, a block each; a live one has an
# "allocated by" stack and no "freed by" one.
kfence_objs() {
	local f=/sys/kernel/debug/kfence/objects
	[ -r $f ] || { echo 0; return; }
	awk -v c="cache=$1" '
		function done() { if (mine && alloc && !freed) n++ }
		/^kfence-#/ {
			done()
			mine = $NF == c; alloc = 0; freed = 0
		}
		/^allocated by task/ { alloc = 1 }
		/^freed by task/ { freed = 1 }
		END { done(); print n + 0 }' $f
}

# slab_objs NAME [WANT]: objects of slab cache NAME in use. Shrinking first
# flushes the per-CPU slabs so that slabinfo's active count is exact, and
# KFENCE's objects are added; frees of clusters wait for an RCU grace
# period, so a count that is not WANT yet gets a moment to settle.
slab_objs() {
	local i n
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo 1 >/sys/kernel/slab/$1/shrink
		n=$(awk -v c="$1" '$1 == c { print $2 }' /proc/slabinfo)
		n=$((n + $(kfence_objs "$1")))
		[ "$n" = "${2:-$n}" ] && break
		sleep 0.5
	done
	echo "$n"
}

# Clusters in the store's reserve (cluster_stat's reserve bytes), which
# are gs_cluster slab objects too; 4 while the device is at rest.
reserve_objs() { echo $(($(cstat reserve) / ($(cluster_obj_size) + 4096))); }

# cluster_objs [WANT_CLUSTERS]: slab objects of gs_cluster, the reserve's
# not included.
cluster_objs() {
	local r
	r=$(reserve_objs)
	echo $(($(slab_objs gs_cluster ${1:+$(($1 + r))}) - r))
}

# ------------------------------------------------------------ workloads

# wl MIB: a verified workload's data size in MiB, divided by
# GS_WORKLOAD_DIV (default 1): the debug-kernel lane runs the workloads
# smaller. wl_limit MIB: its memory cgroup limit, divided the same way plus
# 8 MiB for what does not shrink with it (the shell, the program, page
# tables): a smaller cgroup would thrash on its own text.
wl() { echo $(($1 / ${GS_WORKLOAD_DIV:-1})); }
wl_limit() {
	local div=${GS_WORKLOAD_DIV:-1}
	echo $(($1 / div + (div > 1 ? 8 : 0)))
}

# run_cg NAME LIMIT_MIB CMD...: run CMD in a fresh memory cgroup.
# CG_LIMIT=memory.high makes the limit one that reclaims and throttles
# instead of a hard one (memory.max) whose OOM killer may end CMD when
# reclaim finds every page it could take still being written: the case
# of a swap device whose writes go to a slow disk asynchronously.
run_cg() {
	local cg=/sys/fs/cgroup/$1 rc
	mkdir -p "$cg"
	echo $(($2 << 20)) >"$cg/${CG_LIMIT:-memory.max}"
	shift 2
	(echo $BASHPID >"$cg/cgroup.procs" && exec "$@")
	rc=$?
	echo "memcg $cg: $(grep -E '^(pswpin|pswpout) ' "$cg/memory.stat" | tr '\n' ' ')"
	echo "peak swap: $(cat "$cg/memory.swap.peak" 2>/dev/null)"
	# Why it failed: the memcg's OOM killer, a signal, the kernel's word.
	if [ $rc != 0 ]; then
		echo "$1: exit $rc; memory.events: $(tr '\n' ' ' <"$cg/memory.events")"
		dmesg | grep -E -i 'oom|killed|ghostswap|error|segfault' | tail -n 8
	fi
	rmdir "$cg"
	return $rc
}

# sample_peak FILE SECONDS CMD...: run CMD every SECONDS and keep in FILE
# the line it printed with the largest first field (the most data stored
# at any moment); until killed (run it in the background).
sample_peak() {
	local file=$1 secs=$2 best=0 line first
	shift 2
	while :; do
		line=$("$@")
		read -r first _ <<<"$line"
		if [ "${first:-0}" -gt "$best" ]; then
			best=$first
			echo "$line" >"$file"
		fi
		sleep "$secs"
	done
}
