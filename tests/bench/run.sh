#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the benchmark tooling (make bench): the guest script
# parses, usemem builds warning-free and its JSON and verification work
# (a small run without swap), report.py turns known measurements into
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

# The icount guest's QEMU options: the instruction counter under
# single-threaded TCG; refused with KVM, multi-threaded TCG or a bad shift
# (gs_die exits: each try runs in a subshell).
icount_opts() {
	local o
	o=$(GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single \
		GHOSTSWAP_ICOUNT=0 bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_QEMU_OPTS|\$GS_QEMU_DESC\"") &&
		echo "$o" && [ "$o" = "-accel tcg,thread=single -icount shift=0,sleep=off|QEMU ?, TCG single-threaded, icount shift=0" ] || return 1
	for bad in "GHOSTSWAP_KVM=1 GHOSTSWAP_ICOUNT=0" \
		"GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=multi GHOSTSWAP_ICOUNT=0" \
		"GHOSTSWAP_KVM=0 GHOSTSWAP_ICOUNT=x"; do
		! env GHOSTSWAP_QEMU=/bin/true $bad bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env" ||
			{ echo "accepted: $bad"; return 1; }
	done
}

# The plugin's QEMU option: added under software emulation, refused with
# KVM.
plugin_opts() {
	local o
	o=$(GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=0 GHOSTSWAP_TCG=single \
		GHOSTSWAP_QEMU_PLUGIN=/x/p.so,ctl=/x/c,out=/x \
		bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_QEMU_OPTS\"") &&
		echo "$o" && [ "$o" = "-accel tcg,thread=single -plugin file=/x/p.so,ctl=/x/c,out=/x" ] || return 1
	! GHOSTSWAP_QEMU=/bin/true GHOSTSWAP_KVM=1 GHOSTSWAP_QEMU_PLUGIN=/x/p.so \
		bash -c ". '$GS_TOP/testbed/lib.sh' && gs_qemu_env"
}

tap_step "bench/run.sh, bench/funcs.sh and the guest scripts parse (bash -n)" parse \
	sh -c "bash -n '$GS_TOP/bench/run.sh' && bash -n '$GS_TOP/bench/guest/bench.sh' &&
		bash -n '$GS_TOP/bench/lib.sh' && bash -n '$GS_TOP/bench/funcs.sh' &&
		bash -n '$GS_TOP/bench/guest/funcs.sh'"
tap_step "usemem builds with -Wall -Wextra -Werror" build \
	gcc -O2 -Wall -Wextra -Werror -I"$GS_TOP/tests/guest" -o "$tmp/usemem" \
	"$GS_TOP/bench/guest/usemem.c"
tap_step "usemem: JSON result, every page verified" json usemem_json
tap_step "usemem: bad arguments refused" args usemem_bad_args
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
