#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ghostswap guest suite: runs as root inside the test guest, loads the real
# module and moves real data through it. Writes TAP to $GS_OUT/results.tap
# (one line per test as it finishes, so an interrupted run still reports).
#
# Usage: suite.sh [TEST ...]   (default: all tests, in order)
set -u
GS_OUT=${GS_OUT:-/opt/gs-out}
TAP=$GS_OUT/results.tap
SYS=/sys/block/ghostswap
DEV=/dev/ghostswap
: >"$TAP"
n=0
nfail=0

tap() { echo "$*" >>"$TAP"; echo "$*" >/dev/kmsg 2>/dev/null || true; }
diag() { sed 's/^/# /' | tee -a "$TAP" >/dev/null; }
log() { echo "# $*" >>"$TAP"; }

# run DESC CMD...: one TAP test; the command's output becomes diagnostics.
run() {
	local desc=$1 rc
	shift
	n=$((n + 1))
	# A subshell: fail() ends the test, not the suite.
	("$@") >"$GS_OUT/test.log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		tap "ok $n - $desc"
	else
		nfail=$((nfail + 1))
		tap "not ok $n - $desc (exit $rc)"
	fi
	tail -n 40 "$GS_OUT/test.log" | diag
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# Fields of cluster_stat, by name.
cstat() {
	local f
	read -r clusters peak slots meta same stored stored_bytes <"$SYS/cluster_stat"
	case $1 in
	clusters) f=$clusters ;; peak) f=$peak ;; slots) f=$slots ;;
	meta) f=$meta ;; same) f=$same ;; stored) f=$stored ;;
	stored_bytes) f=$stored_bytes ;;
	esac
	echo "$f"
}

meminfo() { awk -v k="$1:" '$1 == k { print $2 * 1024 }' /proc/meminfo; }

# Bytes of one cluster (slab object + table page), from the module's own
# slab cache as the kernel reports it.
cluster_obj_size() { awk '$1 == "gs_cluster" { print $4 }' /proc/slabinfo; }
# Cluster objects in use. Shrinking first flushes the per-CPU slabs so that
# slabinfo's active count is exact; frees wait for an RCU grace period, so
# give a falling count a moment to settle.
cluster_objs() {
	local i n
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo 1 >/sys/kernel/slab/gs_cluster/shrink
		n=$(awk '$1 == "gs_cluster" { print $2 }' /proc/slabinfo)
		[ "$n" = "${1:-$n}" ] && break
		sleep 0.5
	done
	echo "$n"
}

# sysw FILE VALUE EXPECT: write VALUE (plus newline) and expect the write to
# fail with EXPECT (a strerror text) or succeed (EXPECT = ok).
sysw() {
	local out rc
	out=$( (echo "$2" >"$1") 2>&1)
	rc=$?
	if [ "$3" = ok ]; then
		[ $rc = 0 ] || fail "write '$2' to $1: $out"
	else
		[ $rc != 0 ] || fail "write '$2' to $1 was accepted"
		case $out in
		*"$3"*) echo "write '$2' to ${1##*/}: $3 (as expected)" ;;
		*) fail "write '$2' to $1: '$out', want '$3'" ;;
		esac
	fi
}

setup_guest() {
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	# zswap would sit in front of any swap device: keep it out of the way.
	[ -w /sys/module/zswap/parameters/enabled ] &&
		echo N >/sys/module/zswap/parameters/enabled
	swapoff -a 2>/dev/null
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	uname -r
	grep -E 'MemTotal|MemAvailable' /proc/meminfo
}

# ------------------------------------------------------------------ tests

t_load() {
	modprobe ghostswap || fail "modprobe"
	udevadm settle 2>/dev/null
	[ -b $DEV ] || fail "$DEV is not a block device"
	[ "$(cat $SYS/disksize)" = $((64 << 30)) ] || fail "default disksize"
	[ "$(cat $SYS/queue/logical_block_size)" = 4096 ] || fail "lbs"
	[ "$(cat $SYS/queue/physical_block_size)" = 4096 ] || fail "pbs"
	[ "$(cstat clusters)" = 0 ] && [ "$(cstat meta)" = 0 ] ||
		fail "fresh device holds memory: $(cat $SYS/cluster_stat)"
	cat $SYS/cluster_stat $SYS/io_stat
}

t_unload_reload() {
	rmmod ghostswap || fail "rmmod of an unused device"
	[ ! -e $SYS ] || fail "$SYS still there"
	grep -q '^gs_cluster ' /proc/slabinfo && fail "slab cache left behind"
	out=$(modprobe ghostswap disksize=12Q 2>&1) && fail "bad param accepted"
	echo "modprobe disksize=12Q: $out"
	modprobe ghostswap disksize=1T || fail "modprobe disksize=1T"
	[ "$(cat $SYS/disksize)" = $((1 << 40)) ] || fail "param disksize=1T"
	rmmod ghostswap && modprobe ghostswap || fail "reload"
}

t_bad_sysfs() {
	local v
	for v in "" abc -1 1Z 0 4095 1020K 0x100 "1 G" 18446744073709551616 \
		99999999999P 16T 17T "1G junk"; do
		sysw $SYS/disksize "$v" "Invalid argument" || return 1
	done
	for v in 0 no abc ""; do
		sysw $SYS/reset "$v" "Invalid argument" || return 1
	done
	sysw $SYS/disksize 4T ok || return 1
	[ "$(cat $SYS/disksize)" = $((4 << 40)) ] || fail "4T not taken"
	sysw $SYS/disksize 3g ok || return 1
	[ "$(cat $SYS/disksize)" = $((3 << 30)) ] || fail "3g not taken"
	sysw $SYS/disksize 1048577 ok || return 1
	[ "$(cat $SYS/disksize)" = $(((1 << 20) + 4096)) ] || fail "round up"
	sysw $SYS/cluster_stat 1 "Permission denied" || return 1
	sysw $SYS/reset 1 ok
}

# A 1 TiB ghost swap in a small guest: the module holds one cluster (the
# swap header) and the swap core's own cost stays small.
t_swapon_1t() {
	local avail0 avail1 drop meta
	sysw $SYS/disksize 1T ok || return 1
	mkswap $DEV >/dev/null || fail mkswap
	echo 3 >/proc/sys/vm/drop_caches
	avail0=$(meminfo MemAvailable)
	swapon $DEV || fail swapon
	echo 3 >/proc/sys/vm/drop_caches
	avail1=$(meminfo MemAvailable)
	cat /proc/swaps
	free -m
	# 1 TiB less the header page, in KiB.
	[ "$(awk -v d=$DEV '$1 == d { print $3 }' /proc/swaps)" = 1073741820 ] ||
		fail "swap size is not 1 TiB"
	drop=$((avail0 - avail1))
	meta=$(cstat meta)
	echo "MemAvailable drop at swapon of 1 TiB: $((drop / 1024)) KiB"
	echo "module metadata at 1 TiB idle: $meta bytes, $(cstat clusters) clusters"
	[ "$(cstat clusters)" = 1 ] || fail "want exactly the header cluster"
	[ "$meta" -le 8192 ] || fail "module holds $meta bytes idle"
	[ "$drop" -lt $((48 << 20)) ] || fail "MemAvailable dropped $drop bytes"
}

t_busy() {
	sysw $SYS/disksize 2G "Device or resource busy" || return 1
	sysw $SYS/reset 1 "Device or resource busy" || return 1
	out=$(rmmod ghostswap 2>&1) && fail "rmmod while swapped on"
	echo "rmmod while swapped on: $out"
}

# run_cg NAME LIMIT_MIB CMD...: run CMD in a fresh memory cgroup.
run_cg() {
	local cg=/sys/fs/cgroup/$1 rc
	mkdir -p "$cg"
	echo $(($2 << 20)) >"$cg/memory.max"
	shift 2
	(echo $BASHPID >"$cg/cgroup.procs" && exec "$@")
	rc=$?
	echo "memcg $cg: $(grep -E '^(pswpin|pswpout) ' "$cg/memory.stat" | tr '\n' ' ')"
	echo "peak swap: $(cat "$cg/memory.swap.peak" 2>/dev/null)"
	rmdir "$cg"
	return $rc
}

# Three times over a memcg limit, a mix of zero, same-filled, text and random
# pages, every byte verified after every swap-in.
t_workload() {
	local before after
	before=$(cstat peak)
	run_cg gs-work 128 gsverify 384 2 7 zstr || fail "gsverify"
	after=$(cstat peak)
	cat $SYS/cluster_stat $SYS/io_stat
	[ "$after" -gt 40 ] || fail "only $after clusters ever used: no swap?"
	echo "clusters peak $before -> $after"
}

# Same with 64 KiB mTHP: swap-out and swap-in send multi-page bios.
t_workload_mthp() {
	local f=/sys/kernel/mm/transparent_hugepage/hugepages-64kB
	local s0 s1
	[ -d $f ] || { echo "no 64K mTHP in this kernel"; return 1; }
	echo always >$f/enabled
	s0=$(cat $f/stats/swpout)
	run_cg gs-mthp 96 gsverify 256 2 11 zstr
	rc=$?
	s1=$(cat $f/stats/swpout)
	echo never >$f/enabled
	echo "64K mTHP swpout: $s0 -> $s1"
	[ $rc = 0 ] || fail "gsverify with mTHP"
	[ "$s1" -gt "$s0" ] || fail "no 64K folio was swapped out whole"
}

# Slot frees reach the module: after the workloads exit, only the header is
# left; after swapoff too, and the clusters are gone.
t_swapoff_frees() {
	local i
	for i in 1 2 3 4 5; do
		[ "$(cstat slots)" -le 1 ] && break
		sleep 1
	done
	echo "after workload exit: $(cat $SYS/cluster_stat)"
	swapoff $DEV || fail swapoff
	echo "after swapoff: $(cat $SYS/cluster_stat)"
	[ "$(cstat slots)" = 1 ] || fail "slots left: $(cstat slots)"
	[ "$(cstat clusters)" = 1 ] || fail "clusters left: $(cstat clusters)"
	[ "$(cat $SYS/io_stat | awk '{print $4}')" -gt 0 ] || fail "no notify_free"
}

# Raw device: random 4k..64k reads and writes, writes followed by trims,
# and sequential 64k writes far into the address space; crc32c verified.
t_fio() {
	sysw $SYS/reset 1 ok || return 1
	sysw $SYS/disksize 4T ok || return 1
	DEV=$DEV fio /opt/gs-src/tests/guest/verify.fio >"$GS_OUT/fio.log" 2>&1
	rc=$?
	grep -E 'err=|READ:|WRITE:|TRIM:|verify' "$GS_OUT/fio.log"
	[ $rc = 0 ] || { tail -n 30 "$GS_OUT/fio.log"; fail "fio exit $rc"; }
	! grep -E 'err= *[1-9]' "$GS_OUT/fio.log" || fail "fio reported errors"
	cat $SYS/cluster_stat $SYS/io_stat
	blkdiscard $DEV || fail blkdiscard
	[ "$(cstat clusters)" = 0 ] || fail "discard of the whole device left clusters"
	[ "$(cluster_objs 0)" = 0 ] || fail "slab objects left: $(cluster_objs)"
	sysw $SYS/reset 1 ok
}

# Blocks split over two pages (O_DIRECT buffer at 512-byte offset) take the
# bounce path; reads back through a different split must match.
t_split_bvec() {
	python3 - <<'EOF'
import mmap, os
fd = os.open("/dev/ghostswap", os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4 * 4096)
data = os.urandom(3 * 4096)
buf[512:512 + len(data)] = data
assert os.pwritev(fd, [memoryview(buf)[512:512 + len(data)]], 40960) == len(data)
out = mmap.mmap(-1, 4 * 4096)
assert os.preadv(fd, [memoryview(out)[1024:1024 + len(data)]], 40960) == len(data)
assert out[1024:1024 + len(data)] == data, "split read mismatch"
whole = mmap.mmap(-1, 3 * 4096)
os.preadv(fd, [whole], 40960)
assert whole[:] == data, "aligned read mismatch"
print("split-page direct I/O round trip ok")
EOF
}

# Free memory as the page allocator sees it: MemFree plus the pages parked
# on per-CPU free lists (which can hold tens of MiB after a burst of frees).
free_bytes() {
	awk -v f="$(meminfo MemFree)" '$1 == "count:" { c += $2 }
		END { print f + c * 4096 }' /proc/zoneinfo
}

# write_random MIB SEEK_MIB: random data to the device, its sha256 to
# /tmp/w.sum; nothing kept in (tmpfs) memory.
write_random() {
	rm -f /tmp/w.sum
	dd if=/dev/urandom bs=1M count="$1" status=none |
		tee >(sha256sum >/tmp/w.sum) |
		dd of=$DEV bs=1M oflag=direct seek="$2" status=none || return 1
	for i in $(seq 50); do [ -s /tmp/w.sum ] && break; sleep 0.2; done
}

# Every byte counted: module stats against the slab cache and free memory.
t_accounting() {
	local objsz free0 free1 used counted
	sysw $SYS/reset 1 ok || return 1
	echo 3 >/proc/sys/vm/drop_caches
	free0=$(free_bytes)
	write_random 256 4096 || fail "write"
	echo 3 >/proc/sys/vm/drop_caches
	free1=$(free_bytes)
	objsz=$(cluster_obj_size)
	echo "stats: $(cat $SYS/cluster_stat); slab gs_cluster objs $(cluster_objs) size $objsz"
	[ "$(cstat stored)" = 65536 ] || fail "stored pages $(cstat stored), want 65536"
	[ "$(cstat clusters)" = 128 ] || fail "clusters $(cstat clusters), want 128"
	[ "$(cluster_objs 128)" = 128 ] || fail "slab holds $(cluster_objs) cluster objects"
	[ "$(cstat meta)" = $((128 * (objsz + 4096))) ] ||
		fail "meta $(cstat meta), slab says $((128 * (objsz + 4096)))"
	used=$((free0 - free1))
	counted=$(($(cstat stored_bytes) + $(cstat meta)))
	echo "free memory fell $((used >> 10)) KiB; module counts $((counted >> 10)) KiB"
	[ $used -gt $((counted - (16 << 20))) ] && [ $used -lt $((counted + (16 << 20))) ] ||
		fail "counted and real use differ by more than 16 MiB"
	[ "$(dd if=$DEV bs=1M skip=4096 count=256 iflag=direct status=none | sha256sum)" = "$(cat /tmp/w.sum)" ] ||
		fail "read back differs"
}

# reset gives everything back.
t_reset_frees() {
	local free0 free1 counted
	counted=$(($(cstat stored_bytes) + $(cstat meta)))
	[ "$counted" -gt $((200 << 20)) ] || fail "nothing stored to give back"
	echo 3 >/proc/sys/vm/drop_caches
	free0=$(free_bytes)
	sysw $SYS/reset 1 ok || return 1
	echo 3 >/proc/sys/vm/drop_caches
	free1=$(free_bytes)
	echo "reset gave back $(((free1 - free0) >> 10)) KiB of $((counted >> 10)) KiB counted"
	[ "$(cstat clusters)" = 0 ] && [ "$(cstat meta)" = 0 ] &&
		[ "$(cstat stored)" = 0 ] || fail "stats after reset: $(cat $SYS/cluster_stat)"
	[ "$(cluster_objs 0)" = 0 ] || fail "slab objects left: $(cluster_objs)"
	[ "$(cat $SYS/disksize)" = $((64 << 30)) ] || fail "disksize not back to default"
	[ $((free1 - free0)) -gt $((counted - (16 << 20))) ] || fail "memory did not come back"
	dd if=$DEV bs=1M skip=4096 count=1 iflag=direct status=none | cmp - <(head -c 1M /dev/zero) ||
		fail "data survived reset"
}

# Writers, readers and trimmers racing on the same two clusters: clusters
# are created and freed under each other. Nothing may break, the counters
# must balance, and the area must work normally afterwards.
t_cluster_race() {
	sysw $SYS/reset 1 ok || return 1
	DEV=$DEV fio /opt/gs-src/tests/guest/race.fio >"$GS_OUT/race.log" 2>&1 ||
		{ tail -n 20 "$GS_OUT/race.log"; fail "fio"; }
	grep -E 'READ:|WRITE:|TRIM:' "$GS_OUT/race.log"
	echo "after race: $(cat $SYS/cluster_stat)"
	[ "$(cstat clusters)" -le 2 ] || fail "more than 2 clusters"
	[ "$(cstat slots)" -le 1024 ] || fail "slots_used over 1024"
	blkdiscard -o $((8 << 30)) -l $((4 << 20)) $DEV || fail blkdiscard
	[ "$(cstat clusters)" = 0 ] && [ "$(cstat slots)" = 0 ] &&
		[ "$(cstat same)" = 0 ] && [ "$(cstat stored)" = 0 ] ||
		fail "counters do not balance: $(cat $SYS/cluster_stat)"
	[ "$(cluster_objs 0)" = 0 ] || fail "slab objects left: $(cluster_objs)"
	write_random 4 8192 || fail write
	[ "$(dd if=$DEV bs=1M skip=8192 count=4 iflag=direct status=none | sha256sum)" = "$(cat /tmp/w.sum)" ] ||
		fail "read back differs"
	sysw $SYS/reset 1 ok
}

t_unload_final() {
	rmmod ghostswap || fail rmmod
	grep -q '^gs_cluster ' /proc/slabinfo && fail "slab cache left behind"
	dmesg | grep -E 'BUG|WARNING|Oops|ghostswap' | tail -n 20
	! dmesg | grep -qE 'BUG:|WARNING:|Oops' || fail "kernel reported problems"
}

ALL="load unload_reload bad_sysfs swapon_1t busy workload workload_mthp
swapoff_frees fio split_bvec cluster_race accounting reset_frees
unload_final"

setup_guest 2>&1 | diag
start=$(date +%s)
for t in ${*:-$ALL}; do
	run "$t" "t_$t"
done
tap "1..$n"
log "guest suite: $n tests, $nfail failed, $(($(date +%s) - start)) s"
echo "GS-SUITE-DONE" >"$GS_OUT/done"
