#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every instruction of a 4 KiB random read, by function, ghostswap against
# zram: exact counts, where the icount section gives only the total and
# perf only samples. QEMU (software emulation, one thread, on its
# instruction counter as for the icount section, so that the rest of the
# guest does the same in both drivers' runs) runs the guest
# with bench/qemu/gs_pc_count.c, which counts the instructions executed
# at each kernel address; bench/guest/funcs.sh runs the reads, and
# bench/funcs.py turns the counts into instructions per read for each
# function, both drivers side by side: results/funcs/funcs.md.
#
# bench/funcs.sh series instead counts the bench's usemem_series section
# (the swap-table series' workload: bench/guest/bench.sh), each run of
# each driver whole, and reports instructions per page swapped out by
# function (USEMEM_RUNS runs of each driver, default 4).
#
# bench/funcs.sh zswap counts the bench's zswap_path section: zswap
# writing back to a swap file on ext4, and to ghostswap in mode zswap on a
# raw virtio disk and on loop devices over a sparse and a full file; each
# run's out phase (fill: zswap stores and writes back) and in phase (the
# pages read back) apart, ZPATH_REPS runs of each (default 2). It reports
# instructions per page written to the disk and per page read from it, by
# layer (ghostswap, loop, filesystem, block layer, virtio, zswap and
# compression, checksums, workqueues and scheduling, the rest of the
# kernel: bench/funcs.py LAYERS) and by function.
#
# bench/funcs.sh mthp counts the bench's mthp section (large folios:
# zram, ghostswap page by page and in units), each usemem run whole, and
# reports instructions per page swapped out and in, by layer (the driver,
# the compressor, zsmalloc, copies, the rest: bench/funcs.py MTHP_LAYERS);
# MTHP_ALGS, MTHP_MIXES as for the bench, MTHP_REPS runs (default 1).
#
# bench/funcs.sh patterns counts the bench's patterns section (PATTERNS,
# default "counters text"; PATTERN_REPS runs, default 1): each run less a
# run of 0.2 s after it, per I/O, by layer and by function
# (bench/funcs.py patterns).
#
# usage: bench/funcs.sh [read|series|zswap|mthp|patterns]   (read: ~3 min, series:
# ~20 min; BENCH_RESULTS: where, default results/funcs)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

what=${1:-read}
case $what in
read) wl=run ;;
series | zswap | mthp | patterns) wl=$what ;;
*) gs_die "usage: bench/funcs.sh [read|series|zswap|mthp|patterns]" ;;
esac
bench_prepare "$GS_TOP/results/funcs"
bench_tools
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$out/gs_pc_count.so" \
	"$GS_TOP/bench/qemu/gs_pc_count.c" -lpthread

GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single GHOSTSWAP_ICOUNT=0 \
	GHOSTSWAP_QEMU_PLUGIN="$out/gs_pc_count.so,ctl=$out/guest/ctl,out=$out/guest" \
	GS_DISKS="gsback:1G gsswap:2G" GS_GUEST_TIMEOUT=3600 \
	"$GS_TOP/testbed/guest.sh" "$out/guest" \
	"FUNCS_WORKLOAD=$wl USEMEM_RUNS=${USEMEM_RUNS:-4} ZPATH_REPS=${ZPATH_REPS:-2}" \
	"ZPATH_MIB=${ZPATH_MIB:-128} MTHP_REPS=${MTHP_REPS:-1}" \
	"MTHP_ALGS='${MTHP_ALGS:-}' MTHP_MIXES='${MTHP_MIXES:-}'" \
	"PATTERNS='${PATTERNS:-}' PATTERN_REPS=${PATTERN_REPS:-1}" \
	"bash /opt/gs-src/bench/guest/funcs.sh" || true
[ -f "$out/guest/done" ] ||
	gs_die "the guest did not complete, see $out/guest/funcs.log and console.log"

# The module as built, for the per-instruction listing.
xz -dc "$GS_ROOT/lib/modules/$(gs_kver)/updates/dkms/ghostswap.ko.xz" \
	>"$out/ghostswap.ko" 2>/dev/null || rm -f "$out/ghostswap.ko"
if [ "$what" != read ]; then
	python3 "$GS_TOP/bench/funcs.py" "$what" "$out/guest" >"$out/funcs.md"
else
	python3 "$GS_TOP/bench/funcs.py" "$out/guest" >"$out/funcs.md"
fi
cat "$out/funcs.md"
gs_log "funcs: $out/funcs.md"
