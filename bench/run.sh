#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: ghostswap against zram and zswap, in one guest boot of the
# stock Debian 7.x kernel. Provisions the test bed (testbed/provision.sh),
# builds the module by DKMS in the guest root, boots the guest with a
# backing disk and a swap-file disk, runs bench/guest/bench.sh there, then
# turns its measurements into a report: report.md with tables, PNG plots,
# results.json.
#
# usage: bench/run.sh [SECTION ...]   (default: every section)
# Environment: BENCH_RESULTS (default results/bench), BENCH_QUICK=1 (small
# workloads, one run each: a smoke run), BENCH_REPS (runs per comparison,
# default 3), BENCH_DRIVERS (the swap workload's, default "ghostswap zram
# zswap"), ZSWAP_SETUPS and ZSWAP_MIXES (the zswap section's, default
# all: see b_zswap in bench/guest/bench.sh), ZSWAP_GS_SETUP (sysfs writes
# for mode zswap's set-ups before swapon, e.g. "echo 0
# >\$SYS/writeback_checksum"), ZSWAP_CG_MAX (what zswap may hold of the
# zswap section's cgroup, memory.zswap.max; half of it unless set, "max":
# all of it), MTHP_ALGS, MTHP_MIXES and MTHP_SHAPES
# (the mthp section's, default "zstd lz4", "text:t zero-heavy:zzzst" and
# "16,64:2": mTHP sizes on, or "off", and the overcommit),
# USEMEM_RUNS (usemem_series' and usemem_upstream's runs of each driver,
# default 8), PATTERN_REPS (the patterns section's, default 4),
# GHOSTSWAP_KVM=0|1, GS_MEM (guest RAM, 2G), BENCH_SCALE_TCG
# (single or multi: how QEMU runs the vCPUs of the scale section's guest
# without KVM; default multi, one host thread a vCPU).
#
# The section "scale" (fio with 1, 2 and 4 jobs) runs in a guest of its
# own with 4 vCPUs, booted after the main one; "icount" (the fio rows and
# the swap workload, ghostswap and zram, counted in instructions) and
# "icount_profile" (where the workload's instructions go),
# "icount_mthp" (the mthp section counted in instructions; on demand
# only), "patterns" (the fio rows on seven kinds of data),
# "usemem_series" (the swap-table series' own workload) and
# "usemem_upstream" (vm-scalability's usemem itself) in one on QEMU's
# instruction counter, where there is no KVM; its CPU model has no fast
# short string operations (testbed/lib.sh gs_qemu_env says why).
# VM_SCALABILITY: where vm-scalability's source is (bench/lib.sh).
# BENCH_NO_BUILD=1: no DKMS build, no build of the bench's programs (for
# a second run beside one of the same tree, bench/lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bench_prepare "$GS_TOP/results/bench"

# perf, to profile the guest (optional: the bench runs without it).
kver=$(gs_kver)
if [ ! -x "$GS_ROOT/usr/bin/perf" ]; then
	gs_log "adding linux-perf to the guest root (for the profile section)"
	gs_chroot sh -c "apt-get update -qq && apt-get install -y -qq \
		--no-install-recommends -t $GS_KSUITE linux-perf && apt-get clean" \
		>"$GS_CACHE/perf-apt.log" 2>&1 ||
		gs_log "no linux-perf (see $GS_CACHE/perf-apt.log): no profile"
fi
bench_tools

# Plots: matplotlib in a venv of its own.
pyenv=$GS_CACHE/bench-venv
if [ ! -x "$pyenv/bin/python" ] || ! "$pyenv/bin/python" -c 'import matplotlib' 2>/dev/null; then
	gs_log "installing matplotlib in $pyenv"
	rm -rf "$pyenv"
	python3 -m venv "$pyenv"
	"$pyenv/bin/pip" install -q matplotlib
fi

# The sections of the main guest, and which guests run. None named:
# the main guest runs all of bench.sh's own, then the scale and icount
# guests.
main=() scale=0 icount=()
for s in ${*:-scale icount icount_profile patterns usemem_series usemem_upstream}; do
	case $s in
	scale) scale=1 ;;
	icount | icount_profile | icount_mthp | patterns | usemem_series | usemem_upstream)
		icount+=("$s") ;;
	*) main+=("$s") ;;
	esac
done
run_main=1
[ $# != 0 ] && [ ${#main[@]} = 0 ] && run_main=0

# bench_console DIR: the guest's whole console, read on the host for
# kernel reports (gs_console_tap): DIR/console.tap, which the report
# lists at its top; each report also in the log here.
bench_console() {
	gs_console_tap "bench ${1##*/}" "$1" >"$1/console.tap" ||
		gs_log "kernel reports in ${1##*/}: $(grep -c '^not ok' "$1/console.tap"), see $1/console.tap"
}

kvm=tcg
gs_use_kvm && kvm=kvm
gs_qemu_env
if [ $run_main = 1 ]; then
	t0=$(date +%s)
	GS_DISKS="gsback:1G gsswap:2G" GS_GUEST_TIMEOUT=${GS_GUEST_TIMEOUT:-10800} \
		"$GS_TOP/testbed/guest.sh" "$out/guest" \
		"BENCH_QUICK=${BENCH_QUICK:-0} BENCH_REPS=${BENCH_REPS:-}" \
		"BENCH_DRIVERS='${BENCH_DRIVERS:-ghostswap zram zswap}'" \
		"ZSWAP_SETUPS='${ZSWAP_SETUPS:-}' ZSWAP_MIXES='${ZSWAP_MIXES:-}'" \
		"ZSWAP_GS_SETUP='${ZSWAP_GS_SETUP:-}' ZSWAP_CG_MAX='${ZSWAP_CG_MAX:-}'" \
		"MTHP_ALGS='${MTHP_ALGS:-}' MTHP_MIXES='${MTHP_MIXES:-}' MTHP_SHAPES='${MTHP_SHAPES:-}'" \
		"bash /opt/gs-src/bench/guest/bench.sh ${main[*]}" || true
	rm -f "$out"/guest/disk-*.img
	gs_log "guest boot + benchmarks: $(($(date +%s) - t0)) s"
	bench_console "$out/guest"
	[ -f "$out/guest/done" ] ||
		gs_die "the benchmarks did not complete, see $out/guest/console.log"
fi

if [ $scale = 1 ]; then
	t0=$(date +%s)
	mkdir -p "$out/guest-scale"
	GS_CPUS=4 GHOSTSWAP_TCG=${BENCH_SCALE_TCG:-multi} GS_GUEST_TIMEOUT=1800 \
		"$GS_TOP/testbed/guest.sh" "$out/guest-scale" \
		"BENCH_QUICK=${BENCH_QUICK:-0} BENCH_REPS=${BENCH_REPS:-}" \
		"bash /opt/gs-src/bench/guest/bench.sh scale" || true
	gs_log "4-vCPU guest + scale: $(($(date +%s) - t0)) s"
	bench_console "$out/guest-scale"
	[ -f "$out/guest-scale/done" ] ||
		gs_die "the scale section did not complete, see $out/guest-scale/console.log"
fi

# QEMU's instruction counter runs only under single-threaded TCG: with
# KVM the section is left out (the timed fio rows are the measure there).
if [ ${#icount[@]} != 0 ] && [ $kvm = kvm ]; then
	gs_log "icount: not with KVM, left out"
elif [ ${#icount[@]} != 0 ]; then
	t0=$(date +%s)
	mkdir -p "$out/guest-icount"
	GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single GHOSTSWAP_ICOUNT=0 \
		GS_GUEST_TIMEOUT=9000 "$GS_TOP/testbed/guest.sh" "$out/guest-icount" \
		"BENCH_QUICK=${BENCH_QUICK:-0} BENCH_REPS=${BENCH_REPS:-2}" \
		"USEMEM_RUNS=${USEMEM_RUNS:-} PATTERN_REPS=${PATTERN_REPS:-}" \
		"MTHP_ALGS='${MTHP_ALGS:-}' MTHP_MIXES='${MTHP_MIXES:-}' MTHP_SHAPES='${MTHP_SHAPES:-}'" \
		"bash /opt/gs-src/bench/guest/bench.sh ${icount[*]}" || true
	gs_log "icount guest: $(($(date +%s) - t0)) s"
	bench_console "$out/guest-icount"
	[ -f "$out/guest-icount/done" ] ||
		gs_die "the icount section did not complete, see $out/guest-icount/console.log"
fi

# The static cost again on Debian's 6.12 LTS kernel, whose swap core
# allocates memory for every slot at swapon: a second, short boot.
lts=$(gs_kver_lts)
if [ -n "$lts" ] && { [ $# = 0 ] || [[ " $* " == *" static "* ]]; }; then
	mkdir -p "$out/guest-lts"
	GS_KVER=$lts GS_GUEST_TIMEOUT=1800 "$GS_TOP/testbed/guest.sh" \
		"$out/guest-lts" "bash /opt/gs-src/bench/guest/bench.sh static" || true
	bench_console "$out/guest-lts"
	[ -f "$out/guest-lts/done" ] ||
		gs_die "the static cost on $lts did not complete, see $out/guest-lts/console.log"
fi

{
	echo "{"
	echo "\"host_cpu\": \"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)\","
	echo "\"host_cpus\": $(nproc),"
	echo "\"host_kernel\": \"$(uname -r)\","
	echo "\"qemu\": \"$GS_QEMU_DESC\","
	echo "\"accel\": \"$kvm\","
	echo "\"guest_mem\": \"${GS_MEM:-2G}\","
	echo "\"guest_cpus\": ${GS_CPUS:-2},"
	echo "\"scale_qemu\": \"$(GHOSTSWAP_TCG=${BENCH_SCALE_TCG:-multi} gs_qemu_env && echo "$GS_QEMU_DESC")\","
	echo "\"icount_qemu\": \"$(GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single GHOSTSWAP_ICOUNT=0 gs_qemu_env && echo "$GS_QEMU_DESC")\","
	echo "\"module_version\": \"$(gs_version)\","
	echo "\"commit\": \"$(git -C "$GS_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)\","
	echo "\"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
	echo "}"
} >"$out/host.json"
"$pyenv/bin/python" "$GS_TOP/bench/report.py" "$out"
gs_log "report: $out/report.md"
