#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ghostswap guest suite: runs as root inside the test guest, loads the real
# module and moves real data through it. Writes TAP to $GS_OUT/results.tap
# (one line per test as it finishes, so an interrupted run still reports).
# The tests are t_NAME functions in a file per tier; this is the runner and
# the default order.
#
# Usage: suite.sh [TEST ... | @1 | @2]   (default: all tests, in order;
#        @1 and @2 the two parts of that order, below)
set -u
# The guest's helpers and TAP, then the tiers: the device, the bio path
# and swap (core.sh); the store and its accounting (store.sh); the
# compression engine (comp.sh); the writeback tier (writeback.sh); faults, hostile input, leaks, stress
# (reliability.sh); ghostswapctl (tools.sh).
. /opt/gs-src/tests/guest/lib.sh
. /opt/gs-src/tests/guest/core.sh
. /opt/gs-src/tests/guest/store.sh
. /opt/gs-src/tests/guest/comp.sh
. /opt/gs-src/tests/guest/writeback.sh
. /opt/gs-src/tests/guest/reliability.sh
. /opt/gs-src/tests/guest/tools.sh
. /opt/gs-src/tests/guest/compat.sh

# The default order, in two parts of about the same length, which make
# test runs in two guests at once (tests/run.sh); the second starts with
# load and swapon_1t, as any list must.
PART1="testbed_text_patching testbed_paging load kernel_log_scan unload_reload bad_sysfs misaligned_io probe_open swapon_1t busy workload workload_mthp
swapoff_frees free_notify_off fio split_bvec table_handles cluster_race accounting reset_frees mm_stat
mem_limit compact algorithms cpu_hotplug workload_zstd comp_params workload_units
workload_dict recompress_auto heuristic wb_setup wb_bad_input
wb_on_demand wb_abi wb_idle_age wb_compact wb_direct wb_direct_all wb_full wb_checksum wb_encrypt wb_workload"
PART2="wb_units zswap_pool wb_zswap_sparse wb_file wb_file_fs wb_chunks wb_chunks_reset wb_race
fault_alloc fault_backing hostile leaks memory_cycle stress
ctl_status ctl_setup_reset ctl_zramctl ctl_node_lock ctl_compression ctl_errors ctl_writeback ctl_backing_file zram_generator android_fs_mgr android_mmd readme_tour unload_final"
ALL="$PART1 $PART2"
case "${1:-}" in
@1) set -- $PART1 ;;
@2) set -- load swapon_1t $PART2 ;;
esac
# Not in the default run (measurements, not tests of ghostswap): the same
# workload on zram for the ratio comparison, and the writeback rate
# against the backing device's own (writeback.sh; `make bench` measures
# writeback in its own section). Run them after the workloads:
#   tests/run.sh load swapon_1t workload workload_zstd zram_compare
#   tests/run.sh load wb_rate
# Nor kmemleak (reliability.sh): it needs a kernel with kmemleak, the
# debug-kernel lane's (tests/debug-kernel.sh), whose last test it is.

TAP_OUT=$GS_OUT/results.tap
TAP_PLAN_FILE=$GS_OUT/plan
TAP_TIMES=$GS_OUT/test-times
: >"$TAP_OUT"
: >"$TAP_TIMES"
: >"$GS_OUT/ratios.txt"

{
	guest_setup
	uname -r
	grep -E 'MemTotal|MemAvailable' /proc/meminfo
	echo "kfence sample interval: $(cat /sys/module/kfence/parameters/sample_interval 2>/dev/null || echo none) ms"
} 2>&1 | tap_diag
start=$(date +%s)
tests=()
for t in ${*:-$ALL}; do
	tests+=("$t" "t_$t")
done
# A test that fails half-way may leave the module unloaded, swap on or
# data stored: the next one starts from a loaded, reset device all the
# same.
TAP_RECOVER=gs_fresh
tap_tests "$GS_OUT/test.log" "${tests[@]}"
tap_plan
tap_diag "guest suite: $tap_n tests, $tap_nfail failed, $(($(date +%s) - start)) s; the longest: $(sort -rn "$TAP_TIMES" | head -n 8 | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')"
echo "GS-SUITE-DONE" >"$GS_OUT/done"
