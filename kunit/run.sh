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

# JSON -> TAP. Parametrized cases give one line per case; the failing
# parameters follow as diagnostics.
tap=0
if [ -s "$json" ]; then
	python3 - "$json" "$name" "$build/test.log" >"$build.tap" <<'EOF' || tap=$?
import json
import re
import sys

BAD = ('FAIL', 'ERROR')
RESULT = re.compile(r'^    (not )?ok \d+ (\S+)')
SUBTEST = re.compile(r'^    # Subtest: (\S+)')
# KTAP structure, not worth repeating under a failed case.
NOISE = re.compile(r'^(KTAP version|\d+\.\.\d+$|# Subtest:|# module:|(not )?ok \d+|'
                   r'# [^ ]+: pass:\d+)')
# gs_overlap_expect()'s line, "# case: what: N of M windows overlapped ...".
OVERLAP = re.compile(r'windows overlapped another CPU')
OVERLAP_CASE = re.compile(r'^# \S+: ')


def console(path):
    """Per suite: case name -> (position, lines the case printed)."""
    suites, cur, block = {}, None, []
    try:
        lines = open(path, errors='replace').read().splitlines()
    except OSError:
        return suites
    for line in lines:
        m = SUBTEST.match(line)
        if m:
            cur, block = suites.setdefault(m.group(1), {}), []
            continue
        m = RESULT.match(line)
        if m and cur is not None:
            cur[m.group(2)] = (len(cur), block)
            block = []
        elif cur is not None:
            block.append(line.strip())
    if cur is not None:
        cur[None] = (len(cur), block)	# what followed the last result
    return suites


def leaves(group):
    """(name, status) of every test case below group, at any depth."""
    for case in group.get('test_cases', []):
        yield case['name'], case['status']
    for sub in group.get('sub_groups', []):
        yield from leaves(sub)


def emit(prefix, suite, log):
    seen = log.get(suite['name'], {})
    # Plain cases and parametrized ones (their parameters are leaves).
    cases = [(c['name'], [(c['name'], c['status'])], None)
             for c in suite.get('test_cases', []) if c['name']]
    cases += [(g['name'], list(leaves(g)), g.get('misc', {}))
              for g in suite.get('sub_groups', [])]
    out = []
    for name, params, misc in cases:
        line = f"{prefix}{suite['name']}.{name}"
        failed = [n for n, s in params if s in BAD]
        broken = misc and misc.get('crashed', 0) + misc.get('errors', 0)
        diag = []
        if failed or broken or not params:
            text = f"not ok - {line}"
            if misc is not None:
                diag += [f"failed parameter: {n}" for n in failed]
            if not params:
                diag.append("no parameters ran")
            diag += [d for d in seen.get(name, (0, []))[1]
                     if d and not NOISE.match(d)][:30]
        elif all(s == 'SKIP' for _, s in params):
            text = f"ok - {line} # SKIP"
        else:
            text = f"ok - {line}"
            # A race test's proof that it ran on two CPUs at once.
            diag += [OVERLAP_CASE.sub('', d) for d in seen.get(name, (0, []))[1]
                     if OVERLAP.search(d)]
        # Console order; cases the console lacks go last.
        out.append((seen.get(name, (1 << 30,))[0], text, diag))
    bad = 0
    for _, text, diag in sorted(out, key=lambda o: o[0]):
        print(text)
        for d in diag:
            print('# ' + d.lstrip('# '))
        bad += text.startswith('not ok')
    # Cases the parser expected but never saw: the kernel died.
    lost = sum(1 for c in suite.get('test_cases', []) if not c['name'])
    misc = suite.get('misc', {})
    if lost or (not bad and (misc.get('crashed', 0) or misc.get('errors', 0))):
        print(f"not ok - {prefix}{suite['name']}: crashed or incomplete, "
              f"{lost} case(s) did not report")
        for d in [d for d in seen.get(None, (0, []))[1] if d][:30]:
            print('# ' + d)
        bad += 1
    return bad


top = json.load(open(sys.argv[1]))
prefix = sys.argv[2] + ': '
log = console(sys.argv[3])
suites = top.get('sub_groups', [])
bad = sum(emit(prefix, s, log) for s in suites)
lost = sum(1 for c in top.get('test_cases', []) if not c['name'])
if lost:
    print(f"not ok - {prefix}{lost} suite(s) did not run")
    bad += 1
if not suites:
    print(f"not ok - {prefix}no test results")
    bad += 1
sys.exit(1 if bad else 0)
EOF
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
pat='BUG:|WARNING:|KASAN|possible circular locking|sleeping function called from invalid context|UBSAN:|Kernel panic|Oops'
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
