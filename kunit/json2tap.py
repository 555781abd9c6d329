#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kunit.py's JSON results as TAP, for kunit/run.sh.

usage: json2tap.py JSON NAME CONSOLE_LOG

One line per test case, "ok - NAME: SUITE.CASE" or "not ok - ...";
a parametrized case gives one line, its failing parameters follow as
diagnostics with what the case printed (from CONSOLE_LOG). A skip is
never hidden: a case skipped whole is "ok - ... # SKIP WHY", and each
skipped parameter of a case that ran is a skip line of its own. Cases
that never reported (the kernel died) fail. Exits 1 if anything failed.
"""
import json
import re
import sys

BAD = ('FAIL', 'ERROR')
RESULT = re.compile(r'^    (not )?ok \d+ (\S+)')
SUBTEST = re.compile(r'^    # Subtest: (\S+)')
ANY_SUBTEST = re.compile(r'^( *)# Subtest: (\S+)')
SKIPPED = re.compile(r'^( *)ok \d+ (?:- )?(.*?) # SKIP ?(.*)$')
# KTAP structure, not worth repeating under a failed case.
# gs_overlap_expect()'s line, "# case: what: N of M windows overlapped ...".
OVERLAP = re.compile(r'windows overlapped another CPU')
OVERLAP_CASE = re.compile(r'^# \S+: ')
NOISE = re.compile(r'^(KTAP version|\d+\.\.\d+$|# Subtest:|# module:|(not )?ok \d+|'
                   r'# [^ ]+: pass:\d+)')


def console(path):
    """Per suite: case name -> (position, lines the case printed); and
    (suite, case or parameter name) -> why it was skipped."""
    suites, cur, block, why, group = {}, None, [], {}, {}
    try:
        lines = open(path, errors='replace').read().splitlines()
    except OSError:
        return suites, why
    for line in lines:
        m = ANY_SUBTEST.match(line)
        if m:
            group[len(m.group(1))] = m.group(2)
        m = SKIPPED.match(line)
        if m and len(m.group(1)) in group:	# a result and its header align
            why[(group[len(m.group(1))], m.group(2))] = m.group(3).strip()
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
    return suites, why


def leaves(group):
    """(name, status) of every test case below group, at any depth."""
    for case in group.get('test_cases', []):
        yield case['name'], case['status']
    for sub in group.get('sub_groups', []):
        yield from leaves(sub)


def reason(why, suite, name, params):
    """Why case @name (or, parametrized, its first parameter) skipped."""
    for key in [(suite['name'], name)] + [(name, n) for n, _ in params]:
        if why.get(key):
            return why[key]
    return 'no reason given'


def emit(prefix, suite, log, why):
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
            text = f"ok - {line} # SKIP {reason(why, suite, name, params)}"
        else:
            text = f"ok - {line}"
            # A race test's proof that it ran on two CPUs at once.
            diag += [OVERLAP_CASE.sub('', d)
                     for d in seen.get(name, (0, []))[1] if OVERLAP.search(d)]
        lines = [(text, diag)]
        # A skip is never hidden in a case that ran: each parameter that
        # did not run is a skip line of its own.
        if '# SKIP' not in text:
            lines += [(f"ok - {line}: {n} # SKIP "
                       f"{why.get((name, n), 'no reason given')}", [])
                      for n, s in params if s == 'SKIP']
        # Console order; cases the console lacks go last.
        out.append((seen.get(name, (1 << 30,))[0], lines))
    bad = 0
    for _, lines in sorted(out, key=lambda o: o[0]):
        for text, diag in lines:
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
log, why = console(sys.argv[3])
suites = top.get('sub_groups', [])
bad = sum(emit(prefix, s, log, why) for s in suites)
lost = sum(1 for c in top.get('test_cases', []) if not c['name'])
if lost:
    print(f"not ok - {prefix}{lost} suite(s) did not run")
    bad += 1
if not suites:
    print(f"not ok - {prefix}no test results")
    bad += 1
sys.exit(1 if bad else 0)
