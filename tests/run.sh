#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ghostswap test suite: provisions the test bed, runs the static checks
# and the KUnit suites (UML), builds and installs the module by DKMS in the
# guest root, and runs the guest suite in two guests at once, its two
# halves (suite.sh @1, @2). Prints TAP, then a summary line "N passed, N
# failed, N skipped"; exits non-zero on any failure, on a skip that
# tests/skips-allowed does not list, or when nothing passed.
#
# usage: tests/run.sh [GUEST_TEST ...]   (default: every guest test, then
#        the debug-kernel lane, tests/debug-kernel.sh, the build matrix,
#        tests/compat-build.sh, the KUnit suites under KCSAN, kunit/run.sh
#        --kcsan, the package test, tests/package.sh, and the lanes on
#        the 6.12 LTS, PREEMPT_RT and arm64 kernels, tests/kernel-lane.sh;
#        GHOSTSWAP_SKIP_DEBUG=1 leaves the debug lane out,
#        GHOSTSWAP_SKIP_KUNIT=1 both KUnit stages: each a skip in the
#        summary, which fails the run. GUEST_TESTS run in one
#        guest, with the host stages but no lane.)
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
# The host's CPUs as slots, one per CPU: a guest under single-threaded
# TCG keeps one busy, as does a lane's build. Unless the host has more
# CPUs than stages, no more run at once than there are CPUs: beside the
# main guest, with both rt and the package test running too (2026-12-02),
# workload_units took 381 s instead of 134, and a debug lane beside two
# other guests ran 4 of its 17 tests in 26 minutes. The main guest holds
# slot 0 until it ends; the stages queued (stage_queued) take a slot each
# in the order they were queued, the guests whose vCPUs run at once
# (multi-threaded TCG: debug, KCSAN) every slot, once the main guest has
# ended. A slot is a lock on $res/.slotN held while the stage runs.
nslots=$(nproc)
[ "$nslots" -ge 2 ] || nslots=2
queued=0
echo 0 >"$res/.turn"
# cpu_slots one|all TICKET NAME CMD...: CMD once it is TICKET's turn and
# it holds its slots. A stage_bg command.
cpu_slots() {
	local want=$1 ticket=$2 name=$3 i first fd fds=() rc=0
	shift 3
	while [ "$(cat "$res/.turn" 2>/dev/null)" != "$ticket" ]; do
		sleep 2
	done
	if [ "$want" = all ]; then
		while [ ! -e "$res/guest/ended" ]; do
			sleep 2
		done
		for ((i = 0; i < nslots; i++)); do
			exec {fd}>"$res/.slot$i"
			flock "$fd"
			fds+=("$fd")
		done
	else
		while :; do
			first=1
			[ ! -e "$res/guest/ended" ] || first=0
			for ((i = first; i < nslots; i++)); do
				exec {fd}>"$res/.slot$i"
				flock -n "$fd" && fds+=("$fd") && break 2
				exec {fd}>&-
			done
			sleep 2
		done
	fi
	echo $((ticket + 1)) >"$res/.turn"
	gs_log "stage: $name starts (CPU slots: $want)"
	"$@" || rc=$?
	# The lock is on the open file, which a process CMD left behind
	# may share: unlocked, not only closed.
	for fd in "${fds[@]}"; do
		flock -u "$fd"
	done
	return $rc
}
# stage_queued NAME one|all CMD...: a stage beside the others that waits
# for its CPU slots.
stage_queued() {
	local name=$1 want=$2
	shift 2
	stage_bg "$name" cpu_slots "$want" $queued "$name" "$@"
	queued=$((queued + 1))
}
stage_wait() {
	local i rc
	for i in "${!bg_pids[@]}"; do
		rc=0
		wait "${bg_pids[$i]}" || rc=$?
		stage_end "${bg_names[$i]}" $rc
	done
}

# A stage left out by a GHOSTSWAP_SKIP_* setting is a skip in the summary
# (which fails the run: a skip is not a pass), never a silent absence.
skipped_stage() {
	gs_log "stage: $1 left out ($2)"
	echo "ok - $1: not run # SKIP $2" >"$res/$1.tap"
}
# The KUnit suites, with KASAN, lockdep, DEBUG_ATOMIC_SLEEP and DEBUG_VM
# on SMP UML: they must pass and the kernel log must stay free of reports.
# Alone: its two CPUs are host threads that must run at once.
if [ "${GHOSTSWAP_SKIP_KUNIT:-0}" = 1 ]; then
	skipped_stage kunit "GHOSTSWAP_SKIP_KUNIT=1"
	[ -n "${1:-}" ] || skipped_stage kcsan "GHOSTSWAP_SKIP_KUNIT=1"
else
	stage kunit "$GS_TOP/kunit/run.sh" --sanitize
fi
[ -n "${1:-}" ] || [ "${GHOSTSWAP_SKIP_DEBUG:-0}" != 1 ] ||
	skipped_stage debug "GHOSTSWAP_SKIP_DEBUG=1"
# The host's checks, one after the other, beside the build and the first
# minutes of the guests: the static checks, the bench's own tests, the
# tools' tests. Each is a single process, and none in the way of the
# run's longest path. After KUnit, which wants both CPUs. (The static
# checks and the build both chroot into the guest root: gs_chroot.)
host_checks() {
	local name rc
	for name in static bench tools; do
		rc=0
		gs_log "stage: $name (beside the next stages)"
		case $name in
		static) (timed static "$GS_TOP/tests/static-checks.sh") ;;
		bench) (timed bench "$GS_TOP/tests/bench/run.sh") ;;
		tools) (timed tools "$GS_TOP/tests/tools/run.sh") ;;
		esac >"$res/$name.tap" 2>"$res/$name.err" || rc=$?
		echo $rc >"$res/.rc-$name"
	done
}
host_checks &
host_pid=$!
stage build "$GS_TOP/testbed/build.sh"

# The guest suite in a guest of Debian's 7.x kernel: main_guest NAME
# SUITE_ARGS... boots it with results in $res/NAME and prints its TAP.
# Backing devices for the writeback tier: a large one and a small one.
# KFENCE (built into Debian's kernel, off by default) samples allocations
# for out-of-bounds and use-after-free bugs. The whole console is read on
# the host afterwards: every kernel report in it (KFENCE's, a WARNING, a
# lockdep splat, ...) fails the guest's stage (gs_console_tap).
# The verified workloads, fio jobs and stress rounds at half their size
# (GS_WORKLOAD_DIV=2: the same overcommit, half the pages), the stress
# for 30 s. The time limit, a guard against a hung guest: each part of
# the suite takes ~30 min on a CPU of its own (cpu_slots).
main_guest() {
	local name=$1 t0=$SECONDS
	shift
	mkdir -p "$res/$name"
	GS_DISKS="gsback:1G gssmall:8M" GS_APPEND="kfence.sample_interval=20" \
		GS_GUEST_TIMEOUT=${GS_GUEST_TIMEOUT:-3600} \
		"$GS_TOP/testbed/guest.sh" "$res/$name" \
		"GS_WORKLOAD_DIV=${GS_WORKLOAD_DIV:-2} GS_STRESS_SECONDS=${GS_STRESS_SECONDS:-30} bash /opt/gs-src/tests/guest/suite.sh $*" >&2 || true
	gs_log "$name: guest boot + suite: $((SECONDS - t0)) s"
	echo "# emulator: $GS_QEMU_DESC"
	cat "$res/$name/results.tap" 2>/dev/null
	[ -f "$res/$name/done" ] ||
		gs_guest_died "$res/$name" "$res/$name/plan" "$res/$name/results.tap"
	gs_console_tap "$name" "$res/$name"
	# Without LA57 on the host's CPU (under KVM) the guest has 4-level
	# paging: the table's handles were not checked on a 5-level layout.
	[ "$GS_GUEST_PAGING" = 5 ] ||
		echo "ok - $name: table handles on 5-level paging # SKIP this host's CPU has no LA57"
	rm -f "$res/$name"/disk-*.img
}

# Beside the main guest, in this order, each on a CPU slot (cpu_slots):
# the second part of the guest suite, in a guest of its own (suite.sh
# @2; the main guest runs @1); the Debian packages built, linted,
# installed, upgraded, booted with systemd as init and purged in an
# overlay of the guest root (tests/package.sh: its boot runs the checks
# of tests/boot.sh's, which make test leaves out; the longest of these
# stages, so first); the build matrix, the module against
# every Debian header set from 6.12 to 7.3 the archive serves (built,
# not booted); the guest suite's core on Debian stable's 6.12 LTS kernel
# and on the PREEMPT_RT kernel; the arm64 lane,
# Debian's arm64 kernel under qemu-system-aarch64 in a root
# testbed/arm64.sh makes; hibernation aimed at ghostswap on the 7.x and
# the 6.12 kernel, in a guest whose root is an initramfs
# (tests/hibernate.sh: the image refused, the system going on). Then,
# once the main guest has ended, alone and one at a time, the guests whose two vCPUs run at once, each on a
# host CPU of its own: a vCPU that waits for the other, descheduled
# behind another guest, burns its CPU for nothing. The debug-kernel
# lane: part of the guest suite in a kernel of our own with KASAN,
# lockdep, KFENCE and kmemleak; the KUnit suites again under KCSAN, the
# data race detector, in an x86_64 guest (kunit/README.md). Their
# kernels build early (above).
part=()
if [ -z "${1:-}" ]; then
	part=(@1)
	stage_queued guest2 one main_guest guest2 @2
	stage_queued package one "$GS_TOP/tests/package.sh" "$res/package"
	stage_queued compat one "$GS_TOP/tests/compat-build.sh"
	stage_queued lts one "$GS_TOP/tests/kernel-lane.sh" lts "$res/lts"
	stage_queued rt one "$GS_TOP/tests/kernel-lane.sh" rt "$res/rt"
	stage_queued arm64 one "$GS_TOP/tests/kernel-lane.sh" arm64 "$res/arm64"
	stage_queued hibernate one "$GS_TOP/tests/hibernate.sh" "$res/hibernate"
	stage_queued hibernate-lts one "$GS_TOP/tests/hibernate.sh" "$res/hibernate-lts" \
		"$(gs_kver_lts)"
	[ "${GHOSTSWAP_SKIP_DEBUG:-0}" = 1 ] ||
		stage_queued debug all "$GS_TOP/tests/debug-kernel.sh" "$res/debug"
	[ "${GHOSTSWAP_SKIP_KUNIT:-0}" = 1 ] ||
		stage_queued kcsan all "$GS_TOP/kunit/run.sh" --kcsan
fi

gs_log "stage: guest"
(timed guest main_guest guest ${part[@]+"${part[@]}"} "$@") >"$res/guest.tap"
touch "$res/guest/ended"
echo "# guest" && cat "$res/guest.tap"

stage_wait
wait $host_pid
for name in static bench tools; do
	stage_end $name "$(cat "$res/.rc-$name" 2>/dev/null || echo 1)"
done
[ ${#early_builds[@]} = 0 ] || wait "${early_builds[@]}" || true
# Where the time went: each stage's wall time (a stage that waits for a
# CPU or for the main guest counts its wait) and its CPU time.
[ ! -f "$res/times" ] || sort -k3,3nr "$res/times" |
	awk '{ printf "# time: %s %d s, CPU %d s\n", $1, $2, $3; cpu += $3 }
	     END { printf "# time: CPU of all stages %d s\n", cpu }'
echo "# total time $(($(date +%s) - start)) s"
tap_summary "$GS_TOP/tests/skips-allowed" "$res"/*.tap
