# SPDX-License-Identifier: GPL-2.0
#
# What the bench's host scripts (bench/run.sh, bench/funcs.sh) share, on
# top of testbed/lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../testbed/lib.sh"

# bench_prepare DEFAULT: $out, the results directory (BENCH_RESULTS, else
# DEFAULT) emptied, with guest/ in it, and the logs there; the test bed
# provisioned and the module built by DKMS in the guest root.
bench_prepare() {
	out=${BENCH_RESULTS:-$1}
	rm -rf "$out"
	mkdir -p "$out/guest"
	out=$(cd "$out" && pwd)
	export GS_LOGDIR=$out/logs
	"$GS_TOP/testbed/provision.sh"
	"$GS_TOP/testbed/build.sh" >"$out/build.tap" ||
		{ cat "$out/build.tap"; gs_die "the DKMS build failed"; }
}

# bench_tools: the guest's own benchmark programs, built in the guest
# root: usemem (bench/guest/usemem.c), usemem_series and sampler.
bench_tools() {
	local t
	cp "$GS_TOP/bench/guest/usemem.c" "$GS_TOP/bench/guest/usemem_series.c" \
		"$GS_TOP/bench/guest/sampler.c" "$GS_TOP/tests/guest/pagegen.h" \
		"$GS_ROOT/tmp/"
	for t in usemem usemem_series sampler; do
		gs_chroot gcc -O2 -Wall -Wextra -Werror -o /usr/local/bin/$t /tmp/$t.c ||
			gs_die "building $t failed"
	done
}
