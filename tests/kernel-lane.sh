#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest lane on another kernel of the guest root (testbed/provision.sh
# installs them, testbed/build.sh builds ghostswap for them by DKMS):
#   lts  Debian stable's 6.12 LTS, whose swap core still allocates memory
#        for every slot at swapon (the module's default size follows it)
#   rt   the PREEMPT_RT flavour of the 7.x kernel (spinlock_t sleeps)
# It runs the guest suite's core, store, compression, writeback and
# reliability tests there, the verified workloads and fio jobs at half
# their size (GS_WORKLOAD_DIV=2). Each test line names the lane. A kernel
# the archive did not serve is a skip with the reason; a guest that dies
# fails the test it ran and every one it did not.
#
# Prints TAP on stdout; exits non-zero on any failure.
#
# usage: tests/kernel-lane.sh lts|rt OUTDIR [GUEST_TEST ...]
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

lane=${1:-}
out=${2:-}
[ -n "$out" ] || gs_die "usage: $0 lts|rt OUTDIR [GUEST_TEST ...]"
shift 2
case $lane in
lts) kver=$(gs_kver_lts) ;;
rt) kver=$(gs_kver_rt) ;;
*) gs_die "usage: $0 lts|rt OUTDIR [GUEST_TEST ...]" ;;
esac
tests=${*:-load swapon_1t workload swapoff_frees fio cluster_race accounting
reset_frees comp_params wb_setup wb_on_demand wb_direct_all wb_workload wb_race fault_alloc
fault_backing hostile unload_final}
tests=$(echo $tests)
mkdir -p "$out/guest"
out=$(cd "$out" && pwd)

if [ -z "$kver" ]; then
	tap_skip "$lane: the guest tests" "no $lane kernel in the guest root (not served by the archive?)"
	tap_plan
	exit 0
fi
if ! gs_chroot modinfo -k "$kver" ghostswap >"$out/modinfo.log" 2>&1; then
	tap_not_ok "$lane: ghostswap installed by DKMS for $kver" \
		"$(cat "$out/modinfo.log")"
	tap_plan
	exit 1
fi

rm -f "$out/guest/results.tap" "$out/guest/done"
t0=$SECONDS
GS_KVER=$kver GS_DISKS="gsback:1G gssmall:8M" \
	GS_APPEND="kfence.sample_interval=20" \
	GS_GUEST_TIMEOUT=${GS_LANE_TIMEOUT:-2400} \
	"$GS_TOP/testbed/guest.sh" "$out/guest" \
	"GS_WORKLOAD_DIV=2 bash /opt/gs-src/tests/guest/suite.sh $tests" \
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
elif grep -qE "$GS_REPORT_RE" "$out/guest/console.log"; then
	# A stock kernel still warns (WARN_ON, lockups, bad page state).
	tap_not_ok "$lane: no BUG, WARNING or Oops in the kernel log" \
		"$(gs_console_report "$out/guest/console.log" | sed 's/^# //')"
else
	tap_ok "$lane: no BUG, WARNING or Oops in the kernel log"
fi
tap_plan
exit $tap_rc
