# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The guest suite's first tier, sourced by suite.sh: the test bed itself,
# loading the module and its parameters, sysfs input, swapon of 1 TiB,
# verified swap workloads (lz4, zstd, 64 KiB mTHP), slot frees reaching the
# module, raw I/O through the bio path (fio, blocks split over pages), and
# unloading at the end.

# The guest's helpers: fail, sysw, the stat readers, the memory counters,
# run_cg, wl, sample_peak, mm_consistent, swap_on, $PAGES, $SYS, $DEV.
. /opt/gs-src/tests/guest/lib.sh

# The test bed itself: the guest kernel patches its own text (static keys
# of tracepoints and schedstats) over and over while both vCPUs run the
# patched code. An emulator that runs stale translations of patched text
# (multi-threaded TCG: testbed/lib.sh, gs_qemu_env) kills the guest here
# ("Oops: int3"), not in the middle of a test of ghostswap. Each key
# flip is checked: every write succeeds, and the schedstats key reads
# back as written (its sysctl reads the key itself). The patched code
# ran on every CPU: while the keys were on, each CPU counted in
# /proc/schedstat (sched_count counts only with the schedstats key on)
# and recorded trace events. With the keys off at the end, neither
# moves for a second under load: no CPU still runs the enabled branch.

# tp_sched_counts: "cpuN:SCHED_COUNT" for each CPU.
tp_sched_counts() {
	awk '$1 ~ /^cpu[0-9]+$/ { printf "%s:%s ", $1, $4 }' /proc/schedstat
}

# tp_trace_counts TRACEFS: "cpuN:EVENTS" for each CPU, the events
# recorded since the buffer was cleared (kept and overwritten).
tp_trace_counts() {
	local d
	for d in "$1"/per_cpu/cpu*; do
		printf '%s:%s ' "${d##*/}" "$(awk '$1 == "entries:" { e = $2 }
			$1 == "overrun:" { o = $2 } END { print e + o }' "$d/stats")"
	done
}

# tp_grew BEFORE AFTER WHAT: every CPU of AFTER counted more than in
# BEFORE ("cpuN:COUNT" words); at least two CPUs.
tp_grew() {
	local w n=0
	declare -A b
	for w in $1; do b[${w%%:*}]=${w#*:}; done
	for w in $2; do
		n=$((n + 1))
		[ "${w#*:}" -gt "${b[${w%%:*}]:-0}" ] ||
			fail "${w%%:*}: $3 (before: ${b[${w%%:*}]:-none}, after: ${w#*:})"
	done
	[ $n -ge 2 ] || fail "$n CPUs counted: $3"
}

t_testbed_text_patching() {
	local t=/sys/kernel/tracing secs=${GS_TEXTPATCH_SECONDS:-20}
	local ss=/proc/sys/kernel/sched_schedstats keys k v end rounds=0
	local want=${GS_TEXTPATCH_ROUNDS:-10} cap took
	local load stress rc sc0 sc1 tr off0 off1 offtr w
	mountpoint -q $t || mount -t tracefs none $t || fail "no tracefs"
	keys="$t/events/sched/sched_switch/enable $ss $t/events/kmem/kmem_cache_alloc/enable"
	for k in $keys; do
		[ -w "$k" ] || fail "cannot write $k"
	done
	[ -r /proc/schedstat ] || fail "no /proc/schedstat"
	[ "$(nproc)" -ge 2 ] || fail "$(nproc) CPU online: the patched code must run on two at once"
	[ "$(cat $t/tracing_on)" = 1 ] || fail "tracing is off"
	for k in $keys; do
		echo 0 >"$k" || fail "writing 0 to $k"
	done
	echo >$t/trace
	sc0=$(tp_sched_counts)
	(while :; do echo x | cat >/dev/null; done) &
	load=$!
	stress-ng --switch 2 --vm 1 --vm-bytes 32M --timeout "$secs" >/dev/null 2>&1 &
	stress=$!
	trap 'kill $load $stress 2>/dev/null' EXIT
	# At least SECS seconds under the load and at least WANT rounds: a
	# host busy with other work slows each flip (4 rounds in 20 s in a
	# run from an empty cache, beside two kernel builds), so the rounds
	# are counted, not timed; ten times SECS at most.
	end=$(($(date +%s) + secs))
	cap=$((end + 9 * secs))
	while [ "$(date +%s)" -lt $end ] ||
		{ [ $rounds -lt "$want" ] && [ "$(date +%s)" -lt $cap ]; }; do
		for v in 1 0; do
			for k in $keys; do
				echo $v >"$k" || fail "writing $v to $k"
			done
			[ "$(cat $ss)" = $v ] || fail "the schedstats key reads $(cat $ss) after writing $v"
		done
		rounds=$((rounds + 1))
	done
	took=$(($(date +%s) - end + secs))
	sc1=$(tp_sched_counts)
	tr=$(tp_trace_counts $t)
	# Every key off: nothing may count any more, load or not.
	echo >$t/trace
	off0=$(tp_sched_counts)
	sleep 1
	off1=$(tp_sched_counts)
	offtr=$(tp_trace_counts $t)
	kill $load
	rc=0
	wait $stress || rc=$?
	trap - EXIT
	echo "$((rounds * 6)) static key flips ($rounds rounds of 3 keys on and off) in $took s under load"
	echo "sched_count while the keys flipped: $sc0-> $sc1"
	echo "trace events while the keys flipped: $tr"
	echo "with the keys off for 1 s: sched_count $off0-> $off1, trace events $offtr"
	# The load's exit status is only reported: stress-ng has exited 1 at
	# its timeout under the emulator. What the test needs of the load is
	# that the CPUs switched while the keys flipped: checked just below.
	echo "the load (stress-ng) exited $rc"
	[ $rounds -ge "$want" ] || fail "$rounds rounds in $took s, $want wanted: the keys hardly flipped"
	tp_grew "$sc0" "$sc1" "schedstats never counted on this CPU: its patched code did not run"
	tp_grew "" "$tr" "no trace event on this CPU: its tracepoints' patched code did not run"
	[ "$off0" = "$off1" ] || fail "schedstats still counting with its key off"
	for w in $offtr; do
		[ "${w#*:}" = 0 ] || fail "${w%%:*}: trace events with every event off"
	done
}

# The page-table depth: testbed/lib.sh gs_qemu_env says which one the
# guest was given (GS_GUEST_PAGING, 4 or 5 levels): 4-level in the
# debug-kernel lane (GS_GUEST_LA57=0), 5-level elsewhere under TCG (its
# CPU has LA57), and under KVM 5-level where the host CPU has LA57. The
# depth is measured, not read from a flag: a user address past 2^47
# (128 TiB) exists only with 5-level page tables. The la57 CPU flag
# must agree. On arm64 (the arm64 lane: Debian's kernel has 52-bit VA
# and 4 KiB pages, so 5 levels where the CPU has LPA2) the same probe
# holds (arm64 maps past 2^48 for a hint up there), and the kernel's
# boot message of the 52-bit VA feature stands for the flag.
t_testbed_paging() {
	local want=${GS_GUEST_PAGING:-} have flag=4 name=la57
	[ -n "$want" ] || fail "GS_GUEST_PAGING unset: the test bed did not say which depth it set up"
	have=$(python3 - <<'EOF'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
# PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE
want = 1 << 50
a = libc.mmap(want, 4096, 3, 0x22 | 0x100000, -1, 0)
if a == want:
    ctypes.memset(a, 0x5a, 4096)
    print(5 if ctypes.string_at(a, 1) == b'\x5a' else 'bad')
else:
    print(4)
EOF
) || fail "the address-space probe did not run"
	if [ "$(uname -m)" = aarch64 ]; then
		name="the kernel's 52-bit VA feature"
		dmesg | grep -q 'CPU features: detected: 52-bit Virtual Addressing' &&
			flag=5
		grep -E 'CONFIG_(ARM64_VA_BITS|PGTABLE_LEVELS|ARM64_4K_PAGES)=' \
			"/boot/config-$(uname -r)"
		echo "page size: $(getconf PAGESIZE)"
	else
		grep -qw la57 /proc/cpuinfo && flag=5
	fi
	echo "page-table levels: $have (a page at 2^50 mapped: $([ "$have" = 5 ] && echo yes || echo no)), $name: $flag, the test bed gave: $want"
	[ "$have" = "$want" ] || fail "$have-level paging, the test bed set up $want-level"
	[ "$flag" = "$have" ] || fail "$name says $flag levels, the address space $have"
}

# The test bed runs the guest's CPUs at the same instant (the debug
# lane: multi-threaded TCG, or KVM), so that its race tests race for real.
# gsparallel passes a token between two threads pinned to CPUs 0 and 1,
# each spinning until it is its turn: a pass needs both CPUs executing.
# Measured on this test bed: ~270 passes a second where the emulator runs
# one vCPU at a time (it switches at each guest timer tick), 0.28-27
# million where both run. A busy host may still run both vCPU threads on
# one of its CPUs for seconds (a CI run: 279 a second over 3 s, beside
# three other guests): so gsparallel keeps the best 0.1 s window of up to
# GS_PARALLEL_SECONDS (60) and stops at the first that reaches the bar,
# GS_PARALLEL_MIN_RATE (10000).
t_testbed_parallel() {
	local min=${GS_PARALLEL_MIN_RATE:-10000} out rate
	[ "$(nproc)" -ge 2 ] || fail "$(nproc) CPU online: two needed"
	out=$(gsparallel -r "$min" "${GS_PARALLEL_SECONDS:-60}") ||
		fail "gsparallel did not run: $out"
	echo "$out"
	rate=$(echo "$out" | sed -n 's/.*best 0.1 s window \([0-9]*\) per second.*/\1/p')
	[ -n "$rate" ] || fail "no rate in gsparallel's output"
	[ "$rate" -ge "$min" ] ||
		fail "at best $rate passes a second (at least $min wanted): the CPUs took turns, they did not run at once"
}

t_load() {
	modprobe ghostswap || fail "modprobe"
	udevadm settle 2>/dev/null
	[ -b $DEV ] || fail "$DEV is not a block device"
	local want=$((64 << 30)) ram
	if per_slot_swap_core; then
		ram=$(($(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) * 1024))
		[ $((2 * ram)) -lt $want ] && want=$((2 * ram))
	fi
	[ "$(cat $SYS/disksize)" = $want ] && [ "$(default_disksize)" = $want ] ||
		fail "default disksize $(cat $SYS/disksize), want $want"
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
	# And the index's spare nodes for them (radix_tree_node objects).
	[ "$(cstat index_reserve)" = $(($(index_spares) * $(index_obj_size))) ] ||
		fail "index reserve: $(cstat index_reserve) bytes, want $(index_spares) nodes"
	grep -q '\[lz4\]' $SYS/comp_algorithm || fail "default algorithm: $(cat $SYS/comp_algorithm)"
	cat $SYS/comp_algorithm $SYS/cluster_stat $SYS/mm_stat $SYS/io_stat
}

t_unload_reload() {
	rmmod ghostswap || fail "rmmod of an unused device"
	[ ! -e $SYS ] || fail "$SYS still there"
	grep -qE '^gs_cluster ' /proc/slabinfo && fail "slab cache left behind"
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

# I/O that is not 4 KiB aligned: direct reads and writes of 512 bytes,
# at a 512-byte offset, and a discard of 512 bytes are refused with
# EINVAL by the block layer before they reach the device (its logical
# block size is 4 KiB), so invalid_io, which counts what reaches it
# misaligned (only a kernel caller building bios by hand can), stays 0;
# a buffered write of 512 bytes goes through the page cache as a whole
# page and reads back; the data around it is intact.
t_misaligned_io() {
	local inv0 e
	sysw $SYS/reset 1 ok
	sysw $SYS/disksize 1G ok
	$PAGES write $DEV 0 t:4 >/dev/null || fail write
	inv0=$(iostat invalid_io)
	for e in "if=$DEV of=/dev/null bs=512 count=1 iflag=direct" \
		"if=$DEV of=/dev/null bs=512 skip=1 count=1 iflag=direct" \
		"if=/dev/zero of=$DEV bs=512 count=1 oflag=direct conv=notrunc" \
		"if=/dev/zero of=$DEV bs=4096 seek=1 count=1 oflag=seek_bytes,direct conv=notrunc"; do
		if out=$(eval dd "$e" status=none 2>&1); then
			fail "dd $e: not refused"
		fi
		echo "dd $e: $out"
		case $out in *"Invalid argument"*) ;; *) fail "dd $e: not EINVAL" ;; esac
	done
	out=$(blkdiscard -o 512 -l 4096 $DEV 2>&1) && fail "a discard at 512 bytes: not refused"
	echo "blkdiscard -o 512: $out"
	[ "$(iostat invalid_io)" = "$inv0" ] ||
		fail "invalid_io $(iostat invalid_io): misaligned I/O reached the device"
	$PAGES verify $DEV 0 t:4 >/dev/null || fail "the pages around the refused I/O changed"
	head -c 512 /dev/urandom >/tmp/mis.bin
	dd if=/tmp/mis.bin of=$DEV bs=512 seek=1 count=1 conv=notrunc,fsync status=none ||
		fail "buffered write of 512 bytes"
	echo 3 >/proc/sys/vm/drop_caches
	dd if=$DEV bs=512 skip=1 count=1 iflag=direct status=none 2>/dev/null && fail "direct read at 512 taken"
	cmp <(dd if=$DEV bs=512 skip=1 count=1 status=none) /tmp/mis.bin ||
		fail "the buffered 512 bytes do not read back"
	echo "invalid_io: $(iostat invalid_io); io_stat $(cat $SYS/io_stat)"
	sysw $SYS/reset 1 ok
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
	local avail0 avail1 cost drop meta limit
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
	# What swapon costs the kernel is what the module's swapon_cost says
	# (6.12's default size and ghostswapctl's warning rest on it): at
	# 1 TiB ~24 MiB on 7.x, 80 MiB on PREEMPT_RT (no THP there: clusters
	# of 256 slots, and a bigger spinlock_t), ~816 MiB where the swap core
	# allocates per slot (6.12). The drop must be more than half of it and
	# less than it plus 24 MiB; with lockdep and KASAN (the debug kernel)
	# less than 128 MiB, their own cost.
	cost=$(cat $SYS/swapon_cost)
	echo "swapon_cost: $((cost >> 10)) KiB"
	limit=$((24 + (cost >> 20)))
	[ -e /proc/lockdep ] && [ $limit -lt 128 ] && limit=128
	[ "$drop" -gt $((cost / 2)) ] ||
		fail "MemAvailable dropped $drop bytes, swapon_cost says $cost"
	meta=$(cstat meta)
	echo "MemAvailable drop at swapon of 1 TiB: $((drop / 1024)) KiB"
	echo "module metadata at 1 TiB idle: $meta bytes, $(cstat clusters) clusters"
	[ "$(cstat clusters)" = 1 ] || fail "want exactly the header cluster"
	# That cluster, cluster 0, which the index keeps in its head: no node.
	[ "$meta" = $(($(cluster_obj_size) + 4096)) ] ||
		fail "module holds $meta bytes idle"
	[ "$drop" -lt $((limit << 20)) ] || fail "MemAvailable dropped $drop bytes (limit $limit MiB)"
}

# ms_since T0: milliseconds since T0 (an $EPOCHREALTIME).
ms_since() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }'
}

# hold_open SECONDS: a reader holds the device open (as udev's blkid does
# after a change) for that long, from when this returns.
hold_open() {
	rm -f /tmp/gs.opened
	( exec 3<$DEV; touch /tmp/gs.opened; sleep "$1" ) &
	while [ ! -e /tmp/gs.opened ]; do sleep 0.01; done
}

# A reader that has the device open for a moment (udev's probe after a
# change) is waited for, up to a second, by a write that reconfigures it:
# zram-generator writes once and does not retry. One that stays is
# refused with EBUSY after that second; an exclusive holder (swap) at
# once. The writes here do not retry (no sysw).
t_probe_open() {
	local t0 ms out
	gs_fresh || fail "no fresh device"
	udevadm settle
	hold_open 0.4
	t0=$EPOCHREALTIME
	out=$( (echo 2G >$SYS/disksize) 2>&1) ||
		fail "disksize with a reader open for 0.4 s: $out"
	ms=$(ms_since $t0)
	echo "disksize with a reader open for 0.4 s: taken after $ms ms"
	[ "$(cat $SYS/disksize)" = $((2 << 30)) ] || fail "2G not taken"
	[ "$ms" -ge 100 ] || fail "taken after $ms ms: the reader was not open"
	wait
	hold_open 3
	t0=$EPOCHREALTIME
	out=$( (echo 3G >$SYS/disksize) 2>&1) &&
		fail "disksize taken with a reader open for 3 s"
	ms=$(ms_since $t0)
	echo "disksize with a reader open for 3 s: '$out' after $ms ms"
	[[ $out == *"resource busy"* ]] || fail "want EBUSY, got '$out'"
	[ "$ms" -ge 900 ] || fail "refused after $ms ms, without waiting"
	wait
	udevadm settle
	mkswap $DEV >/dev/null || fail mkswap
	swapon $DEV || fail swapon
	t0=$EPOCHREALTIME
	out=$( (echo 3G >$SYS/disksize) 2>&1) &&
		fail "disksize taken while swapped on"
	ms=$(ms_since $t0)
	echo "disksize while swapped on: '$out' after $ms ms"
	swapoff $DEV
	[ "$ms" -lt 900 ] || fail "swap's exclusive hold was waited for ($ms ms)"
	# Swap's header is on it: the tests after this one want it empty.
	gs_fresh || fail "reset after swapoff"
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
	[ "$(iostat notify_free)" -gt 0 ] || fail "no notify_free"
}

# Without the swap core's free hook (a kernel whose swap_ops work took
# swap_slot_free_notify away; free_notify=N stands in for one): swap's
# own discards free the slots, ghostswapctl setup passes --discard=pages.
# The swap core discards a cluster of swap slots (512 with THP) from a
# workqueue once its last slot is freed: during the workload the device
# holds slots swap has freed in clusters still in use (measured, the
# price of the fallback); once the workload is gone every cluster is
# empty and discarded, and the device holds what swap still uses. Then
# the same without --discard: the freed slots stay until the reset (what
# the fallback saves).
fn_param=/sys/module/ghostswap/parameters/free_notify
fn_restore() {
	swapoff $DEV 2>/dev/null
	echo Y >$fn_param
}
# used_pages: the swap core's pages in use on the device (/proc/swaps).
used_pages() {
	awk -v d=$DEV '$1 == d { print $4 / 4 }' /proc/swaps
}
# fn_sample: slots held, swap's pages in use, their difference.
fn_sample() {
	local s u
	s=$(cstat slots)
	u=$(used_pages)
	echo "$((s - u)) held $s used $u"
}
fn_workload() {
	sample_peak /tmp/fn.peak 1 fn_sample &
	local sp=$! rc
	run_cg gs-fn "$(wl_limit 32)" gsverify "$(wl 96)" 1 13 str
	rc=$?
	kill $sp
	wait $sp 2>/dev/null
	return $rc
}
t_free_notify_off() {
	local o t used held
	gs_fresh || fail fresh
	[ "$(cat $fn_param)" = Y ] || fail "free_notify is $(cat $fn_param), want Y on 7.x"
	echo N >$fn_param || fail "free_notify=N"
	o=$($CTL setup --size 64G --priority 100) || { fn_restore; fail "setup"; }
	echo "$o"
	grep -q -- '--discard=pages' <<<"$o" || { fn_restore; fail "setup did not pass --discard=pages"; }
	dmesg | grep 'Adding .* swap on /dev/ghostswap' | tail -n 1
	# swapon's flags: D discards, c a swap cluster at a time.
	dmesg | grep 'Adding .* swap on /dev/ghostswap' | tail -n 1 | grep -q 'k \(SS\)\?Dc$' ||
		{ fn_restore; fail "swap on without page discards"; }
	: >/tmp/fn.peak
	fn_workload || { fn_restore; fail "verified workload"; }
	echo "most slots held beyond swap's own use: $(cat /tmp/fn.peak)"
	t=$SECONDS
	for _ in $(seq 60); do
		[ "$(cstat slots)" -le "$(($(used_pages) + 1))" ] && break
		sleep 1
	done
	echo "after the workload: $(fn_sample) (+1: the header), $((SECONDS - t)) s; io_stat $(cat $SYS/io_stat)"
	[ "$(cstat slots)" -le "$(($(used_pages) + 1))" ] ||
		{ fn_restore; fail "slots swap freed were not discarded"; }
	[ "$(iostat notify_free)" = 0 ] || { fn_restore; fail "notify_free $(iostat notify_free) with the hook off"; }
	[ "$(iostat discard_free)" -gt 0 ] || { fn_restore; fail "no slot freed by a discard"; }
	$CTL doctor | grep 'free_notify is off' || { fn_restore; fail "doctor does not say"; }

	# The same without swap's discards.
	swapoff $DEV && sysw $SYS/reset 1 ok && sysw $SYS/disksize 64G ok &&
		mkswap $DEV >/dev/null && swapon $DEV || { fn_restore; fail "swapon"; }
	: >/tmp/fn.peak
	fn_workload || { fn_restore; fail "verified workload without discards"; }
	sleep 2
	used=$(used_pages)
	held=$(cstat slots)
	echo "without --discard=pages, after the workload: $(fn_sample); io_stat $(cat $SYS/io_stat)"
	fn_restore
	echo "after swapoff: $(cat $SYS/cluster_stat)"
	[ "$held" -gt $((used + 1000)) ] ||
		fail "without discards the freed slots were freed all the same: $held held, $used used"
	sysw $SYS/reset 1 ok
}

# Raw device: random 4k..64k reads and writes, trims followed by writes,
# and sequential 64k writes far into the address space; crc32c verified.
t_fio() {
	sysw $SYS/reset 1 ok
	sysw $SYS/disksize 4T ok
	DEV=$DEV FIO_SIZE="$(wl 128)M" fio /opt/gs-src/tests/guest/verify.fio >"$GS_OUT/fio.log" 2>&1
	rc=$?
	grep -E 'err=|READ:|WRITE:|TRIM:|verify' "$GS_OUT/fio.log"
	[ $rc = 0 ] || { tail -n 30 "$GS_OUT/fio.log"; fail "fio exit $rc"; }
	fio_checked "$GS_OUT/fio.log" || fail "fio reported errors"
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

t_unload_final() {
	# A failed test may have left swap on; udev may still be probing
	# the device after the last reset.
	swapoff $DEV 2>/dev/null
	udevadm settle 2>/dev/null
	rmmod ghostswap || fail rmmod
	grep -qE '^gs_cluster ' /proc/slabinfo && fail "slab cache left behind"
	dmesg | grep -E 'ghostswap' | tail -n 10
	! kernel_reports || fail "kernel reported problems"
}

# A kernel warning on purpose (debugfs warn), between the lines that tell
# the host's scan of the console to expect one there: the host fails the
# boot if it does not find it in that window (testbed/console-scan.py),
# so the scan that reads every boot's console is shown to see a report.
t_kernel_log_scan() {
	local d0
	d0=$(dmesg | wc -l)
	echo "GS-EXPECT-REPORT begin debugfs-warn" >/dev/kmsg
	echo 1 >/sys/kernel/debug/ghostswap/warn
	local rc=$?
	echo "GS-EXPECT-REPORT end debugfs-warn" >/dev/kmsg
	[ $rc = 0 ] || fail "write to debugfs warn"
	dmesg | tail -n +$((d0 + 1)) | grep -A2 'a warning asked for through debugfs' ||
		fail "no warning in the kernel log"
	dmesg | tail -n +$((d0 + 1)) | grep -q 'WARNING: .*gs_warn_write' ||
		fail "no WARNING line naming gs_warn_write"
	kernel_reports "$((d0 + 1))" && fail "the warning made on purpose counted as a report"
	return 0
}
