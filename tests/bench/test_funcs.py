#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of bench/funcs.py on hand-made counts whose costs per read
are known. Prints TAP; exits non-zero on any failure.

usage: tests/bench/test_funcs.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import check, plan

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUNCS = os.path.join(TOP, "bench", "funcs.py")


# Functions at 0x...1000, 0x...2000, ...: each 16 instructions long here.
SYMS = [("gs_store_read_nowait", "[ghostswap]"), ("zram_submit_bio", "[zram]"),
        ("wake_up_bit", None), ("_raw_spin_lock", None),
        ("__free_one_page", None), ("gs_open", "[ghostswap]"),
        ("sched_ttwu_pending", None)]
BASE = 0xffffffff81000000


def addr(i, off=0):
    return BASE + (i + 1) * 0x1000 + off


def write_run(d, drv, qd, ios, per_read, fixed=1000, user=0):
    """A dump of IOS reads costing PER_READ {symbol index: instructions},
    spread over 4 addresses each, plus FIXED of each at the start."""
    with open(os.path.join(d, "pcs-%s-qd%d-%d.txt" % (drv, qd, ios)), "w") as f:
        for i, c in per_read.items():
            total = fixed + c * ios
            for k in range(4):
                f.write("%x %d\n" % (addr(i, 4 * k), total // 4 + (total % 4 if k == 0 else 0)))
        f.write("user %d\n" % (5000000 + user * ios))


def table_rows(out):
    """{first cell: the other cells} of the table rows in OUT."""
    rows = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith("| function"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def write_series(d, drv, rep, pages, per_page, kbps):
    """A series run of DRIVER: PAGES swapped out, PER_PAGE {symbol index:
    instructions} each, and its bench.jsonl line."""
    with open(os.path.join(d, "pcs-series-%s-%d.txt" % (drv, rep)), "w") as f:
        for i, c in per_page.items():
            f.write("%x %d\n" % (addr(i), c * pages))
        f.write("user %d\n" % (7 * pages))
    with open(os.path.join(d, "series", "bench.jsonl"), "a") as f:
        f.write(json.dumps({"section": "usemem_series", "driver": drv, "rep": rep,
                            "result": {"sum_kbps": kbps},
                            "vmstat": {"pswpout": pages, "pswpin": 0}}) + "\n")


def series(d):
    """funcs.py series: instructions per page swapped out, medians."""
    os.makedirs(os.path.join(d, "series"))
    # ghostswap: 300 a page in its module in each run, the lock 20 and 40
    # (median 30); zram: 250 in its module, wake_up_bit 50.
    write_series(d, "ghostswap", 1, 1000, {0: 300, 3: 20}, 100)
    write_series(d, "ghostswap", 2, 3000, {0: 300, 3: 40}, 110)
    write_series(d, "zram", 1, 2000, {1: 250, 2: 50}, 90)
    write_series(d, "zram", 2, 2000, {1: 250, 2: 50}, 94)
    # A dump without its jsonl line is left out.
    write_run(d, "series-zram", 0, 3, {1: 1})
    p = subprocess.run([sys.executable, FUNCS, "series", d], capture_output=True, text=True)
    out = p.stdout
    check("funcs.py series runs", p.returncode == 0, p.stderr)
    rows = table_rows(out)
    check("series: a function per page swapped out, the median of the runs",
          rows.get("`gs_store_read_nowait [ghostswap]`") == ["300.0", "0.0", "+300.0"] and
          rows.get("`_raw_spin_lock`") == ["30.0", "0.0", "+30.0"], out)
    check("series: the modules and the whole kernel",
          rows.get("the driver's module") == ["300.0", "250.0", "+50.0"] and
          rows.get("the whole kernel") == ["330.0", "300.0", "+30.0"], out)
    check("series: throughput with its range, userspace apart",
          rows.get("sum KiB/s") == ["105 [100-110]", "92 [90-94]"] and
          rows.get("userspace") == ["7.0", "7.0", "+0.0"], out)
    for name in os.listdir(d):
        if name.startswith("pcs-series-zram"):
            os.remove(os.path.join(d, name))
    p = subprocess.run([sys.executable, FUNCS, "series", d], capture_output=True, text=True)
    check("series: a driver without runs is an error that names it",
          p.returncode != 0 and "zram" in p.stderr, p.stderr)


def main():
    d = tempfile.mkdtemp()
    try:
        with open(os.path.join(d, "kallsyms"), "w") as f:
            for i, (name, mod) in enumerate(SYMS):
                f.write("%x t %s%s\n" % (addr(i), name, " " + mod if mod else ""))
            f.write("%x D some_data\n" % addr(len(SYMS)))
        # ghostswap: 200 in its module, 25 in the lock; zram: 164 + 62 and
        # 16. The page allocator moves with the depth: 30 vs 0 at qd1, 0 vs
        # 40 at qd32, not a cost of the read path.
        # Wakeups on the other vCPU: 10 vs 4 at qd1, 20 vs 14 at qd32, the
        # same difference by chance, but neither driver's cost is steady.
        for qd, (gf, zf, gw, zw) in ((1, (30, 0, 10, 4)), (32, (0, 40, 20, 14))):
            for ios in (2000, 12000):
                write_run(d, "ghostswap", qd, ios,
                          {0: 200, 3: 25, 4: gf, 6: gw}, user=3000)
                write_run(d, "zram", qd, ios,
                          {1: 164, 2: 62, 3: 16, 4: zf, 6: zw}, user=3100)
        p = subprocess.run([sys.executable, FUNCS, d], capture_output=True, text=True)
        out = p.stdout
        check("funcs.py runs", p.returncode == 0, p.stderr)
        rows = table_rows(out)
        check("the module's function, per read, the fixed start cancelled",
              rows.get("`gs_store_read_nowait [ghostswap]`") ==
              ["200.0", "0.0", "200.0", "0.0"], out)
        check("zram's own and a kernel function only it calls",
              rows.get("`zram_submit_bio [zram]`") == ["0.0", "164.0", "0.0", "164.0"] and
              rows.get("`wake_up_bit`") == ["0.0", "62.0", "0.0", "62.0"], out)
        check("a kernel function both call, at a different cost",
              rows.get("`_raw_spin_lock`") == ["25.0", "16.0", "25.0", "16.0"], out)
        check("what moves with the depth is not listed",
              "`__free_one_page`" not in rows, out)
        check("nor what moves with the depth by the same for both",
              "`sched_ttwu_pending`" not in rows, out)
        check("a module function that never ran is not listed",
              "`gs_open [ghostswap]`" not in rows, out)
        check("the read path's sum: the listed functions",
              rows.get("**the listed: the read path's difference**") ==
              ["225.0", "242.0", "225.0", "242.0"], out)
        check("the whole kernel includes the rest",
              rows.get("the whole kernel (with whatever else the guest ran meanwhile)") == ["265.0", "246.0", "245.0", "296.0"], out)
        check("userspace apart",
              rows.get("userspace (fio)") ==
              ["3000.0", "3100.0", "3000.0", "3100.0"], out)
        os.remove(os.path.join(d, "pcs-zram-qd32-2000.txt"))
        p = subprocess.run([sys.executable, FUNCS, d], capture_output=True, text=True)
        check("a run missing is an error that names it",
              p.returncode != 0 and "zram" in p.stderr and "32" in p.stderr, p.stderr)
        series(d)
    finally:
        shutil.rmtree(d)
        status = plan()
    sys.exit(status)


if __name__ == "__main__":
    main()
