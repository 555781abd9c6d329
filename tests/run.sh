#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ghostswap test suite: provisions the test bed, runs the static checks
# and the KUnit suites (UML), builds and installs the module by DKMS in the
# guest root, boots the guest and runs the guest suite in one boot. Prints
# TAP, then a summary line "N passed, N failed, N skipped"; exits non-zero
# on any failure, on a skip that tests/skips-allowed does not list, or when
# nothing passed.
#
# usage: tests/run.sh [GUEST_TEST ...]   (default: every guest test, then
#        the systemd boot test, tests/boot.sh, the debug-kernel lane,
#        tests/debug-kernel.sh, the build matrix, tests/compat-build.sh,
#        the KUnit suites under KCSAN, kunit/run.sh --kcsan, and the
#        lanes on the 6.12 LTS, PREEMPT_RT and arm64 kernels,
#        tests/kernel-lane.sh; GHOSTSWAP_SKIP_DEBUG=1 leaves the debug
#        lane out, GHOSTSWAP_SKIP_KUNIT=1 both KUnit stages)
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

start=$(date +%s)
res=${GS_RESULTS:-$GS_TOP/results}
rm -rf "$res"
mkdir -p "$res"
export GS_LOGDIR=$res/logs

# timed NAME CMD...: CMD, then a line in $res/times: NAME, its wall time
# and the CPU time (user + system) of every process it waited for, in
# seconds. The run's end prints them: where a run's time went.
timed() {
	local name=$1 t0=$SECONDS rc=0 cpu
	shift
	"$@" || rc=$?
	times >"$res/.times-$name"
	cpu=$(gs_times_cpu "$res/.times-$name")
	rm -f "$res/.times-$name"
	echo "$name $((SECONDS - t0)) $cpu" >>"$res/times"
	return $rc
}
(timed provision "$GS_TOP/testbed/provision.sh") ||
	gs_die "provisioning the test bed failed"
gs_qemu_env
gs_log "emulator: $GS_QEMU_DESC"

# From an empty cache the two x86_64 kernels, the debug lane's and the
# KCSAN run's, are the run's longest path: their builds start now, niced,
# beside the host stages, each on a tree of its own. The stages that use
# them wait for them on their locks; with the cache warm they find the
# kernels built and end at once. Their own logs; the stages report.
mkdir -p "$GS_LOGDIR"
early_builds=()
if [ -z "${1:-}" ]; then
	if [ "${GHOSTSWAP_SKIP_DEBUG:-0}" != 1 ]; then
		(timed debug-kernel-build "$GS_TOP/tests/debug-kernel.sh" --build-only) \
			>"$GS_LOGDIR/debug-kernel-build-early.log" 2>&1 &
		early_builds+=($!)
	fi
	if [ "${GHOSTSWAP_SKIP_KUNIT:-0}" != 1 ]; then
		(timed kcsan-kernel-build "$GS_TOP/kunit/run.sh" --kcsan --build-only) \
			>"$GS_LOGDIR/kunit-kcsan-build-early.log" 2>&1 &
		early_builds+=($!)
	fi
fi

# Each stage writes TAP; the summary counts them all. A stage that exits
# non-zero without a failing test line (it died) fails on its own line.
stage_end() {
	local name=$1 rc=$2
	[ "$rc" = 0 ] || grep -q '^not ok ' "$res/$name.tap" ||
		echo "not ok - $name: stopped with exit status $rc (see $res/$name.err)" \
			>>"$res/$name.tap"
	echo "# $name" && cat "$res/$name.tap"
}
stage() {
	local name=$1 rc=0
	shift
	gs_log "stage: $name"
	(timed "$name" "$@") >"$res/$name.tap" 2>"$res/$name.err" || rc=$?
	stage_end "$name" $rc
}
# Stages beside the others (stage_wait collects them): each guest keeps
# one host CPU busy under single-threaded TCG (testbed/lib.sh).
bg_pids=()
bg_names=()
stage_bg() {
	local name=$1
	shift
	gs_log "stage: $name (beside the next stages)"
	(timed "$name" "$@") >"$res/$name.tap" 2>"$res/$name.err" &
	bg_pids+=($!)
	bg_names+=("$name")
}
# after_early CMD...: CMD, once the stages started beside the main guest
# ($early) have all ended, or the main guest has: when a CPU is free.
# A stage_bg command.
after_early() {
	local p busy
	while [ ! -e "$res/guest/ended" ]; do
		busy=0
		for p in "${early[@]}"; do
			! kill -0 "$p" 2>/dev/null || busy=1
		done
		[ $busy = 1 ] || break
		sleep 5
	done
	gs_log "stage: ${1##*/} starts (a CPU is free)"
	"$@"
}
# after_guest CMD...: CMD once the main guest has ended, at nice 15:
# beside the boot test, on the CPU the main guest leaves; from an empty
# cache the debug kernel's build (nice 10) keeps the most of it. A
# stage_bg command.
after_guest() {
	while [ ! -e "$res/guest/ended" ]; do
		sleep 5
	done
	gs_log "stage: ${1##*/} starts (the main guest has ended)"
	nice -n 15 "$@"
}
# after_boot CMD...: CMD once the main guest and the boot test have
# ended. A stage_bg command.
after_boot() {
	while [ ! -e "$res/boot-ended" ]; do
		sleep 5
	done
	gs_log "stage: ${1##*/} starts (the boot test has ended)"
	"$@"
}
stage_wait() {
	local i rc
	for i in "${!bg_pids[@]}"; do
		rc=0
		wait "${bg_pids[$i]}" || rc=$?
		stage_end "${bg_names[$i]}" $rc
	done
}

stage static "$GS_TOP/tests/static-checks.sh"
stage bench "$GS_TOP/tests/bench/run.sh"
stage tools "$GS_TOP/tests/tools/run.sh"
# The KUnit suites, with KASAN, lockdep, DEBUG_ATOMIC_SLEEP and DEBUG_VM
# on SMP UML: they must pass and the kernel log must stay free of reports.
# Alone: its two CPUs are host threads that must run at once.
[ "${GHOSTSWAP_SKIP_KUNIT:-0}" = 1 ] || stage kunit "$GS_TOP/kunit/run.sh" --sanitize
stage build "$GS_TOP/testbed/build.sh"

# The build matrix: the module against every Debian header set from 6.12
# to 7.3 that the archive serves (built, not booted).
[ -n "${1:-}" ] || stage_bg compat "$GS_TOP/tests/compat-build.sh"
# The guest suite's core on Debian stable's 6.12 LTS kernel.
[ -n "${1:-}" ] || stage_bg lts "$GS_TOP/tests/kernel-lane.sh" lts "$res/lts"

# The guest suite's core on the PREEMPT_RT kernel, and the Debian
# packages built, linted, installed, upgraded, booted and purged in an
# overlay of the guest root (~450 s of CPU: seven DKMS builds, a second
# kernel's install, a guest): they start when the two lanes above have ended, beside the rest of
# the main guest (in the run of 2026-11-27 the main guest ran alone for
# its last 335 s, a CPU idle). Then, after the main guest, a second boot
# with systemd as init (DKMS module, make install, the unit).
early=("${bg_pids[@]}")
# The package test after rt too, unless the main guest has ended: with
# both guests beside it (2026-12-02) the main guest's workload_units
# took 381 s instead of 134.
if [ -z "${1:-}" ]; then
	stage_bg rt after_early "$GS_TOP/tests/kernel-lane.sh" rt "$res/rt"
	early+=("${bg_pids[-1]}")
	stage_bg package after_early "$GS_TOP/tests/package.sh" "$res/package"
fi
# The arm64 lane after the main guest, beside the boot test (which
# leaves a CPU idle): Debian's arm64 kernel under qemu-system-aarch64,
# in a root testbed/arm64.sh makes, with the module the build matrix
# cross-builds. Beside rt and package it took the main guest's CPU: the
# guest suite ran 2876 s instead of ~1600 (2026-11-28).
[ -n "${1:-}" ] || stage_bg arm64 after_guest "$GS_TOP/tests/kernel-lane.sh" arm64 "$res/arm64"
# The guests whose two vCPUs run at once, each on a host CPU of its own,
# run last, when the main guest and the boot test have ended, one at a
# time (gs_qemu_multi_lock, testbed/lib.sh): a vCPU that waits for the
# other, descheduled behind another guest, burns its CPU for nothing.
# Beside the main guest and the 6.12 lane (2026-12-02) the debug lane
# ran 4 of its 17 tests in 26 minutes on 86% of a CPU, and the guest
# suite had half a CPU: workload took 500 s instead of 214. Their
# kernels build early, beside the host stages and the main guest.
# The debug-kernel lane: part of the guest suite in a kernel of our own
# with KASAN, lockdep, KFENCE and kmemleak (built once, then cached).
[ -n "${1:-}" ] || [ "${GHOSTSWAP_SKIP_DEBUG:-0}" = 1 ] ||
	stage_bg debug after_boot "$GS_TOP/tests/debug-kernel.sh" "$res/debug"
# The KUnit suites again under KCSAN, the data race detector, in an
# x86_64 guest (kunit/README.md).
[ -n "${1:-}" ] || [ "${GHOSTSWAP_SKIP_KUNIT:-0}" = 1 ] ||
	stage_bg kcsan after_boot "$GS_TOP/kunit/run.sh" --kcsan

gs_log "stage: guest"
mkdir -p "$res/guest"
t0=$(date +%s)
# Backing devices for the writeback tier: a large one and a small one.
# KFENCE (built into Debian's kernel, off by default) samples allocations
# for out-of-bounds and use-after-free bugs; its reports fail the suite.
# The time limit, a guard against a hung guest: the suite takes 27-29
# min alone, ~30 beside the lanes with the cache warm, and from an empty
# cache the kernel builds beside it take its CPU: the limit lets such a
# run end inside CI's 90 min (it starts ~12 min in).
(GS_DISKS="gsback:1G gssmall:8M" GS_APPEND="kfence.sample_interval=20" \
	GS_GUEST_TIMEOUT=${GS_GUEST_TIMEOUT:-4500} \
	timed guest "$GS_TOP/testbed/guest.sh" "$res/guest" \
	"GS_STRESS_SECONDS=${GS_STRESS_SECONDS:-60} bash /opt/gs-src/tests/guest/suite.sh $*") || true
gs_log "guest boot + suite: $(($(date +%s) - t0)) s"
{
	echo "# emulator: $GS_QEMU_DESC"
	cat "$res/guest/results.tap" 2>/dev/null
	[ -f "$res/guest/done" ] ||
		gs_guest_died "$res/guest" "$res/guest/plan" "$res/guest/results.tap"
} >"$res/guest.tap"
rm -f "$res"/guest/disk-*.img
touch "$res/guest/ended"
echo "# guest" && cat "$res/guest.tap"

[ -n "${1:-}" ] || stage boot "$GS_TOP/tests/boot.sh" "$res/boot"
touch "$res/boot-ended"

stage_wait
[ ${#early_builds[@]} = 0 ] || wait "${early_builds[@]}" || true
# Where the time went: each stage's wall time (a stage that waits for a
# CPU or for the main guest counts its wait) and its CPU time.
[ ! -f "$res/times" ] || sort -k3,3nr "$res/times" |
	awk '{ printf "# time: %s %d s, CPU %d s\n", $1, $2, $3; cpu += $3 }
	     END { printf "# time: CPU of all stages %d s\n", cpu }'
echo "# total time $(($(date +%s) - start)) s"
tap_summary "$GS_TOP/tests/skips-allowed" "$res"/*.tap
