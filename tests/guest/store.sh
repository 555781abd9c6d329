# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The guest suite's store tier, sourced by suite.sh: clusters created and
# freed under each other, every byte of the module's memory counted
# (mm_stat, cluster_stat, the slab, free memory) and given back by reset,
# mem_limit, pool compaction, every algorithm, and compression streams
# across CPU hotplug.

# The guest's helpers: fail, sysw, the stat readers, the memory and slab
# counters, run_cg, mm_consistent, swap_on, $PAGES, $SYS, $DEV.
. /opt/gs-src/tests/guest/lib.sh

# Bytes the debugging kernel's own bookkeeping holds in the slab (0 on a
# stock kernel): a kmemleak object per tracked allocation, and for each
# live slab object what KASAN adds to it (slot less object size).
debug_slab_bytes() {
	debug_kernel || { echo 0; return; }
	$PAGES debug-slab-bytes
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

# reset_64g: the device reset, then 64 GiB: the raw-device tests write as
# far as 8 GiB in, past the default where swapon costs memory per slot.
reset_64g() {
	sysw $SYS/reset 1 ok
	sysw $SYS/disksize 64G ok
}

# check_random MIB SKIP_MIB: the device range matches the last write_random.
check_random() {
	[ "$(dd if=$DEV bs=1M skip="$2" count="$1" iflag=direct status=none |
		sha256sum)" = "$(cat /tmp/w.sum)" ] || fail "read back differs"
}

# The table keeps a zsmalloc handle as its physical address / 8
# (module/gs_table.h); gs_handle_encode() checks on every store that the
# kernel's direct map gives the handle back from that value. Seen from
# outside, on whatever layout the guest's kernel has (x86-64 on 4 or 5
# levels, arm64 with 52-bit VA): every stored object's address, from the
# table dump in debugfs, lies in System RAM (/proc/iomem), and what was
# written reads back the same.
t_table_handles() {
	local f=/tmp/handles.dat n=0 bad=0 v pa r lo hi in max=0 min= c
	local ranges=()
	sysw $SYS/reset 1 ok
	sysw $SYS/disksize 1G ok
	# 4 MiB, two clusters: text (compressed) and random pages (raw).
	{ seq 1 1000000 | head -c 3M; head -c 1M /dev/urandom; } >$f
	dd if=$f of=$DEV bs=1M oflag=direct status=none || fail "write"
	dd if=$DEV bs=1M count=4 iflag=direct status=none | cmp - $f ||
		fail "the data read back differs"
	mapfile -t ranges < <(sed -n 's/^\([0-9a-f]*\)-\([0-9a-f]*\) : System RAM$/\1 \2/p' /proc/iomem)
	[ ${#ranges[@]} -gt 0 ] || fail "no System RAM in /proc/iomem"
	for c in 0 1; do
		echo $c >/sys/kernel/debug/ghostswap/table || fail "debugfs table"
		while read -r v; do
			n=$((n + 1))
			pa=$((0x$v << 3))
			in=0
			for r in "${ranges[@]}"; do
				lo=$((0x${r% *}))
				hi=$((0x${r#* }))
				if [ $pa -ge $lo ] && [ $pa -le $hi ]; then
					in=1
					break
				fi
			done
			[ $in = 1 ] || { bad=$((bad + 1)); printf 'value %s: address %#x is not in System RAM\n' "$v" $pa; }
			[ $pa -le $max ] || max=$pa
			[ -n "$min" ] && [ $pa -ge "$min" ] || min=$pa
		done < <(sed -n 's/^[0-9]* \(compressed\|raw\)[a-z ]* value \([0-9a-f]*\) .*/\2/p' \
			/sys/kernel/debug/ghostswap/table)
	done
	rm -f $f
	printf '%s, %s-level paging: %d objects at physical %#x-%#x, System RAM %s\n' \
		"$(uname -m)" "${GS_GUEST_PAGING:-?}" $n "${min:-0}" $max "${ranges[*]}"
	[ $n -ge 512 ] || fail "only $n stored objects in the table dump"
	[ $bad = 0 ] || fail "$bad objects outside System RAM"
	sysw $SYS/reset 1 ok
}

# Every byte counted: module stats against the slab cache and free memory.
t_accounting() {
	local objsz free0 free1 used counted dbg0 dbg1
	reset_64g
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
	# 80 clusters in two ranges of the index (0..15, 2048..2111): the
	# XArray's root over 0..4095 and a leaf for each.
	[ "$(cstat meta)" = $((80 * (objsz + 4096) + 3 * $(index_obj_size))) ] ||
		fail "meta $(cstat meta), slab says $((80 * (objsz + 4096) + 3 * $(index_obj_size)))"
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
	[ "$(cat $SYS/disksize)" = "$(default_disksize)" ] || fail "disksize not back to default"
	[ $((free1 - free0)) -gt $((counted - (8 << 20))) ] || fail "memory did not come back"
	sysw $SYS/disksize 64G ok
	dd if=$DEV bs=1M skip=4096 count=1 iflag=direct status=none | cmp - <(head -c 1M /dev/zero) ||
		fail "data survived reset"
}

# Writers, readers and trimmers racing on the same two clusters: clusters
# are created and freed under each other (tests/guest/race.fio). Every
# block a writer reads back is verified, the counters must balance, and
# the area must work normally afterwards.
t_cluster_race() {
	reset_64g
	DEV=$DEV fio /opt/gs-src/tests/guest/race.fio >"$GS_OUT/race.log" 2>&1 ||
		{ tail -n 20 "$GS_OUT/race.log"; fail "fio"; }
	grep -E 'READ:|WRITE:|TRIM:|verify|err=' "$GS_OUT/race.log"
	echo "after race: $(cat $SYS/cluster_stat); io_stat $(cat $SYS/io_stat)"
	fio_checked "$GS_OUT/race.log" || fail "fio"
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
	# And the one leaf of the index over clusters 0..19.
	[ "$(cstat meta)" = $((4 * $(cluster_obj_size) + 4 * 4096 + \
		$(index_obj_size))) ] ||
		fail "meta_bytes: 4 clusters (pages 0..1500 and 10000), one index node"
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
	[ "$(iostat failed_writes)" -ge 1 ] || fail "failed_writes not counted"
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
