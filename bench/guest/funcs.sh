#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest's half of bench/funcs.sh, run as root in a guest whose QEMU
# counts instructions by address (bench/qemu/gs_pc_count.c): both raw
# devices, lz4, filled with the same 64 MiB of 50%-compressible data
# (checked), then fio's 4 KiB random reads at iodepth 1 and 32 on each,
# the same offsets for both (a fixed seed), once with FUNCS_SHORT I/Os
# and once with FUNCS_LONG. The plugin dumps its counts after each run
# and starts again from zero before the next; bench/funcs.py subtracts
# the short run from the long one, which leaves what the I/Os added cost
# (fio's start and end cancel out).
#
# FUNCS_WORKLOAD=series instead: the bench's usemem_series section (the
# swap-table series' workload), each run of each driver counted whole;
# FUNCS_WORKLOAD=zswap, mthp and patterns, below.
set -u
. /opt/gs-src/tests/guest/lib.sh
OUT=$GS_OUT
SHORT=${FUNCS_SHORT:-2000}
LONG=${FUNCS_LONG:-12000}

# mark LABEL: have the plugin dump (or with "reset", clear) its counts,
# and wait until it has.
mark() { /opt/gs-src/bench/guest/mark.sh "$1"; }

# zram's device as ours: lz4, 1 GiB (tests/guest/lib.sh zram_fresh).
zram_lz4() { zram_fresh lz4 && echo 1G >$Z/disksize; }

run() {
	local dev qd drv n
	guest_setup
	gs_fresh lz4 && zram_lz4 || return 1
	for dev in $DEV /dev/zram0; do
		fio --name=fill --filename=$dev --rw=write --bs=1M --size=64M \
			--direct=1 --buffer_compress_percentage=50 \
			--buffer_compress_chunk=4k --refill_buffers >/dev/null 2>&1 ||
			return 1
	done
	cmp <(dd if=$DEV bs=1M count=64 iflag=direct status=none) \
		<(dd if=/dev/zram0 bs=1M count=64 iflag=direct status=none) ||
		{ echo "the devices hold different data"; return 1; }
	cat /proc/kallsyms >"$OUT/kallsyms"
	for qd in 1 32; do
		for drv in ghostswap zram; do
			dev=$DEV
			[ $drv = zram ] && dev=/dev/zram0
			for n in $SHORT $LONG; do
				mark reset || return 1
				fio --name=r --filename=$dev --rw=randread --bs=4k \
					--size=64M --direct=1 --cpus_allowed=1 \
					--ioengine=libaio --iodepth=$qd --numjobs=1 \
					--number_ios=$n --randrepeat=1 \
					--output-format=json >"$OUT/fio-$drv-qd$qd-$n.json" ||
					return 1
				mark "$drv-qd$qd-$n" || return 1
			done
		done
	done
}

# counted DIR SECTION [REPS]: the symbols read, then the bench's SECTION
# run with the plugin's counts dumped at each of its marks (SERIES_MARK),
# its rows in $OUT/DIR; fails if any of them failed.
counted() {
	cat /proc/kallsyms >"$OUT/kallsyms"
	mkdir -p "$OUT/$1"
	SERIES_MARK=/opt/gs-src/bench/guest/mark.sh BENCH_OUT=$OUT/$1 \
		BENCH_REPS=${3:-} bash /opt/gs-src/bench/guest/bench.sh "$2" &&
		! grep -q '"error"\|"fail"' "$OUT/$1/bench.jsonl"
}

series() {
	guest_setup
	# Both modules loaded before their symbols are read; they stay.
	gs_fresh lz4 && zram_lz4 || return 1
	counted series usemem_series
}

# FUNCS_WORKLOAD=zswap: the bench's zswap_path section (zswap writing
# back to a swap file, and to ghostswap in mode zswap on a raw disk and on
# loop devices), ZPATH_REPS runs of each, each phase counted.
zswap() {
	guest_setup
	# Every module the paths run in, loaded before the symbols are read.
	gs_fresh lz4 && modprobe loop && modprobe ext4 && vdisk gsback >/dev/null ||
		return 1
	counted zswap zswap_path "${ZPATH_REPS:-2}"
}

# FUNCS_WORKLOAD=mthp: the bench's mthp section (large folios; zram,
# ghostswap page by page and in units), each usemem run counted whole.
mthp() {
	guest_setup
	# Both modules (and so the compressors they use) loaded before their
	# symbols are read.
	gs_fresh lz4 && zram_lz4 || return 1
	counted mthp mthp "${MTHP_REPS:-1}"
}

# FUNCS_WORKLOAD=patterns: the bench's patterns section (PATTERNS, by
# default counters and text; PATTERN_REPS runs of each driver), each run
# counted, and a run of 0.2 s after it.
patterns() {
	guest_setup
	gs_fresh lz4 && zram_lz4 || return 1
	PATTERNS=${PATTERNS:-counters text} counted patterns patterns
}

case ${FUNCS_WORKLOAD:=run} in
run | series | zswap | mthp | patterns) ;;
*) echo "FUNCS_WORKLOAD=$FUNCS_WORKLOAD: run, series, zswap, mthp or patterns" >"$OUT/funcs.log"; exit 1 ;;
esac
if $FUNCS_WORKLOAD >"$OUT/funcs.log" 2>&1; then
	echo FUNCS-DONE >"$OUT/done"
fi
