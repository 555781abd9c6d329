# SPDX-License-Identifier: GPL-2.0
#
# What the bench's host scripts (bench/run.sh, bench/funcs.sh) share, on
# top of testbed/lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../testbed/lib.sh"

# bench_prepare DEFAULT: $out, the results directory (BENCH_RESULTS, else
# DEFAULT) emptied, with guest/ in it, and the logs there; the test bed
# provisioned and the module built by DKMS in the guest root.
# BENCH_NO_BUILD=1: the module and the bench's programs as they are in
# the guest root (a run beside another one of the same tree, whose
# guests would lose the module while it is built again: "Module
# ghostswap not found"); the module must be there.
bench_prepare() {
	out=${BENCH_RESULTS:-$1}
	rm -rf "$out"
	mkdir -p "$out/guest"
	out=$(cd "$out" && pwd)
	export GS_LOGDIR=$out/logs
	"$GS_TOP/testbed/provision.sh"
	if [ "${BENCH_NO_BUILD:-0}" = 1 ]; then
		gs_chroot modinfo -k "$(gs_kver)" ghostswap >/dev/null 2>&1 ||
			gs_die "BENCH_NO_BUILD=1, and the guest root has no ghostswap module"
		gs_log "BENCH_NO_BUILD=1: the module and the bench's programs as the guest root has them"
		return
	fi
	"$GS_TOP/testbed/build.sh" >"$out/build.tap" ||
		{ cat "$out/build.tap"; gs_die "the DKMS build failed"; }
}

# bench_tools: the guest's own benchmark programs, built in the guest
# root: usemem (bench/guest/usemem.c), usemem_series, sampler and pagerw;
# and vm-scalability's own usemem as usemem-upstream (bench_usemem_upstream).
bench_tools() {
	local t
	[ "${BENCH_NO_BUILD:-0}" != 1 ] || return 0
	cp "$GS_TOP/bench/guest/usemem.c" "$GS_TOP/bench/guest/usemem_series.c" \
		"$GS_TOP/bench/guest/sampler.c" "$GS_TOP/bench/guest/pagerw.c" \
		"$GS_TOP/tests/guest/pagegen.h" "$GS_ROOT/tmp/"
	for t in usemem usemem_series sampler pagerw; do
		gs_chroot gcc -O2 -Wall -Wextra -Werror -o /usr/local/bin/$t /tmp/$t.c ||
			gs_die "building $t failed"
	done
	bench_usemem_upstream
}

# bench_usemem_upstream: vm-scalability's usemem (GPL-2.0; the swap-table
# series measures itself with it), built as its Makefile builds it (no
# NUMA), from VM_SCALABILITY (default: ../shared/peers/vm-scalability
# beside the repository, else a clone of its git tree cached in
# ~/.cache/ghostswap). Without a source the bench's usemem_upstream
# section fails and says why; the rest runs.
bench_usemem_upstream() {
	local src=${VM_SCALABILITY:-$GS_TOP/../shared/peers/vm-scalability}
	local url=https://git.kernel.org/pub/scm/linux/kernel/git/wfg/vm-scalability.git
	local f
	if [ ! -f "$src/usemem.c" ]; then
		src=$GS_CACHE/vm-scalability
		[ -f "$src/usemem.c" ] ||
			git clone -q --depth 1 "$url" "$src" 2>/dev/null || {
			gs_log "vm-scalability: no source (VM_SCALABILITY, $url): usemem_upstream will fail"
			rm -f "$GS_ROOT/usr/local/bin/usemem-upstream"
			return 0
		}
	fi
	rm -rf "$GS_ROOT/tmp/vm-scalability"
	mkdir -p "$GS_ROOT/tmp/vm-scalability"
	for f in usemem.c usemem_mincore.c usemem_mincore.h usemem_hugepages.c \
		usemem_hugepages.h COPYING; do
		cp "$src/$f" "$GS_ROOT/tmp/vm-scalability/" ||
			gs_die "vm-scalability: $src/$f missing"
	done
	gs_chroot sh -c 'cd /tmp/vm-scalability && gcc -pthread -Wall -O -g -o /usr/local/bin/usemem-upstream usemem.c usemem_mincore.c usemem_hugepages.c' ||
		gs_die "building vm-scalability's usemem failed"
	gs_log "vm-scalability's usemem built from $src ($(git -C "$src" log -1 --format=%h 2>/dev/null || echo 'no git'))"
}
