#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest lane on another kernel of the guest root (testbed/provision.sh
# installs them, testbed/build.sh builds ghostswap for them by DKMS):
#   lts  Debian stable's 6.12 LTS, whose swap core still allocates memory
#        for every slot at swapon (the module's default size follows it)
#   rt   the PREEMPT_RT flavour of the 7.x kernel (spinlock_t sleeps)
#   arm64  Debian's arm64 7.x kernel (52-bit VA, 5-level page tables)
#        under qemu-system-aarch64, in an arm64 root with the module
#        cross-built for it (testbed/arm64.sh, whose steps it reports
#        first): a shorter list, below
# It runs the guest suite's core, store, compression, writeback and
# reliability tests there, the verified workloads and fio jobs a quarter
# of their size (GS_WORKLOAD_DIV=4, as the debug lane: the same
# overcommit; the main guest runs them at half size). The module's own
# parsing and direct writes (comp_params, wb_direct_all) are the main
# guest's: they do not depend on the kernel. Each test line names the
# lane. A kernel the archive did not serve is a skip with the reason; a
# guest that dies fails the test it ran and every one it did not.
#
# Prints TAP on stdout; exits non-zero on any failure.
#
# usage: tests/kernel-lane.sh lts|rt|arm64 OUTDIR [GUEST_TEST ...]
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

lane=${1:-}
out=${2:-}
[ -n "$out" ] || gs_die "usage: $0 lts|rt|arm64 OUTDIR [GUEST_TEST ...]"
shift 2
case $lane in
lts) tests=${*:-load swapon_1t workload swapoff_frees fio cluster_race accounting
reset_frees wb_setup wb_on_demand wb_workload wb_race fault_alloc fault_backing hostile
unload_final} ;;
# The PREEMPT_RT lane: the same but accounting, reset_frees (which gives
# back what accounting stored) and fault_backing, which its 7.x swap
# core and slab share with the main guest's kernel.
rt) tests=${*:-load swapon_1t workload swapoff_frees fio cluster_race wb_setup
wb_on_demand wb_workload wb_race fault_alloc hostile unload_final} ;;
# The arm64 lane: load, a 1 TiB swapon, verified workloads, the table's
# handles on that layout (52-bit VA), writeback, faults, hostile input,
# unload. (fio's verified raw I/O, writeback on demand and the test bed's
# own paging check run in the x86_64 lanes.)
arm64) tests=${*:-load swapon_1t workload swapoff_frees table_handles
wb_setup wb_workload fault_alloc hostile unload_final} ;;
*) gs_die "usage: $0 lts|rt|arm64 OUTDIR [GUEST_TEST ...]" ;;
esac
tests=$(echo $tests)
mkdir -p "$out/guest"
out=$(cd "$out" && pwd)
guest_env=()
case $lane in
lts) kver=$(gs_kver_lts) ;;
rt) kver=$(gs_kver_rt) ;;
arm64)
	# One arm64 lane at a time: its root is made and changed here.
	exec 7>"$GS_CACHE/.arm64.lock"
	flock 7
	t0=$SECONDS
	GS_LOGDIR=$out "$GS_TOP/testbed/arm64.sh" >"$out/setup.tap" 2>"$out/setup.err"
	tap_append "$out/setup.tap"
	tap_diag "arm64: the guest root, kernel, module and helpers: $((SECONDS - t0)) s"
	grep -q '^not ok' "$out/setup.tap" && { tap_plan; exit 1; }
	kver=$(gs_kver_arm64)
	guest_env=(GS_ARCH=arm64 "GS_BOOT_ROOT=$GS_ARM64_ROOT"
		"GS_KERNEL=$GS_ARM64_ROOT/boot/vmlinuz-$kver")
	;;
esac

if [ -z "$kver" ]; then
	tap_skip "$lane: the guest tests" "no $lane kernel in the guest root (not served by the archive?)"
	tap_plan
	exit 0
fi
if [ "$lane" != arm64 ] &&
	! gs_chroot modinfo -k "$kver" ghostswap >"$out/modinfo.log" 2>&1; then
	tap_not_ok "$lane: ghostswap installed by DKMS for $kver" \
		"$(cat "$out/modinfo.log")"
	tap_plan
	exit 1
fi

rm -f "$out/guest/results.tap" "$out/guest/done"
t0=$SECONDS
env ${guest_env[@]+"${guest_env[@]}"} \
	GS_KVER=$kver GS_DISKS="gsback:1G gssmall:8M" \
	GS_APPEND="kfence.sample_interval=20" \
	GS_GUEST_TIMEOUT=${GS_LANE_TIMEOUT:-2400} \
	"$GS_TOP/testbed/guest.sh" "$out/guest" \
	"GS_WORKLOAD_DIV=4 bash /opt/gs-src/tests/guest/suite.sh $tests" \
	>"$out/guest.log" 2>&1
rm -f "$out"/guest/disk-*.img
tap_diag "$lane: kernel $kver, guest boot and $(echo $tests | wc -w) tests: $((SECONDS - t0)) s"
# The lane's name in front of every test's.
lanetap() { sed -E "s/^(ok|not ok)( [0-9]+)? - /\\1\\2 - $lane: /" "$1" >"$1.lane"; }
if [ -f "$out/guest/results.tap" ]; then
	lanetap "$out/guest/results.tap"
	tap_append "$out/guest/results.tap.lane"
fi
if [ ! -f "$out/guest/done" ]; then
	gs_guest_died "$out/guest" "$out/guest/plan" "$out/guest/results.tap" \
		>"$out/died.tap"
	lanetap "$out/died.tap"
	tap_append "$out/died.tap.lane"
fi
# A stock kernel still warns (WARN_ON, lockups, bad page state): the
# whole console, read on the host.
gs_console_tap "$lane" "$out/guest" >"$out/console.tap"
tap_append "$out/console.tap"
tap_plan
exit $tap_rc
