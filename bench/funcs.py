#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per 4 KiB random read, by function: bench/funcs.sh's report
(and, with "series", "zswap", "mthp" or "patterns", the reports of those
workloads: below).

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
    def key(m):
        return m.group(1), int(m.group(2))
    return [(*key(m), c, rows[key(m)]) for m, c in
            counted_dumps(d, r'pcs-series-(\w+)-(\d+)\.txt$', lambda m: key(m) in rows)]


def counted_dumps(d, pattern, keep):
    """[(match, {function: instructions})] of the plugin's dumps in D
    whose names match PATTERN, those KEEP(match) wants."""
    syms = load_symbols(os.path.join(d, 'kallsyms'))
    addrs = [a for a, _ in syms]
    out = []
    for p in sorted(glob.glob(os.path.join(d, 'pcs-*.txt'))):
        m = re.match(pattern, os.path.basename(p))
        if m and keep(m):
            out.append((m, by_function(p, syms, addrs)))
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


ZPATH_CONFIGS = (
    ('zswap', 'zswap + swap file (ext4)'),
    ('zswap-gsraw', 'zswap + ghostswap, raw disk'),
    ('zswap-gs', 'zswap + ghostswap, loop, sparse file'),
    ('zswap-gsa', 'zswap + ghostswap, loop, full file'),
    ('zswap-gsmap', 'zswap + ghostswap, full file mapped'),
    ('zswap-gschunks', 'zswap + ghostswap, chunk files'),
)

# Layers of the disk path, in the order of the report: a function's
# module, else its name, decides. The first match wins.
LAYERS = (
    ('ghostswap', lambda n, m: m == 'ghostswap'),
    ('loop', lambda n, m: m == 'loop'),
    ('ext4, jbd2, iomap, VFS',
     lambda n, m: m in ('ext4', 'jbd2', 'mbcache') or re.match(
         r'(ext4|jbd2|iomap|__iomap|filemap|vfs_|rw_verify|file_|generic_file|'
         r'kiocb|__kiocb|fsnotify|security_file)', n)),
    ('block layer (bio, blk-mq, I/O scheduler)',
     lambda n, m: m in ('mq_deadline', 'bfq', 'kyber_iosched') or re.match(
         r'(blk|__blk|bio_|__bio|submit_bio|__submit_bio|bdev_|rq_qos|__rq_qos|'
         r'blkcg|dd_|bvec_|req_|elv_|__elv|sbitmap|__sbitmap|part_|bdev|'
         r'disk_|iov_iter|__iov_iter)', n)),
    ('virtio', lambda n, m: m in ('virtio_blk', 'virtio_ring', 'virtio_pci',
                                  'virtio') or re.match(r'(virtio|virtqueue|vring|vp_|virtblk)', n)),
    ('zswap, zsmalloc, compression',
     lambda n, m: re.match(r'(zswap|__zswap|zs_|obj_malloc|lz4|LZ4|crypto_|'
                           r'acomp|scomp|__crypto|zpool)', n)),
    ('checksums (crc32c)', lambda n, m: re.match(r'(crc32|__crc32)', n)),
    ('workqueues and scheduling (completion hops, wakeups)',
     lambda n, m: re.match(r'(process_one_work|worker_thread|__queue_work|queue_work|'
                           r'insert_work|kick_pool|try_to_wake_up|ttwu|__schedule|'
                           r'schedule|pick_next|enqueue_|dequeue_|finish_task_switch|'
                           r'__wake_up|wake_up|complete$|__complete|wait_for_completion|'
                           r'update_curr|update_load|psi_)', n)),
)


def layer_of(name, layers=LAYERS,
             rest='the rest of the kernel (reclaim, swap core, faults, interrupts)'):
    """The first of LAYERS whose test the function NAME passes, else REST."""
    m = module_of(name)
    n = name.split()[0]
    for label, test in layers:
        if test(n, m):
            return label
    return rest


def bench_rows(d, sub, section, key, what):
    """{KEY(row): row} of SECTION's rows in D/SUB/bench.jsonl; a failed run
    is an error that names it (WHAT(row))."""
    rows = {}
    with open(os.path.join(d, sub, 'bench.jsonl')) as f:
        for line in f:
            r = json.loads(line)
            if r.get('section') != section:
                continue
            if 'fail' in r or r.get('rc') != 0:
                raise SystemExit(f'{section} {what(r)}: '
                                 f'{r.get("fail") or r.get("result")}')
            rows[key(r)] = r
    return rows


def zpath_runs(d):
    """[(config, rep, phase, {function: instructions}, pages, bench row)] of
    a zswap run: pages, those written to the disk (out) or read from it
    (in)."""
    rows = bench_rows(d, 'zswap', 'zswap_path', lambda r: (r['config'], r['rep']),
                      lambda r: f'{r.get("config")} #{r.get("rep")}')
    out = []
    for m, c in counted_dumps(d, r'pcs-zpath-([\w-]+)-(\d+)-(out|in)\.txt$',
                              lambda m: (m.group(1), int(m.group(2))) in rows):
        r = rows[(m.group(1), int(m.group(2)))]
        # Out: per page written to the disk (zswap's writebacks and the
        # pages it rejected, which swap writes as they are); in: per page
        # read from the disk.
        pages = r['out']['pswpout'] if m.group(3) == 'out' else r['in']['pswpin']
        out.append((m.group(1), int(m.group(2)), m.group(3), c, pages, r))
    return out


ZPATH_COUNTERS = (
    ('out', 'zswpout', 'pages zswap stored'),
    ('out', 'zswpwb', 'pages zswap wrote back'),
    ('out', 'pswpout', 'pages written to the disk'),
    ('out', None, 'of them rejected by zswap (pswpout - zswpwb)'),
    ('out', 'zswap_reject_reclaim_fail', 'zswap: writebacks that failed'),
    ('out', 'zswap_reject_compress_poor', 'zswap: rejected, compressed poorly'),
    ('out', 'zswap_reject_alloc_fail', 'zswap: rejected, no pool memory'),
    ('out', 'zswap_pool_limit_hit', 'zswap: its pool limit hit'),
    ('out', 'thp_swpout', 'THPs swapped out whole'),
    ('out', 'cg_zswap', 'the cgroup\'s zswap pool at the end, bytes'),
    ('out', 'cg_zswapped', 'the pages it holds, bytes'),
    ('out', 'ms', 'out phase, ms (under the plugin)'),
    ('in', 'pswpin', 'pages read from the disk'),
    ('in', 'zswpin', 'pages zswap still held'),
    ('in', 'ms', 'in phase, ms (under the plugin)'),
)


def zpath_counters(per, cfgs, labels):
    """The swap counters of each configuration, medians of its runs."""
    lines = ['## Pages and zswap\'s counters', '',
             '| counter | ' + ' | '.join(labels[c] for c in cfgs) + ' |',
             '|---|' + '---:|' * len(cfgs)]
    for phase, key, what in ZPATH_COUNTERS:
        vals = []
        for c in cfgs:
            rows = [row[phase] for _, _, row in per[(c, phase)]]
            if key is None:
                v = [r['pswpout'] - r['zswpwb'] for r in rows]
            else:
                v = [r.get(key) for r in rows if r.get(key) is not None]
            vals.append(f'{median(v):.0f}' if v else '-')
        lines.append(f'| {what} | ' + ' | '.join(vals) + ' |')
    return lines + ['']


def zpath_report(runs, top=25):
    """Instructions per page written to the disk and read back, by layer."""
    per = collections.defaultdict(list)
    for cfg, _, phase, c, pages, row in runs:
        if pages <= 0:
            raise SystemExit(f'{cfg} {phase}: no page went to or came from the disk')
        per[(cfg, phase)].append(({k: v / pages for k, v in c.items()}, pages, row))
    cfgs = [c for c, _ in ZPATH_CONFIGS if (c, 'out') in per and (c, 'in') in per]
    if len(cfgs) != len(ZPATH_CONFIGS):
        raise SystemExit(f'zswap_path: runs of {cfgs} only')
    labels = dict(ZPATH_CONFIGS)
    layers = [label for label, _ in LAYERS] + [
        'the rest of the kernel (reclaim, swap core, faults, interrupts)']
    nruns = len(per[(cfgs[0], 'out')])
    lines = ['# Mode zswap\'s disk path: instructions per page, by layer', '',
             'Exact counts (bench/funcs.sh zswap), medians of '
             f'{nruns} runs of each configuration. Out: the fill, divided by the',
             'pages written to the disk (pswpout: those zswap wrote back, zswpwb,',
             'and those it rejected, which swap wrote as they are); it also holds',
             'what zswap\'s stores cost. In: the verify-only sweep, divided by the',
             'pages read from the disk (pswpin); the pages zswap still held are in',
             'it too.', '']
    lines += zpath_counters(per, cfgs, labels)
    for phase, what in (('out', 'per page written to the disk'),
                        ('in', 'per page read back from the disk')):
        lines += [f'## {phase.capitalize()}: {what}', '',
                  '| layer | ' + ' | '.join(labels[c] for c in cfgs) + ' |',
                  '|---|' + '---:|' * len(cfgs)]
        med = {}
        for c in cfgs:
            lay = []
            for fn, _, _ in per[(c, phase)]:
                t = collections.Counter()
                for k, v in fn.items():
                    if k != '(user)':
                        t[layer_of(k)] += v
                lay.append(t)
            med[c] = {la: median([t.get(la, 0) for t in lay]) for la in layers}
            med[c]['total'] = median([sum(t.values()) for t in lay])
            med[c]['pages'] = median([p for _, p, _ in per[(c, phase)]])
            med[c]['user'] = median([fn.get('(user)', 0) for fn, _, _ in per[(c, phase)]])
            med[c]['range'] = (min(sum(t.values()) for t in lay),
                               max(sum(t.values()) for t in lay))
        for la in layers:
            lines.append(f'| {la} | ' + ' | '.join(f'{med[c][la]:.0f}' for c in cfgs) + ' |')
        lines.append('| **the kernel** | ' + ' | '.join(
            f'**{med[c]["total"]:.0f}** [{med[c]["range"][0]:.0f}-{med[c]["range"][1]:.0f}]'
            for c in cfgs) + ' |')
        a = med[cfgs[0]]['total']
        lines.append('| against the swap file | ' + ' | '.join(
            f'{med[c]["total"] / a:.2f}x' for c in cfgs) + ' |')
        lines.append('| userspace (gsverify) | ' + ' | '.join(
            f'{med[c]["user"]:.0f}' for c in cfgs) + ' |')
        lines.append('| pages | ' + ' | '.join(f'{med[c]["pages"]:.0f}' for c in cfgs) + ' |')
        lines.append('')
    # The functions that make the difference, ghostswap on loop against
    # the swap file, out and in.
    for phase in ('out', 'in'):
        fa = {}
        for c in (cfgs[0], 'zswap-gs'):
            names = set()
            for fn, _, _ in per[(c, phase)]:
                names |= set(fn)
            fa[c] = {k: median([fn.get(k, 0) for fn, _, _ in per[(c, phase)]]) for k in names}
        names = set(fa[cfgs[0]]) | set(fa['zswap-gs'])
        order = sorted(names, key=lambda k: -abs(fa['zswap-gs'].get(k, 0) - fa[cfgs[0]].get(k, 0)))
        lines += [f'### {phase.capitalize()}: the functions that differ most, loop over a sparse file against the swap file', '',
                  '| function | layer | swap file | ghostswap, loop, sparse | difference |',
                  '|---|---|---:|---:|---:|']
        for k in [k for k in order if k != '(user)'][:top]:
            a, b = fa[cfgs[0]].get(k, 0), fa['zswap-gs'].get(k, 0)
            lines.append(f'| `{k}` | {layer_of(k)} | {a:.1f} | {b:.1f} | {b - a:+.1f} |')
        lines.append('')
    return '\n'.join(lines)


MTHP_VARIANTS = (
    ('zram', 'zram'),
    ('ghostswap', 'ghostswap, page by page'),
    ('ghostswap-units', 'ghostswap, units <= 16'),
)

# Where a large-folio workload's instructions go: the driver, the
# compressor, the pool, copies; the first match wins.
MTHP_LAYERS = (
    ('the driver (ghostswap.ko, zram.ko)', lambda n, m: m in ('ghostswap', 'zram')),
    ('compression (lz4, zstd)',
     lambda n, m: (m or '').startswith(('lz4', 'zstd')) or re.match(
         r'(LZ4|lz4|ZSTD|zstd|HUF_|FSE_|HIST_|ZDICT|xxh|XXH)', n)),
    ('zsmalloc', lambda n, m: re.match(
        r'(zs_|__zs_|obj_malloc|obj_free|obj_to_|location_to_obj|\w*zspage|'
        r'\w*fullness|get_first_obj_offset|create_page_chain|get_size_class|'
        r'class_stat)', n)),
    ('copies and fills (memcpy, memset)',
     lambda n, m: re.match(r'(memcpy|__memcpy|memset|__memset|memmove|copy_page|'
                           r'rep_movs|rep_stos)', n)),
)
MTHP_REST = 'the rest of the kernel (reclaim, swap core, faults, zeroing)'


def mthp_runs(d):
    """[(variant, alg, mix, rep, {function: instructions}, bench row)] of an
    mthp run: each usemem run counted whole."""
    rows = bench_rows(d, 'mthp', 'mthp',
                      lambda r: (r['variant'], r['alg'], r['mix'], r['rep']),
                      lambda r: f'{r.get("variant")} {r.get("alg")} {r.get("mix")}')

    def key(m):
        return m.group(1), m.group(2), m.group(3), int(m.group(4))
    return [(*key(m), c, rows[key(m)]) for m, c in counted_dumps(
        d, r'pcs-mthp-(zram|ghostswap-units|ghostswap)-(\w+)-(.+)-(\d+)\.txt$',
        lambda m: key(m) in rows)]


def mthp_report(runs):
    """Instructions per page swapped (out and in), by layer, for each
    algorithm and mix: zram, ghostswap page by page and in units."""
    per = collections.defaultdict(list)
    for var, alg, mix, _, c, row in runs:
        pages = row['pswpout'] + row['pswpin']
        if pages <= 0:
            raise SystemExit(f'mthp {var} {alg} {mix}: nothing was swapped')
        t = collections.Counter()
        for k, v in c.items():
            t['(user)' if k == '(user)' else layer_of(k, MTHP_LAYERS, MTHP_REST)] += v / pages
        per[(alg, mix)].append((var, t, row))
    vars_ = [v for v, _ in MTHP_VARIANTS]
    labels = dict(MTHP_VARIANTS)
    layers = [la for la, _ in MTHP_LAYERS] + [MTHP_REST]
    own = [la for la, _ in MTHP_LAYERS]
    lines = ['# Large folios: instructions per page swapped, by layer', '',
             'Exact counts (bench/funcs.sh mthp): each usemem run of the mthp',
             'section (16 and 64 KiB mTHP on, 2x a memory cgroup) counted whole,',
             'divided by the pages it swapped out and in (pswpout + pswpin);',
             'medians of the runs of each set-up, [range] of the kernel\'s whole.',
             '"The swap device\'s own" is the driver, the compressor, zsmalloc and',
             'the copies and fills, which are mostly theirs (zram clears lz4\'s',
             'state with memset before each page): what a swap device decides;',
             'the rest (reclaim, faults, the swap core) it changes only by',
             'swapping folios whole.', '']
    for (alg, mix), got in sorted(per.items()):
        have = [v for v in vars_ if any(g[0] == v for g in got)]
        if len(have) != len(vars_):
            raise SystemExit(f'mthp {alg} {mix}: runs of {have} only')
        med = {}
        for v in vars_:
            ts = [t for var, t, _ in got if var == v]
            rs = [r for var, _, r in got if var == v]
            med[v] = {la: median([t.get(la, 0) for t in ts]) for la in layers + ['(user)']}
            kern = [sum(x for k, x in t.items() if k != '(user)') for t in ts]
            med[v]['kernel'] = median(kern)
            med[v]['range'] = (min(kern), max(kern))
            med[v]['own'] = median([sum(t.get(la, 0) for la in own) for t in ts])
            for k in ('pswpout', 'pswpin', 'swpin_64k'):
                med[v][k] = median([r[k] for r in rs])
            med[v]['runs'] = len(ts)
        z = med['zram']
        lines += [f'## {alg}, {mix}', '',
                  '| | ' + ' | '.join(labels[v] for v in vars_) + ' |',
                  '|---|' + '---:|' * len(vars_)]
        for k, what in (('pswpout', 'pages swapped out'), ('pswpin', 'pages swapped in'),
                        ('swpin_64k', '64 KiB folios swapped in whole'),
                        ('runs', 'runs')):
            lines.append(f'| {what} | ' + ' | '.join(f'{med[v][k]:.0f}' for v in vars_) + ' |')
        for la in layers:
            lines.append(f'| {la} | ' + ' | '.join(f'{med[v][la]:.0f}' for v in vars_) + ' |')
        lines.append('| **the swap device\'s own** | ' + ' | '.join(
            f'**{med[v]["own"]:.0f}**' for v in vars_) + ' |')
        lines.append('| zram\'s own / this | ' + ' | '.join(
            f'{z["own"] / med[v]["own"]:.2f}x' for v in vars_) + ' |')
        lines.append('| **the whole kernel** | ' + ' | '.join(
            f'**{med[v]["kernel"]:.0f}** [{med[v]["range"][0]:.0f}-{med[v]["range"][1]:.0f}]'
            for v in vars_) + ' |')
        lines.append('| zram\'s kernel / this | ' + ' | '.join(
            f'{z["kernel"] / med[v]["kernel"]:.2f}x' for v in vars_) + ' |')
        lines.append('| userspace (usemem) | ' + ' | '.join(
            f'{med[v]["(user)"]:.0f}' for v in vars_) + ' |')
        lines.append('')
    return '\n'.join(lines)


# The layers of a raw-device write or read (patterns), in the report's
# order: a test of (function, module) each; the rest of the kernel last.
PATTERN_LAYERS = (
    ("the driver's module", lambda n, m: m in DRIVERS),
    ('the cluster index (XArray)',
     lambda n, m: n in ('xa_load', 'xas_load', 'xas_start', 'xas_descend')),
    ("zram's slot lock wake-up and clock",
     lambda n, m: n in ('wake_up_bit', 'ktime_get_coarse_with_offset')),
    ('lz4', lambda n, m: re.match(r'(LZ4|lz4)', n)),
    ('zsmalloc', lambda n, m: n in ZSMALLOC_SYMS or n.startswith('zs_')),
    ('memset, memcpy', lambda n, m: re.match(
        r'(memcpy|__memcpy|memset|__memset|memset_orig|memcpy_orig|memmove|'
        r'copy_page|clear_page|rep_movs|rep_stos)', n)),
    ("the block device's page cache", lambda n, m: re.match(
        r'(invalidate_inode_pages2|filemap_|__filemap|xas_find|'
        r'find_get_entries|folio_|kiocb_invalidate|xas_move_index)', n)),
    ('the user program', lambda n, m: n == '(user)'),
)
ZSMALLOC_SYMS = frozenset("""
    obj_malloc obj_free record_obj location_to_obj obj_to_location
    get_size_class_index class_stat_add class_stat_sub
""".split())


def io_count(path):
    """I/Os of a patterns run: fio's JSON (reads + writes) or pagerw's."""
    with open(path) as f:
        text = f.read()
    d = json.loads(text[text.index('{'):])
    if 'jobs' not in d:
        return d['ios']
    j = d['jobs'][0]
    return j['read']['total_ios'] + j['write']['total_ios']


def patterns_runs(d):
    """{(pattern, engine, rw): {driver: [{function: per I/O}]}}: each run
    of the patterns section less the 0.2 s run after it."""
    rows = bench_rows(d, 'patterns', 'patterns',
                      lambda r: (r['pattern'], r['engine'], r['rw'],
                                 r['driver'], r['rep']),
                      lambda r: f"{r['pattern']} {r['driver']} #{r['rep']}")
    dumps = dict((m.group(1), c) for m, c in counted_dumps(
        d, r'pcs-(patterns-.*)\.txt$', lambda m: True))
    out = collections.defaultdict(lambda: collections.defaultdict(list))
    for (pat, eng, rw, drv, rep), r in sorted(rows.items()):
        label = os.path.basename(r['file'])[:-5]
        long_, short = dumps.get(label), dumps.get(label + '-short')
        if long_ is None or short is None:
            raise SystemExit(f'patterns {label}: no counts')
        sub = os.path.join(d, 'patterns')
        n = io_count(os.path.join(sub, r['file'])) - io_count(
            os.path.join(sub, r['file'][:-5] + '-short.json'))
        out[(pat, eng, rw)][drv].append(
            {k: (long_.get(k, 0) - short.get(k, 0)) / n
             for k in set(long_) | set(short)})
    return out


def patterns_report(runs, top=20):
    """Per I/O of each pattern, engine and direction: the layers and the
    functions that differ most, ghostswap against zram (medians)."""
    out = ['# Instructions per I/O of the patterns section, by layer', '',
           'Each run less the 0.2 s run after it, divided by the I/Os '
           'between them; medians of the runs of each driver.', '']
    rest = 'the rest of the kernel'
    for key in sorted(runs):
        by = runs[key]
        if not all(by.get(drv) for drv in DRIVERS):
            continue
        med = {}
        for drv in DRIVERS:
            names = set().union(*by[drv])
            med[drv] = {k: median([c.get(k, 0) for c in by[drv]])
                        for k in names}
        lay = {drv: collections.Counter() for drv in DRIVERS}
        for drv in DRIVERS:
            for k, v in med[drv].items():
                lay[drv][layer_of(k, PATTERN_LAYERS, rest)] += v
        out += ['## %s, %s, %s (%d and %d runs)' % (
            key + (len(by['ghostswap']), len(by['zram']))), '',
            '| per I/O | ghostswap | zram | difference |', '|---|---:|---:|---:|']
        for label in [la for la, _ in PATTERN_LAYERS] + [rest]:
            g, z = lay['ghostswap'][label], lay['zram'][label]
            out.append('| %s | %.0f | %.0f | %+.0f |' % (label, g, z, g - z))
        g, z = sum(lay['ghostswap'].values()), sum(lay['zram'].values())
        out += ['| **the whole guest** | **%.0f** | **%.0f** | **%+.0f** |' % (
            g, z, g - z), '', '| function | ghostswap | zram | difference |',
            '|---|---:|---:|---:|']
        g, z = med['ghostswap'], med['zram']
        for k in sorted(set(g) | set(z),
                        key=lambda k: -abs(g.get(k, 0) - z.get(k, 0)))[:top]:
            out.append('| `%s` | %.1f | %.1f | %+.1f |' % (
                k, g.get(k, 0), z.get(k, 0), g.get(k, 0) - z.get(k, 0)))
        out.append('')
    return '\n'.join(out) + '\n'


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'patterns':
        sys.stdout.write(patterns_report(patterns_runs(sys.argv[2])))
        return
    if len(sys.argv) == 3 and sys.argv[1] == 'mthp':
        sys.stdout.write(mthp_report(mthp_runs(sys.argv[2])))
        return
    if len(sys.argv) == 3 and sys.argv[1] == 'series':
        sys.stdout.write(series_report(series_runs(sys.argv[2])))
        return
    if len(sys.argv) == 3 and sys.argv[1] == 'zswap':
        sys.stdout.write(zpath_report(zpath_runs(sys.argv[2])))
        return
    if len(sys.argv) != 2:
        raise SystemExit('usage: funcs.py [series|zswap|mthp] DIR')
    sys.stdout.write(report(per_read(sys.argv[1])))


if __name__ == '__main__':
    main()
