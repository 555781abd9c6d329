#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ghostswap guest suite: runs as root inside the test guest, loads the real
# module and moves real data through it. Writes TAP to $GS_OUT/results.tap
# (one line per test as it finishes, so an interrupted run still reports).
#
# Usage: suite.sh [TEST ...]   (default: all tests, in order)
set -u
# The guest's helpers and TAP; ghostswapctl's tests (t_ctl_*), the
# reliability tests.
. /opt/gs-src/tests/guest/lib.sh
. /opt/gs-src/tests/guest/tools.sh
. /opt/gs-src/tests/guest/reliability.sh
TAP_OUT=$GS_OUT/results.tap
TAP_PLAN_FILE=$GS_OUT/plan
: >"$TAP_OUT"
: >"$GS_OUT/ratios.txt"

# Bytes the debugging kernel's own bookkeeping holds in the slab (0 on a
# stock kernel): a kmemleak object per tracked allocation, and for each
# live slab object what KASAN adds to it (slot less object size).
debug_slab_bytes() {
	debug_kernel || { echo 0; return; }
	$PAGES debug-slab-bytes
}

setup_guest() {
	guest_setup
	uname -r
	grep -E 'MemTotal|MemAvailable' /proc/meminfo
	echo "kfence sample interval: $(cat /sys/module/kfence/parameters/sample_interval 2>/dev/null || echo none) ms"
}

# ------------------------------------------------------------------ tests

t_load() {
	modprobe ghostswap || fail "modprobe"
	udevadm settle 2>/dev/null
	[ -b $DEV ] || fail "$DEV is not a block device"
	[ "$(cat $SYS/disksize)" = $((64 << 30)) ] || fail "default disksize"
	[ "$(cat $SYS/queue/logical_block_size)" = 4096 ] || fail "lbs"
	[ "$(cat $SYS/queue/physical_block_size)" = 4096 ] || fail "pbs"
	[ "$(cstat clusters)" = 0 ] && [ "$(cstat meta)" = 0 ] &&
		[ "$(mstat used)" = 0 ] ||
		fail "fresh device holds memory: $(cat $SYS/cluster_stat $SYS/mm_stat)"
	# Except its cluster reserve, counted, and all of it in the slab.
	[ "$(reserve_objs)" = 4 ] &&
		[ "$(cstat reserve)" = $((4 * ($(cluster_obj_size) + 4096))) ] ||
		fail "cluster reserve: $(cstat reserve) bytes"
	[ "$(slab_objs gs_cluster 4)" = 4 ] || fail "slab: $(slab_objs gs_cluster) clusters"
	grep -q '\[lz4\]' $SYS/comp_algorithm || fail "default algorithm: $(cat $SYS/comp_algorithm)"
	cat $SYS/comp_algorithm $SYS/cluster_stat $SYS/mm_stat $SYS/io_stat
}

t_unload_reload() {
	rmmod ghostswap || fail "rmmod of an unused device"
	[ ! -e $SYS ] || fail "$SYS still there"
	grep -q '^gs_cluster ' /proc/slabinfo && fail "slab cache left behind"
	out=$(modprobe ghostswap disksize=12Q 2>&1) && fail "bad param accepted"
	echo "modprobe disksize=12Q: $out"
	modprobe ghostswap disksize=1T || fail "modprobe disksize=1T"
	[ "$(cat $SYS/disksize)" = $((1 << 40)) ] || fail "param disksize=1T"
	rmmod ghostswap && modprobe ghostswap comp_algorithm=zstd ||
		fail "modprobe comp_algorithm=zstd"
	grep -q '\[zstd\]' $SYS/comp_algorithm || fail "param comp_algorithm=zstd"
	rmmod ghostswap && modprobe ghostswap comp_algorithm=nosuch ||
		fail "an unknown algorithm must fall back, not fail the load"
	dmesg | grep "no algorithm 'nosuch'" | tail -n 1
	grep -q '\[lzo\]' $SYS/comp_algorithm || fail "fallback: $(cat $SYS/comp_algorithm)"
	rmmod ghostswap && modprobe ghostswap || fail "reload"
}

t_bad_sysfs() {
	local v
	for v in "" abc -1 1Z 0 4095 1020K 0x100 "1 G" 18446744073709551616 \
		99999999999P 16T 17T "1G junk"; do
		sysw $SYS/disksize "$v" "Invalid argument"
	done
	for v in 0 no abc ""; do
		sysw $SYS/reset "$v" "Invalid argument"
	done
	sysw $SYS/disksize 4T ok
	[ "$(cat $SYS/disksize)" = $((4 << 40)) ] || fail "4T not taken"
	sysw $SYS/disksize 3g ok
	[ "$(cat $SYS/disksize)" = $((3 << 30)) ] || fail "3g not taken"
	sysw $SYS/disksize 1048577 ok
	[ "$(cat $SYS/disksize)" = $(((1 << 20) + 4096)) ] || fail "round up"
	sysw $SYS/cluster_stat 1 "Permission denied"
	for v in "" " " nosuch lz4x "$(head -c 100 /dev/zero | tr '\0' a)"; do
		sysw $SYS/comp_algorithm "$v" "Invalid argument"
	done
	for v in "" abc -1 1Z 0x10 "8 M"; do
		sysw $SYS/mem_limit "$v" "Invalid argument"
	done
	for v in 1 abc ""; do
		sysw $SYS/mem_used_max "$v" "Invalid argument"
	done
	sysw $SYS/mm_stat 1 "Permission denied"
	sysw $SYS/mem_limit 64M ok
	[ "$(cat $SYS/mem_limit)" = $((64 << 20)) ] || fail "mem_limit not taken"
	[ "$(mstat limit)" = $((64 << 20)) ] || fail "mm_stat mem_limit column"
	sysw $SYS/comp_algorithm "  zstd " ok
	grep -q '\[zstd\]' $SYS/comp_algorithm || fail "zstd (with blanks) not taken"
	sysw $SYS/comp_algorithm "lzo-rle" ok
	echo "algorithms: $(cat $SYS/comp_algorithm)"
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/mem_limit)" = 0 ] || fail "reset keeps mem_limit"
	grep -q '\[lz4\]' $SYS/comp_algorithm || fail "reset keeps the algorithm"
	# Holding data: the algorithm cannot change, the limit can.
	$PAGES write $DEV 0 t:4 >/dev/null || fail "write"
	sysw $SYS/comp_algorithm zstd "Device or resource busy"
	sysw $SYS/mem_limit 1G ok
	sysw $SYS/reset 1 ok
}

# A 1 TiB ghost swap in a small guest: the module holds one cluster (the
# swap header) and the swap core's own cost stays small.
t_swapon_1t() {
	local avail0 avail1 drop meta limit
	sysw $SYS/disksize 1T ok
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
	# With lockdep every swap cluster's spinlock carries a lockdep map:
	# the core's 48-byte cluster info grows to ~112 bytes, 56 MiB at
	# 1 TiB, and KASAN adds its shadow. The debug kernel's own cost.
	limit=48
	[ -e /proc/lockdep ] && limit=128
	meta=$(cstat meta)
	echo "MemAvailable drop at swapon of 1 TiB: $((drop / 1024)) KiB"
	echo "module metadata at 1 TiB idle: $meta bytes, $(cstat clusters) clusters"
	[ "$(cstat clusters)" = 1 ] || fail "want exactly the header cluster"
	[ "$meta" -le 8192 ] || fail "module holds $meta bytes idle"
	[ "$drop" -lt $((limit << 20)) ] || fail "MemAvailable dropped $drop bytes (limit $limit MiB)"
}

t_busy() {
	sysw $SYS/disksize 2G "Device or resource busy"
	sysw $SYS/comp_algorithm zstd "Device or resource busy"
	sysw $SYS/reset 1 "Device or resource busy"
	out=$(rmmod ghostswap 2>&1) && fail "rmmod while swapped on"
	echo "rmmod while swapped on: $out"
}

# swap_workload NAME SYSDIR: the verified 3x-overcommit workload on the swap
# device that is on now; reports the compression ratio at the fullest
# moment (mm_stat has the same columns for ghostswap and zram) and appends
# it to $GS_OUT/ratios.txt.
swap_workload() {
	local name=$1 sys=$2 sampler alg rc
	alg=$(sed 's/.*\[\(.*\)\].*/\1/' "$sys/comp_algorithm")
	rm -f /tmp/mm.best
	sample_peak /tmp/mm.best 0.3 cat "$sys/mm_stat" &
	sampler=$!
	run_cg gs-work "$(wl_limit 64)" gsverify "$(wl 192)" 2 7 zstr
	rc=$?
	kill $sampler
	wait $sampler 2>/dev/null
	[ -s /tmp/mm.best ] || { echo "no data reached $name"; return 1; }
	awk -v n="$name" -v a="$alg" '{
		printf "%-9s %-7s data %4d MiB  compressed %4d MiB  pool %4d MiB  ratio %.2f (data/pool %.2f)\n",
			n, a, $1 / 1048576, $2 / 1048576, $3 / 1048576, $1 / $2, $1 / $3 }' \
		/tmp/mm.best | tee -a "$GS_OUT/ratios.txt"
	return $rc
}

# Three times over a memcg limit, a mix of zero, same-filled, text and random
# pages, every byte verified after every swap-in.
t_workload() {
	local before after
	before=$(cstat peak)
	swap_workload ghostswap $SYS || fail "workload"
	after=$(cstat peak)
	cat $SYS/cluster_stat $SYS/mm_stat $SYS/io_stat
	[ "$after" -gt "$(wl 40)" ] || fail "only $after clusters ever used: no swap?"
	echo "clusters peak $before -> $after"
	mm_consistent /tmp/mm.best
}

# Same with 64 KiB mTHP: swap-out and swap-in send multi-page bios.
t_workload_mthp() {
	local f=/sys/kernel/mm/transparent_hugepage/hugepages-64kB
	local s0 s1
	[ -d $f ] || { echo "no 64K mTHP in this kernel"; return 1; }
	echo always >$f/enabled
	s0=$(cat $f/stats/swpout)
	run_cg gs-mthp "$(wl_limit 64)" gsverify "$(wl 192)" 2 11 zstr
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
	sysw $SYS/reset 1 ok
	sysw $SYS/disksize 4T ok
	DEV=$DEV FIO_SIZE="$(wl 128)M" fio /opt/gs-src/tests/guest/verify.fio >"$GS_OUT/fio.log" 2>&1
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
	$PAGES split-io $DEV 10
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

# check_random MIB SKIP_MIB: the device range matches the last write_random.
check_random() {
	[ "$(dd if=$DEV bs=1M skip="$2" count="$1" iflag=direct status=none |
		sha256sum)" = "$(cat /tmp/w.sum)" ] || fail "read back differs"
}

# Every byte counted: module stats against the slab cache and free memory.
t_accounting() {
	local objsz free0 free1 used counted dbg0 dbg1
	sysw $SYS/reset 1 ok
	echo 3 >/proc/sys/vm/drop_caches
	free0=$(free_bytes)
	dbg0=$(debug_slab_bytes)
	write_random 128 4096 || fail "write"
	$PAGES write $DEV 0 t:8192 || fail "write text"
	echo 3 >/proc/sys/vm/drop_caches
	free1=$(free_bytes)
	dbg1=$(debug_slab_bytes)
	objsz=$(cluster_obj_size)
	echo "stats: $(cat $SYS/cluster_stat); slab gs_cluster objs $(cluster_objs) size $objsz"
	cat $SYS/mm_stat
	# Random pages do not compress: each is one RAW (huge) pool object.
	[ "$(mstat huge)" = 32768 ] || fail "huge pages $(mstat huge), want 32768"
	[ "$(mstat orig)" = $((160 << 20)) ] || fail "orig_data_size $(mstat orig)"
	[ "$(mstat compr)" -gt $((128 << 20)) ] &&
		[ "$(mstat compr)" -lt $((160 << 20)) ] || fail "compr_data_size $(mstat compr)"
	[ "$(cstat clusters)" = 80 ] || fail "clusters $(cstat clusters), want 80"
	[ "$(cluster_objs 80)" = 80 ] ||
		fail "slab holds $(cluster_objs) cluster objects besides $(reserve_objs) in reserve"
	[ "$(cstat meta)" = $((80 * (objsz + 4096))) ] ||
		fail "meta $(cstat meta), slab says $((80 * (objsz + 4096)))"
	used=$((free0 - free1))
	counted=$(($(mstat used) + $(cstat meta)))
	echo "free memory fell $((used >> 10)) KiB; module counts $((counted >> 10)) KiB"
	if [ "$dbg1" != "$dbg0" ]; then
		# The debugging kernel's bookkeeping for the new objects.
		used=$((used - (dbg1 - dbg0)))
		echo "of that, kmemleak and KASAN metadata $(((dbg1 - dbg0) >> 10)) KiB"
	fi
	[ $used -gt $((counted - (8 << 20))) ] && [ $used -lt $((counted + (8 << 20))) ] ||
		fail "counted and real use differ by more than 8 MiB"
	check_random 128 4096
	$PAGES verify $DEV 0 t:8192 || fail "verify text"
}

# reset gives everything back.
t_reset_frees() {
	local free0 free1 counted
	counted=$(($(mstat used) + $(cstat meta)))
	[ "$counted" -gt $((128 << 20)) ] || fail "nothing stored to give back"
	echo 3 >/proc/sys/vm/drop_caches
	free0=$(free_bytes)
	sysw $SYS/reset 1 ok
	echo 3 >/proc/sys/vm/drop_caches
	free1=$(free_bytes)
	echo "reset gave back $(((free1 - free0) >> 10)) KiB of $((counted >> 10)) KiB counted"
	[ "$(cstat clusters)" = 0 ] && [ "$(cstat meta)" = 0 ] &&
		[ "$(mstat orig)" = 0 ] && [ "$(mstat used)" = 0 ] ||
		fail "stats after reset: $(cat $SYS/cluster_stat $SYS/mm_stat)"
	[ "$(cluster_objs 0)" = 0 ] || fail "slab objects left: $(cluster_objs)"
	[ "$(cat $SYS/disksize)" = $((64 << 30)) ] || fail "disksize not back to default"
	[ $((free1 - free0)) -gt $((counted - (8 << 20))) ] || fail "memory did not come back"
	dd if=$DEV bs=1M skip=4096 count=1 iflag=direct status=none | cmp - <(head -c 1M /dev/zero) ||
		fail "data survived reset"
}

# Writers, readers and trimmers racing on the same two clusters: clusters
# are created and freed under each other. Nothing may break, the counters
# must balance, and the area must work normally afterwards.
t_cluster_race() {
	sysw $SYS/reset 1 ok
	DEV=$DEV fio /opt/gs-src/tests/guest/race.fio >"$GS_OUT/race.log" 2>&1 ||
		{ tail -n 20 "$GS_OUT/race.log"; fail "fio"; }
	grep -E 'READ:|WRITE:|TRIM:' "$GS_OUT/race.log"
	echo "after race: $(cat $SYS/cluster_stat)"
	[ "$(cstat clusters)" -le 2 ] || fail "more than 2 clusters"
	[ "$(cstat slots)" -le 1024 ] || fail "slots_used over 1024"
	blkdiscard -o $((8 << 30)) -l $((4 << 20)) $DEV || fail blkdiscard
	[ "$(cstat clusters)" = 0 ] && [ "$(cstat slots)" = 0 ] &&
		[ "$(mstat orig)" = 0 ] && [ "$(mstat compr)" = 0 ] ||
		fail "counters do not balance: $(cat $SYS/cluster_stat)"
	[ "$(cluster_objs 0)" = 0 ] || fail "slab objects left: $(cluster_objs)"
	write_random 4 8192 || fail write
	check_random 4 8192
	sysw $SYS/reset 1 ok
}

# Known pages on the raw device, every mm_stat column checked against them.
t_mm_stat() {
	local c compr rest
	sysw $SYS/reset 1 ok
	# One text page alone: its compressed size.
	$PAGES write $DEV 10000 T:1 || fail write
	c=$(mstat compr)
	echo "one text page compresses to $c bytes"
	[ "$c" -gt 0 ] && [ "$c" -lt 4096 ] && [ "$(mstat huge)" = 0 ] ||
		fail "text page not compressed: $(cat $SYS/mm_stat)"
	$PAGES write $DEV 0 z:100,s:200,T:300,t:400,r:500 || fail write
	cat $SYS/mm_stat $SYS/cluster_stat
	[ "$(mstat orig)" = $((1501 * 4096)) ] || fail "orig_data_size"
	[ "$(mstat same)" = 300 ] || fail "same_pages: zero and same-filled"
	[ "$(mstat huge)" = 500 ] && [ "$(mstat huge_since)" = 500 ] ||
		fail "huge_pages: exactly the random ones"
	[ "$(cstat slots)" = 1501 ] || fail "slots_used"
	compr=$(mstat compr)
	# The 301 equal text pages cost exactly 301 * c; the 400 others
	# compress too (none is huge), so less than a page each.
	rest=$((compr - 301 * c - 500 * 4096))
	echo "400 text pages: $rest compressed bytes"
	[ "$rest" -gt 0 ] && [ "$rest" -lt $((400 * 4096)) ] ||
		fail "compr_data_size $compr does not add up"
	mm_consistent
	[ "$(cstat meta)" = $((4 * $(cluster_obj_size) + 4 * 4096)) ] ||
		fail "meta_bytes: 4 clusters (pages 0..1500 and 10000)"
	# Metadata per used slot, two decimals, rounded.
	[ "$(cstat meta_per_slot)" = "$(awk -v m="$(cstat meta)" \
		'BEGIN { printf "%.2f", m / 1501 }')" ] ||
		fail "meta_per_slot $(cstat meta_per_slot)"
	# The high water mark restarts from today's use.
	[ "$(mstat max)" -ge "$(mstat used)" ] || fail "mem_used_max"
	sysw $SYS/mem_used_max 0 ok
	[ "$(mstat max)" = "$(mstat used)" ] || fail "mem_used_max after reset"
	$PAGES verify $DEV 0 z:100,s:200,T:300,t:400,r:500 || fail verify
	$PAGES verify $DEV 10000 T:1 || fail verify
	# Overwrite random pages with same-filled ones, then free text.
	$PAGES write $DEV 1000 s:500 || fail write
	[ "$(mstat huge)" = 0 ] && [ "$(mstat same)" = 800 ] &&
		[ "$(mstat huge_since)" = 500 ] || fail "after overwrite: $(cat $SYS/mm_stat)"
	blkdiscard -o $((300 * 4096)) -l $((700 * 4096)) $DEV || fail blkdiscard
	[ "$(mstat compr)" = "$c" ] && [ "$(mstat orig)" = $((801 * 4096)) ] ||
		fail "after discard: $(cat $SYS/mm_stat)"
	$PAGES verify $DEV 1000 s:500 || fail verify
	$PAGES verify $DEV 300 z:700 || fail "discarded pages must read as zeroes"
	sysw $SYS/reset 1 ok
}

# mem_limit: stores beyond it fail the write cleanly; what was stored stays.
t_mem_limit() {
	local out stored
	sysw $SYS/reset 1 ok
	sysw $SYS/mem_limit 8M ok
	out=$($PAGES write $DEV 0 r:4096)
	[ $? = 2 ] || fail "writes beyond mem_limit did not fail: $out"
	echo "$out"
	stored=$(echo "$out" | sed -n 's/.* after \([0-9]*\) pages.*/\1/p')
	cat $SYS/mm_stat $SYS/io_stat
	[ "$(mstat used)" -le $((8 << 20)) ] || fail "pool above mem_limit"
	[ "$(iostat 2)" -ge 1 ] || fail "failed_writes not counted"
	[ "$stored" -gt 1800 ] || fail "only $stored pages fit in 8 MiB"
	[ "$(mstat huge)" = "$stored" ] || fail "stored pages $(mstat huge) != $stored"
	$PAGES verify $DEV 0 r:"$stored" || fail "data stored before the limit"
	# Same-filled pages need no pool memory: still accepted.
	$PAGES write $DEV 5000 s:100 || fail "same-filled write at the limit"
	sysw $SYS/mem_limit 0 ok
	$PAGES write $DEV 0 r:4096 || fail "write after lifting the limit"
	$PAGES verify $DEV 0 r:4096 || fail verify
	sysw $SYS/reset 1 ok
}

# compact: free every other compressed page, compact, the pool shrinks and
# the rest reads back intact.
t_compact() {
	local before after
	sysw $SYS/reset 1 ok
	$PAGES write $DEV 0 t:8192 || fail write
	$PAGES discard $DEV 1 4096 2 || fail "discard"
	before=$(mstat used)
	sysw $SYS/compact 1 ok
	after=$(mstat used)
	echo "pool $((before >> 10)) KiB -> $((after >> 10)) KiB, $(mstat compacted) pages compacted"
	[ "$(mstat compacted)" -gt 0 ] && [ "$after" -lt "$before" ] ||
		fail "compaction freed nothing"
	$PAGES verify $DEV 0 '4096*(t:1,z:1)' || fail "data after compaction"
	sysw $SYS/reset 1 ok
}

# Every algorithm the kernel offers: round trip of every page kind.
t_algorithms() {
	local alg algs
	algs=$(tr -d '[]' <$SYS/comp_algorithm)
	echo "offered: $algs"
	for alg in $algs; do
		sysw $SYS/reset 1 ok
		sysw $SYS/comp_algorithm "$alg" ok
		$PAGES write $DEV 0 s:50,t:300,r:50,T:50 >/dev/null || fail "$alg: write"
		$PAGES verify $DEV 0 s:50,t:300,r:50,T:50 >/dev/null || fail "$alg: verify"
		awk -v a="$alg" '{ printf "%-8s text+random: ratio %.2f, %d huge\n", a, $1 / $2, $8 }' \
			$SYS/mm_stat
		[ "$(mstat compr)" -lt "$(mstat orig)" ] || fail "$alg compressed nothing"
	done
	sysw $SYS/reset 1 ok
}

# CPU hotplug: streams for a CPU that comes up after the store was made,
# and a verified workload while a CPU goes away and comes back.
t_cpu_hotplug() {
	local cpu=/sys/devices/system/cpu/cpu1/online s1 s2 pid i rc
	[ -w $cpu ] || { echo "cpu1 cannot go offline here"; return 1; }
	echo 0 >$cpu || fail "offline cpu1"
	swap_on lz4 || { echo 1 >$cpu; return 1; }
	s1=$(cstat stream)
	echo 1 >$cpu || fail "online cpu1"
	s2=$(cstat stream)
	echo "stream bytes with 1 CPU: $s1, after cpu1 came up: $s2"
	[ "$s2" = $((2 * s1)) ] || fail "cpu1 got no stream"
	run_cg gs-hp 64 gsverify 160 2 13 zstr &
	pid=$!
	for i in 1 2 3 4 5 6; do
		sleep 2
		echo 0 >$cpu || echo "offline refused"
		sleep 1
		echo 1 >$cpu
	done
	wait $pid
	rc=$?
	echo 1 >$cpu
	[ "$(cat $cpu)" = 1 ] || fail "cpu1 stayed offline"
	[ $rc = 0 ] || fail "workload across hotplug"
	[ "$(cstat stream)" = "$s2" ] || fail "streams changed: $(cstat stream)"
	swapoff $DEV || fail swapoff
}

# The same workload with zstd.
t_workload_zstd() {
	swap_on zstd || return 1
	swap_workload ghostswap $SYS || fail "workload"
	mm_consistent /tmp/mm.best
	swapoff $DEV || fail swapoff
	sysw $SYS/reset 1 ok
}

# The same workload on zram with the same algorithms, same boot: the
# compression ratios to compare with.
t_zram_compare() {
	local z=/sys/block/zram0 alg
	modprobe zram num_devices=1 || fail "no zram module"
	for alg in lz4 zstd; do
		echo 1 >$z/reset
		echo $alg >$z/comp_algorithm || fail "zram $alg"
		echo 2G >$z/disksize
		mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 || fail "zram swapon"
		swap_workload zram $z || fail "workload on zram ($alg)"
		swapoff /dev/zram0
	done
	echo 1 >$z/reset
	rmmod zram
	echo "--- ratios (same guest boot, same workload) ---"
	cat "$GS_OUT/ratios.txt"
}

# ------------------------------------------------------- writeback tier

# backing_dev: what it accepts and what it refuses, with which errno.
t_wb_setup() {
	local big small
	big=$(vdisk gsback) && small=$(vdisk gssmall) || fail "no backing disks"
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "backing_dev without one"
	[ "$(bdstat count)" = 0 ] || fail "bd_stat without backing"
	sysw $SYS/writeback all "No such device"
	sysw $SYS/backing_compact 1 "No such device"
	sysw $SYS/backing_dev /nonexistent "No such file or directory"
	sysw $SYS/backing_dev /etc/hostname "Block device required"
	sysw $SYS/backing_dev /dev/null "Block device required"
	sysw $SYS/backing_dev /tmp "Block device required"
	sysw $SYS/backing_dev "" "Invalid argument"
	sysw $SYS/backing_dev $DEV "Invalid argument"
	dmesg | grep "is ghostswap itself" | tail -n 1
	# A device someone holds exclusively (here: swap) is busy.
	mkswap "$small" >/dev/null && swapon "$small" || fail "swapon $small"
	sysw $SYS/backing_dev "$small" "Device or resource busy"
	swapoff "$small"
	# So is a mounted one.
	mkfs.ext4 -q -F "$small" && mkdir -p /tmp/gs-mnt && mount "$small" /tmp/gs-mnt ||
		fail "mount $small"
	sysw $SYS/backing_dev "$small" "Device or resource busy"
	umount /tmp/gs-mnt
	# Holding data, or open: no change.
	$PAGES write $DEV 0 t:1 >/dev/null || fail write
	sysw $SYS/backing_dev "$big" "Device or resource busy"
	sysw $SYS/reset 1 ok
	# Blanks around the path are not part of it.
	sysw $SYS/backing_dev "  $big  " ok
	[ "$(cat $SYS/backing_dev)" = "$big" ] || fail "backing_dev shows '$(cat $SYS/backing_dev)'"
	# Held by us now: nobody else can have it exclusively.
	out=$(mkswap "$big" 2>&1) && swapon "$big" 2>/dev/null && fail "swapon of our backing device"
	sysw $SYS/backing_dev "$small" "Device or resource busy"
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	sysw $SYS/backing_dev none "Device or resource busy"
	swapoff $DEV
	# Still holds the swap header: no change until it is empty.
	sysw $SYS/backing_dev none "Device or resource busy"
	blkdiscard $DEV || fail blkdiscard
	sysw $SYS/backing_dev none ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "detach"
	sysw $SYS/backing_dev "$small" ok
	# reset detaches (zram semantics).
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "reset keeps the backing device"
	cat $SYS/bd_stat
}

# Bad input for every writeback attribute.
t_wb_bad_input() {
	local v
	attach_backing "$(vdisk gsback)"
	for v in "" junk "idle idle" "all 0" "all -1" "all 1x" "-5" "0" cold \
		"type=" "type=nosuch" "huge 99999999999999999999999"; do
		sysw $SYS/writeback "$v" "Invalid argument"
	done
	for v in "" 0 -1 abc "1 2" allx; do
		sysw $SYS/idle "$v" "Invalid argument"
	done
	for v in "" -1 abc 1.5 18446744073709551616; do
		sysw $SYS/writeback_limit "$v" "Invalid argument"
	done
	for v in "" maybe 2; do
		sysw $SYS/writeback_limit_enable "$v" "Invalid argument"
		sysw $SYS/writeback_shrinker "$v" "Invalid argument"
	done
	for v in "" nosuch "huge huge"; do
		sysw $SYS/writeback_direct "$v" "Invalid argument"
	done
	sysw $SYS/bd_stat 1 "Permission denied"
	# Valid ones on an empty device: nothing to do, no error.
	sysw $SYS/writeback all ok
	sysw $SYS/writeback "type=idle" ok
	sysw $SYS/writeback 100 ok
	sysw $SYS/idle all ok
	sysw $SYS/idle 60 ok
	sysw $SYS/backing_compact 1 ok
	grep -q '\[none\]' $SYS/writeback_direct || fail "writeback_direct: $(cat $SYS/writeback_direct)"
	[ "$(cat $SYS/writeback_shrinker)" = 1 ] || fail "shrinker default"
	[ "$(bdstat writes)" = 0 ] || fail "bd_writes on an empty device"
	sysw $SYS/reset 1 ok
}

# On demand: idle, huge, incompressible, counts, the budget; every page
# read back from the backing device intact.
t_wb_on_demand() {
	local w0 rest limit
	attach_backing "$(vdisk gsback)"
	$PAGES write $DEV 0 t:1000,r:200,s:100 || fail write
	sysw $SYS/writeback idle ok
	[ "$(bdstat count)" = 0 ] || fail "nothing was idle"
	sysw $SYS/idle all ok
	$PAGES verify $DEV 0 t:100 >/dev/null || fail verify	# read: not idle
	sysw $SYS/writeback "idle 300" ok
	[ "$(bdstat count)" = 300 ] || fail "idle 300: $(bdstat count)"
	sysw $SYS/writeback huge ok
	[ "$(bdstat count)" = 500 ] || fail "huge: $(bdstat count)"
	[ "$(mstat huge)" = 0 ] || fail "huge pages left in the pool"
	sysw $SYS/writeback idle ok
	[ "$(bdstat count)" = 1100 ] || fail "idle: $(bdstat count), pages 0..99 were read"
	sysw $SYS/writeback_limit 40 ok
	sysw $SYS/writeback_limit_enable 1 ok
	w0=$(bdstat writes)
	sysw $SYS/writeback all "Input/output error"
	[ $(($(bdstat writes) - w0)) = 40 ] || fail "budget: $(($(bdstat writes) - w0)) written"
	[ "$(cat $SYS/writeback_limit)" = 0 ] || fail "budget left: $(cat $SYS/writeback_limit)"
	sysw $SYS/writeback_limit_enable 0 ok
	sysw $SYS/writeback all ok
	[ "$(bdstat count)" = 1200 ] || fail "all: $(bdstat count)"
	cat $SYS/mm_stat $SYS/bd_stat
	# Written back pages still count as stored data (zram semantics).
	[ "$(mstat orig)" = $((1300 * 4096)) ] || fail "orig_data_size"
	[ "$(mstat compr)" = 0 ] && [ "$(mstat same)" = 100 ] || fail "mm_stat after writeback all"
	$PAGES verify $DEV 0 t:1000,r:200,s:100 || fail "verify from the backing device"
	[ "$(bdstat reads)" -ge 1200 ] || fail "bd_reads $(bdstat reads)"
	gs_check
	# Every byte of the tier counted: reverse map clusters in its slab.
	[ "$(slab_objs gs_bk_cluster "$(bdstat clusters)")" = "$(bdstat clusters)" ] ||
		fail "slab gs_bk_cluster $(grep gs_bk_cluster /proc/slabinfo), KFENCE $(kfence_objs gs_bk_cluster) vs bd_stat $(bdstat clusters)"
	# The rest: two batches of 32 pages and their bookkeeping (<= 8 KiB;
	# with lockdep, whose maps grow every lock and completion in it, the
	# bookkeeping is one 16 KiB allocation), and a reserve of 32 requests
	# for reads of written-back pages (<= 256 bytes each; 512 with
	# lockdep's maps).
	rest=$(($(bdstat meta) - $(bdstat clusters) * $(slab_obj_size gs_bk_cluster) - 2 * 32 * 4096))
	limit=$((8192 + 32 * 256))
	[ -e /proc/lockdep ] && limit=$((16384 + 32 * 512))
	[ "$rest" -gt 0 ] && [ "$rest" -le $limit ] || fail "bd_meta_bytes $(bdstat meta), rest $rest (limit $limit)"
	# Freed pages free their backing slots.
	blkdiscard -o 0 -l $((600 * 4096)) $DEV || fail blkdiscard
	[ "$(bdstat count)" = 600 ] || fail "after discard: $(bdstat count)"
	gs_check
	sysw $SYS/reset 1 ok
}

# backing_compact packs the device: pages move down into holes.
t_wb_compact() {
	local i r0 w0
	attach_backing "$(vdisk gsback)"
	$PAGES write $DEV 0 t:2000 >/dev/null || fail write
	sysw $SYS/writeback all ok
	$PAGES discard $DEV 0 1000 2 || fail "discard"
	[ "$(bdstat count)" = 1000 ] || fail "count $(bdstat count)"
	r0=$(bdstat reads)
	w0=$(bdstat writes)
	sysw $SYS/backing_compact 1 ok
	cat $SYS/bd_stat
	[ "$(bdstat reloc)" = 500 ] || fail "relocated $(bdstat reloc), want 500"
	# Its I/O in its own columns, not in zram's.
	[ "$(bdstat reads)" = "$r0" ] && [ "$(bdstat writes)" = "$w0" ] ||
		fail "compaction counted in bd_reads/bd_writes: $(cat $SYS/bd_stat)"
	[ "$(bdstat creads)" = 500 ] && [ "$(bdstat cwrites)" = 500 ] ||
		fail "compaction I/O: $(bdstat creads) read, $(bdstat cwrites) written"
	gs_check
	cat /sys/kernel/debug/ghostswap/table | head -n 3
	$PAGES verify $DEV 0 '1000*(z:1,t:1)' || fail "data after backing compaction"
	sysw $SYS/reset 1 ok
}

# writeback_direct: incompressible pages go straight to the device.
t_wb_direct() {
	attach_backing "$(vdisk gsback)"
	sysw $SYS/writeback_direct incompressible ok
	$PAGES write $DEV 0 r:300,t:300 || fail write
	[ "$(bdstat count)" = 300 ] && [ "$(mstat huge)" = 0 ] ||
		fail "direct: $(cat $SYS/bd_stat $SYS/mm_stat)"
	$PAGES verify $DEV 0 r:300,t:300 || fail verify
	gs_check
	sysw $SYS/reset 1 ok
}

# The backing device fills up: writeback stops with ENOSPC, nothing lost.
t_wb_full() {
	attach_backing "$(vdisk gssmall)"
	$PAGES write $DEV 0 t:3000 >/dev/null || fail write
	sysw $SYS/writeback all "No space left on device"
	[ "$(bdstat count)" = 2048 ] || fail "8 MiB holds 2048 pages, not $(bdstat count)"
	$PAGES verify $DEV 0 t:3000 || fail verify
	gs_check
	sysw $SYS/reset 1 ok
}

# Data stored, the share of it on the backing device (%), pages there,
# pool bytes, pages written back.
wb_sample() {
	local c w o u
	read -r c _ w _ <$SYS/bd_stat
	read -r o _ u _ <$SYS/mm_stat
	[ "$o" -gt 0 ] || { echo 0; return; }
	echo "$o $((c * 4096 * 100 / o)) $c $u $w"
}

# The verified 3x-overcommit swap workload with a pool limit that sends
# most pages to the backing device; every byte checked. Reports the
# share written back at the fullest moment and the writeback rate.
t_wb_workload() {
	local cg=/sys/fs/cgroup/gs-wb rc sampler
	attach_backing "$(vdisk gsback)"
	sysw $SYS/mem_limit "$(wl 12)M" ok
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	rm -f /tmp/wb.best
	# The share written back when the most data is stored.
	sample_peak /tmp/wb.best 0.3 wb_sample &
	sampler=$!
	# Text and random pages only: same-filled ones are never written back.
	run_cg gs-wb "$(wl_limit 40)" gsverify "$(wl 120)" 2 17 tr
	rc=$?
	kill $sampler; wait $sampler 2>/dev/null
	cat $SYS/mm_stat $SYS/bd_stat $SYS/io_stat
	read -r orig share count used writes </tmp/wb.best
	echo "fullest: $((orig >> 20)) MiB stored, $((count * 4096 >> 20)) MiB on the backing device ($share%), pool $((used >> 20)) MiB"
	echo "workload: written back $share% of the stored data at the fullest moment" >>"$GS_OUT/ratios.txt"
	[ $rc = 0 ] || fail "gsverify"
	[ "$share" -gt 50 ] || fail "only $share% written back"
	[ "$(iostat 2)" = 0 ] || fail "failed writes: $(iostat 2)"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] || fail "backing I/O errors"
	gs_check
	swapoff $DEV || fail swapoff
	# Only the swap header may be left (it may have gone out too).
	[ "$(bdstat count)" -le 1 ] && [ "$(cstat slots)" = 1 ] ||
		fail "left after swapoff: $(bdstat count) backing slots, $(cstat slots) slots"
	gs_check
	sysw $SYS/reset 1 ok
}

# Writeback racing raw I/O: fio writes, reads and trims with verification
# while writeback, idle marking and backing compaction run in a loop.
t_wb_race() {
	local loop
	attach_backing "$(vdisk gsback)"
	(while :; do
		echo all >$SYS/writeback 2>/dev/null
		echo all >$SYS/idle
		echo 1 >$SYS/backing_compact 2>/dev/null
		echo 64 >$SYS/writeback 2>/dev/null
		sleep 0.1
	done) &
	loop=$!
	DEV=$DEV FIO_SIZE="$(wl 32)M" fio /opt/gs-src/tests/guest/wbrace.fio >"$GS_OUT/wbrace.log" 2>&1
	rc=$?
	kill $loop; wait $loop 2>/dev/null
	grep -E 'READ:|WRITE:|TRIM:|verify|err=' "$GS_OUT/wbrace.log"
	cat $SYS/bd_stat
	[ $rc = 0 ] || { tail -n 20 "$GS_OUT/wbrace.log"; fail "fio"; }
	[ "$(bdstat writes)" -gt 0 ] && [ "$(bdstat reads)" -gt 0 ] ||
		fail "the race never touched the backing device"
	gs_check
	sysw $SYS/reset 1 ok
}

# Writeback rate against the backing device's own sequential write rate,
# same guest boot. A measurement: reported, not asserted.
t_wb_rate() {
	local big t0 t1 n rate own
	big=$(vdisk gsback)
	sysw $SYS/reset 1 ok
	fio --name=seq --filename="$big" --rw=write --bs=128k --size=256M \
		--direct=1 --ioengine=libaio --iodepth=4 --output-format=terse \
		--terse-version=3 >/tmp/fio.seq 2>&1 || fail "fio on $big"
	own=$(awk -F';' '{ print $48 }' /tmp/fio.seq)	# write bandwidth, KiB/s
	attach_backing "$big"
	fio --name=fill --filename=$DEV --rw=write --bs=1M --size=128M \
		--direct=1 --buffer_compress_percentage=60 \
		--buffer_compress_chunk=4k --refill_buffers >/dev/null 2>&1 ||
		fail "fill"
	t0=$(date +%s.%N)
	sysw $SYS/writeback all ok
	t1=$(date +%s.%N)
	n=$(bdstat count)
	rate=$(awk -v n=$n -v a=$t0 -v b=$t1 'BEGIN { printf "%d", n * 4 / (b - a) }')
	echo "writeback: $n pages in $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s = $rate KiB/s; $big sequential write (fio, 128k, direct): $own KiB/s; ratio $(awk -v r=$rate -v o=$own 'BEGIN { printf "%.2f", r / o }')" |
		tee -a "$GS_OUT/ratios.txt"
	[ "$n" = 32768 ] || fail "written back $n"
	gs_check
	sysw $SYS/reset 1 ok
}

t_unload_final() {
	# A failed test may have left swap on; udev may still be probing
	# the device after the last reset.
	swapoff $DEV 2>/dev/null
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	grep -q '^gs_cluster ' /proc/slabinfo && fail "slab cache left behind"
	dmesg | grep -E 'BUG|WARNING|Oops|ghostswap' | tail -n 20
	! dmesg | grep -qE 'BUG:|WARNING:|Oops' || fail "kernel reported problems"
}

# The test bed itself: the guest kernel patches its own text (static keys
# of tracepoints and schedstats) over and over while both vCPUs run the
# patched code. An emulator that runs stale translations of patched text
# (multi-threaded TCG: testbed/lib.sh, gs_qemu_env) kills the guest here
# ("Oops: int3"), not in the middle of a test of ghostswap.
t_testbed_text_patching() {
	local t=/sys/kernel/tracing end flips=0 load
	mountpoint -q $t || mount -t tracefs none $t || fail "no tracefs"
	[ -w $t/events/sched/sched_switch/enable ] || fail "no sched_switch event"
	[ -w /proc/sys/kernel/sched_schedstats ] || fail "no sched_schedstats"
	(while :; do echo x | cat >/dev/null; done) &
	load=$!
	stress-ng --switch 2 --vm 1 --vm-bytes 32M \
		--timeout "${GS_TEXTPATCH_SECONDS:-20}" >/dev/null 2>&1 &
	end=$(($(date +%s) + ${GS_TEXTPATCH_SECONDS:-20}))
	while [ "$(date +%s)" -lt $end ]; do
		for v in 1 0; do
			echo $v >$t/events/sched/sched_switch/enable
			echo $v >/proc/sys/kernel/sched_schedstats
			echo $v >$t/events/kmem/kmem_cache_alloc/enable
		done
		flips=$((flips + 6))
	done
	kill $load
	wait 2>/dev/null
	echo "$flips static key flips in ${GS_TEXTPATCH_SECONDS:-20} s under load"
	[ $flips -gt 0 ] || fail "no flips"
}

ALL="testbed_text_patching load unload_reload bad_sysfs swapon_1t busy workload workload_mthp
swapoff_frees fio split_bvec cluster_race accounting reset_frees mm_stat
mem_limit compact algorithms cpu_hotplug workload_zstd wb_setup wb_bad_input
wb_on_demand wb_compact wb_direct wb_full wb_workload wb_race wb_rate
fault_alloc fault_backing hostile leaks memory_cycle stress
ctl_status ctl_setup_reset ctl_errors ctl_writeback unload_final"
# Not in the default run (a measurement, not a test of ghostswap): the same
# workload on zram for the ratio comparison. Run it after the workloads:
#   tests/run.sh load swapon_1t workload workload_zstd zram_compare
# Nor kmemleak (reliability.sh): it needs a kernel with kmemleak, the
# debug-kernel lane's (tests/debug-kernel.sh), whose last test it is.

setup_guest 2>&1 | tap_diag
start=$(date +%s)
tests=()
for t in ${*:-$ALL}; do
	tests+=("$t" "t_$t")
done
tap_tests "$GS_OUT/test.log" "${tests[@]}"
tap_plan
tap_diag "guest suite: $tap_n tests, $tap_nfail failed, $(($(date +%s) - start)) s"
echo "GS-SUITE-DONE" >"$GS_OUT/done"
