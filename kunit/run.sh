#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the KUnit suites in kunit/ under UML with kunit.py, in the kernel
# source tree that testbed/provision.sh unpacked. The tree gets
# drivers/block/ghostswap, a symlink to a directory of links into this
# repository (module/, kunit/, kunit/tree/{Kconfig,Makefile}).
#
# Prints TAP on stdout: one line per test case, one saying that every
# suite in kunit/ ran all its cases (but with a filter glob), one for the
# kernel log (no BUG/WARNING/KASAN/lockdep reports), or "build/run failed".
# Exits non-zero if anything failed. The kunit.py log and kernel console go to
# $GS_LOGDIR/kunit.log (kunit-sanitize.log with --sanitize,
# kunit-kcsan.log with --kcsan).
#
# usage: kunit/run.sh [--sanitize|--kcsan|--bench] [FILTER_GLOB]
#   --sanitize   separate build with KASAN, lockdep, atomic-sleep and VM
#                debugging, SMP: $GHOSTSWAP_KUNIT_CPUS virtual CPUs (host
#                threads; default 2), so the race suites' threads run at
#                the same instant; fails if fewer came online
#   --kcsan      separate x86_64 build with KCSAN (the data race
#                detector, which UML lacks) and lockdep, run in a QEMU
#                guest with $GHOSTSWAP_KUNIT_CPUS vCPUs (default 2) that
#                execute at once (multi-threaded TCG, no jump labels);
#                every KCSAN report fails the run. Its own hard-linked
#                copy of the tree, so it never waits for the others
#   --build-only only build (kunit.py build), niced: tests/run.sh starts
#                the KCSAN kernel's build this way from an empty cache
#   --bench      the plain build, running the micro-benchmarks of
#                kunit/bench/ too (bench/lookup.sh runs them); every
#                build compiles them, only --bench runs them
#   FILTER_GLOB  passed to kunit.py, e.g. 'ghostswap_table' or
#                'ghostswap_cluster.*free*'
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

mode=plain
build_only=0
filter=()
for a in "$@"; do
	case $a in
	--sanitize) mode=sanitize ;;
	--kcsan) mode=kcsan ;;
	--bench) mode=bench ;;
	--build-only) build_only=1 ;;
	-h|--help) sed -n '3,33s/^# \{0,1\}//p' "$0"; exit 0 ;;
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
arch=um
timeout=1800
tree=$ksrc
link=
lock=$GS_CACHE/kunit.lock
if [ $mode = kcsan ]; then
	name=kunit-kcsan
	arch=x86_64
	# Not kunit-build*: gs_link_tree cleans those for the other tree.
	build=$GS_CACHE/kcsan-build
	tree=$GS_CACHE/kcsan-${ksrc##*/}
	link=$GS_CACHE/kunit-link-kcsan
	lock=$GS_CACHE/kcsan.lock
	# KCSAN's default rules (not KCSAN_STRICT: kunit/README.md), each
	# race reported once in a run, lockdep beside it. No jump labels:
	# nothing patches kernel text while both vCPUs run (testbed/lib.sh).
	add=(CONFIG_DEBUG_KERNEL=y CONFIG_SMP=y CONFIG_KCSAN=y
	     CONFIG_KCSAN_REPORT_ONCE_IN_MS=3600000 CONFIG_PROVE_LOCKING=y
	     '# CONFIG_JUMP_LABEL is not set')
	# Less to compile from an empty cache, none of it used by the
	# suites: ACPI (~210 objects; qboot's MP table starts the second
	# CPU), suspend and the machine-check handler.
	add+=('# CONFIG_ACPI is not set' '# CONFIG_SUSPEND is not set'
	      '# CONFIG_X86_MCE is not set')
	cpus=${GHOSTSWAP_KUNIT_CPUS:-2}
	# Its guest may wait for the debug lane's (gs_qemu_multi_lock).
	timeout=3600
elif [ $mode = sanitize ]; then
	name=kunit-sanitize
	build=$GS_CACHE/kunit-build-sanitize-smp
	# KFENCE is left out: UML does not select HAVE_ARCH_KFENCE.
	add=(CONFIG_DEBUG_KERNEL=y CONFIG_KASAN=y CONFIG_PROVE_LOCKING=y
	     CONFIG_DEBUG_ATOMIC_SLEEP=y CONFIG_DEBUG_VM=y)
	# Each virtual CPU is a host thread: the race suites' threads run
	# at the same instant. NR_CPUS is the most ncpus= may ask for.
	cpus=${GHOSTSWAP_KUNIT_CPUS:-2}
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
case $cpus in
[1-8]) ;;
*) gs_die "GHOSTSWAP_KUNIT_CPUS=$cpus: 1 to 8" ;;
esac
logdir=${GS_LOGDIR:-$GS_TOP/results/logs}
mkdir -p "$logdir" "$GS_CACHE"
log=$logdir/$name.log
json=$build.json

# One run at a time per tree: its drivers/block/ghostswap link is shared.
exec 9>"$lock"
flock 9

# The KCSAN build's tree: hard links to the unpacked tree's files, made
# once under that tree's lock. A file of it is never written in place
# (that would change the original too): replaced.
if [ "$tree" != "$ksrc" ] && [ ! -f "$tree/.gs-copy" ]; then
	gs_log "$name: hard-linked copy of $ksrc in $tree"
	rm -rf "$tree" "$tree.tmp"
	(
		exec 8>"$GS_CACHE/kunit.lock"
		flock 8
		cp -al "$ksrc" "$tree.tmp"
	)
	rm -f "$tree.tmp/.gs-unpacked"	# gs_ksrc() must not find the copy
	mv "$tree.tmp" "$tree"
	: >"$tree/.gs-copy"
fi

# Link the repository into the tree. Each run relinks: clones differ.
gs_link_tree "$tree" ${link:+"$link" "$build"}

# Hook it into drivers/block once (the Makefile line only matters when the
# test symbol is set): a new file each time, not an append (hard links).
gs_hook() {
	grep -q "$2" "$1" && return 0
	cp "$1" "$1.gs-new"
	printf '\n%s\n' "$3" >>"$1.gs-new"
	mv "$1.gs-new" "$1"
}
gs_hook "$tree/drivers/block/Kconfig" 'drivers/block/ghostswap/Kconfig' \
	'source "drivers/block/ghostswap/Kconfig"'
gs_hook "$tree/drivers/block/Makefile" 'ghostswap/' \
	'obj-$(CONFIG_GHOSTSWAP_KUNIT_TEST) += ghostswap/'

args=(--kunitconfig "$GS_TOP/kunit/.kunitconfig" --build_dir "$build"
      --arch "$arch" --jobs "$(nproc)")
for c in ${add[@]+"${add[@]}"}; do
	args+=(--kconfig_add "$c")
done
if [ $build_only = 1 ]; then
	# The kernel only; the run after it rebuilds nothing.
	gs_log "$name: kunit.py build in $tree, build dir $build"
	rc=0
	log=${log%.log}-build.log
	(cd "$tree" && nice -n 10 python3 tools/testing/kunit/kunit.py build "${args[@]}") \
		>"$log" 2>&1 || rc=$?
	gs_log "$name: build exit $rc, log $log"
	exit $rc
fi
args=(run "${args[@]}" "--json=$json" --timeout "${GHOSTSWAP_KUNIT_TIMEOUT:-$timeout}")
# The micro-benchmarks' suites are marked very slow: only --bench runs them.
[ $mode = bench ] || args+=(--filter 'speed>very_slow')
# UML's SMP needs the seccomp userspace (the ptrace one refuses ncpus > 1).
[ $arch != um ] || [ "$cpus" = 1 ] ||
	args+=(--kernel_args seccomp=on --kernel_args "ncpus=$cpus")
args+=(${filter[@]+"${filter[@]}"})

# x86_64: kunit.py runs qemu-system-x86_64 from PATH with "-accel kvm
# -accel hvf -accel tcg", and QEMU takes the first that starts (this
# host's /dev/kvm starts but boots no stock kernel). A wrapper runs the
# test bed's emulator with gs_qemu_env's accelerator instead: TCG with a
# thread per vCPU (GHOSTSWAP_TCG=multi), or KVM where it works; under TCG
# as the test bed runs such guests, one at a time (gs_qemu_multi_lock in
# testbed/lib.sh).
qpath=
if [ $arch = x86_64 ]; then
	GHOSTSWAP_TCG=multi gs_qemu_env
	qpath=$GS_CACHE/kcsan-qemu
	mkdir -p "$qpath"
	{
		echo '#!/bin/bash'
		echo '# kunit/run.sh --kcsan: the test bed'\''s QEMU, its accelerator.'
		printf 'opts=(%s)\n' "$GS_QEMU_OPTS"
		cat <<'EOF'
a=()
while [ $# -gt 0 ]; do
	if [ "$1" = -accel ] && [ ${#opts[@]} -gt 0 ]; then
		shift 2
		continue
	fi
	a+=("$1")
	shift
done
EOF
		[ "$GS_QEMU_MULTI" != 1 ] ||
			printf 'exec 6>%q\nflock 6\n' "$GS_QEMU_MULTI_LOCK"
		# kunit.py runs niced (below); its guest does not.
		echo 'renice -n 0 -p $$ >/dev/null 2>&1 || true'
		printf 'exec %q "${opts[@]}" "${a[@]}"\n' "$GS_QEMU_BIN"
	} >"$qpath/qemu-system-x86_64.new"
	chmod +x "$qpath/qemu-system-x86_64.new"
	mv "$qpath/qemu-system-x86_64.new" "$qpath/qemu-system-x86_64"
	args+=(--qemu_args "-smp $cpus")
	gs_log "$name: $GS_QEMU_DESC, $cpus vCPUs"
fi

gs_log "$name: kunit.py in $tree, build dir $build"
t0=$(date +%s)
rm -f "$json" "$build/test.log"
rc=0
# The x86_64 kernel builds beside the guests of make test: niced, as the
# debug kernel's build is, so that they come first (from an empty cache).
nice=()
[ $arch = um ] || nice=(nice -n 10)
(cd "$tree" && PATH=${qpath:+$qpath:}$PATH \
	${nice[@]+"${nice[@]}"} python3 tools/testing/kunit/kunit.py "${args[@]}") \
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

# Every suite of kunit/ ran, and each of its cases: the KUNIT_CASE*
# entries of the array its kunit_suite names as test_cases (the
# benchmarks' suites too with --bench, which alone runs them). A suite
# missing from the results, or with fewer cases there, fails. Not with
# a filter glob, which leaves suites and cases out on purpose.
if [ -s "$json" ] && [ ${#filter[@]} = 0 ]; then
	srcs=("$GS_TOP"/kunit/gs_kunit_*.c)
	[ $mode != bench ] || srcs+=("$GS_TOP"/kunit/bench/*.c)
	python3 - "$json" "$name" "${srcs[@]}" <<'EOF' || tap=1
import json, re, sys

ARRAY = re.compile(r'struct\s+kunit_case\s+(\w+)\s*\[\]\s*=\s*\{(.*?)\n\};',
                   re.S)
SUITE = re.compile(r'struct\s+kunit_suite\s+\w+\s*=\s*\{(.*?)\n\};', re.S)
CASE = re.compile(r'^\s*KUNIT_CASE\w*\s*\(', re.M)
want = {}
for path in sys.argv[3:]:
    text = re.sub(r'/\*.*?\*/|//[^\n]*', '', open(path).read(), flags=re.S)
    arrays = {m.group(1): len(CASE.findall(m.group(2)))
              for m in ARRAY.finditer(text)}
    for m in SUITE.finditer(text):
        name = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
        cases = re.search(r'\.test_cases\s*=\s*(\w+)', m.group(1))
        if name and cases and cases.group(1) in arrays:
            want[name.group(1)] = (arrays[cases.group(1)], path)
ran = {}
for s in json.load(open(sys.argv[1])).get('sub_groups', []):
    # Plain cases that reported, and parametrized ones (groups).
    ran[s['name']] = (sum(1 for c in s.get('test_cases', []) if c['name'])
                      + len(s.get('sub_groups', [])))
bad = 0
for suite, (n, path) in sorted(want.items()):
    got = ran.get(suite)
    if got is None:
        print(f"not ok - {sys.argv[2]}: suite {suite} ran: missing from "
              f"the results, {n} cases in {path.rsplit('/', 1)[-1]}")
        bad += 1
    elif got < n:
        print(f"not ok - {sys.argv[2]}: suite {suite} ran all its cases: "
              f"{got} of {n}")
        bad += 1
if not want:
    print(f"not ok - {sys.argv[2]}: no suite found in kunit/*.c")
    bad += 1
elif not bad:
    print(f"ok - {sys.argv[2]}: every suite ran all its cases "
          f"({len(want)} suites, {sum(n for n, _ in want.values())} cases)")
sys.exit(1 if bad else 0)
EOF
fi

# What the compiler said about our files (rebuilt whenever they change).
if grep -q 'drivers/block/ghostswap/.*warning:' "$log"; then
	echo "not ok - $name: our sources build without warnings"
	grep 'drivers/block/ghostswap/.*warning:' "$log" | head -n 20 | sed 's/^/# /'
	tap=1
else
	echo "ok - $name: our sources build without warnings"
fi

# The kernel log: every report the host's scan of a guest's console
# knows (testbed/console-scan.py), on every line of it: nothing but the
# kernel writes there. KCSAN's reports have a check of their own, below.
if [ -f "$build/test.log" ]; then
	python3 "$GS_TOP/testbed/console-scan.py" "$name" "$build/test.log" \
		--all-lines --ignore '^BUG: KCSAN:' || tap=1
fi

# KCSAN: every data race report fails, shown whole, but the kernel's own
# races listed in kcsan-kernel-races (kcsan_check.sh).
if [ $mode = kcsan ] && [ -f "$build/test.log" ]; then
	"$(dirname "$0")/kcsan_check.sh" "$name" "$build/test.log" || tap=1
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
		echo "ok - $name: $up CPUs online ($cpus asked for)"
	else
		echo "not ok - $name: ${up:-no} CPUs online, $cpus asked for"
		tap=1
	fi
fi

[ "$rc" = 0 ] && [ "$tap" = 0 ]
