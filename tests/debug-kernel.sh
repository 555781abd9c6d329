#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug-kernel lane: the module in the real swap path of a kernel with
# KASAN, lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP, DEBUG_VM, KFENCE and
# kmemleak. Builds that kernel from a hard-linked copy of the cached
# linux-source tree ($GS_CACHE/debug-linux-source-*) with the
# small configuration tests/debug-kernel.config (allnoconfig plus that
# fragment), cached by the configuration's hash in
# $GS_CACHE/kernel-debug-HASH; installs it in the guest root as release
# VERSION-gsdebug with ghostswap built against it in
# /lib/modules/VERSION-gsdebug/extra; boots it and runs a subset of the
# guest suite, ending with a kmemleak scan after reset and rmmod. Every
# report in the guest's kernel log (KASAN, KFENCE, lockdep, BUG, WARNING,
# sleeping in atomic context, Oops) is a failing test of its own.
#
# Prints TAP on stdout; exits non-zero on any failure.
#
# usage: tests/debug-kernel.sh OUTDIR [GUEST_TEST ...]
#        tests/debug-kernel.sh --build-only
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

# The guest tests of the lane, what KASAN, lockdep and kmemleak watch
# on two CPUs at once: verified swap, the cluster race, raw I/O racing
# writeback (wb_race, verified by fio), injected allocation faults,
# leaks (suite.sh). The store's own paths (accounting, limits,
# recompression, direct writes) are KUnit's, under KASAN and lockdep on
# two CPUs; the rest of the guest suite is the main guest's, where it
# takes a CPU instead of two (this guest took 1288-1618 s with fio,
# wb_on_demand, fault_backing, hostile and 60 s of stress). A reset is
# kmemleak's first step. The test bed's paging check runs in the main
# guest (its Python took 160-250 s here).
GS_DEBUG_TESTS=${GS_DEBUG_TESTS:-"testbed_parallel load swapon_1t workload
swapoff_frees cluster_race wb_setup wb_race fault_alloc bio_watch unload_final
kmemleak"}

build_only=0
if [ "${1:-}" = --build-only ]; then
	build_only=1
	out=$GS_CACHE/logs
else
	[ -n "${1:-}" ] || gs_die "usage: $0 OUTDIR [GUEST_TEST ...] | --build-only"
	out=$1
	shift
fi
[ $# = 0 ] || GS_DEBUG_TESTS="$*"
mkdir -p "$out"
out=$(cd "$out" && pwd)
TAP_LOGS=$out

frag=$GS_TOP/tests/debug-kernel.config
ksrc=$(gs_ksrc)
[ -n "$ksrc" ] && [ -f "$ksrc/Makefile" ] ||
	gs_die "no kernel source tree in $GS_CACHE (run testbed/provision.sh)"

# The cache key: the fragment, the tree, the compiler, and this recipe's
# revision (bump it when the steps below change what gets built).
recipe=2
hash=$( { cat "$frag"; echo "${ksrc##*/} recipe $recipe"; gcc --version | head -n 1; } |
	sha256sum | cut -c1-16)
kb=$GS_CACHE/kernel-debug-$hash

# One build at a time per cache.
exec 7>"$GS_CACHE/.debug-kernel.lock"
flock 7

# The build's own tree: hard links to the unpacked tree's files, made once
# under kunit/run.sh's lock, without the ghostswap KUnit hooks kunit/run.sh
# adds to drivers/block (files there are replaced, never written in
# place). So the build never waits for KUnit's, nor KUnit's for it: from
# an empty cache it starts right after provisioning (tests/run.sh).
tree=$GS_CACHE/debug-${ksrc##*/}
if [ ! -f "$tree/.gs-copy" ]; then
	rm -rf "$tree" "$tree.tmp"
	(
		exec 6>"$GS_CACHE/kunit.lock"
		flock 6
		cp -al "$ksrc" "$tree.tmp"
	)
	rm -f "$tree.tmp/.gs-unpacked" "$tree.tmp/drivers/block/ghostswap"
	for f in Kconfig Makefile; do
		grep -v 'ghostswap' "$tree.tmp/drivers/block/$f" >"$tree.tmp/drivers/block/$f.new"
		mv "$tree.tmp/drivers/block/$f.new" "$tree.tmp/drivers/block/$f"
	done
	mv "$tree.tmp" "$tree"
	: >"$tree/.gs-copy"
fi
ksrc=$tree
mk() { make -C "$ksrc" O="$kb" "$@"; }

# allnoconfig, the fragment merged on top, olddefconfig; then every line
# of the fragment must be in the result as written (an option whose
# dependencies are not met silently drops out).
configure() {
	if [ ! -f "$kb/.gs-configured" ]; then
		rm -rf "$kb"
		mkdir -p "$kb"
		mk allnoconfig &&
			"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$kb" \
				"$kb/.config" "$frag" &&
			mk olddefconfig || return 1
	fi
	verify_config && touch "$kb/.gs-configured"
}

verify_config() {
	local line sym n=0 bad=0
	while read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*} ;;
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *} ;;
		*) continue ;;
		esac
		n=$((n + 1))
		if ! grep -qxF -- "$line" "$kb/.config"; then
			echo "wanted: $line; got: $(grep -E "^$sym=|^# $sym is not set" "$kb/.config" || echo "(absent)")"
			bad=1
		fi
	done <"$frag"
	echo "$n options of ${frag##*/} verified in $kb/.config"
	return $bad
}

build() {
	local t0=$SECONDS
	if [ ! -f "$kb/.gs-built" ]; then
		# Niced: the guests beside it (the main guest's time limit) come
		# first; the build takes what they leave (a run from an empty
		# cache).
		nice -n 10 make -C "$ksrc" O="$kb" -j"$(nproc)" all || return 1
		[ -f "$kb/Module.symvers" ] || { echo "no Module.symvers"; return 1; }
		echo "$((SECONDS - t0))" >"$kb/.gs-built"
		# Only the current configuration's build is kept.
		for d in "$GS_CACHE"/kernel-debug-*; do
			[ "$d" = "$kb" ] || rm -rf "$d"
		done
	fi
	echo "kernel $(cat "$kb/include/config/kernel.release"), built in $(cat "$kb/.gs-built") s"
}

step() {
	tap_step "$@" || {
		[ $build_only = 1 ] || tap_plan
		exit 1
	}
}

step "debug kernel: configuration has every option of tests/debug-kernel.config" \
	debug-config configure
step "debug kernel: build ($(basename "$kb"))" debug-kernel-build build
echo "# $(tail -n 1 "$out/debug-kernel-build.log")"
[ $build_only = 0 ] || exit 0
rel=$(cat "$kb/include/config/kernel.release")
gs_log "debug kernel $rel in $kb"

# The module, built against that tree, in a scratch copy of the sources.
module() {
	local src=$out/module rc=0
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$GS_TOP" && cp -r Kbuild Makefile dkms.conf module "$src/") || return 1
	# The kernel has no BTF; if it was built without pahole, so is the
	# module, else kbuild warns that the pahole versions differ.
	local pahole=()
	grep -q '^CONFIG_PAHOLE_VERSION=0$' "$kb/.config" &&
		pahole=(PAHOLE=/nonexistent/pahole)
	make -C "$src" KDIR="$kb" "${pahole[@]}" modules >"$src/make.log" 2>&1 || rc=$?
	cat "$src/make.log"
	# The build must be warning free.
	[ $rc = 0 ] && ! grep -E 'warning:|error:' "$src/make.log"
}

# Kernel image in the root's /boot, modules.builtin and friends plus
# ghostswap in /lib/modules/REL (virtme-ng takes the modules from there),
# depmod in the root.
install_root() {
	local mods=$GS_ROOT/lib/modules/$rel
	exec 8>"$GS_CACHE/.build.lock"
	flock 8
	rm -rf "$mods"
	install -D -m 644 "$kb/arch/x86/boot/bzImage" "$GS_ROOT/boot/vmlinuz-$rel" &&
		mk INSTALL_MOD_PATH="$GS_ROOT" DEPMOD=/bin/true modules_install &&
		install -D -m 644 "$out/module/ghostswap.ko" "$mods/extra/ghostswap.ko" &&
		gs_chroot depmod -a "$rel" &&
		gs_chroot modinfo -k "$rel" ghostswap | grep -E '^(filename|vermagic)'
	local rc=$?
	flock -u 8
	return $rc
}

helpers() {
	[ -x "$GS_ROOT/usr/local/bin/gsverify" ] ||
		{ echo "no gsverify in the guest root: run testbed/build.sh first"; return 1; }
}

step "debug kernel: ghostswap builds against $rel, no warnings" debug-module module
step "debug kernel: installed in the guest root with the module" debug-install install_root
step "debug kernel: guest helpers present (testbed/build.sh)" debug-helpers helpers

# The guest's two vCPUs run at the same instant (multi-threaded TCG), so
# that the race tests race for real (t_testbed_parallel shows it). That is
# safe only while the kernel patches none of its text: the emulator may
# then run stale code ("Oops: int3" at a static key, testbed/lib.sh). This
# kernel has none of the run-time patchers (jump labels, dynamic ftrace,
# kprobes, dynamic preemption); static calls are patched at boot, before
# the second CPU starts, and when a tracer attaches the first probe to a
# tracepoint, which nothing in the lane does.
text_still() {
	local bad
	bad=$(grep -E '^CONFIG_(JUMP_LABEL|DYNAMIC_FTRACE|KPROBES|PREEMPT_DYNAMIC)=y' \
		"$kb/.config")
	[ -z "$bad" ] || { echo "the kernel patches its text: $bad"; return 1; }
	echo "none of JUMP_LABEL, DYNAMIC_FTRACE, KPROBES, PREEMPT_DYNAMIC in $kb/.config"
}
step "debug kernel: patches no text at run time (both vCPUs run at once)" \
	debug-text-still text_still

# The guest run. kasan_multi_shot: every KASAN report, not just the first.
mkdir -p "$out/guest"
rm -f "$out/guest/results.tap" "$out/guest/done"
t0=$SECONDS
# shellcheck disable=SC2086
# GS_GUEST_LA57=0: 4-level paging (testbed/lib.sh, gs_qemu_env); the
# guest gets GS_GUEST_PAGING=4 from testbed/guest.sh, and
# tests/guest/core.sh t_testbed_paging checks the depth against it
# (when named: it is not in the lane's list).
# The time limit: the guest took 1288-1618 s in make test (1421 s on a
# CI machine), and up to 300 s more when
# udev's coldplug, beside the other lanes on 2 CPUs, runs into
# virtme-ng's settle timeout (--timeout=300) before the first test.
GHOSTSWAP_TCG=${GHOSTSWAP_DEBUG_TCG:-multi} \
	GS_KVER=$rel GS_DISKS="gsback:1G gssmall:8M" GS_GUEST_LA57=0 \
	GS_APPEND="kfence.sample_interval=20 kasan_multi_shot" \
	GS_GUEST_TIMEOUT=${GS_DEBUG_TIMEOUT:-3000} \
	"$GS_TOP/testbed/guest.sh" "$out/guest" \
	"GS_WORKLOAD_DIV=${GS_DEBUG_WORKLOAD_DIV:-4} bash /opt/gs-src/tests/guest/suite.sh" \
	$GS_DEBUG_TESTS >"$out/guest.log" 2>&1
echo "# debug kernel: guest boot and $(echo $GS_DEBUG_TESTS | wc -w) tests: $((SECONDS - t0)) s"
[ ! -f "$out/guest/cpu" ] ||
	echo "# debug kernel: the guest took $(cut -d' ' -f2 "$out/guest/cpu") s of host CPU in $(cut -d' ' -f1 "$out/guest/cpu") s"
[ ! -s "$out/guest/pinned" ] || sed 's/^/# debug kernel: /' "$out/guest/pinned"
rm -f "$out"/guest/disk-*.img
[ ! -f "$out/guest/results.tap" ] || tap_append "$out/guest/results.tap"
con=$out/guest/console.log
if [ ! -f "$out/guest/done" ]; then
	# A guest that died: every test it did not run fails, the one that was
	# running is named, the kernel's report shown.
	gs_guest_died "$out/guest" "$out/guest/plan" "$out/guest/results.tap" \
		>"$out/died.tap"
	tap_append "$out/died.tap"
fi

# The kernel ran with the sanitizers on: their boot messages.
sanitizers() {
	local m rc=0
	for m in 'KernelAddressSanitizer initialized' \
		'Lock dependency validator' \
		'kmemleak: Kernel memory leak detector initialized' \
		'kfence: initialized'; do
		grep -m1 -F "$m" "$con" || { echo "missing: $m"; rc=1; }
	done
	grep -m1 -E "Linux version $rel " "$con" || { echo "not $rel"; rc=1; }
	return $rc
}
tap_step "debug kernel: the guest ran $rel with KASAN, lockdep, kmemleak, KFENCE" \
	debug-sanitizers sanitizers

# Every report in the kernel log is a failing test, with its first lines:
# the whole console, read on the host (gs_console_tap).
gs_console_tap "debug kernel" "$out/guest" >"$out/reports.tap"
tap_append "$out/reports.tap"
tap_plan
exit $tap_rc
