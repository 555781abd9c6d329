#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per 4 KiB random read, by function: bench/funcs.sh's report.

DIR holds what bench/guest/funcs.sh and the plugin left: kallsyms, and
pcs-DRIVER-qdN-IOS.txt, the instructions executed at each kernel address
during a run of IOS reads ("ADDRESS COUNT", hex and decimal, then
"user COUNT"). A function's cost per read is (long run - short run) /
(LONG - SHORT): what fio's start and end cost cancels out.

Listed: every function of either driver's module, and every kernel
function whose cost differs between the drivers by a whole instruction or
more and, for each driver, is the same at iodepth 1 and 32 (to one
instruction): a cost of the read path. What moves between the two depths
(interrupts and wakeups on the other vCPU, the page allocator's per-CPU
lists) is the rest of the guest, not the driver, and only its total is
shown.
"""
import bisect
import collections
import glob
import json
import os
import re
import sys

DRIVERS = ('ghostswap', 'zram')


def load_symbols(path):
    """Sorted (address, name) of the text symbols in a /proc/kallsyms."""
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in 'tTwW':
                name = p[2] + (' ' + p[3] if len(p) > 3 else '')
                syms.append((int(p[0], 16), name))
    syms.sort()
    return syms


def by_function(path, syms, addrs):
    """Counter of instructions by function name ('(user)' for userspace)."""
    c = collections.Counter()
    with open(path) as f:
        for line in f:
            a, n = line.split()
            if a == 'user':
                c['(user)'] += int(n)
                continue
            i = bisect.bisect_right(addrs, int(a, 16)) - 1
            c[syms[i][1] if i >= 0 else '?'] += int(n)
    return c


def runs(d):
    """{(driver, qd): {ios: path}} of the dumps in D."""
    out = collections.defaultdict(dict)
    for p in glob.glob(os.path.join(d, 'pcs-*.txt')):
        m = re.match(r'pcs-(\w+)-qd(\d+)-(\d+)\.txt$', os.path.basename(p))
        if m:
            out[(m.group(1), int(m.group(2)))][int(m.group(3))] = p
    return out


def per_read(d):
    """{(driver, qd): {function: instructions per read}}."""
    syms = load_symbols(os.path.join(d, 'kallsyms'))
    addrs = [a for a, _ in syms]
    cost = {}
    for key, files in runs(d).items():
        if len(files) != 2:
            raise SystemExit(f'{key}: want a short and a long run, have {sorted(files)}')
        short, long_ = sorted(files)
        a = by_function(files[short], syms, addrs)
        b = by_function(files[long_], syms, addrs)
        cost[key] = {k: (b[k] - a[k]) / (long_ - short) for k in set(a) | set(b)}
    return cost


def module_of(name):
    m = re.search(r'\[(\w+)\]$', name)
    return m.group(1) if m else None


def report(cost):
    qds = sorted({qd for _, qd in cost})
    for drv in DRIVERS:
        for qd in qds:
            if (drv, qd) not in cost:
                raise SystemExit(f'no run of {drv} at iodepth {qd}')
    g = {qd: cost[('ghostswap', qd)] for qd in qds}
    z = {qd: cost[('zram', qd)] for qd in qds}
    names = set()
    for qd in qds:
        names |= set(g[qd]) | set(z[qd])
    listed = []
    for k in names:
        if k == '(user)':
            continue
        diffs = [g[qd].get(k, 0) - z[qd].get(k, 0) for qd in qds]
        if max(abs(c[qd].get(k, 0)) for c in (g, z) for qd in qds) < 0.5:
            continue
        steady = all(max(c[qd].get(k, 0) for qd in qds) -
                     min(c[qd].get(k, 0) for qd in qds) <= 1 for c in (g, z))
        if module_of(k) in DRIVERS or (
                steady and min(abs(x) for x in diffs) >= 1):
            listed.append(k)
    listed.sort(key=lambda k: (module_of(k) not in DRIVERS,
                               -max(g[qds[0]].get(k, 0), z[qds[0]].get(k, 0))))
    lines = ['# Instructions per 4 KiB random read, by function', '',
             'Exact counts (bench/funcs.sh): the long run less the short one,',
             'per read. Listed: the drivers\' modules, and kernel functions whose',
             'cost differs by a whole instruction and is the same at every depth.',
             '']
    head = '| function | ' + ' | '.join(
        f'ghostswap qd{qd} | zram qd{qd}' for qd in qds) + ' |'
    lines += [head, '|---|' + '---:|' * (2 * len(qds))]

    def row(label, gv, zv):
        return f'| {label} | ' + ' | '.join(
            f'{gv[i]:.1f} | {zv[i]:.1f}' for i in range(len(qds))) + ' |'

    for k in listed:
        lines.append(row(f'`{k}`', [g[qd].get(k, 0) for qd in qds],
                         [z[qd].get(k, 0) for qd in qds]))
    path_g = [sum(g[qd].get(k, 0) for k in listed) for qd in qds]
    path_z = [sum(z[qd].get(k, 0) for k in listed) for qd in qds]
    lines.append(row('**the listed: the read path\'s difference**', path_g, path_z))
    kern_g = [sum(v for k, v in g[qd].items() if k != '(user)') for qd in qds]
    kern_z = [sum(v for k, v in z[qd].items() if k != '(user)') for qd in qds]
    lines.append(row('the whole kernel (with whatever else the guest ran meanwhile)',
                     kern_g, kern_z))
    lines.append(row('userspace (fio)',
                     [g[qd].get('(user)', 0) for qd in qds],
                     [z[qd].get('(user)', 0) for qd in qds]))
    return '\n'.join(lines) + '\n'


def series_runs(d):
    """[(driver, rep, {function: instructions}, bench row)] of a series run."""
    rows = {}
    with open(os.path.join(d, 'series', 'bench.jsonl')) as f:
        for line in f:
            r = json.loads(line)
            if r.get('section') == 'usemem_series' and 'result' in r:
                rows[(r['driver'], r['rep'])] = r
    syms = load_symbols(os.path.join(d, 'kallsyms'))
    addrs = [a for a, _ in syms]
    out = []
    for p in sorted(glob.glob(os.path.join(d, 'pcs-series-*.txt'))):
        m = re.match(r'pcs-series-(\w+)-(\d+)\.txt$', os.path.basename(p))
        if m and (m.group(1), int(m.group(2))) in rows:
            key = (m.group(1), int(m.group(2)))
            out.append((*key, by_function(p, syms, addrs), rows[key]))
    return out


def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else 0


def series_report(runs, top=40):
    """Instructions per page swapped out, by function, medians per driver."""
    per = collections.defaultdict(list)
    for drv, _, c, row in runs:
        pages = max(row['vmstat']['pswpout'], 1)
        per[drv].append(({k: v / pages for k, v in c.items()}, row))
    for drv in DRIVERS:
        if not per[drv]:
            raise SystemExit(f'no series run of {drv}')
    names = set()
    for drv in DRIVERS:
        for c, _ in per[drv]:
            names |= set(c)
    med = {drv: {k: median([c.get(k, 0) for c, _ in per[drv]]) for k in names}
           for drv in DRIVERS}
    g, z = med['ghostswap'], med['zram']
    lines = ['# The series workload, instructions per page swapped out, by function',
             '', 'Exact counts (bench/funcs.sh series): each run counted whole,',
             'divided by the pages it swapped out (pswpout); medians of '
             f'{len(per["ghostswap"])} ghostswap and {len(per["zram"])} zram runs.', '']
    lines += ['| | ghostswap | zram |', '|---|---:|---:|']
    for label, key in (('sum KiB/s', lambda r: r['result']['sum_kbps']),
                       *((k, (lambda k: lambda r: r['vmstat'][k])(k))
                         for k in per['zram'][0][1]['vmstat'])):
        vals = [[key(r) for _, r in per[d]] for d in DRIVERS]
        lines.append(f'| {label} | ' + ' | '.join(
            f'{median(v):.0f} [{min(v):.0f}-{max(v):.0f}]' for v in vals) + ' |')
    lines += ['', '| function | ghostswap | zram | difference |', '|---|---:|---:|---:|']
    order = sorted(names, key=lambda k: -abs(g.get(k, 0) - z.get(k, 0)))
    for k in order[:top]:
        lines.append(f'| `{k}` | {g.get(k, 0):.1f} | {z.get(k, 0):.1f} | '
                     f'{g.get(k, 0) - z.get(k, 0):+.1f} |')
    tot = {d: sum(v for k, v in med[d].items() if k != '(user)') for d in DRIVERS}
    mod = {d: sum(v for k, v in med[d].items() if module_of(k) == d) for d in DRIVERS}
    lines.append(f'| the driver\'s module | {mod["ghostswap"]:.1f} | {mod["zram"]:.1f} | '
                 f'{mod["ghostswap"] - mod["zram"]:+.1f} |')
    lines.append(f'| the whole kernel | {tot["ghostswap"]:.1f} | {tot["zram"]:.1f} | '
                 f'{tot["ghostswap"] - tot["zram"]:+.1f} |')
    lines.append(f'| userspace | {g.get("(user)", 0):.1f} | {z.get("(user)", 0):.1f} | '
                 f'{g.get("(user)", 0) - z.get("(user)", 0):+.1f} |')
    return '\n'.join(lines) + '\n'


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'series':
        sys.stdout.write(series_report(series_runs(sys.argv[2])))
        return
    if len(sys.argv) != 2:
        raise SystemExit('usage: funcs.py [series] DIR')
    sys.stdout.write(report(per_read(sys.argv[1])))


if __name__ == '__main__':
    main()
