#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ghostswap benchmarks, run as root inside one guest boot: ghostswap, zram
# and zswap (in front of a swap file) on the same kernel, same algorithm.
# Every measurement is one JSON object per line in $BENCH_OUT/bench.jsonl;
# raw fio output goes to $BENCH_OUT/fio/. bench/report.py turns them into
# the report. A section that fails records {"section": ..., "error": ...}
# and the run goes on.
#
# usage: bench.sh [SECTION ...]   (default: all, in order)
#   sections: static meta ratio mthp workload zswap comp fio writeback profile
#   (and scale, which wants 4 vCPUs, and icount, icount_profile,
#   patterns, usemem_series and usemem_upstream, which want QEMU's
#   instruction counter: bench/run.sh gives each kind a guest of its
#   own; and zswap_path, which bench/funcs.sh counts by function)
# Environment: BENCH_QUICK=1 shrinks every workload (a smoke run);
# BENCH_DRIVERS: the swap workload's drivers (ghostswap zram zswap).
set -u
# The guest's helpers (tests/guest/lib.sh): guest_setup, gs_fresh,
# zram_fresh, swap_on, vdisk, meminfo, free_bytes, $SYS, $DEV, $Z, $GS_OUT.
. /opt/gs-src/tests/guest/lib.sh
OUT=${BENCH_OUT:-$GS_OUT}
J=$OUT/bench.jsonl
ZSW=/sys/module/zswap/parameters
ZDBG=/sys/kernel/debug/zswap
QUICK=${BENCH_QUICK:-0}
# Runs of each comparison, drivers in rotating order; the report takes
# the median. Software emulation is noisy: one run proves little.
REPS=${BENCH_REPS:-3}
[ "$QUICK" = 1 ] && REPS=${BENCH_REPS:-1}
mkdir -p "$OUT/fio"
: >"$J"

log() {
	echo "[bench] $*" >>"$OUT/bench.log"
	echo "[bench] $*" >/dev/kmsg 2>/dev/null
}

# jl key=value ...: one JSON object on a line of bench.jsonl. Values that
# look like numbers stay numbers; true/false/null stay literals.
jl() {
	local kv k v out= sep=
	for kv in "$@"; do
		k=${kv%%=*}
		v=${kv#*=}
		if [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ || $v =~ ^(true|false|null)$ ||
			$v =~ ^[\{\[] ]]; then
			out+="$sep\"$k\": $v"
		else
			v=${v//\\/\\\\}
			v=${v//\"/\\\"}
			out+="$sep\"$k\": \"$v\""
		fi
		sep=", "
	done
	echo "{$out}" >>"$J"
}

settle_mem() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory 2>/dev/null
	sleep 1
}

secs() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.3f", b - a }'; }

# ------------------------------------------------------------ static cost

# Kernel memory a driver allocates: slab, vmalloc and per-CPU, in bytes.
# Exact where free memory is noisy (per-CPU lists, the rest of the guest).
kmem_bytes() {
	awk '$1 == "Slab:" || $1 == "VmallocUsed:" || $1 == "Percpu:" { s += $2 }
		END { print s * 1024 }' /proc/meminfo
}

# Memory a device costs at a disksize before anything is stored, and what
# the swap core adds at swapon. zram allocates its table at disksize time.
static_one() {
	local drv=$1 size=$2 f0 f1 f2 k0 k1 k2 err dev sys
	case $drv in
	ghostswap) gs_fresh || return 1; dev=$DEV; sys=$SYS ;;
	zram) zram_fresh || return 1; dev=/dev/zram0; sys=$Z ;;
	esac
	settle_mem
	f0=$(free_bytes) k0=$(kmem_bytes)
	if ! err=$( (echo "$size" >$sys/disksize) 2>&1); then
		jl section=static driver=$drv disksize=$size ok=false \
			fail="${err##*: }"
		return 0
	fi
	settle_mem
	f1=$(free_bytes) k1=$(kmem_bytes)
	# ghostswap's own count of what it holds: clusters and pool.
	local counted=null
	[ $drv = ghostswap ] &&
		counted=$(($(awk '{ print $4 }' $SYS/cluster_stat) + $(awk '{ print $3 }' $SYS/mm_stat)))
	mkswap $dev >/dev/null && swapon $dev || return 1
	settle_mem
	f2=$(free_bytes) k2=$(kmem_bytes)
	jl section=static driver=$drv disksize=$size ok=true \
		bytes=$(($(cat $sys/disksize))) \
		device_kmem=$((k1 - k0)) device_free=$((f0 - f1)) counted=$counted \
		swapon_kmem=$((k2 - k1)) swapon_free=$((f1 - f2))
	swapoff $dev
}

b_static() {
	local size
	for size in 16G 64G 1T; do
		static_one ghostswap $size || return 1
		static_one zram $size || return 1
	done
	gs_fresh && zram_fresh
}

# ------------------------------------------------------- data sets (raw)

# A data set of real files (the guest's libraries and shared data), the
# kind of mix a desktop's anonymous memory resembles more than any
# synthetic pattern: ~40 MiB of it cycled, cut to $1 MiB.
CORPUS=/tmp/corpus
make_corpus() {
	[ -s $CORPUS ] && [ "$(stat -c %s $CORPUS)" = $(($1 << 20)) ] && return 0
	tar cf - /usr/lib/x86_64-linux-gnu /usr/share /usr/bin 2>/dev/null |
		head -c $(($1 << 20)) >$CORPUS
	[ "$(stat -c %s $CORPUS)" = $(($1 << 20)) ]
}

# Stored memory of a device: data, compressed, pool (and our metadata).
mm_json() {
	local o c u
	read -r o c u _ <"$1/mm_stat"
	echo "orig=$o compr=$c pool=$u"
}

# ------------------------------------------------- metadata per stored page

b_meta() {
	local mib=128 f0 f1 s0 s1 slots meta pool objsz objs0 objs1 n
	[ "$QUICK" = 1 ] && mib=32
	make_corpus $mib || return 1
	# ghostswap: its counters against the slab cache and the page allocator.
	gs_fresh lz4 || return 1
	echo 64G >$SYS/disksize
	settle_mem
	echo 1 >/sys/kernel/slab/gs_cluster/shrink 2>/dev/null
	objs0=$(awk '$1 == "gs_cluster" { print $2 }' /proc/slabinfo)
	f0=$(free_bytes)
	dd if=$CORPUS of=$DEV bs=1M oflag=direct status=none || return 1
	settle_mem
	echo 1 >/sys/kernel/slab/gs_cluster/shrink
	f1=$(free_bytes)
	objs1=$(awk '$1 == "gs_cluster" { print $2 }' /proc/slabinfo)
	objsz=$(awk '$1 == "gs_cluster" { print $4 }' /proc/slabinfo)
	read -r _ _ slots meta _ <$SYS/cluster_stat
	read -r _ _ pool _ <$SYS/mm_stat
	jl section=meta driver=ghostswap pages=$slots counted_meta=$meta \
		slab_meta=$(((objs1 - objs0) * (objsz + 4096))) \
		measured_meta=$((f0 - f1 - pool)) \
		disksize=$(cat $SYS/disksize) $(mm_json $SYS)
	echo 1 >$SYS/reset
	# zram: its table is allocated for the whole disksize.
	zram_fresh lz4 || return 1
	settle_mem
	f0=$(free_bytes)
	echo 64G >$Z/disksize
	dd if=$CORPUS of=/dev/zram0 bs=1M oflag=direct status=none || return 1
	settle_mem
	f1=$(free_bytes)
	read -r _ _ pool _ <$Z/mm_stat
	n=$((mib * 256))
	jl section=meta driver=zram pages=$n measured_meta=$((f0 - f1 - pool)) \
		disksize=$(cat $Z/disksize) $(mm_json $Z)
	echo 1 >$Z/reset
}

# ---------------------------------------------- compression ratio per alg

b_ratio() {
	local mib=192 alg drv sys dev t0 wt rt
	[ "$QUICK" = 1 ] && mib=32
	make_corpus $mib || return 1
	for alg in lz4 lzo-rle zstd; do
		for drv in ghostswap zram; do
			if [ $drv = ghostswap ]; then
				gs_fresh $alg || return 1
				sys=$SYS dev=$DEV
				echo 64G >$sys/disksize
			else
				# Debian's zram has no lzo backend.
				zram_fresh || return 1
				if ! grep -qw -- "$alg" $Z/comp_algorithm; then
					jl section=ratio driver=zram alg=$alg \
						fail="not offered by zram: $(cat $Z/comp_algorithm)"
					continue
				fi
				echo $alg >$Z/comp_algorithm || return 1
				sys=$Z dev=/dev/zram0
				echo 1G >$sys/disksize
			fi
			settle_mem
			t0=$(secs)
			dd if=$CORPUS of=$dev bs=1M oflag=direct status=none || return 1
			wt=$(elapsed "$t0")
			t0=$(secs)
			dd if=$dev of=/dev/null bs=1M count=$mib iflag=direct status=none || return 1
			rt=$(elapsed "$t0")
			local meta=0
			[ $drv = ghostswap ] && read -r _ _ _ meta _ <$SYS/cluster_stat
			# zram's table for this data alone: 16 bytes per page.
			[ $drv = zram ] && meta=$((mib * 256 * 16))
			jl section=ratio driver=$drv alg=$alg data=corpus mib=$mib \
				write_s=$wt read_s=$rt meta=$meta $(mm_json $sys)
		done
	done
	gs_fresh && zram_fresh || return 1
	# The mixed swap workload (zero, same-filled, text, random pages)
	# with each algorithm, ghostswap and zram.
	PASSES=1
	for alg in lz4 lzo-rle zstd; do
		for drv in ghostswap zram; do
			if [ $drv = zram ] && ! grep -qw -- "$alg" $Z/comp_algorithm; then
				jl section=ratio_swap driver=zram alg=$alg \
					fail="not offered by zram: $(cat $Z/comp_algorithm)"
				continue
			fi
			log "ratio_swap $drv $alg"
			workload_one $drv mixed zstr 64 3 $alg ratio_swap
		done
	done
}

# ------------------------------------------------------- swap workloads

SWAPFILE=/tmp/gsbench/swapfile
GSBACK=/tmp/gsbench/gs-backing.img
GSDIR=/tmp/gsbench/gs-chunks
GSDIR_BASE=0
GSLOOP=
swapfile_setup() {
	local d
	mountpoint -q /tmp/gsbench && return 0
	d=$(vdisk gsswap) || { echo "no swap disk"; return 1; }
	mkfs.ext4 -q -F "$d" && mkdir -p /tmp/gsbench && mount "$d" /tmp/gsbench &&
		fallocate -l 1536M $SWAPFILE && chmod 600 $SWAPFILE &&
		mkswap $SWAPFILE >/dev/null
}

# swap_only DRIVER ALG: exactly one swap device on, zswap on only for
# zswap. ghostswap keeps its default disksize. zswap-gs: zswap in front of
# a 1 TiB ghostswap in mode zswap (pages kept as they are, on a sparse
# file on the swap file's filesystem, discarded as they are freed).
# zswap-gsa: the same on a file allocated in full, without discards (256
# MiB: it fits beside the swap file; the workload puts ~130 MiB there).
# zswap-gsraw: the same on the raw virtio disk gsback, with discards: no
# loop device, no filesystem.
# zswap-gsmap: the same on a file allocated in full (256 MiB) on the swap
# file's filesystem, mapped by the module as swapon maps the swap file:
# no loop device, the same disk as the swap file's.
# zswap-gschunks: the same on a directory there, which the module fills
# with chunk files (64 MiB each) as it needs them and empties again.
# ZSWAP_GS_SETUP: more configuration of mode zswap's set-ups (sysfs
# writes) before swapon.
swap_only() {
	local bdev
	swapoff -a 2>/dev/null
	zswap_off
	case $1 in
	zswap-gs | zswap-gsa | zswap-gsraw | zswap-gsmap | zswap-gschunks)
		modprobe loop 2>/dev/null
		swapfile_setup && gs_fresh && rm -f $GSBACK &&
			case $1 in
			zswap-gs) truncate -s 1T $GSBACK ;;
			zswap-gsa | zswap-gsmap) fallocate -l 256M $GSBACK ;;
			zswap-gschunks) mkdir -p $GSDIR &&
				GSDIR_BASE=$(sampler once df:$GSDIR) ;;
			esac &&
			if [ $1 = zswap-gsraw ]; then
				GSLOOP=
				bdev=$(vdisk gsback)
			elif [ $1 = zswap-gschunks ]; then
				GSLOOP=
				bdev=$GSDIR
			elif [ $1 = zswap-gsmap ]; then
				GSLOOP=
				bdev=$GSBACK
			else
				GSLOOP=$(losetup --find --show --direct-io=on $GSBACK)
				bdev=$GSLOOP
			fi &&
			sysfs_write $SYS/backing_dev "$bdev" &&
			{ [ $1 = zswap-gsa ] || [ $1 = zswap-gsmap ] ||
				[ $1 = zswap-gschunks ] ||
				sysfs_write $SYS/backing_discard 1; } &&
			sysfs_write $SYS/writeback_direct all &&
			{ [ -z "${ZSWAP_GS_SETUP:-}" ] || eval "$ZSWAP_GS_SETUP"; } &&
			sysfs_write $SYS/disksize 1T && mkswap $DEV >/dev/null &&
			echo "$2" >$ZSW/compressor && echo Y >$ZSW/shrinker_enabled &&
			echo Y >$ZSW/enabled && swapon $DEV ;;
	ghostswap)
		# GS_SETUP: more configuration before swapon (sysfs writes).
		gs_fresh "$2" && sysfs_write $SYS/disksize "${GS_DISKSIZE:-64G}" &&
			{ [ -z "${GS_SETUP:-}" ] || eval "$GS_SETUP"; } &&
			mkswap $DEV >/dev/null && swapon $DEV ;;
	zram)
		zram_fresh "$2" && echo 2G >$Z/disksize &&
			mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 ;;
	zswap)
		# The shrinker writes cold entries back to the swap file under
		# memory pressure; without it (Debian's default) a full cgroup
		# OOMs, as zswap's pool is charged to it.
		swapfile_setup && echo "$2" >$ZSW/compressor &&
			echo Y >$ZSW/shrinker_enabled &&
			echo Y >$ZSW/enabled && swapon $SWAPFILE ;;
	esac
}

# mem_exprs DRIVER: what the driver holds, in bytes, as three sampler
# expressions (bench/guest/sampler.c), "data pool metadata". ghostswap:
# its clusters; zram: its table, 16 bytes per slot of its disksize;
# zswap (debugfs): its entries, one slab object per stored page.
mem_exprs() {
	case $1 in
	ghostswap) echo "$SYS/mm_stat:1 $SYS/mm_stat:3 $SYS/cluster_stat:4" ;;
	zram) echo "$Z/mm_stat:1 $Z/mm_stat:3 $(($(cat $Z/disksize) / 4096 * 16))" ;;
	zswap)
		# zswap_entry's slab may be merged with another: sysfs
		# still knows it by name.
		local sz
		sz=$(cat /sys/kernel/slab/zswap_entry/slab_size 2>/dev/null || echo 0)
		echo "$ZDBG/stored_pages:1*4096 $ZDBG/pool_total_size:1 $ZDBG/stored_pages:1*$sz" ;;
	zswap-gs | zswap-gsa | zswap-gsraw | zswap-gsmap | zswap-gschunks)
		# Both: zswap's pool and entries, ghostswap's (its pages on the
		# backing file count as data, not memory) and its tier's.
		local z g
		read -r -a z <<<"$(mem_exprs zswap)"
		read -r -a g <<<"$(mem_exprs ghostswap)"
		echo "${z[0]}+${g[0]} ${z[1]}+${g[1]} ${z[2]}+${g[2]}+$SYS/bd_stat:5" ;;
	*) echo "0 0 0" ;;
	esac
}

# disk_expr DRIVER: the disk the driver takes, KiB, as a sampler
# expression: the swap file's allocated blocks, or the backing file's
# (zswap-gs, zswap-gsa, zswap-gsmap), the backing slots in use on the raw
# disk (zswap-gsraw); 0 for the others.
disk_expr() {
	case $1 in
	zswap) echo "du:$SWAPFILE" ;;
	zswap-gs | zswap-gsa | zswap-gsmap) echo "du:$GSBACK" ;;
	zswap-gsraw) echo "$SYS/bd_stat:1*4" ;;
	# Unnamed chunk files: what the filesystem has taken since set-up.
	zswap-gschunks) echo "df:$GSDIR+-$GSDIR_BASE" ;;
	*) echo 0 ;;
	esac
}

# perf_start FILE: perf samples every CPU on its clock (cpu-clock, at
# $PERF_FREQ Hz, 2000 unless set) into FILE, until perf_stop. It starts
# disabled and is enabled through its control FIFO, whose answer comes
# once it records: a workload of a few seconds is recorded whole however
# long perf takes to start. The kernel would lower the rate for good
# whenever a sample's interrupt seems long (it does on an emulator):
# that check is off, the rate reset.
perf_start() {
	local ack
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
	rm -f /tmp/perf.ctl /tmp/perf.ack
	mkfifo /tmp/perf.ctl /tmp/perf.ack
	perf record -a -e cpu-clock -F "${PERF_FREQ:-2000}" -D -1 ${PERF_G:+-g} \
		--control=fifo:/tmp/perf.ctl,/tmp/perf.ack \
		--proc-map-timeout=60000 -o "$1" >/dev/null 2>"$1.err" &
	PERF_PID=$!
	# Opened both ways, a FIFO opens at once: no wait on a perf that
	# failed to start.
	exec {PERF_CTL}<>/tmp/perf.ctl {PERF_ACK}<>/tmp/perf.ack
	echo enable >&$PERF_CTL
	read -r -t 300 ack <&$PERF_ACK
	[ "$ack" = ack ] || echo "perf: no answer to enable" >>"$1.err"
}

perf_stop() {
	exec {PERF_CTL}>&- {PERF_ACK}<&-
	kill -INT "$PERF_PID"
	wait "$PERF_PID"
	rm -f /tmp/perf.ctl /tmp/perf.ack
}

# cpu_ticks: the guest's CPU time so far, in clock ticks, "user system
# idle iowait irq softirq" (/proc/stat; user with nice).
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3, $4, $5, $6, $7, $8 }' /proc/stat
}

# json_delta "NAME ..." A B: lists of numbers A and B, B less A, as a JSON
# object with those names.
json_delta() {
	local n a b i out= sep=
	read -r -a n <<<"$1"
	read -r -a a <<<"$2"
	read -r -a b <<<"$3"
	for i in "${!n[@]}"; do
		out+="$sep\"${n[i]}\": $((b[i] - a[i]))"
		sep=", "
	done
	echo "{$out}"
}

# vd_io: the requests the guest's virtio disks completed so far, summed
# (/proc/diskstats: reads, reads merged, sectors read, writes, writes
# merged, sectors written).
vd_io() {
	awk '$3 ~ /^vd[a-z]+$/ { for (i = 0; i < 6; i++) t[i] += $(4 + i + (i > 2)) }
		END { print t[0] + 0, t[1] + 0, t[2] + 0, t[3] + 0, t[4] + 0, t[5] + 0 }' /proc/diskstats
}

# disk_state [BRIEF]: the virtio disks' write throttling (in flight per
# class; and its limits), the requests their queues hold and their
# inflight counts, and (unless BRIEF) each queue's state and the
# interrupts of their virtqueues, to the console.
disk_state() {
	local f d
	for f in /sys/kernel/debug/block/vd*/rqos/wbt/inflight; do
		[ -r "$f" ] && echo "[bench] $f: $(tr '\n' ' ' <"$f")" >/dev/kmsg
	done
	for f in /sys/kernel/debug/block/vd*/hctx*/busy \
		/sys/kernel/debug/block/vd*/hctx*/dispatch; do
		[ -r "$f" ] || continue
		echo "[bench] $f: $(wc -l <"$f") requests; $(tr '\n' ' ' <"$f" | head -c 600)" >/dev/kmsg
	done
	for d in /sys/block/vd*; do
		echo "[bench] ${d##*/} inflight (reads writes): $(cat $d/inflight)" >/dev/kmsg
	done
	[ -z "${1:-}" ] || return 0
	for f in /sys/kernel/debug/block/vd*/state \
		/sys/kernel/debug/block/vd*/hctx*/state \
		/sys/kernel/debug/block/vd*/hctx*/tags \
		/sys/kernel/debug/block/vd*/rqos/wbt/wb_normal \
		/sys/kernel/debug/block/vd*/rqos/wbt/wb_background \
		/sys/kernel/debug/block/vd*/rqos/wbt/curr_win_nsec \
		/sys/kernel/debug/block/vd*/rqos/wbt/min_lat_nsec; do
		[ -r "$f" ] && echo "[bench] $f: $(tr '\n' ' ' <"$f" | head -c 600)" >/dev/kmsg
	done
	grep -i virtio /proc/interrupts | tr -s ' ' | while read -r f; do
		echo "[bench] interrupts: $f" >/dev/kmsg
	done
}

# hang_watch SECONDS: if the workload still runs after SECONDS (no run
# takes half as long), what the guest waits on goes to its console: the
# virtio disks' queues and write throttling (disk_state), the blocked
# tasks and every CPU's stack; and the host records what QEMU's virtio
# queues hold (testbed/qmp-virtio.py, on "GS-VIRTIO-SNAPSHOT"). Then one
# direct read of each disk with requests in flight, which tells the
# device to look at its queue again and takes an interrupt when it ends,
# and the same again 10 s later: requests that end then were lost
# between the guest and the device, not in the guest's I/O path. A
# guest that hangs is then seen for what it is, not only as one that ran
# out of time. /tmp/hang-watch says it fired. Killed when the workload
# returns.
hang_watch() {
	local d
	sleep "$1" || return
	: >/tmp/hang-watch
	echo "[bench] the workload still runs after $1 s: what the guest waits on" >/dev/kmsg
	disk_state
	echo 1 >/proc/sys/kernel/sysrq
	echo w >/proc/sysrq-trigger
	echo l >/proc/sysrq-trigger
	echo "GS-VIRTIO-SNAPSHOT stuck" >/dev/kmsg
	sleep 5
	for d in /sys/block/vd*; do
		[ "$(awk '{ print $1 + $2 }' $d/inflight)" -gt 0 ] || continue
		echo "[bench] one direct read of ${d##*/}" >/dev/kmsg
		dd if=/dev/${d##*/} of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null &
	done
	sleep 10
	echo "[bench] 10 s after those reads:" >/dev/kmsg
	disk_state brief
	echo "GS-VIRTIO-SNAPSHOT after-read" >/dev/kmsg
}

# workload_one DRIVER MIX_NAME MIX LIMIT_MIB OVERCOMMIT [ALG [SECTION]]:
# usemem at OVERCOMMIT times a memory cgroup of LIMIT_MIB, $PASSES sweeps;
# with PERF_DATA set, perf records the whole guest while usemem runs;
# with SERIES_MARK set, the plugin's counts of usemem's run are dumped
# (pcs-SECTION-VARIANT-ALG-MIX_NAME-REP).
workload_one() {
	local drv=$1 name=$2 mix=$3 lim=$4 oc=$5 alg=${6:-lz4} sec=${7:-workload}
	local cg=/sys/fs/cgroup/gsbench spid wpid res rc o=0 p=0 m=0 wb0=0 wb1=0 sw0 sw1
	local si0 si1 mexp dexp
	local dpeak=0 dafter cpu0 cpu1 io0 io1 in0 in1
	local t64=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats
	swap_only $drv $alg || {
		jl section=$sec driver=$drv mix=$name alg=$alg fail="swapon failed"
		return 1
	}
	[[ $drv = zswap* ]] && wb0=$(cat $ZDBG/written_back_pages)
	sw0=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	si0=$(awk '$1 == "pswpin" { print $2 }' /proc/vmstat)
	cpu0=$(cpu_ticks) io0=$(vd_io)
	in0=$(cat $t64/swpin 2>/dev/null || echo 0)
	mkdir -p $cg
	echo $((lim << 20)) >$cg/memory.max
	# What zswap may hold of the cgroup (CG_ZSWAP_MAX): all of it unless
	# set.
	echo "${CG_ZSWAP_MAX:-max}" >$cg/memory.zswap.max
	rm -f /tmp/peak
	# One sampler process, which starts none: every set-up pays the
	# same for being watched.
	read -r -a mexp <<<"$(mem_exprs $drv)"
	dexp=$(disk_expr $drv)
	sampler peak 500 /tmp/peak "${mexp[@]}" -- "$dexp" &
	spid=$!
	[ -z "${PERF_DATA:-}" ] || perf_start "$PERF_DATA"
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK reset || return 1
	rm -f /tmp/hang-watch
	hang_watch "${HANG_WATCH_S:-600}" &
	wpid=$!
	res=$(sh -c "echo \$\$ >$cg/cgroup.procs && exec usemem $((lim * oc)) $PASSES $mix 7")
	rc=$?
	# A run the hang watch fired in is a failed run, whatever came after;
	# the watch ends its report first.
	local hung=
	if [ -e /tmp/hang-watch ]; then
		hung=1
		[ $rc != 0 ] || rc=124
	else
		kill $wpid 2>/dev/null
	fi
	wait $wpid 2>/dev/null
	rm -f /tmp/hang-watch
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK "$sec-${VARIANT:-$drv}-$alg-$name-${REP:-1}" ||
		return 1
	[ -z "${PERF_DATA:-}" ] || perf_stop
	kill $spid
	wait $spid 2>/dev/null
	# The workload is gone and its slots freed: discards follow.
	sleep 2
	dafter=$(sampler once "$dexp")
	cpu1=$(cpu_ticks) io1=$(vd_io)
	in1=$(cat $t64/swpin 2>/dev/null || echo 0)
	sw1=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	si1=$(awk '$1 == "pswpin" { print $2 }' /proc/vmstat)
	[[ $drv = zswap* ]] && wb1=$(cat $ZDBG/written_back_pages)
	# A chunk directory keeps a spare chunk 5 s after the last one was
	# taken (the worker looks each second): what it holds once that has
	# passed, 8 s after the workload exited.
	local dsettled=
	if [ $drv = zswap-gschunks ]; then
		sleep 6
		dsettled=$(sampler once "$dexp")
	fi
	[ -s /tmp/peak ] && { read -r o p m && read -r dpeak; } </tmp/peak
	rmdir $cg
	[ -n "$res" ] || res=null
	# ghostswap: comp_stat, every column (compressions, pages stored,
	# the heuristic's, ..., the units').
	local cs=null
	[ $drv = ghostswap ] && cs="[$(awk '{ $1 = $1; gsub(/ /, ", "); print }' $SYS/comp_stat)]"
	# Mode zswap: bd_stat, every column (pages on the device, reads,
	# writes, ..., relocated by backing compaction, ..., capacity).
	local bd=null
	[[ $drv = zswap-gs* ]] && bd="[$(awk '{ $1 = $1; gsub(/ /, ", "); print }' $SYS/bd_stat)]"
	jl section=$sec driver=$drv variant=${VARIANT:-$drv} mix=$name \
		overcommit=$oc limit_mib=$lim \
		rep=${REP:-1} alg=$alg rc=$rc peak_orig=$o peak_pool=$p peak_meta=$m \
		${FOLIOS:+folios=$FOLIOS} ${CG_ZSWAP_MAX:+zswap_cg_max=$CG_ZSWAP_MAX} \
		pswpout=$((sw1 - sw0)) pswpin=$((si1 - si0)) \
		zswap_written_back=$((wb1 - wb0)) \
		swpin_64k=$((in1 - in0)) \
		disk_peak_kib=$dpeak disk_after_kib=$dafter \
		${dsettled:+disk_settled_kib=$dsettled} ${hung:+hang_watch=1} \
		cpu_ticks="$(json_delta "user system idle iowait irq softirq" "$cpu0" "$cpu1")" \
		disk_io="$(json_delta "reads reads_merged sectors_read writes writes_merged sectors_written" "$io0" "$io1")" \
		comp_stat="$cs" bd_stat="$bd" result="$res"
	swapoff -a
	swap_only_end $drv
}

# swap_only_end DRIVER: what swap_only set up for mode zswap, taken down
# (after swapoff).
swap_only_end() {
	if [[ $1 = zswap-gs* ]]; then
		zswap_off
		gs_fresh
		[ -z "$GSLOOP" ] || losetup -d "$GSLOOP"
		rm -f $GSBACK
		[ ! -d $GSDIR ] || rmdir $GSDIR
	fi
}

# --------------------------------------------- mode zswap's disk path

# Where zswap's writeback to a disk spends its instructions (bench/funcs.sh
# zswap counts them by function), for zswap in front of, in turn: a swap
# file on ext4 (the anchor), ghostswap in mode zswap on the raw virtio
# disk (the ceiling of any file-backed store), on a loop device over a
# sparse file (what the zswap section measures), and over a file
# allocated in full, without discards. gsverify fills ZPATH_MIB of
# text-like pages in a memory cgroup of 48 MiB whose zswap may hold 8 MiB
# (memory.zswap.max): past that, each page zswap stores makes it write
# back the cgroup's oldest (the out phase). gsverify then stops
# (SIGSTOP); the cgroup's limit goes, and its verify-only sweep reads
# every page back, the written-back ones from the disk (the in phase).
# With SERIES_MARK set, the plugin's counts are dumped after each phase
# (pcs-zpath-CONFIG-REP-out, -in); each phase's swap counters go to
# bench.jsonl.
ZPATH_CG=/sys/fs/cgroup/gszpath
ZPATH_KEYS='pswpin|pswpout|zswpin|zswpout|zswpwb|thp_swpout|thp_swpout_fallback|zswap_[a-z_]+|cg_[a-z_]+|ms'

# zpath_snap FILE: the swap counters of /proc/vmstat, zswap's own
# (debugfs: why it rejected pages, zswap_reject_*) and the time, one
# "name value" per line (ms: the time).
zpath_snap() {
	local f
	{
		cat /proc/vmstat
		for f in $ZDBG/reject_* $ZDBG/pool_limit_hit $ZDBG/written_back_pages; do
			[ -r "$f" ] && echo "zswap_${f##*/} $(cat "$f")"
		done
		echo "ms $(awk '{ print int($1 * 1000) }' /proc/uptime)"
		# The cgroup's zswap pool (bytes) and the pages it holds.
		awk '$1 == "zswap" || $1 == "zswapped" { print "cg_" $1, $2 }' \
			$ZPATH_CG/memory.stat 2>/dev/null
	} >"$1"
}

# zpath_delta A B: the counters of zpath_snap files A and B, B less A, as a
# JSON object.
zpath_delta() {
	awk -v keys="^($ZPATH_KEYS)\$" 'NR == FNR { a[$1] = $2; next }
		$1 ~ keys { printf "%s\"%s\": %d", (n++ ? ", " : "{"), $1, $2 - a[$1] }
		END { print "}" }' "$1" "$2"
}

# zpath_one CONFIG REP: one run; zpath_end takes it down, whatever it got to.
zpath_one() {
	local cfg=$1 rep=$2 pid st rc
	swap_only "$cfg" lz4 || { echo "swapon failed"; return 1; }
	mkdir -p $ZPATH_CG
	echo 48M >$ZPATH_CG/memory.max &&
		echo 8M >$ZPATH_CG/memory.zswap.max || return 1
	zpath_snap /tmp/zp.0
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK reset || return 1
	sh -c "echo \$\$ >$ZPATH_CG/cgroup.procs &&
		GSVERIFY_STOP=1 exec gsverify ${ZPATH_MIB:-128} 0 7 t" >/tmp/zp.out 2>&1 &
	pid=$!
	ZPATH_PID=$pid
	while st=$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null) && [ "$st" != T ]; do
		sleep 0.2
	done
	[ "$st" = T ] || { echo "gsverify ended before it was filled: $(cat /tmp/zp.out)"; return 1; }
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK "zpath-$cfg-$rep-out" || return 1
	zpath_snap /tmp/zp.1
	echo max >$ZPATH_CG/memory.max
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK reset || return 1
	kill -CONT $pid
	wait $pid
	rc=$?
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK "zpath-$cfg-$rep-in" || return 1
	zpath_snap /tmp/zp.2
	jl section=zswap_path config="$cfg" rep="$rep" rc=$rc mib="${ZPATH_MIB:-128}" \
		result="$(tr '\n' ' ' </tmp/zp.out)" \
		out="$(zpath_delta /tmp/zp.0 /tmp/zp.1)" in="$(zpath_delta /tmp/zp.1 /tmp/zp.2)"
	[ $rc = 0 ]
}

zpath_end() {
	[ -z "${ZPATH_PID:-}" ] || kill -KILL "$ZPATH_PID" 2>/dev/null
	ZPATH_PID=
	sleep 1
	rmdir $ZPATH_CG 2>/dev/null
	swapoff -a
	swap_only_end "$1"
}

b_zswap_path() {
	local cfg rep
	for ((rep = 1; rep <= REPS; rep++)); do
		for cfg in $(drivers_order $rep zswap zswap-gsraw zswap-gs zswap-gsa zswap-gsmap zswap-gschunks); do
			log "zswap_path $cfg #$rep"
			zpath_one "$cfg" "$rep" >/tmp/zp.log 2>&1 ||
				jl section=zswap_path config="$cfg" rep="$rep" \
					fail="$(tail -n 5 /tmp/zp.log | tr '\n' ' ')"
			zpath_end "$cfg"
		done
	done
	zswap_off
}

# drivers_order REP D1 D2 ...: the drivers, rotated by REP, so that no
# driver always runs first (or right after the same one).
drivers_order() {
	local rep=$1 i n
	shift
	n=$#
	for ((i = 0; i < n; i++)); do
		echo "${@:$(((rep + i) % n + 1)):1}"
	done
}

# workload_rows SECTION DRIVER...: the swap workload, every mix at 2x
# and 4x, each DRIVER $REPS times in rotating order, with lz4; one line
# of SECTION a run.
workload_rows() {
	local sec=$1 lim=64 drv name mix oc rep
	shift
	PASSES=2
	[ "$QUICK" = 1 ] && lim=32 PASSES=1
	for oc in 2 4; do
		for name in zero-heavy:zzzst text:t random:r; do
			mix=${name#*:} name=${name%%:*}
			for ((rep = 1; rep <= REPS; rep++)); do
				for drv in $(drivers_order $rep "$@"); do
					log "$sec $drv $name ${oc}x #$rep"
					REP=$rep workload_one $drv $name $mix $lim $oc lz4 $sec
				done
			done
		done
	done
	zswap_off
}

b_workload() {
	# shellcheck disable=SC2086
	workload_rows workload ${BENCH_DRIVERS:-ghostswap zram zswap}
}

# ------------------------------------------------------- zswap in front

# Mode zswap (on a sparse file, on the raw disk, and on a file allocated
# in full) against zswap with a swap file, ghostswap alone and zram, on
# the swap workload: throughput, memory at the fullest, and the disk
# blocks taken at the peak and once the workload is gone. ZSWAP_SETUPS,
# ZSWAP_MIXES (NAME:MIX ...): fewer of them. ZSWAP_CG_MAX: what zswap may
# hold of the cgroup (memory.zswap.max; half of it unless set, "max": all
# of it). zswap's pool is charged to the cgroup: with all of it, zswap
# filled the cgroup with random pages kept whole and its OOM killer ended
# one or two of three random runs of every set-up with zswap in front.
b_zswap() {
	local lim=64 drv name mix oc=2 rep
	PASSES=2
	[ "$QUICK" = 1 ] && lim=32 PASSES=1
	for name in ${ZSWAP_MIXES:-zero-heavy:zzzst text:t random:r}; do
		mix=${name#*:} name=${name%%:*}
		for ((rep = 1; rep <= REPS; rep++)); do
			# shellcheck disable=SC2086 # a list of set-ups
			for drv in $(drivers_order $rep ${ZSWAP_SETUPS:-zswap-gs zswap-gsraw zswap-gsa zswap-gsmap zswap-gschunks zswap ghostswap zram}); do
				log "zswap $drv $name ${oc}x #$rep"
				CG_ZSWAP_MAX=${ZSWAP_CG_MAX:-$((lim / 2))M} REP=$rep \
					workload_one $drv $name $mix $lim $oc lz4 zswap
			done
		done
	done
	zswap_off
}

# ------------------------------------------------- large folios whole

# Large folios (16 and 64 KiB mTHP on) on the swap workload at 2x, each
# mix with zstd and lz4: zram, ghostswap page by page (multi_page=0), and
# ghostswap with units of up to 16 pages (multi_page=16, variant
# ghostswap-units). Throughput, memory at the fullest, comp_stat (units
# stored, read whole, pages read alone) and the kernel's 64 KiB folios
# swapped in whole. MTHP_ALGS, MTHP_MIXES (NAME:MIX ...): fewer of them.
# MTHP_SHAPES (SIZES:OVERCOMMIT ..., default 16,64:2): the mTHP sizes on
# (KiB, comma-separated; the 2 MiB size as the kernel sets it, "always"
# on Debian; "off": every size off, 2 MiB too, 4 KiB folios only) and
# the cgroup's overcommit, each shape a set of rows (field folios:
# "16K+64K", or "4K" for off).
# Before any section that sets zswap up: after that, the kernel swaps
# large folios in a page at a time for the rest of the boot (zswap_off).
# Its rows go to section $1 (default mthp).
b_mthp() {
	local sec=${1:-mthp} t=/sys/kernel/mm/transparent_hugepage lim=64
	local alg name mix rep drv sz shape sizes oc folios
	PASSES=2
	[ "$QUICK" = 1 ] && lim=32 PASSES=1
	for shape in ${MTHP_SHAPES:-16,64:2}; do
		sizes=${shape%%:*} oc=${shape##*:} folios=4K
		for sz in 16 32 64; do echo never >$t/hugepages-${sz}kB/enabled; done
		if [ "$sizes" = off ]; then
			echo never >$t/hugepages-2048kB/enabled
		else
			echo inherit >$t/hugepages-2048kB/enabled
			for sz in ${sizes//,/ }; do
				echo always >$t/hugepages-${sz}kB/enabled || return 1
			done
			folios=${sizes//,/K+}K
		fi
		for alg in ${MTHP_ALGS:-zstd lz4}; do
			for name in ${MTHP_MIXES:-text:t zero-heavy:zzzst}; do
				mix=${name#*:} name=${name%%:*}
				for ((rep = 1; rep <= REPS; rep++)); do
					for drv in $(drivers_order $rep zram ghostswap ghostswap-units); do
						log "$sec $drv $name $alg $sizes ${oc}x #$rep"
						if [ $drv = ghostswap-units ]; then
							# shellcheck disable=SC2016 # for swap_only's eval
							REP=$rep VARIANT=$drv FOLIOS=$folios \
								GS_SETUP='sysfs_write $SYS/multi_page 16' \
								workload_one ghostswap $name $mix $lim $oc $alg $sec
						else
							REP=$rep FOLIOS=$folios \
								workload_one $drv $name $mix $lim $oc $alg $sec
						fi
					done
				done
			done
		done
	done
	for sz in 16 32 64; do echo never >$t/hugepages-${sz}kB/enabled; done
	echo inherit >$t/hugepages-2048kB/enabled
}

# ------------------------------------------------- the compression engine

# On the swap workload, data over memory at its fullest: ghostswap's zstd
# with a dictionary against zram's zstd (and ghostswap's zstd without
# one). The dictionary is trained by ghostswapctl dict on the memory of a
# running workload with other data (another seed), not on the data
# measured. Then the corpus of the ratio section stored with lz4 while
# the background sweep recompresses it with zstd, against zstd itself:
# data / pool once the sweep is done, and how long that took.
b_comp() {
	local lim=64 oc=3 rep drv name mix hog mib=128 t0 n prev v
	PASSES=2
	[ "$QUICK" = 1 ] && lim=32 PASSES=1 mib=32
	usemem 48 1000 zzzst 99 >/dev/null 2>&1 &
	hog=$!
	sleep 5
	/usr/local/sbin/ghostswapctl dict --pages 2000 /tmp/bench.dict >"$OUT/dict.log" 2>&1
	kill $hog
	wait $hog 2>/dev/null
	[ -s /tmp/bench.dict ] || { cat "$OUT/dict.log"; return 1; }
	jl section=comp_dict bytes=$(stat -c %s /tmp/bench.dict)
	for name in zero-heavy:zzzst text:t; do
		mix=${name#*:} name=${name%%:*}
		for ((rep = 1; rep <= REPS; rep++)); do
			for v in $(drivers_order $rep gs-dict zram gs-zstd); do
				log "comp $v $name #$rep"
				case $v in
				gs-dict)
					VARIANT=$v GS_SETUP="echo 'level=3 dict=/tmp/bench.dict' >$SYS/algorithm_params" \
						REP=$rep workload_one ghostswap $name $mix $lim $oc zstd comp ;;
				gs-zstd)
					VARIANT=$v REP=$rep workload_one ghostswap $name $mix $lim $oc zstd comp ;;
				zram)
					REP=$rep workload_one zram $name $mix $lim $oc zstd comp ;;
				esac
			done
		done
	done
	# Background recompression: lz4 drifting toward zstd.
	make_corpus $mib || return 1
	for v in lz4-recomp zstd; do
		gs_fresh "${v%-*}" || return 1
		echo 64G >$SYS/disksize
		[ $v = lz4-recomp ] && { echo "algo=zstd priority=1" >$SYS/recomp_algorithm || return 1; }
		dd if=$CORPUS of=$DEV bs=1M oflag=direct status=none || return 1
		jl section=comp_recomp variant=$v phase=stored $(mm_json $SYS)
		if [ $v = lz4-recomp ]; then
			echo all >$SYS/idle
			t0=$(secs)
			echo "25 0" >$SYS/recompress_auto
			# Until a whole sweep (10 s rest included) adds nothing.
			prev=-1 n=0
			while [ "$n" != "$prev" ]; do
				prev=$n
				sleep 15
				n=$(awk '{ print $6 }' $SYS/comp_stat)
			done
			jl section=comp_recomp variant=$v phase=swept seconds=$(elapsed "$t0") \
				recompressed=$n comp_stat="[$(tr -s ' ' ',' <$SYS/comp_stat | sed 's/^,//')]" \
				$(mm_json $SYS)
		fi
		dd if=$DEV of=/tmp/gsbench-verify bs=1M count=$mib iflag=direct status=none &&
			cmp -s $CORPUS /tmp/gsbench-verify || { echo "$v: data differs"; return 1; }
		rm -f /tmp/gsbench-verify
	done
	gs_fresh
}

# ------------------------------------------------------ fio on raw devices

# fill_devices SIZE: write SIZE of 50%-compressible data (like memory)
# to the start of both raw devices, so that reads find data.
fill_devices() {
	local dev
	for dev in $DEV /dev/zram0; do
		fio --name=fill --filename=$dev --rw=write --bs=1M --size=$1 \
			--direct=1 --buffer_compress_percentage=50 \
			--buffer_compress_chunk=4k --refill_buffers >/dev/null 2>&1 ||
			return 1
	done
}

# fio_rand DRIVER RW IODEPTH JOBS SECONDS SIZE FILE: one timed fio run of
# 4 KiB random I/O on the raw device of DRIVER (ghostswap or zram), its
# JSON in $OUT/FILE; returns fio's exit status. FIO_CPUS: the CPUs its
# jobs may run on (default: any).
fio_rand() {
	local dev=$DEV
	[ $1 = zram ] && dev=/dev/zram0
	fio --name=$2 --filename=$dev --rw=$2 --bs=4k --size=$6 --direct=1 \
		${FIO_CPUS:+--cpus_allowed=$FIO_CPUS} \
		--ioengine=libaio --iodepth=$3 --numjobs=$4 --group_reporting \
		--runtime=$5 --time_based --buffer_compress_percentage=50 \
		--buffer_compress_chunk=4k --refill_buffers --randrepeat=0 \
		--output-format=json >"$OUT/$7" 2>/dev/null
}

# fio_rows SECTION SECONDS SIZE JOBS...: the fio rows, randread,
# randwrite and randrw at iodepth 1 and 32, with each number of JOBS, on
# both raw devices filled first with SIZE of compressible data (reads then
# find data, like memory); the drivers alternating, one line of SECTION a
# run. FIO_CPUS as for fio_rand.
fio_rows() {
	local sec=$1 rt=$2 size=$3 drv rw qd nj rep f
	shift 3
	gs_fresh lz4 && zram_fresh lz4 && echo 1G >$Z/disksize || return 1
	fill_devices $size || return 1
	for rw in randread randwrite randrw; do
		for qd in 1 32; do
			for nj in "$@"; do
				for ((rep = 1; rep <= REPS; rep++)); do
					for drv in $(drivers_order $rep ghostswap zram); do
						f=fio/$sec-$drv-$rw-qd$qd-j$nj-$rep.json
						log "$sec $drv $rw qd$qd jobs$nj #$rep"
						fio_rand $drv $rw $qd $nj $rt $size $f
						jl section=$sec driver=$drv rw=$rw \
							iodepth=$qd numjobs=$nj rep=$rep \
							rc=$? file=$f
					done
				done
			done
		done
	done
	gs_fresh && zram_fresh
}

b_fio() {
	if [ "$QUICK" = 1 ]; then
		fio_rows fio 2 64M 1 2
	else
		fio_rows fio 5 256M 1 2
	fi
}

# ----------------------------------------------------------------- scale

# How IOPS grow with fio's jobs, 1 to 4, for each driver: one job a
# thread, 4 KiB at iodepth 1. It wants 4 vCPUs: bench/run.sh boots a
# guest of its own for it.
b_scale() {
	local drv rw nj rep rt=5 size=256M f
	[ "$QUICK" = 1 ] && rt=2 size=64M
	[ "$(nproc)" -ge 4 ] || { echo "scale needs 4 CPUs, this guest has $(nproc)"; return 1; }
	gs_fresh lz4 && zram_fresh lz4 && echo 1G >$Z/disksize || return 1
	fill_devices $size || return 1
	for rw in randread randwrite; do
		for nj in 1 2 4; do
			for ((rep = 1; rep <= REPS; rep++)); do
				for drv in $(drivers_order $rep ghostswap zram); do
					f=fio/scale-$drv-$rw-j$nj-$rep.json
					log "scale $drv $rw jobs$nj #$rep"
					fio_rand $drv $rw 1 $nj $rt $size $f
					jl section=scale driver=$drv rw=$rw numjobs=$nj \
						rep=$rep rc=$? file=$f
				done
			done
		done
	done
	gs_fresh && zram_fresh
}

# ---------------------------------------------------------------- icount

# The fio rows again on a guest whose clock is QEMU's instruction counter
# (bench/run.sh boots it with GHOSTSWAP_ICOUNT=0: 1 ns an instruction).
# IOPS then count instructions: 10^9 / IOPS is what one I/O costs the
# whole guest, both vCPUs, in instructions. Nothing the host does moves
# it, so two runs agree to a few parts in 10^4. fio is kept on vCPU 1
# for both drivers: where the scheduler puts it changes what the other
# vCPU does meanwhile, and that counts too.
#
# Then the swap workload, ghostswap and zram, counted the same way: its
# MiB/s are MiB swept per 10^9 instructions, its latencies thousands of
# instructions. A reclaim decision that depends on time depends on
# instructions here too, so the runs still differ a little.
b_icount() {
	if [ "$QUICK" = 1 ]; then
		FIO_CPUS=1 fio_rows icount 1 64M 1
	else
		FIO_CPUS=1 fio_rows icount 2 256M 1
	fi || return 1
	workload_rows icount_workload ghostswap zram
}

# The mthp section on the guest of the instruction counter: MiB/s are
# MiB per 10^9 instructions of the whole guest, latencies thousands of
# instructions; with pswpout and pswpin, the instructions per page
# swapped. MTHP_ALGS and MTHP_MIXES as there.
b_icount_mthp() {
	b_mthp icount_mthp
}

# -------------------------------------------------- zswap in front, profiled

# Where the time of mode zswap's disk path goes, against zswap with a
# swap file (on demand only: bench/run.sh zswap_profile): perf samples
# every CPU on its clock (cpu-clock: time, under TCG without icount)
# while usemem runs the text mix at 2x, once for each set-up
# (ZSWAP_SETUPS, default "zswap zswap-gsmap"); the samples by symbol,
# kernel and modules together, in zprof-SETUP.txt, beside the run's row,
# and the callers of its first kernel symbols in zprof-SETUP-callers.txt.
b_zswap_profile() {
	local perf drv f
	perf=$(command -v perf) ||
		{ jl section=zswap_profile fail="no perf in the guest"; return 0; }
	PASSES=2
	for drv in ${ZSWAP_SETUPS:-zswap zswap-gsmap}; do
		f=zprof-$drv.txt
		log "zswap_profile $drv"
		PERF_G=1 PERF_DATA=/tmp/perf.data workload_one $drv text t 64 2 \
			lz4 zswap_profile || return 1
		$perf report -i /tmp/perf.data --stdio -n --no-children -g none \
			--sort sym --percent-limit 0.3 2>/dev/null |
			grep -E '^ +[0-9.]+%' | head -n 80 >"$OUT/$f"
		# Who calls the first ZPROF_CALLERS (8) kernel symbols.
		for sym in $(awk '$3 == "[k]" && $4 != "pv_native_safe_halt" { print $4 }' "$OUT/$f" |
			head -n "${ZPROF_CALLERS:-8}"); do
			echo "== $sym"
			$perf report -i /tmp/perf.data --stdio --no-children -S "$sym" \
				-g caller,2,callee,function,percent 2>/dev/null |
				grep -v '^#' | grep -v '^$' | head -n 60
		done >"$OUT/${f%.txt}-callers.txt"
		rm -f /tmp/perf.data /tmp/perf.data.err
		jl section=zswap_profile driver=$drv file=$f
	done
	zswap_off
}

# -------------------------------------------------------- icount profile

# Where the swap workload's instructions go, on the same guest: perf
# samples every CPU on its clock (cpu-clock), which there advances with
# instructions, while usemem runs the text and zero-heavy mixes at 2x
# (PASSES 2, as in the rows), once for each driver; perf report then
# counts the samples by command, object and symbol, and the modules'
# symbols are listed from /proc/kallsyms (perf names their object
# [kernel.kallsyms] here). report.py groups the samples: the driver's
# module, the compressor (LZ4), zsmalloc, memset and memcpy, perf
# itself, idle, and everything else (usemem, page faults, reclaim).
b_icount_profile() {
	local perf drv name mix f
	perf=$(command -v perf) ||
		{ jl section=icount_profile fail="no perf in the guest"; return 0; }
	PASSES=2
	for name in text:t zero-heavy:zzzst; do
		mix=${name#*:} name=${name%%:*}
		for drv in ghostswap zram; do
			f=iprof-$drv-$name.txt
			log "icount_profile $drv $name"
			PERF_DATA=/tmp/perf.data workload_one $drv $name $mix 64 2 \
				lz4 icount_profile || return 1
			$perf report -i /tmp/perf.data --stdio -n \
				--sort comm,dso,sym --percent-limit 0 2>/dev/null |
				grep -E '^ +[0-9.]+%' >"$OUT/$f"
			cp /tmp/perf.data.err "$OUT/$f.err"
			rm -f /tmp/perf.data /tmp/perf.data.err
			awk '$4 == "[ghostswap]" || $4 == "[zram]" { print $3 }' \
				/proc/kallsyms | sort -u >"$OUT/${f%.txt}.syms"
			jl section=icount_profile driver=$drv mix=$name file=$f \
				syms="${f%.txt}.syms"
		done
	done
}

# -------------------------------------------------------- usemem_series

# The swap-table series' own workload (bench/guest/usemem_series.c: its
# usemem run, "-O -y -x -n 2"), scaled to the guest: two processes of
# USEMEM_MIB (216) MiB each write their memory once in a memory cgroup of
# USEMEM_CG_MIB (128), lz4, zram and ghostswap, USEMEM_RUNS (8) runs of
# each in the order zram ghostswap ghostswap zram zram ... (8: the sum of
# the two rates moves by up to 10% from run to run, the median of 4 by
# 3%). On QEMU's instruction counter, KiB/s are KiB per 10^9
# instructions. Beside each run: what the kernel did during the writes
# and during the check (/proc/vmstat deltas: pages swapped out and in,
# reclaim's scans and steals, refaults, faults) and the cgroup's own
# memory.stat at the end, to tell a per-page cost from a kernel that
# swaps more. SERIES_MARK=bench/guest/mark.sh (bench/funcs.sh series):
# every run's instructions counted by kernel function.
VMSTAT_KEYS="pswpin pswpout pgfault pgmajfault pgscan_direct pgscan_kswapd
pgsteal_direct pgsteal_kswapd workingset_refault_anon workingset_activate_anon
workingset_restore_anon pgactivate pgdeactivate allocstall_normal
allocstall_movable pgrotated swap_ra swap_ra_hit thp_swpout
thp_swpout_fallback"

# vmstat_json BEFORE [AFTER]: the VMSTAT_KEYS of AFTER (a copy of
# /proc/vmstat; default the file itself) less those of BEFORE, as a JSON
# object.
vmstat_json() {
	awk -v keys="$(echo $VMSTAT_KEYS)" -v before="$1" '
		BEGIN { n = split(keys, k); while ((getline l <before) > 0) {
			split(l, f); b[f[1]] = f[2] } }
		{ v[$1] = $2 }
		END { printf "{"; for (i = 1; i <= n; i++)
			printf "%s\"%s\": %d", (i > 1 ? ", " : ""), k[i], v[k[i]] - b[k[i]]
			printf "}" }' "${2:-/proc/vmstat}"
}

# memstat_json CGROUP: the cgroup's memory.stat, every key, as JSON.
memstat_json() {
	awk '{ printf "%s\"%s\": %s", (NR > 1 ? ", " : "{"), $1, $2 } END { print "}" }' \
		"$1/memory.stat"
}

# usemem_cg SECTION DRIVER REP CG: swap on DRIVER alone (lz4), memory
# settled, and the memory cgroup CG of USEMEM_CG_MIB (128) made.
usemem_cg() {
	swap_only $2 lz4 || {
		jl section=$1 driver=$2 rep=$3 fail="swapon failed"
		return 1
	}
	settle_mem
	mkdir -p $4
	echo $((${USEMEM_CG_MIB:-128} << 20)) >$4/memory.max
}

# usemem_runs SECTION ONE: "ONE DRIVER REP" for USEMEM_RUNS (8; 2 with
# BENCH_QUICK=1) runs of each driver, in the order zram ghostswap
# ghostswap zram ...
usemem_runs() {
	local i drv runs=${USEMEM_RUNS:-8} order=(zram ghostswap ghostswap zram)
	[ "$QUICK" = 1 ] && runs=${USEMEM_RUNS:-2}
	for ((i = 0; i < 2 * runs; i++)); do
		drv=${order[i % 4]}
		log "$1 $drv #$((i / 2 + 1))"
		$2 $drv $((i / 2 + 1)) || return 1
	done
}

series_one() {
	local drv=$1 rep=$2 cg=/sys/fs/cgroup/gsseries res rc vm vc ms
	usemem_cg usemem_series $drv $rep $cg || return 1
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK reset || return 1
	cp /proc/vmstat /tmp/vmstat.0
	# Between the writes and the check: /proc/vmstat (and with
	# SERIES_MARK, the writes' instruction counts).
	res=$(sh -c "echo \$\$ >$cg/cgroup.procs &&
		exec usemem_series 2 ${USEMEM_MIB:-216} \
		'cp /proc/vmstat /tmp/vmstat.1${SERIES_MARK:+ && $SERIES_MARK series-$drv-$rep}'")
	rc=$?
	vm=$(vmstat_json /tmp/vmstat.0 /tmp/vmstat.1)
	vc=$(vmstat_json /tmp/vmstat.1)
	[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK "check-$drv-$rep" || return 1
	ms=$(memstat_json $cg)
	rmdir $cg
	[ -n "$res" ] || res=null
	jl section=usemem_series driver=$drv rep=$rep rc=$rc \
		cg_mib=${USEMEM_CG_MIB:-128} result="$res" vmstat="$vm" \
		vmstat_check="$vc" memstat="$ms"
	swapoff -a
}

b_usemem_series() {
	usemem_runs usemem_series series_one
}

# -------------------------------------------------------------- patterns

# The fio rows of the instruction counter again, on many kinds of data,
# not one: 4 KiB random writes and reads, direct, one at a time (psync,
# and libaio at iodepth 1), fio (or pagerw) kept on vCPU 1, both drivers
# lz4, alternating, REPS runs each (at least 4). Each pattern first
# fills the region of both devices; the reads read what the fill wrote.
#   fio-512: fio's default buffers (buffer_compress_percentage=50, its
#     512-byte chunks: 256 random bytes, 256 zeroes, over and over);
#   fio-4k: the same in 4 KiB chunks (the icount section's buffers);
#   zeros: fio's zero_buffers; random: fio's refill_buffers;
#   counters: usemem's pages, each 8-byte word its index (pagerw);
#   binaries: the guest's programs and libraries (/usr/bin, /usr/sbin,
#     /usr/lib/x86_64-linux-gnu/*.so*), 32 MiB of them (pagerw);
#   text: the guest's source and script text (/usr/include,
#     /usr/share/perl*, /usr/lib/python3*), 32 MiB (pagerw).
PATTERNS=${PATTERNS:-fio-512 fio-4k zeros random counters binaries text}
PAT_DATA=/tmp/gs-patterns

# pat_fio_opts PATTERN: fio's buffer options for a fio pattern.
pat_fio_opts() {
	case $1 in
	fio-512) echo --buffer_compress_percentage=50 --refill_buffers ;;
	fio-4k) echo --buffer_compress_percentage=50 \
		--buffer_compress_chunk=4k --refill_buffers ;;
	zeros) echo --zero_buffers ;;
	random) echo --refill_buffers ;;
	*) return 1 ;;
	esac
}

# pat_corpus: the data files of pagerw's patterns, 32 MiB each, sorted
# file lists, so that every run of a boot writes the same bytes.
pat_corpus() {
	mkdir -p $PAT_DATA
	find /usr/bin /usr/sbin -type f -size +8k 2>/dev/null | sort |
		xargs cat 2>/dev/null | head -c 32M >$PAT_DATA/binaries
	find /usr/lib/x86_64-linux-gnu -maxdepth 1 -type f -name '*.so*' |
		sort | xargs cat 2>/dev/null | head -c 32M >>$PAT_DATA/binaries
	truncate -s 32M $PAT_DATA/binaries
	find /usr/include /usr/share/perl* /usr/lib/python3* -type f \
		\( -name '*.h' -o -name '*.pm' -o -name '*.pl' -o -name '*.py' \) \
		2>/dev/null | sort | xargs cat 2>/dev/null | head -c 32M \
		>$PAT_DATA/text
	[ "$(stat -c %s $PAT_DATA/text)" -ge $((8 << 20)) ] ||
		{ echo "too little text in /usr for the text pattern"; return 1; }
	echo "corpus: binaries $(stat -c %s $PAT_DATA/binaries) B, text $(stat -c %s $PAT_DATA/text) B"
}

# pat_data PATTERN: pagerw's DATA argument for a pattern of its own.
pat_data() {
	if [ "$1" = counters ]; then echo counters; else echo $PAT_DATA/$1; fi
}

# pat_io DRIVER PATTERN MODE ENGINE SECONDS SIZE_MIB FILE: one run, its
# JSON in $OUT/FILE (fio's, or pagerw's one line).
pat_io() {
	local dev=$DEV rw opts
	[ $1 = zram ] && dev=/dev/zram0
	if opts=$(pat_fio_opts $2); then
		case $3 in
		fill) rw=write ;;
		write) rw=randwrite ;;
		read) rw=randread ;;
		esac
		if [ $3 = fill ]; then
			fio --name=fill --filename=$dev --rw=write --bs=1M \
				--size=${6}M --direct=1 $opts >/dev/null 2>&1
			return
		fi
		fio --name=$rw --filename=$dev --rw=$rw --bs=4k --size=${6}M \
			--direct=1 --cpus_allowed=1 --ioengine=$4 --iodepth=1 \
			--runtime=$(awk -v s="$5" 'BEGIN { printf "%dms", s * 1000 }') \
			--time_based --randrepeat=0 $opts \
			--output-format=json >"$OUT/$7" 2>/dev/null
	else
		taskset -c 1 pagerw $dev $3 $4 $5 $6 "$(pat_data $2)" >"$OUT/$7"
	fi
}

# Neither device's page cache in a run. Debian's 60-block.rules watches
# zram* (not ghostswap): udev probes zram's device once a writer closes
# it, reading through its page cache, and each direct write of the next
# run then flushes and invalidates its range there, 4-12% of a write
# (performance.md, "zram's page cache, out of the bench"). Swap never reads a
# device through that cache. The patterns section unwatches both
# devices while it runs (pat_watch off), and before each run waits for
# udev and empties both caches (pat_quiet), after printing the guest's
# Buffers (every block device's page cache, KiB) it found: the run's
# buffers_kib_before, which is near 0 unless something probed.
pat_watch() {
	local rules=/run/udev/rules.d/99-ghostswap-bench-nowatch.rules
	if [ $1 = off ]; then
		mkdir -p ${rules%/*} &&
			echo 'SUBSYSTEM=="block", KERNEL=="zram*|ghostswap*", OPTIONS+="nowatch"' >$rules
	else
		rm -f $rules
	fi
	udevadm control --reload &&
		udevadm trigger --action=change --settle /dev/zram0 $DEV
}

pat_quiet() {
	udevadm settle || return 1
	awk '$1 == "Buffers:" { print $2 }' /proc/meminfo
	blockdev --flushbufs $DEV /dev/zram0
}

# PATTERN_REPS: runs of each driver (default 4, 1 with BENCH_QUICK=1).
# SERIES_MARK=bench/guest/mark.sh (bench/funcs.sh patterns): each run's
# instructions counted by kernel function, and after it a run of 0.2 s
# counted too (file NAME-short.json), which funcs.py takes from it.
b_patterns() {
	local rt=1 mib=256 pat eng mode rep drv f rc label reps=${PATTERN_REPS:-4}
	local cached
	[ "$QUICK" = 1 ] && mib=64 reps=${PATTERN_REPS:-1}
	command -v pagerw >/dev/null || { echo "pagerw is not built"; return 1; }
	pat_corpus || return 1
	gs_fresh && zram_fresh && pat_watch off || return 1
	for pat in $PATTERNS; do
		gs_fresh lz4 && zram_fresh lz4 && echo 1G >$Z/disksize || return 1
		for drv in ghostswap zram; do
			pat_io $drv $pat fill psync 0 $mib fill.json || return 1
		done
		jl section=patterns_fill pattern=$pat mib=$mib \
			ghostswap_mm_stat="$(cat $SYS/mm_stat)" \
			zram_mm_stat="$(cat $Z/mm_stat)"
		for eng in psync libaio; do
			for mode in write read; do
				for ((rep = 1; rep <= reps; rep++)); do
					for drv in $(drivers_order $rep ghostswap zram); do
						label=patterns-$pat-$eng-$mode-$drv-$rep
						f=fio/$label.json
						log "patterns $pat $eng $mode $drv #$rep"
						cached=$(pat_quiet) || return 1
						[ -z "${SERIES_MARK:-}" ] || $SERIES_MARK reset || return 1
						pat_io $drv $pat $mode $eng $rt $mib $f
						rc=$?
						if [ -n "${SERIES_MARK:-}" ]; then
							$SERIES_MARK $label && pat_quiet >/dev/null &&
								$SERIES_MARK reset &&
								pat_io $drv $pat $mode $eng 0.2 $mib fio/$label-short.json &&
								$SERIES_MARK $label-short || return 1
						fi
						jl section=patterns pattern=$pat engine=$eng \
							rw=$mode driver=$drv rep=$rep rc=$rc file=$f \
							buffers_kib_before=$cached
					done
				done
			done
		done
	done
	pat_watch on
	gs_fresh && zram_fresh
}

# -------------------------------------------------------- usemem_upstream

# vm-scalability's own usemem (built from its source by bench/lib.sh),
# as a user runs it against the swap-table series: "usemem --init-time
# -O -y -x -n 2 192M" in a memory cgroup of USEMEM_CG_MIB (128), lz4,
# USEMEM_RUNS (8) runs of each driver in the order zram ghostswap
# ghostswap zram ... On QEMU's instruction counter its KB/s are KiB per
# 10^9 instructions. Beside usemem_series (bench/guest/usemem_series.c),
# the same run rewritten to also check what it wrote.
upstream_one() {
	local drv=$1 rep=$2 cg=/sys/fs/cgroup/gsupstream out rc vm
	usemem_cg usemem_upstream $drv $rep $cg || return 1
	cp /proc/vmstat /tmp/vmstat.0
	out=$(sh -c "echo \$\$ >$cg/cgroup.procs && cd /tmp &&
		exec usemem-upstream --init-time -O -y -x -n 2 ${USEMEM_UPSTREAM_SIZE:-192M}" 2>&1)
	rc=$?
	vm=$(vmstat_json /tmp/vmstat.0)
	rmdir $cg
	echo "$out" >"$OUT/usemem-upstream-$drv-$rep.txt"
	# Each process: "BYTES bytes / USECS usecs = KBPS KB/s".
	jl section=usemem_upstream driver=$drv rep=$rep rc=$rc \
		cg_mib=${USEMEM_CG_MIB:-128} size=${USEMEM_UPSTREAM_SIZE:-192M} \
		kbps="[$(echo "$out" | sed -n 's/^[0-9]* bytes \/ [0-9]* usecs = \([0-9]*\) KB\/s$/\1/p' | paste -sd, -)]" \
		vmstat="$vm" file=usemem-upstream-$drv-$rep.txt
	swapoff -a
}

b_usemem_upstream() {
	command -v usemem-upstream >/dev/null ||
		{ echo "vm-scalability's usemem is not built (bench/lib.sh)"; return 1; }
	usemem_runs usemem_upstream upstream_one
}

# ------------------------------------------------------------- writeback

# wb_one DRIVER BACKING_DEV MIB REP: fill the device with compressible
# data, then time writing all of it back (zram: idle after "idle all").
# DRIVER: ghostswap (as set up by default: checksums on), ghostswap-nosum
# (writeback_checksum 0, as zram), ghostswap-encrypt (checksums and
# writeback_encrypt), zram.
wb_one() {
	local drv=$1 bk=$2 mib=$3 t0 t n sys dev
	if [ $drv != zram ]; then
		gs_fresh lz4 && echo "$bk" >$SYS/backing_dev || return 1
		case $drv in
		ghostswap-nosum) echo 0 >$SYS/writeback_checksum || return 1 ;;
		ghostswap-encrypt) echo 1 >$SYS/writeback_encrypt || return 1 ;;
		esac
		sys=$SYS dev=$DEV
	else
		zram_fresh lz4 && echo "$bk" >$Z/backing_dev &&
			echo 1G >$Z/disksize || return 1
		sys=$Z dev=/dev/zram0
	fi
	fio --name=fill --filename=$dev --rw=write --bs=1M --size=${mib}M \
		--direct=1 --buffer_compress_percentage=60 --buffer_compress_chunk=4k \
		--refill_buffers >/dev/null 2>&1 || return 1
	sync
	if [ $drv != zram ]; then
		t0=$(secs)
		echo all >$SYS/writeback || return 1
	else
		echo all >$Z/idle
		t0=$(secs)
		echo idle >$Z/writeback || return 1
	fi
	t=$(elapsed "$t0")
	n=$(awk '{ print $1 }' $sys/bd_stat)
	jl section=writeback driver=$drv rep=$4 pages=$n seconds=$t
	if [ $drv != zram ]; then gs_fresh; else zram_fresh; fi
}

b_writeback() {
	local bk mib=128 rep drv
	[ "$QUICK" = 1 ] && mib=32
	bk=$(vdisk gsback) || { echo "no backing disk"; return 1; }
	# The disk's own sequential write rate: 128 KiB writes, 4 and 1 in
	# flight (one writeback batch is 32 pages, 128 KiB).
	fio --name=seq --filename="$bk" --rw=write --bs=128k --size=256M \
		--direct=1 --ioengine=libaio --iodepth=4 --output-format=json \
		>"$OUT/fio/backing-seqwrite.json" 2>/dev/null || return 1
	jl section=writeback driver=disk file=fio/backing-seqwrite.json
	fio --name=seq1 --filename="$bk" --rw=write --bs=128k --size=256M \
		--direct=1 --ioengine=libaio --iodepth=1 --output-format=json \
		>"$OUT/fio/backing-seqwrite-qd1.json" 2>/dev/null || return 1
	jl section=writeback driver=disk_qd1 file=fio/backing-seqwrite-qd1.json
	for ((rep = 1; rep <= REPS; rep++)); do
		for drv in $(drivers_order $rep ghostswap ghostswap-nosum \
			     ghostswap-encrypt zram); do
			log "writeback $drv #$rep"
			wb_one $drv "$bk" $mib $rep || return 1
		done
	done
}

# -------------------------------------------------------------- profile

# Where the time of a 4 KiB read and write goes on each device (perf, if
# the guest root has it): fio at iodepth 1 on the prefilled raw device,
# top symbols of the whole system.
b_profile() {
	local perf drv dev rw
	perf=$(command -v perf) || { jl section=profile fail="no perf in the guest"; return 0; }
	gs_fresh lz4 && zram_fresh lz4 && echo 1G >$Z/disksize || return 1
	fill_devices 128M || return 1
	for rw in randread randwrite; do
		for drv in ghostswap zram; do
			dev=$DEV
			[ $drv = zram ] && dev=/dev/zram0
			$perf record -a -g -o /tmp/perf.data -- fio --name=p \
				--filename=$dev --rw=$rw --bs=4k --size=128M --direct=1 \
				--ioengine=libaio --iodepth=1 --runtime=5 --time_based \
				--buffer_compress_percentage=50 --buffer_compress_chunk=4k \
				--refill_buffers >/dev/null 2>"$OUT/perf-$drv-$rw.err"
			$perf report -i /tmp/perf.data --stdio --no-children --sort sym \
				--percent-limit 0.8 2>/dev/null | grep -E '^ +[0-9.]+%' |
				grep -v pv_native_safe_halt | head -n 25 >"$OUT/perf-$drv-$rw.txt"
			jl section=profile driver=$drv rw=$rw file=perf-$drv-$rw.txt
		done
	done
	gs_fresh && zram_fresh
}

# ----------------------------------------------------------------- main

guest_setup
jl section=env kernel="$(uname -r)" cpus=$(nproc) \
	cpu_model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
	cpu_flags="$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
		grep -xE 'erms|fsrm|fsrs|fzrm|fsrc|avx2|avx512f|la57' | paste -sd' ' -)" \
	mem_total=$(meminfo MemTotal) quick=$QUICK \
	zswap_zpool="$(cat $ZSW/zpool 2>/dev/null || echo zsmalloc)" \
	zswap_max_pool_percent=$(cat $ZSW/max_pool_percent) \
	zswap_shrinker_default=$(cat $ZSW/shrinker_enabled 2>/dev/null || echo null) \
	reps=$REPS
for s in ${*:-static meta ratio mthp workload zswap comp fio writeback profile}; do
	log "section $s"
	t0=$(secs)
	if ! "b_$s" >"$OUT/section-$s.log" 2>&1; then
		jl section=$s error="failed, see section-$s.log"
		log "section $s failed"
	fi
	jl section=time name=$s seconds=$(elapsed "$t0")
done
echo BENCH-DONE >"$OUT/done"
