#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the benchmark tooling (make bench): the guest script
# parses, usemem, usemem_series, sampler and pagerw build warning-free and their
# output and verification work (small runs without swap), report.py turns known measurements into
# the known tables (tests/bench/test_report.py), the instruction-count
# plugin builds and funcs.py turns known counts into the known costs per
# read (tests/bench/test_funcs.py). Prints TAP.
set -uo pipefail
. "$(dirname "$0")/../../testbed/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_LOGS=$tmp

usemem_json() {
	"$tmp/usemem" 8 2 zstrb 3 >"$tmp/u.json" && cat "$tmp/u.json" &&
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["size_mib"] == 8 and d["passes"] == 2 and d["mix"] == "zstrb", d
assert d["verified_pages"] == 2 * 8 * 256 and d["bad_pages"] == 0, d
assert d["mib_s"] > 0 and set(d["lat_us"]) == {"p50", "p90", "p99", "p999", "max"}, d
' "$tmp/u.json"
}
usemem_bad_args() {
	! "$tmp/usemem" 8 1 zq && ! "$tmp/usemem" 0 1 z && ! "$tmp/usemem"
}

# usemem_series: two processes, the command between the writes and the
# check run once, every process's figures, no bad word.
series_json() {
	"$tmp/usemem_series" 2 8 "echo between >>'$tmp/between'" >"$tmp/s.json" &&
		cat "$tmp/s.json" && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["nproc"] == 2 and d["size_mib"] == 8 and len(d["procs"]) == 2, d
assert d["bad_words"] == 0 and d["complete"] is True, d
assert all(p["kbps"] > 0 and p["secs"] > 0 for p in d["procs"]), d
assert abs(d["sum_kbps"] - sum(p["kbps"] for p in d["procs"])) <= 1, d
assert open(sys.argv[2]).read() == "between\n"
' "$tmp/s.json" "$tmp/between"
}
series_bad_args() {
	! "$tmp/usemem_series" 0 8 && ! "$tmp/usemem_series" 2 0 &&
		! "$tmp/usemem_series" 2 x && ! "$tmp/usemem_series" 2 &&
		! "$tmp/usemem_series" 2 8 false
}

# sampler: once, each kind of term; peak, each group's line from the
# sample where its first value was largest, written on SIGTERM; bad
# expressions refused before the first sample.
sampler_values() {
	local o f=$tmp/sf pid
	echo "5 6 7" >"$f"
	head -c 65536 /dev/urandom >"$tmp/sblk"
	o=$("$tmp/sampler" once "$f:2" "$f:3*2+$f:1+-1" "du:$tmp/sblk" 42 "$tmp/none:1" "$f:9") &&
		echo "$o" && [ "$o" = "6 18 64 42 0 0" ] || return 1
	[ "$("$tmp/sampler" once "df:$tmp")" -gt 0 ] || return 1
	"$tmp/sampler" peak 20 "$tmp/sout" "$f:1" "$f:2" -- "$f:3" &
	pid=$!
	sleep 0.3
	echo "9 1 1" >"$f"
	sleep 0.3
	echo "1 2 3" >"$f"
	sleep 0.3
	kill "$pid" && wait "$pid" || return 1
	cat "$tmp/sout"
	[ "$(cat "$tmp/sout")" = "$(printf '9 1\n7')" ]
}
sampler_bad_args() {
	local a
	for a in "once" "once $tmp/sf:0" "once $tmp/sf:x" "once x*" "once 3+" \
		"once :1" "once +3" "once 3++4" "peak 0 $tmp/o 1" "peak 500 $tmp/o" "peak 500 $tmp/o 1 --" \
		"peak 500 $tmp/o -- 1" "peak 500 $tmp/o $tmp/sf:0" "nope 1"; do
		# shellcheck disable=SC2086
		"$tmp/sampler" $a 2>/dev/null
		[ $? = 2 ] || { echo "not refused: sampler $a"; return 1; }
	done
}

# The icount guest's QEMU options: the instruction counter under
# single-threaded TCG, on the CPU model without fast short string
# operations where the emulator takes it (/bin/true: takes anything;
# /bin/false: nothing, "max" stays); refused with KVM, multi-threaded TCG
# or a bad shift (gs_die exits: each try runs in a subshell).
icount_opts() {
	local o
	o=$(GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single \
		GHOSTSWAP_ICOUNT=0 bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_QEMU_OPTS|\$GS_QEMU_DESC\"") &&
		echo "$o" && [ "$o" = "-accel tcg,thread=single -icount shift=0,sleep=off -cpu max,fsrs=off,fsrm=off|QEMU ?, TCG single-threaded, icount shift=0, -cpu max,fsrs=off,fsrm=off" ] || return 1
	o=$(GHOSTSWAP_QEMU=/bin/false GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single \
		GHOSTSWAP_ICOUNT=0 bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_QEMU_OPTS|\$GS_QEMU_DESC\"") &&
		echo "$o" && [ "$o" = "-accel tcg,thread=single -icount shift=0,sleep=off|QEMU ?, TCG single-threaded, icount shift=0, -cpu max" ] || return 1
	for bad in "GHOSTSWAP_KVM=1 GHOSTSWAP_ICOUNT=0" \
		"GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=multi GHOSTSWAP_ICOUNT=0" \
		"GHOSTSWAP_KVM=0 GHOSTSWAP_ICOUNT=x"; do
		! env GHOSTSWAP_QEMU=/bin/true $bad bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env" ||
			{ echo "accepted: $bad"; return 1; }
	done
}

# pagerw: a fill, then writes and reads of each kind of data by each
# engine on a file, its JSON line; the counters' words are their indices;
# bad arguments refused with 2.
pagerw_runs() {
	local img=$tmp/pr.img data=$tmp/pr.data eng mode d o
	truncate -s 8M "$img"
	head -c 100000 /dev/urandom >"$data"
	"$tmp/pagerw" "$img" fill psync 0 4 counters >"$tmp/pr.json" || return 1
	cat "$tmp/pr.json"
	python3 -c '
import json, struct, sys
d = json.load(open(sys.argv[1]))
assert d["ios"] == 1024 and d["iops"] > 0, d
b = open(sys.argv[2], "rb").read(4 << 20)
w = struct.unpack("<%dQ" % (len(b) // 8), b)
assert all(x == i for i, x in enumerate(w)), "counters"
' "$tmp/pr.json" "$img" || return 1
	for eng in psync libaio; do
		for mode in write read; do
			for d in counters "$data"; do
				o=$("$tmp/pagerw" "$img" $mode $eng 0.2 4 "$d") &&
					echo "$eng $mode: $o" &&
					python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["ios"] >= 64 and d["iops"] > 0 and d["seconds"] >= 0.2, d' "$o" ||
					return 1
			done
		done
	done
}
pagerw_bad_args() {
	local a
	for a in "" "$tmp/pr.img" "$tmp/pr.img copy psync 1 4 counters" \
		"$tmp/pr.img write sync 1 4 counters" "$tmp/pr.img write psync 1 0 counters"; do
		# shellcheck disable=SC2086
		"$tmp/pagerw" $a 2>/dev/null
		[ $? = 2 ] || { echo "not refused: pagerw $a"; return 1; }
	done
	"$tmp/pagerw" "$tmp/pr.img" write psync 1 4 "$tmp/none" 2>/dev/null
	[ $? = 1 ] || { echo "a missing DATA file not refused"; return 1; }
}

# The plugin's QEMU option: added under software emulation, refused with
# KVM.
plugin_opts() {
	local o
	o=$(GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single \
		GHOSTSWAP_QEMU_PLUGIN=/x/p.so,ctl=/x/c,out=/x \
		bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_QEMU_OPTS\"") &&
		echo "$o" && [ "$o" = "-accel tcg,thread=single -plugin file=/x/p.so,ctl=/x/c,out=/x" ] || return 1
	# With the instruction counter (bench/funcs.sh) and its CPU model.
	o=$(GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single \
		GHOSTSWAP_ICOUNT=0 GHOSTSWAP_QEMU_PLUGIN=/x/p.so \
		bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_QEMU_OPTS\"") &&
		echo "$o" && [ "$o" = "-accel tcg,thread=single -icount shift=0,sleep=off -cpu max,fsrs=off,fsrm=off -plugin file=/x/p.so" ] || return 1
	! GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=1 GHOSTSWAP_QEMU_PLUGIN=/x/p.so \
		bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env"
}

# BENCH_NO_BUILD=1 (bench/lib.sh): no DKMS build and no build of the
# bench's programs; refused when the guest root has no module. On a
# stand-in tree (its provision.sh and build.sh say they ran) with
# gs_chroot's modinfo failing, then succeeding.
no_build() {
	local h=$tmp/nobuild o
	mkdir -p "$h/testbed"
	printf '#!/bin/sh\n' >"$h/testbed/provision.sh"
	printf '#!/bin/sh\necho DKMS-BUILT\n' >"$h/testbed/build.sh"
	chmod +x "$h/testbed/provision.sh" "$h/testbed/build.sh"
	run() {
		bash -c ". '$GS_TOP/bench/lib.sh'; GS_TOP='$h' GS_ROOT='$h/root'
			gs_kver() { echo 7.3; }
			gs_chroot() { echo \"chroot \$*\" >&2; return $1; }
			BENCH_RESULTS='$h/r' bench_prepare x
			[ \"\$BENCH_NO_BUILD\" != 1 ] || bench_tools; echo PREPARED" 2>&1
	}
	o=$(BENCH_NO_BUILD=1 run 1)
	echo "$o"
	[[ $o = *"has no ghostswap module"* && $o != *PREPARED* ]] || return 1
	o=$(BENCH_NO_BUILD=1 run 0)
	echo "$o"
	[[ $o = *PREPARED* && $o != *DKMS-BUILT* && $o != *gcc* ]] || return 1
	o=$(BENCH_NO_BUILD=0 run 0 | head -n 3)
	echo "$o"
	grep -q DKMS-BUILT "$h/r/build.tap"
}

tap_step "BENCH_NO_BUILD=1: the guest root's module as it is, none refused" nobuild no_build
tap_step "bench/run.sh, bench/funcs.sh and the guest scripts parse (bash -n)" parse \
	sh -c "bash -n '$GS_TOP/bench/run.sh' && bash -n '$GS_TOP/bench/guest/bench.sh' &&
		bash -n '$GS_TOP/bench/lib.sh' && bash -n '$GS_TOP/bench/funcs.sh' &&
		bash -n '$GS_TOP/bench/guest/funcs.sh' && bash -n '$GS_TOP/bench/guest/mark.sh'"
tap_step "usemem builds with -Wall -Wextra -Werror" build \
	gcc -O2 -Wall -Wextra -Werror -I"$GS_TOP/tests/guest" -o "$tmp/usemem" \
	"$GS_TOP/bench/guest/usemem.c"
tap_step "usemem: JSON result, every page verified" json usemem_json
tap_step "usemem: bad arguments refused" args usemem_bad_args
tap_step "usemem_series builds with -Wall -Wextra -Werror" series_build \
	gcc -O2 -Wall -Wextra -Werror -o "$tmp/usemem_series" \
	"$GS_TOP/bench/guest/usemem_series.c"
tap_step "usemem_series: JSON result, the command between writes and check" \
	series_json series_json
tap_step "usemem_series: bad arguments and a failing command refused" \
	series_args series_bad_args
tap_step "sampler builds with -Wall -Wextra -Werror" sampler_build \
	gcc -O2 -Wall -Wextra -Werror -o "$tmp/sampler" "$GS_TOP/bench/guest/sampler.c"
tap_step "sampler: each kind of term, peaks kept per group" sampler sampler_values
tap_step "sampler: bad expressions and arguments refused" sampler_args sampler_bad_args
tap_step "pagerw builds with -Wall -Wextra -Werror" pagerw_build \
	gcc -O2 -Wall -Wextra -Werror -o "$tmp/pagerw" "$GS_TOP/bench/guest/pagerw.c"
tap_step "pagerw: fill, writes and reads of each data by each engine, counters' words" \
	pagerw pagerw_runs
tap_step "pagerw: bad arguments refused" pagerw_args pagerw_bad_args
tap_step "icount: QEMU's instruction counter under single-threaded TCG only" icount icount_opts
tap_step "the instruction-count plugin builds with -Wall -Wextra -Werror" plugin \
	gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/gs_pc_count.so" \
	"$GS_TOP/bench/qemu/gs_pc_count.c" -lpthread
tap_step "the plugin's QEMU option, under software emulation only" plugin_opts plugin_opts
python3 "$GS_TOP/tests/bench/test_report.py" >"$tmp/report.tap" 2>&1 || tap_rc=1
tap_append "$tmp/report.tap"
python3 "$GS_TOP/tests/bench/test_funcs.py" >"$tmp/funcs.tap" 2>&1 || tap_rc=1
tap_append "$tmp/funcs.tap"
tap_plan
exit $tap_rc
