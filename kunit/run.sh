#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the KUnit suites in kunit/ under UML with kunit.py, in the kernel
# source tree that testbed/provision.sh unpacked. The tree gets
# drivers/block/ghostswap, a symlink to a directory of links into this
# repository (module/, kunit/, kunit/tree/{Kconfig,Makefile}).
#
# Prints TAP on stdout: one line per test case, a line for the kernel log
# (no BUG/WARNING/KASAN/lockdep reports), or "build/run failed". Exits
# non-zero if anything failed. The kunit.py log and kernel console go to
# $GS_LOGDIR/kunit.log (kunit-sanitize.log with --sanitize).
#
# usage: kunit/run.sh [--sanitize|--bench] [FILTER_GLOB]
#   --sanitize   separate build with KASAN, lockdep, atomic-sleep and VM
#                debugging, SMP: $GHOSTSWAP_KUNIT_CPUS virtual CPUs (host
#                threads; default 2), so the race suites' threads run at
#                the same instant; fails if fewer came online
#   --bench      the plain build, running the micro-benchmarks of
#                kunit/bench/ too (bench/lookup.sh runs them); every
#                build compiles them, only --bench runs them
#   FILTER_GLOB  passed to kunit.py, e.g. 'ghostswap_table' or
#                'ghostswap_cluster.*free*'
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

mode=plain
filter=()
for a in "$@"; do
	case $a in
	--sanitize) mode=sanitize ;;
	--bench) mode=bench ;;
	-h|--help) sed -n '3,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) gs_die "unknown option $a" ;;
	*) filter+=("$a") ;;
	esac
done

ksrc=$(gs_ksrc)
[ -n "$ksrc" ] && [ -f "$ksrc/tools/testing/kunit/kunit.py" ] ||
	gs_die "no kernel source tree in $GS_CACHE (run testbed/provision.sh)"
for t in flex bison make gcc python3; do
	command -v "$t" >/dev/null ||
		gs_die "$t not found (apt-get install flex bison build-essential bc python3)"
done

cpus=1
if [ $mode = sanitize ]; then
	name=kunit-sanitize
	build=$GS_CACHE/kunit-build-sanitize-smp
	# KFENCE is left out: UML does not select HAVE_ARCH_KFENCE.
	add=(CONFIG_DEBUG_KERNEL=y CONFIG_KASAN=y CONFIG_PROVE_LOCKING=y
	     CONFIG_DEBUG_ATOMIC_SLEEP=y CONFIG_DEBUG_VM=y)
	# Each virtual CPU is a host thread: the race suites' threads run
	# at the same instant. NR_CPUS is the most ncpus= may ask for.
	cpus=${GHOSTSWAP_KUNIT_CPUS:-2}
	case $cpus in
	[1-8]) ;;
	*) gs_die "GHOSTSWAP_KUNIT_CPUS=$cpus: 1 to 8" ;;
	esac
	add+=(CONFIG_SMP=y CONFIG_NR_CPUS=8)
elif [ $mode = bench ]; then
	# The plain build itself.
	name=kunit-bench
	build=$GS_CACHE/kunit-build
	add=()
else
	name=kunit
	build=$GS_CACHE/kunit-build
	add=()
fi
logdir=${GS_LOGDIR:-$GS_TOP/results/logs}
mkdir -p "$logdir" "$GS_CACHE"
log=$logdir/$name.log
json=$build.json

# One run at a time: the tree's drivers/block/ghostswap link is shared.
exec 9>"$GS_CACHE/kunit.lock"
flock 9

# Link the repository into the tree. Each run relinks: clones differ.
gs_link_tree "$ksrc"

# Hook it into drivers/block once (the Makefile line only matters when the
# test symbol is set). Kconfig has no optional source any more.
grep -q 'drivers/block/ghostswap/Kconfig' "$ksrc/drivers/block/Kconfig" ||
	printf '\nsource "drivers/block/ghostswap/Kconfig"\n' \
		>>"$ksrc/drivers/block/Kconfig"
grep -q 'ghostswap/' "$ksrc/drivers/block/Makefile" ||
	printf '\nobj-$(CONFIG_GHOSTSWAP_KUNIT_TEST) += ghostswap/\n' \
		>>"$ksrc/drivers/block/Makefile"

args=(run --kunitconfig "$GS_TOP/kunit/.kunitconfig" --build_dir "$build"
      --arch um --jobs "$(nproc)" "--json=$json"
      --timeout "${GHOSTSWAP_KUNIT_TIMEOUT:-900}")
for c in ${add[@]+"${add[@]}"}; do
	args+=(--kconfig_add "$c")
done
# The micro-benchmarks' suites are marked very slow: only --bench runs them.
[ $mode = bench ] || args+=(--filter 'speed>very_slow')
# UML's SMP needs the seccomp userspace (the ptrace one refuses ncpus > 1).
[ "$cpus" = 1 ] || args+=(--kernel_args seccomp=on --kernel_args "ncpus=$cpus")
args+=(${filter[@]+"${filter[@]}"})

gs_log "$name: kunit.py in $ksrc, build dir $build"
t0=$(date +%s)
rm -f "$json" "$build/test.log"
rc=0
(cd "$ksrc" && python3 tools/testing/kunit/kunit.py "${args[@]}") \
	>"$log" 2>&1 || rc=$?
if [ -f "$build/test.log" ]; then
	printf '\n==== kernel console (%s/test.log) ====\n' "$build" >>"$log"
	cat "$build/test.log" >>"$log"
fi
gs_log "$name: kunit.py exit $rc after $(($(date +%s) - t0)) s, log $log"

# JSON -> TAP (kunit/json2tap.py).
tap=0
if [ -s "$json" ]; then
	python3 "$GS_TOP/kunit/json2tap.py" "$json" "$name" "$build/test.log" \
		>"$build.tap" || tap=$?
	cat "$build.tap"
	ran=$(grep -c '^\(not \)\{0,1\}ok ' "$build.tap" || true)
	if [ "$rc" != 0 ] || [ "$tap" != 0 ]; then
		grep -q '^not ok ' "$build.tap" ||
			echo "not ok - $name: kunit.py exited $rc, see $log"
		tap=1
	fi
	gs_log "$name: $ran test lines"
else
	echo "not ok - $name: build/run failed"
	grep -E 'error|ERROR|Error|Missing|not found' "$log" | head -n 30 |
		sed 's/^/# /'
	echo "# see $log"
	tap=1
fi

# What the compiler said about our files (rebuilt whenever they change).
if grep -q 'drivers/block/ghostswap/.*warning:' "$log"; then
	echo "not ok - $name: our sources build without warnings"
	grep 'drivers/block/ghostswap/.*warning:' "$log" | head -n 20 | sed 's/^/# /'
	tap=1
else
	echo "ok - $name: our sources build without warnings"
fi

# The kernel log of the run must be free of sanitizer and kernel reports.
pat='BUG:|WARNING:|KASAN|possible circular locking|sleeping function called from invalid context|UBSAN:|Kernel panic|Oops|work func gs_[a-z0-9_]+ .*deprecated workqueue'
if [ -f "$build/test.log" ]; then
	if grep -Eq "$pat" "$build/test.log"; then
		echo "not ok - $name: kernel log free of BUG/WARNING/KASAN/lockdep reports"
		grep -E "$pat" "$build/test.log" | head -n 20 | sed 's/^/# /'
		tap=1
	else
		echo "ok - $name: kernel log free of BUG/WARNING/KASAN/lockdep reports"
	fi
fi

# What the build was asked for is in its .config (kunit.py refuses options
# whose dependencies are missing; this says which were asked for).
if [ ${#add[@]} -gt 0 ] && [ -f "$build/.config" ]; then
	missing=()
	for c in "${add[@]}"; do
		grep -qx "$c" "$build/.config" || missing+=("$c")
	done
	if [ ${#missing[@]} = 0 ]; then
		echo "ok - $name: .config has ${add[*]}"
	else
		echo "not ok - $name: .config has ${add[*]}"
		echo "# missing: ${missing[*]}"
		tap=1
	fi
fi

# Every CPU asked for came online: the race tests need two at once.
if [ "$cpus" != 1 ] && [ -f "$build/test.log" ]; then
	up=$(sed -n 's/.*smp: Brought up [0-9]* nodes\{0,1\}, \([0-9]*\) CPUs\{0,1\}.*/\1/p' \
		"$build/test.log" | head -n 1)
	if [ "${up:-0}" -ge "$cpus" ]; then
		echo "ok - $name: $up CPUs online (ncpus=$cpus)"
	else
		echo "not ok - $name: ${up:-no} CPUs online, $cpus asked for (ncpus=$cpus)"
		tap=1
	fi
fi

[ "$rc" = 0 ] && [ "$tap" = 0 ]
