#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a slot's cluster lookup costs against a whole read, and what a
# per-CPU last-cluster cache would save (kunit/bench/gs_bench_lookup.c);
# what the incompressible-page heuristic costs next to an lz4
# compression (kunit/bench/gs_bench_heuristic.c); what lz4 costs and
# makes with its state cleared before each page, as zram calls it, and
# kept from page to page, as ghostswap does (kunit/bench/gs_bench_lz4.c).
# It runs the store code
# under UML on the host CPU, so its figures are the hardware's, not an
# emulator's. Prints the figures; exits non-zero if the build or a
# benchmark failed.
#
# usage: bench/lookup.sh
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

"$GS_TOP/testbed/provision.sh" >/dev/null
logdir=${GS_LOGDIR:-$GS_TOP/results/logs}
rc=0
"$GS_TOP/kunit/run.sh" --bench 'ghostswap_bench_*' >/dev/null || rc=$?
grep -oE '(lookup|read|heuristic|lz4) ns, .*' "$logdir/kunit-bench.log" | sort -u
[ $rc = 0 ] || gs_die "the benchmark failed, see $logdir/kunit-bench.log"
