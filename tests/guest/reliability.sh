# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ghostswap reliability tests, sourced by suite.sh: injected allocation
# failures, a backing device that fails (dm-error) or flickers
# (dm-flakey), hostile input racing with swapon and reset, leaks after
# rmmod, and a verified stress (GS_STRESS_SECONDS, default 60).

# The guest's helpers: fail, sysw, the stat readers, vdisk, swap_on,
# attach_backing, gs_check, run_cg, free_bytes, $PAGES, $SYS, $DEV.
. /opt/gs-src/tests/guest/lib.sh

FAIL_ALLOC=/sys/kernel/debug/ghostswap/fail_alloc

# The bio watch (module/gs_bio_watch.c), in a kernel built with
# CONFIG_DEBUG_VM (the debug lane's, which runs this test after its
# workload, writeback race and fault tests, with the module loaded all
# along): it watched their bios and 100 more direct writes and reads
# here, found no broken rule (no bio ended before its parts on the
# backing device, no page let go or swap-cache folio unlocked under one),
# and holds nothing once they have ended. A report would also fail the
# boot (the console scan).
t_bio_watch() {
	local f=/sys/kernel/debug/ghostswap/bio_watch w0 w1 u v b
	[ -r $f ] || { fail "no $f: the kernel lacks CONFIG_DEBUG_VM"; return; }
	read -r w0 u v b <$f
	sysw $SYS/reset 1 ok
	$PAGES write $DEV 0 t:100 >/dev/null || fail write
	$PAGES verify $DEV 0 t:100 >/dev/null || fail verify
	read -r w1 u v b <$f
	echo "bio watch: $w1 bios watched ($((w1 - w0)) here), $u unwatched, $v reports, $b bytes held"
	[ "$((w1 - w0))" -ge 200 ] || fail "the 100 writes and 100 reads not watched"
	[ "$v" = 0 ] || fail "$v broken rules reported"
	[ "$b" = 0 ] || fail "$b bytes held with no bio in flight"
}

# Allocation failures: the writes that hit them fail, the slot keeps its
# old data, the rest goes on; swap survives them with every byte intact.
t_fault_alloc() {
	local failed pid rc r c i d0
	d0=$(dmesg | wc -l)
	sysw $SYS/reset 1 ok
	$PAGES write $DEV 0 t:100 >/dev/null || fail write
	echo 5 >$FAIL_ALLOC || fail "fail_alloc"
	failed=$($PAGES write-each $DEV 0 t:20 7)
	echo "20 overwrites with 5 allocation failures injected: $failed failed"
	[ "$failed" = 5 ] || fail "want 5 failed writes"
	[ "$(cat $FAIL_ALLOC)" = "0 5" ] || fail "fail_alloc: $(cat $FAIL_ALLOC)"
	[ "$(iostat failed_writes)" = 5 ] || fail "failed_writes $(iostat failed_writes)"
	# The first five kept their old contents, the others took the new.
	$PAGES verify $DEV 0 t:5 >/dev/null || fail "old data lost"
	$PAGES verify $DEV 5 t:15 7 >/dev/null || fail "new data"
	$PAGES verify $DEV 20 t:80 >/dev/null || fail "untouched data"
	# New clusters (same-filled pages: no pool object) while every
	# allocation fails: the first GS_CLUSTER_RESERVE (4) come from the
	# reserve, then writes into new clusters fail; the reserve is counted
	# and refilled by clusters that are freed.
	r=$(cstat reserve)
	[ "$(reserve_objs)" = 4 ] || fail "reserve at rest: $r bytes"
	echo 100 >$FAIL_ALLOC || fail "fail_alloc"
	failed=
	for c in 1001 1002 1003 1004 1005 1006; do
		failed="$failed$($PAGES write-each $DEV $((c * 512)) s:1 3)"
	done
	echo 0 >$FAIL_ALLOC
	echo "6 new clusters with allocations failing: failed writes $failed; $(cat $SYS/cluster_stat)"
	[ "$failed" = 000011 ] || fail "want the reserve's 4 to succeed, then failures"
	[ "$(cstat reserve)" = 0 ] || fail "reserve left: $(cstat reserve)"
	[ "$(iostat failed_writes)" = 7 ] || fail "failed_writes $(iostat failed_writes), want 5 + 2"
	$PAGES verify $DEV $((1001 * 512)) s:1 3 >/dev/null || fail "page in a reserve cluster"
	blkdiscard -o $((1001 * 512 * 4096)) -l $((4 * 512 * 4096)) $DEV || fail blkdiscard
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(cstat reserve)" = "$r" ] && break
		sleep 0.2
	done
	[ "$(cstat reserve)" = "$r" ] || fail "reserve not refilled: $(cstat reserve)"
	dmesg | tail -n +$((d0 + 1)) | grep 'page allocation failure' &&
		fail "allocation failure splat"
	# A swap workload while allocations keep failing now and then.
	swap_on lz4 1G || return 1
	run_cg gs-fault "$(wl_limit 48)" gsverify "$(wl 128)" 2 23 zstr &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		echo 20 >$FAIL_ALLOC
		sleep 0.5
	done
	wait $pid
	rc=$?
	echo 0 >$FAIL_ALLOC
	echo "injected during the workload: $(cat $FAIL_ALLOC); io_stat $(cat $SYS/io_stat)"
	[ $rc = 0 ] || fail "gsverify under allocation failures"
	# (swap_on reset the counters)
	[ "$(iostat failed_writes)" -gt 0 ] || fail "no swap write failed"
	swapoff $DEV || fail swapoff
	sysw $SYS/reset 1 ok
}

# dm table helpers for the flaky backing device.
dm_table() {
	dmsetup suspend gsbk && dmsetup load gsbk --table "$1" &&
		dmsetup resume gsbk
}

# A backing device that fails: reads of what is on it fail with EIO
# (counted), writeback fails and keeps the pages in the pool; when it
# comes back, everything is there. Flickering: reads fail or return the
# right data, never other data.
t_fault_backing() {
	local big sz out f0 e0
	big=$(vdisk gsback) || fail "no disk"
	command -v dmsetup >/dev/null || fail "no dmsetup"
	sz=$(blockdev --getsz "$big")
	dmsetup remove gsbk 2>/dev/null
	dmsetup create gsbk --table "0 $sz linear $big 0" || fail "dmsetup create"
	attach_backing /dev/mapper/gsbk
	$PAGES write $DEV 0 t:500,r:100 >/dev/null || fail write
	sysw $SYS/writeback all ok
	[ "$(bdstat count)" = 600 ] || fail "writeback: $(bdstat count)"
	echo "the backing device fails every I/O"
	dm_table "0 $sz error" || fail "dm error table"
	# One failed read of one page counts once in each counter.
	f0=$(iostat failed_reads)
	e0=$(bdstat rerr)
	$PAGES read-eio $DEV 0 || fail "a read from a failed device"
	[ "$(iostat failed_reads)" = $((f0 + 1)) ] && [ "$(bdstat rerr)" = $((e0 + 1)) ] ||
		fail "one failed read: failed_reads $f0 -> $(iostat failed_reads), read_errors $e0 -> $(bdstat rerr)"
	# One read of two pages, one started at once and one by a worker,
	# both failing: still one failed read.
	$PAGES read-eio $DEV 2 split || fail "a split read from a failed device"
	[ "$(iostat failed_reads)" = $((f0 + 2)) ] && [ "$(bdstat rerr)" -ge $((e0 + 3)) ] ||
		fail "a read failing in two parts counts once: failed_reads $f0 -> $(iostat failed_reads), read_errors $e0 -> $(bdstat rerr)"
	$PAGES write $DEV 1000 t:50 >/dev/null || fail "pool writes"
	sysw $SYS/writeback all "Input/output error"
	[ "$(bdstat werr)" -ge 50 ] || fail "write errors: $(bdstat werr)"
	[ "$(mstat huge)" = 0 ] && [ "$(bdstat count)" = 600 ] ||
		fail "after failed writeback: $(cat $SYS/mm_stat $SYS/bd_stat)"
	$PAGES verify $DEV 1000 t:50 || fail "pages whose writeback failed"
	sysw $SYS/writeback_direct incompressible ok
	[ "$($PAGES write-each $DEV 2000 r:10 9)" = 10 ] || fail "direct writes to a failed device"
	$PAGES verify $DEV 2000 z:10 >/dev/null || fail "failed direct writes left data"
	sysw $SYS/writeback_direct none ok
	gs_check
	echo "the backing device is back"
	dm_table "0 $sz linear $big 0" || fail "dm linear table"
	$PAGES verify $DEV 0 t:500,r:100 || fail "data after the device came back"
	echo "the backing device flickers (dm-flakey: 1 s up, 1 s down)"
	dm_table "0 $sz flakey $big 0 1 1" || fail "dm flakey table"
	$PAGES read-flaky $DEV 0 t:500 5 || fail "flaky reads"
	dm_table "0 $sz linear $big 0" || fail "dm linear table"
	$PAGES verify $DEV 0 t:500,r:100 || fail "data after flickering"
	gs_check
	sysw $SYS/reset 1 ok
	dmsetup remove gsbk || fail "dmsetup remove"
}

# Module parameters and sysfs attributes fed garbage while other shells
# swap on and off, reset and read stats: clean errnos, no crash, and the
# device works afterwards.
t_hostile() {
	local v out pids i attrs vals
	rmmod ghostswap 2>/dev/null
	for v in "disksize=-1" "disksize=abc" "disksize=" "disksize=99999P" \
		"disksize=18446744073709551616" \
		"comp_algorithm=$(head -c 200 /dev/zero | tr '\0' x)"; do
		out=$(modprobe ghostswap "$v" 2>&1) && { rmmod ghostswap; fail "modprobe $v"; }
		echo "modprobe ghostswap $v: ${out##*: }"
	done
	modprobe ghostswap || fail modprobe
	udevadm settle 2>/dev/null
	attrs="disksize comp_algorithm mem_limit mem_used_max compact reset
		backing_dev writeback idle writeback_limit writeback_limit_enable
		writeback_shrinker writeback_direct writeback_checksum writeback_encrypt
		writeback_batch_size backing_compact"
	vals=("" 0 1 -1 abc 1T 64M 99999999999999999999 all huge idle none
		/dev/ghostswap /dev/null lz4 zstd "idle 5" "$(head -c 3000 /dev/urandom | base64 -w0)"
		"$(printf 'a\0b')" $'\n\n' "1 2 3" 256 "page_index=3"
		"page_indexes=0-4096 page_index=7" "type=all page_indexes=9-1")
	(end=$((SECONDS + 15)); while [ $SECONDS -lt $end ]; do
		for a in $attrs; do
			printf '%s' "${vals[RANDOM % ${#vals[@]}]}" >$SYS/$a 2>/dev/null
		done
	done) &
	pids=$!
	(end=$((SECONDS + 15)); while [ $SECONDS -lt $end ]; do
		cat $SYS/* >/dev/null 2>&1
		cat /sys/kernel/debug/ghostswap/check /sys/kernel/debug/ghostswap/table >/dev/null 2>&1
	done) &
	pids="$pids $!"
	(end=$((SECONDS + 15)); i=0; while [ $SECONDS -lt $end ]; do
		i=$((i + 1))
		swapoff $DEV 2>/dev/null
		echo 1 >$SYS/reset 2>/dev/null
		echo 1G >$SYS/disksize 2>/dev/null
		mkswap $DEV >/dev/null 2>&1 && swapon $DEV 2>/dev/null
	done; echo "$i swap cycles") &
	pids="$pids $!"
	wait $pids
	swapoff $DEV 2>/dev/null
	udevadm settle 2>/dev/null
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "reset left a backing device"
	$PAGES write $DEV 0 t:200,r:50 >/dev/null && $PAGES verify $DEV 0 t:200,r:50 ||
		fail "the device does not work after the storm"
	sysw $SYS/reset 1 ok
	! kernel_reports || fail "kernel reports"
}

# Memory comes back: after reset and rmmod, the caches are gone and free
# memory is where it was before the module was loaded.
# The pool filled to its limit (32 MiB) and well past it to the backing
# device, then reset and rmmod: what is not given back must be far less
# than what the module held (2 MiB, a sixteenth of the pool's limit;
# free pages counted with the per-CPU lists, after they settle).
t_leaks() {
	local free0 free1 big used
	big=$(vdisk gsback) || fail "no disk"
	swapoff $DEV 2>/dev/null
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	free0=$(free_settled_kib)
	modprobe ghostswap && udevadm settle || fail modprobe
	attach_backing "$big"
	sysw $SYS/mem_limit 32M ok
	$PAGES write $DEV 0 t:24000,r:6000,s:2000 >/dev/null || fail write
	used=$(mstat max)
	sysw $SYS/writeback all ok
	$PAGES verify $DEV 0 t:100 >/dev/null || fail verify
	echo "loaded and used: $(cat $SYS/mm_stat) | $(cat $SYS/bd_stat)"
	[ "$used" -ge $((24 << 20)) ] || fail "the pool held $used bytes at most, not near its 32 MiB limit"
	[ "$(bdstat count)" -gt 10000 ] || fail "$(bdstat count) pages written back"
	sysw $SYS/reset 1 ok
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	! grep -qE '^(gs_cluster|gs_bk_cluster) ' /proc/slabinfo || fail "slab caches left"
	! ls /sys/kernel/debug/zsmalloc 2>/dev/null | grep -q ghostswap || fail "zsmalloc pool left"
	free1=$(free_settled_kib)
	echo "free memory (per-CPU lists included) before load $free0 KiB, after rmmod $free1 KiB: $((free0 - free1)) KiB not given back; the pool held $((used >> 10)) KiB at most"
	[ $((free0 - free1)) -lt 2048 ] || fail "$((free0 - free1)) KiB not given back"
	modprobe ghostswap && udevadm settle || fail modprobe
}

# Free pages, per-CPU lists included, in KiB, once they stop growing:
# caches dropped, slabs shrunk, memory compacted; 10 s at most.
free_settled_kib() {
	local f0 f1 i
	sync
	f1=$(free_all_kib)
	for i in $(seq 10); do
		echo 3 >/proc/sys/vm/drop_caches
		for f in /sys/kernel/slab/*/shrink; do echo 1 >"$f"; done 2>/dev/null
		echo 1 >/proc/sys/vm/compact_memory
		sleep 1
		f0=$f1
		f1=$(free_all_kib)
		[ $((f1 - f0)) -lt 256 ] && break
	done
	echo "$f1"
}

# Free pages, per-CPU lists included, in KiB.
free_all_kib() {
	echo $(($(awk '$1 == "MemFree:" { print $2 }' /proc/meminfo) +
		$(awk '$1 == "count:" { c += $2 } END { print c * 4 }' /proc/zoneinfo)))
}

# Where the memory of a whole cycle goes: load, swapon of 1 TiB, a verified
# 256 MiB swap workload, swapoff, reset, rmmod. Each category of kernel
# memory before the load and after the rmmod, as a table: free pages (the
# buddy allocator's and those parked on the per-CPU lists, which MemFree
# and MemAvailable leave out: a swap workload frees pages by the million
# and the kernel raises the lists' high marks), slab, vmalloc, per-CPU,
# page tables, anonymous and file pages. Everything of ours must be gone
# (slab caches, zsmalloc pool, vmalloc areas, per-CPU memory) and free
# memory, per-CPU lists included, back within 4 MiB. What is freed after
# an RCU grace period (page tables, maple tree nodes, the stacks of the
# workload that just exited) comes back late when the host is busy and
# the guest's grace periods are long: a snapshot waits until free memory
# stops growing (10 s at most).
mem_snapshot() {
	free_settled_kib >/dev/null
	awk '{ sub(":", "", $1); print "mem", $1, $2 }' /proc/meminfo
	awk '$1 == "count:" { c += $2 } END { print "mem PcpFree", c * 4 }' /proc/zoneinfo
	awk '{ print "vmalloc", $3, $2 }' /proc/vmallocinfo
}

mem_field() { awk -v k="$2" '$1 == "mem" && $2 == k { print $3 }' "$1"; }

t_memory_cycle() {
	local a=/tmp/mem-before b=/tmp/mem-after k fa fb d free_a free_b
	swapoff $DEV 2>/dev/null
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	mem_snapshot >$a
	modprobe ghostswap && udevadm settle || fail modprobe
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	run_cg gs-mem 64 gsverify 256 1 11 zstr || fail "verified workload"
	swapoff $DEV || fail swapoff
	udevadm settle 2>/dev/null
	sysw $SYS/reset 1 ok
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	mem_snapshot >$b
	printf '%-14s %10s %10s %10s\n' KiB before after change
	for k in MemFree PcpFree MemAvailable AnonPages Cached Shmem Slab \
		SReclaimable SUnreclaim KernelStack PageTables Percpu VmallocUsed; do
		fa=$(mem_field $a $k)
		fb=$(mem_field $b $k)
		printf '%-14s %10d %10d %10d\n' $k "$fa" "$fb" $((fb - fa))
	done
	free_a=$(($(mem_field $a MemFree) + $(mem_field $a PcpFree)))
	free_b=$(($(mem_field $b MemFree) + $(mem_field $b PcpFree)))
	echo "free pages, per-CPU lists included: $((free_b - free_a)) KiB"
	echo "vmalloc areas that appeared (KiB by caller):"
	awk '$1 == "vmalloc" { n[$2] += $3 * (FILENAME == ARGV[1] ? -1 : 1) }
		END { for (c in n) if (n[c] > 0) printf "  %s %d\n", c, n[c] / 1024 }' $a $b
	! grep -qE '^(gs_cluster|gs_bk_cluster) ' /proc/slabinfo || fail "slab caches left"
	! ls /sys/kernel/debug/zsmalloc 2>/dev/null | grep -q ghostswap || fail "zsmalloc pool left"
	! grep -q '\[ghostswap\]' /proc/vmallocinfo || fail "vmalloc areas of ours left"
	[ "$(mem_field $b Percpu)" -le "$(mem_field $a Percpu)" ] || fail "per-CPU memory grew"
	[ $((free_a - free_b)) -lt 4096 ] || fail "$((free_a - free_b)) KiB not given back"
	modprobe ghostswap && udevadm settle || fail modprobe
}

# Verified stress for GS_STRESS_SECONDS: rounds of two verified swap
# workloads (one with 64 KiB mTHP), stress-ng's verifying vm stressor and a
# writeback tier under a pool limit, each round with another algorithm on
# a freshly reset device; then verified raw I/O with trims while
# writeback loops. Reports the bytes verified. The sizes shrink with
# GS_WORKLOAD_DIV (wl), the budget does not: the debug lane runs smaller
# rounds, as many as fit.
t_stress() {
	local secs=${GS_STRESS_SECONDS:-60} end round=0 total=0 alg v f p1 p2 p3 rc
	local thp=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
	local algs=(lz4 zstd lzo-rle) big
	big=$(vdisk gsback) || fail "no disk"
	end=$((SECONDS + secs))
	[ -w $thp ] && echo always >$thp
	while [ $SECONDS -lt $end ] || [ $round = 0 ]; do
		alg=${algs[round % 3]}
		round=$((round + 1))
		swapoff $DEV 2>/dev/null
		attach_backing "$big"
		sysw $SYS/comp_algorithm "$alg" ok
		sysw $SYS/mem_limit "$(wl 16)M" ok
		sysw $SYS/disksize 1T ok
		mkswap $DEV >/dev/null && swapon $DEV || fail "swapon (round $round)"
		run_cg gs-s1 "$(wl_limit 40)" gsverify "$(wl 96)" 2 $((round * 3)) zstr \
			>/tmp/s1 2>&1 &
		p1=$!
		run_cg gs-s2 "$(wl_limit 40)" gsverify "$(wl 96)" 2 $((round * 3 + 1)) tr \
			>/tmp/s2 2>&1 &
		p2=$!
		run_cg gs-s3 "$(wl_limit 40)" stress-ng --temp-path /tmp --vm 1 \
			--vm-bytes "$(wl 80)M" --vm-method all \
			--verify --timeout 20s --metrics-brief >/tmp/s3 2>&1 &
		p3=$!
		rc=0
		wait $p1 || rc=1
		wait $p2 || rc=1
		wait $p3 || rc=1
		for f in /tmp/s1 /tmp/s2; do
			v=$(sed -n 's/^verified \([0-9]*\).*/\1/p' $f)
			total=$((total + ${v:-0}))
		done
		[ $rc = 0 ] || { tail -n 5 /tmp/s1 /tmp/s2 /tmp/s3; fail "round $round ($alg)"; }
		echo "round $round ($alg): $(cat $SYS/bd_stat | awk '{ print $1 " on backing, " $3 " written back" }')"
		swapoff $DEV || fail swapoff
		gs_check >/dev/null
	done
	[ -w $thp ] && echo never >$thp
	# Raw device: verified I/O with trims while writeback loops.
	attach_backing "$big"
	(while :; do
		echo all >$SYS/idle; echo idle >$SYS/writeback 2>/dev/null
		echo 1 >$SYS/backing_compact 2>/dev/null; sleep 0.2
	done) &
	v=$!
	DEV=$DEV FIO_SIZE=$(wl 128)M fio /opt/gs-src/tests/guest/verify.fio --runtime=$((secs / 2 + 10)) \
		>"$GS_OUT/stress-fio.log" 2>&1
	rc=$?
	kill $v; wait $v 2>/dev/null
	[ $rc = 0 ] || { tail -n 20 "$GS_OUT/stress-fio.log"; fail "fio verify"; }
	fio_checked "$GS_OUT/stress-fio.log" || fail "fio verify"
	# Bytes fio read back (and checked against their crc32c).
	v=$(grep -E '^ *READ:' "$GS_OUT/stress-fio.log" | sed -n 's/.*io=\([0-9.]*\)\([KMG]\)i\{0,1\}B.*/\1 \2/p' |
		awk '$2 == "K" { s += $1 * 1024 } $2 == "M" { s += $1 * 1048576 } $2 == "G" { s += $1 * 1073741824 } END { printf "%d", s }')
	gs_check
	sysw $SYS/reset 1 ok
	total=$((total + ${v:-0}))
	echo "stress: $round rounds in ${secs}s budget, $((total >> 20)) MiB verified (swap workloads + fio)"
	echo "stress: $((total >> 20)) MiB verified in $round rounds" >>"$GS_OUT/ratios.txt"
}

# kmemleak (the debug-kernel lane, tests/debug-kernel.sh: a kernel with
# kmemleak): after reset and rmmod, no unreferenced object that ghostswap
# allocated. Used once more first (store, writeback, reset), in case the
# test runs alone. While the module is loaded its frames have names; after
# rmmod they print as bare addresses, and everything else in that kernel
# is built in: a bare address in a backtrace is module code that is gone,
# ours (named where it falls in this last instance).
t_kmemleak() {
	local kl=/sys/kernel/debug/kmemleak big
	[ -w $kl ] || fail "no kmemleak in this kernel (tests/debug-kernel.sh has one)"
	big=$(vdisk gsback) || fail "no disk"
	swapoff $DEV 2>/dev/null
	if [ ! -d /sys/module/ghostswap ]; then
		modprobe ghostswap && udevadm settle || fail modprobe
	fi
	attach_backing "$big"
	$PAGES write $DEV 0 t:2000,r:200,s:100 >/dev/null || fail write
	sysw $SYS/writeback huge ok
	$PAGES verify $DEV 0 t:2000,r:200,s:100 >/dev/null || fail verify
	grep '\[ghostswap\]' /proc/kallsyms >/tmp/gs-syms
	sysw $SYS/reset 1 ok
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	# Reported are objects older than 5 s that did not change since the
	# previous scan: wait, then scan twice.
	sleep 6
	echo scan >$kl && echo scan >$kl || fail "kmemleak scan"
	cat $kl >/tmp/kmemleak.txt
	$PAGES kmemleak /tmp/kmemleak.txt /tmp/gs-syms
}
