# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ghostswap guest suite, the compression engine: algorithm parameters and
# dictionaries (zram's examples verbatim, bad input), recompression by
# request and in the background, the incompressible-page heuristic.
# Sourced by suite.sh, after lib.sh (sysw, fail, swap_on, gs_check,
# mm_consistent, $PAGES) and core.sh (swap_workload).

# comp_stat by column name.
compstat() {
	stat_col $SYS/comp_stat "$1" compressions stored heuristic_raw \
		recompressed no_gain auto units unit_pages units_stored \
		units_refused unit_reads unit_part_reads unit_part_cached \
		unit_splits units_backed units_written
}

# zram's documented algorithm_params, recomp_algorithm and recompress
# examples (zram.rst), verbatim, on /sys/block/ghostswap; then bad input:
# a clear errno, the device unchanged.
t_comp_params() {
	local dict=/etc/dictionary
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	"${GS_CTL:-/usr/local/sbin/ghostswapctl}" dict --pages 400 --size 16K $dict >/dev/null ||
		fail "ghostswapctl dict"
	ls -l $dict
	sysw $SYS/comp_algorithm zstd ok
	sysw $SYS/algorithm_params "algo=zstd dict=/etc/dictionary" ok
	sysw $SYS/algorithm_params "algo=zstd level=8 dict=/etc/dictionary" ok
	sysw $SYS/algorithm_params "level=8" ok
	sysw $SYS/algorithm_params "algo=zstd level=8" ok
	sysw $SYS/reset 1 ok
	sysw $SYS/recomp_algorithm "algo=zstd priority=1" ok
	sysw $SYS/algorithm_params "priority=1 dict=/etc/dictionary" ok
	sysw $SYS/recomp_algorithm "algo=deflate priority=2" ok
	cat $SYS/recomp_algorithm
	grep -q '^#1: .*\[zstd\]' $SYS/recomp_algorithm &&
		grep -q '^#2: .*\[deflate\]' $SYS/recomp_algorithm || fail "recomp_algorithm"
	$PAGES write $DEV 0 s:50,t:300,r:50,T:50 >/dev/null || fail write
	sysw $SYS/idle all ok
	sysw $SYS/recompress "type=idle priority=1" ok
	sysw $SYS/recompress "type=huge priority=2" ok
	sysw $SYS/recompress "type=huge_idle priority=1" ok
	sysw $SYS/recompress "threshold=3000 priority=1" ok
	sysw $SYS/recompress "type=idle threshold=2000 priority=1" ok
	sysw $SYS/recompress "type=huge_idle priority=1 max_pages=42" ok
	cat $SYS/comp_stat
	[ "$(compstat recompressed)" -gt 0 ] || fail "nothing recompressed"
	$PAGES verify $DEV 0 s:50,t:300,r:50,T:50 >/dev/null || fail verify
	# Bad input: EINVAL (or the file's error), nothing changed.
	sysw $SYS/algorithm_params "level=abc" "Invalid argument"
	sysw $SYS/algorithm_params "foo=1" "Invalid argument"
	sysw $SYS/algorithm_params "algo=nosuch level=1" "Invalid argument"
	sysw $SYS/algorithm_params "algo=zstd priority=1 level=99" "Invalid argument"
	sysw $SYS/algorithm_params "priority=3 level=1" "Invalid argument"
	sysw $SYS/recompress "type=sometimes" "Invalid argument"
	sysw $SYS/recompress "priority=3" "Invalid argument"
	sysw $SYS/recomp_algorithm "priority=1" "Invalid argument"
	sysw $SYS/recomp_algorithm "algo=nosuch" "Invalid argument"
	# An algorithm pages need cannot change under them.
	sysw $SYS/algorithm_params "priority=1 level=3" "Device or resource busy"
	sysw $SYS/recomp_algorithm "algo=lz4hc priority=1" "Device or resource busy"
	$PAGES verify $DEV 0 s:50,t:300,r:50,T:50 >/dev/null || fail "verify after bad input"
	sysw $SYS/reset 1 ok
	sysw $SYS/algorithm_params "algo=lzo dict=/etc/dictionary" "Invalid argument"
	sysw $SYS/comp_algorithm lz4 ok
	sysw $SYS/algorithm_params "algo=lz4 dict=/nonexistent" "No such file"
	grep -q '\[lz4\]' $SYS/comp_algorithm || fail "comp_algorithm changed"
	sysw $SYS/recompress "type=idle" "Invalid argument"
	dmesg | grep -E 'ghostswap: (algorithm_params|recompress|recomp_algorithm)' | tail -n 5
}

# A verified swap workload with zstd and a dictionary trained on the
# guest's own memory (not on the workload's pages).
t_workload_dict() {
	local dict=/tmp/gs-dict
	"${GS_CTL:-/usr/local/sbin/ghostswapctl}" dict --pages 1000 $dict >/dev/null ||
		fail "ghostswapctl dict"
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	sysw $SYS/comp_algorithm zstd ok
	sysw $SYS/algorithm_params "level=3 dict=$dict" ok
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	swap_workload ghostswap-dict $SYS || fail "workload"
	mm_consistent /tmp/mm.best
	cat $SYS/comp_stat $SYS/cluster_stat
	swapoff $DEV || fail swapoff
	sysw $SYS/reset 1 ok
}

# recomp_sum: pages the sweeps and requests have recompressed, plus the
# recompressions that gained nothing.
recomp_sum() { echo $(($(compstat recompressed) + $(compstat no_gain))); }

# lz4, with zstd recompressing cold pages in the background. At rest: of
# 2000 stored pages the sweep takes the 1000 marked idle (AGE 0: only
# those), within its first round, and no other. Then beside a verified
# workload, started once the workload has pages stored (a round that
# ends rests 10 s, longer than some workloads here swap): it must
# recompress some of them while they come and go.
t_recompress_auto() {
	local i n t0 a0 a1 wl marker rc kick=0
	swap_on lz4 || return 1
	swapoff $DEV
	sysw $SYS/recomp_algorithm "algo=zstd priority=1" ok
	$PAGES write $DEV 0 t:1000 >/dev/null || fail write
	sysw $SYS/idle all ok
	$PAGES write $DEV 1000 t:1000 >/dev/null || fail write
	sysw $SYS/recompress_auto "100 0" ok
	t0=$SECONDS
	for ((i = 0; i < 300; i++)); do
		[ "$(recomp_sum)" -ge 1000 ] && break
		sleep 0.1
	done
	sleep 2
	cat $SYS/comp_stat
	n=$(recomp_sum)
	echo "at rest: $(compstat auto) of 1000 idle pages recompressed, $n tried, after $((SECONDS - t0)) s"
	[ "$n" = 1000 ] || fail "the sweep tried $n pages, not the 1000 marked idle"
	[ "$(compstat auto)" -gt 0 ] || fail "the sweep recompressed nothing at rest"
	$PAGES verify $DEV 0 t:2000 >/dev/null || fail verify
	gs_check

	sysw $SYS/reset 1 ok
	swap_on lz4 || return 1
	swapoff $DEV
	sysw $SYS/recomp_algorithm "algo=zstd priority=1" ok
	sysw $SYS/recompress_auto "0" ok
	swapon $DEV || fail swapon
	(while :; do echo all >$SYS/idle; sleep 1; done) &
	marker=$!
	swap_workload ghostswap-recomp $SYS &
	wl=$!
	for ((i = 0; i < 600; i++)); do
		[ "$(cstat slots)" -ge 2000 ] && break
		kill -0 $wl 2>/dev/null || break
		sleep 0.1
	done
	a0=$(compstat auto)
	# No fail before the workload and the marker are reaped.
	sysfs_write $SYS/recompress_auto "100 0" >/dev/null || kick=1
	wait $wl
	rc=$?
	kill $marker
	wait $marker 2>/dev/null
	a1=$(compstat auto)
	cat $SYS/comp_stat
	[ "$kick" = 0 ] || fail "write '100 0' to recompress_auto"
	[ $rc = 0 ] || fail "workload"
	echo "under the workload: the sweep recompressed $((a1 - a0)) pages"
	[ "$a1" -gt "$a0" ] || fail "the background sweep recompressed nothing under the workload"
	gs_check
	swapoff $DEV || fail swapoff
	sysw $SYS/reset 1 ok
}

# The heuristic: random pages stored as they are without a compression
# (on), compressed and found incompressible (off); never more than one
# compression per stored page.
t_heuristic() {
	local c p h
	for on in 1 0; do
		swapoff $DEV 2>/dev/null
		sysw $SYS/reset 1 ok
		sysw $SYS/incompressible_check $on ok
		$PAGES write $DEV 0 t:200,r:200,s:50 >/dev/null || fail write
		$PAGES verify $DEV 0 t:200,r:200,s:50 >/dev/null || fail verify
		read -r c p h _ <$SYS/comp_stat
		echo "check $on: $c compressions, $p stored, $h stored as they are by the heuristic"
		[ "$c" -le "$p" ] || fail "$c compressions for $p pages"
		if [ $on = 1 ]; then
			[ "$h" -ge 190 ] || fail "heuristic found only $h of 200 random pages"
			[ "$c" -le 210 ] || fail "$c compressions: random pages compressed"
		else
			[ "$h" = 0 ] && [ "$c" = "$p" ] || fail "heuristic off: $c $p $h"
		fi
	done
	sysw $SYS/incompressible_check 1 ok
	sysw $SYS/reset 1 ok
}

# units_sample: once units hold 1000 pages or more, mm_stat's stored
# data is every slot that holds data, those in units too (the same
# moment, within 10%: the workload runs on).
units_sample() {
	local i u n orig
	for ((i = 0; i < 600; i++)); do
		u=$(compstat unit_pages)
		n=$(cstat slots)
		read -r orig _ <$SYS/mm_stat
		if [ "$u" -ge 1000 ]; then
			echo "while running: $u pages in units, $n slots holding data, mm_stat orig_data_size $orig" >/tmp/units-sample
			[ $((orig / 4096 * 10)) -ge $((n * 9)) ] &&
				[ $((orig / 4096 * 10)) -le $((n * 11)) ]
			return
		fi
		sleep 0.1
	done
	echo "units never held 1000 pages" >/tmp/units-sample
	return 1
}

# 2 MiB huge pages (THP) alone: each goes out as one bio of 512 pages,
# stored as up to 32 units of 16 (runs that do not shrink page by page);
# the workload verifies every page.
units_thp() {
	local f=/sys/kernel/mm/transparent_hugepage/hugepages-2048kB o0 o1 u0 u1 rc
	[ -d $f ] || fail "no 2M THP in this kernel"
	u0=$(compstat units_stored)
	o0=$(cat $f/stats/swpout)
	echo always >$f/enabled
	run_cg gs-units-thp "$(wl_limit 64)" gsverify "$(wl 192)" 2 11 zstr
	rc=$?
	echo never >$f/enabled
	o1=$(cat $f/stats/swpout)
	u1=$(compstat units_stored)
	echo "2M THP swpout: $o0 -> $o1; units stored: $u0 -> $u1"
	[ $rc = 0 ] || fail "gsverify with 2M THP and units"
	[ "$o1" -gt "$o0" ] || fail "no 2M THP was swapped out whole"
	[ "$u1" -gt "$u0" ] || fail "$((o1 - o0)) 2M THP swapped out, no unit stored"
}

# The verified workload with every mTHP size and THP off: small folios
# that the block layer merged into one segment (side by side in memory)
# are no large folio, and no unit is stored of them.
units_small_folios() {
	local t=/sys/kernel/mm/transparent_hugepage sz u0 u1 o0 o1 rc
	for sz in 16 32 64 2048; do echo never >$t/hugepages-${sz}kB/enabled; done
	u0=$(compstat units_stored)
	o0=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	run_cg gs-units-small "$(wl_limit 32)" gsverify "$(wl 96)" 1 12 zstr
	rc=$?
	o1=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	u1=$(compstat units_stored)
	echo "small folios: $((o1 - o0)) pages swapped out; units stored: $u0 -> $u1"
	[ $rc = 0 ] || fail "gsverify with small folios"
	[ $((o1 - o0)) -gt 200 ] || fail "only $((o1 - o0)) pages swapped out"
	[ "$u1" = "$u0" ] || fail "small folios stored as $((u1 - u0)) units"
}

# Large folios compressed whole (multi_page=16): the verified workload
# with 16K, 32K and 64K mTHP on, then with 2 MiB THP alone, then with
# small folios only (no unit). Folios
# swapped out whole are stored as units;
# swapped in whole (where the kernel does that for a synchronous device)
# they are read as units, else a page at a time out of them (after the
# first, out of the stream's copy), and units mostly freed are split.
# Every page checked by the workload, the table by the debug check; all
# freed after.
t_workload_units() {
	local t=/sys/kernel/mm/transparent_hugepage sz in0 in1 rc wl sp
	[ -d $t/hugepages-64kB ] || { echo "no 64K mTHP in this kernel"; return 1; }
	gs_fresh lz4 || fail "reset"
	sysw $SYS/multi_page 3 "Invalid argument"
	sysw $SYS/multi_page 16 ok
	[ "$(cat $SYS/multi_page)" = 16 ] || fail "multi_page shows $(cat $SYS/multi_page)"
	sysfs_write $SYS/disksize 1T && mkswap $DEV >/dev/null && swapon $DEV ||
		fail swapon
	sysw $SYS/multi_page 8 "Device or resource busy"
	for sz in 16 32 64; do echo always >$t/hugepages-${sz}kB/enabled; done
	in0=$(cat $t/hugepages-64kB/stats/swpin)
	# mm_stat counts the pages in units as stored data: sampled while
	# the workload runs, once units hold pages.
	run_cg gs-units "$(wl_limit 64)" gsverify "$(wl 192)" 2 11 zstr &
	wl=$!
	units_sample &
	sp=$!
	wait $wl
	rc=$?
	wait $sp || fail "$(cat /tmp/units-sample)"
	cat /tmp/units-sample
	in1=$(cat $t/hugepages-64kB/stats/swpin)
	for sz in 16 32 64; do echo never >$t/hugepages-${sz}kB/enabled; done
	echo "comp_stat: $(cat $SYS/comp_stat); 64K folios swapped in whole: $in0 -> $in1"
	[ $rc = 0 ] || fail "gsverify with units"
	[ "$(compstat units_stored)" -gt 0 ] || fail "no unit stored"
	[ "$(compstat unit_part_reads)" -gt 0 ] || [ "$(compstat unit_reads)" -gt 0 ] ||
		fail "no unit read"
	[ "$in1" = "$in0" ] || [ "$(compstat unit_reads)" -gt 0 ] ||
		fail "64K folios swapped in whole, no unit read whole"
	# Pages read alone in a row out of one unit are copied out of the
	# stream's copy; units mostly freed are split.
	if [ "$(compstat unit_part_reads)" -gt 100 ]; then
		[ "$(compstat unit_part_cached)" -gt 0 ] ||
			fail "$(compstat unit_part_reads) pages read alone, none out of a stream's copy"
		[ "$(compstat unit_splits)" -gt 0 ] ||
			fail "$(compstat unit_part_reads) pages read alone, no unit split"
	fi
	gs_check
	units_thp
	gs_check
	units_small_folios
	gs_check
	swapoff $DEV || fail swapoff
	[ "$(compstat units)" = 0 ] || fail "units left after swapoff: $(compstat units)"
	[ "$(cstat slots)" = 1 ] || fail "slots left: $(cstat slots)"
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/multi_page)" = 0 ] || fail "multi_page $(cat $SYS/multi_page) after reset"
}
