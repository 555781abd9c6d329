#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of bench/report.py on hand-made measurements whose ratios are
known. Prints TAP; exits non-zero on any failure.

usage: tests/bench/test_report.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import check, plan

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(TOP, "bench", "report.py")


def fio_json(read_iops, write_iops, p99_ns):
    def side(iops):
        if not iops:
            return {"total_ios": 0, "iops": 0, "bw": 0}
        return {"total_ios": int(iops * 8), "iops": iops, "bw": iops * 4,
                "clat_ns": {"percentile": {"99.000000": p99_ns}}}
    # fio may print a note before its JSON: the report must cope.
    return "note: something fio said\n" + json.dumps(
        {"jobs": [{"read": side(read_iops), "write": side(write_iops)}]})


def workload(drv, mix, oc, mib_s, p99, bad=0, rc=0):
    return {"section": "workload", "driver": drv, "mix": mix,
            "overcommit": oc, "limit_mib": 64, "alg": "lz4", "rc": rc,
            "peak_orig": 100 << 20, "peak_pool": 40 << 20, "pswpout": 1000,
            "zswap_written_back": 0,
            "result": {"size_mib": 64 * oc, "passes": 3, "mix": "t",
                       "fill_s": 1.0, "sweep_s": 10.0, "mib_s": mib_s,
                       "swapins": 5000, "majflt": 5000,
                       "lat_us": {"p50": 10.0, "p90": 20.0, "p99": p99,
                                  "p999": 99.0, "max": 150.0},
                       "verified_pages": 1000, "bad_pages": bad}}


def fio_guest(d, section, cpus, runs):
    """A guest of its own that ran only the fio section SECTION: its env
    line, then for each (fields, read IOPS, write IOPS) of RUNS a fio JSON
    and the line that names it."""
    g = os.path.join(d, "guest-" + section)
    os.makedirs(os.path.join(g, "fio"))
    with open(os.path.join(g, "bench.jsonl"), "w") as f:
        f.write(json.dumps({"section": "env", "kernel": "7.3.4+deb13-amd64",
                            "cpus": cpus, "mem_total": 2 << 30}) + "\n")
        for i, (fields, rd, wr) in enumerate(runs):
            name = "fio/%s-%d.json" % (section, i)
            with open(os.path.join(g, name), "w") as j:
                j.write(fio_json(rd, wr, 1000))
            f.write(json.dumps(dict(fields, section=section, rep=i, rc=0,
                                    file=name)) + "\n")


def fixture(d):
    g = os.path.join(d, "guest")
    os.makedirs(os.path.join(g, "fio"))
    rows = [
        {"section": "env", "kernel": "7.3.4+deb13-amd64", "cpus": 2,
         "mem_total": 2 << 30, "quick": 0, "zswap_zpool": "zsmalloc",
         "zswap_max_pool_percent": 20, "zswap_shrinker_default": "N",
         "reps": 3},
        {"section": "static", "driver": "ghostswap", "disksize": "64G",
         "ok": True, "bytes": 64 << 30, "device_kmem": 0, "device_free": 4096,
         "counted": 0, "swapon_kmem": 1 << 20, "swapon_free": 1 << 20},
        {"section": "static", "driver": "zram", "disksize": "64G",
         "ok": True, "bytes": 64 << 30, "device_kmem": 256 << 20,
         "device_free": 256 << 20, "swapon_kmem": 1 << 20,
         "swapon_free": 1 << 20},
        {"section": "static", "driver": "zram", "disksize": "1T",
         "ok": False, "fail": "Cannot allocate memory"},
        {"section": "meta", "driver": "ghostswap", "pages": 1000,
         "counted_meta": 9550, "slab_meta": 9550, "measured_meta": 12000,
         "disksize": 64 << 30, "orig": 4096000, "compr": 2000000,
         "pool": 2048000},
        {"section": "ratio", "driver": "ghostswap", "alg": "lz4",
         "data": "corpus", "mib": 100, "write_s": 2.0, "read_s": 1.0,
         "meta": 0, "orig": 300, "compr": 90, "pool": 100},
        {"section": "ratio", "driver": "zram", "alg": "lz4",
         "data": "corpus", "mib": 100, "write_s": 4.0, "read_s": 1.0,
         "meta": 50, "orig": 300, "compr": 90, "pool": 100},
        {"section": "ratio", "driver": "ghostswap", "alg": "lzo-rle",
         "data": "corpus", "mib": 100, "write_s": 2.0, "read_s": 1.0,
         "meta": 0, "orig": 300, "compr": 90, "pool": 150},
        {"section": "ratio", "driver": "zram", "alg": "lzo-rle",
         "fail": "not offered by zram: lz4 [zstd]"},
        dict(workload("ghostswap", "mixed", 3, 10.0, 100.0),
             section="ratio_swap", peak_orig=300, peak_pool=100,
             peak_meta=50),
        dict(workload("zram", "mixed", 3, 10.0, 100.0),
             section="ratio_swap", peak_orig=300, peak_pool=100,
             peak_meta=100),
        {"section": "ratio_swap", "driver": "ghostswap", "alg": "zstd",
         "mix": "mixed", "fail": "swapon failed"},
        dict(workload("ghostswap", "text", 2, 10.0, 300.0), rep=1),
        dict(workload("ghostswap", "text", 2, 50.0, 90.0), rep=2),
        dict(workload("ghostswap", "text", 2, 30.0, 100.0), rep=3),
        workload("zram", "text", 2, 20.0, 200.0),
        workload("zswap", "text", 2, 15.0, 300.0, bad=1, rc=1),
        {"section": "fio", "driver": "ghostswap", "rw": "randread",
         "iodepth": 1, "numjobs": 1, "rc": 0,
         "file": "fio/ghostswap-randread-qd1-j1.json"},
        {"section": "fio", "driver": "zram", "rw": "randread",
         "iodepth": 1, "numjobs": 1, "rc": 0,
         "file": "fio/zram-randread-qd1-j1.json"},
        {"section": "writeback", "driver": "disk",
         "file": "fio/backing-seqwrite.json"},
        {"section": "writeback", "driver": "disk_qd1",
         "file": "fio/backing-seqwrite-qd1.json"},
        {"section": "writeback", "driver": "ghostswap", "pages": 25600,
         "seconds": 1.0},
        {"section": "writeback", "driver": "zram", "pages": 25600,
         "seconds": 2.0},
        {"section": "writeback", "driver": "ghostswap-nosum", "pages": 25600,
         "seconds": 0.5},
        {"section": "writeback", "driver": "ghostswap-encrypt",
         "pages": 25600, "seconds": 4.0},
        {"section": "comp_dict", "bytes": 65536},
        dict(workload("zswap-gs", "text", 2, 30.0, 100.0), section="zswap",
             peak_meta=10 << 20, disk_peak_kib=81920, disk_after_kib=4,
             zswap_cg_max="32M"),
        dict(workload("zswap", "text", 2, 20.0, 100.0), section="zswap",
             peak_meta=10 << 20, disk_peak_kib=1572864,
             disk_after_kib=1572864, zswap_cg_max="32M"),
        dict(workload("ghostswap", "text", 3, 10.0, 100.0), section="comp",
             variant="gs-dict", alg="zstd", peak_orig=300, peak_pool=100,
             peak_meta=20, comp_stat=[90, 100, 0]),
        dict(workload("ghostswap", "text", 3, 10.0, 100.0), section="comp",
             variant="gs-zstd", alg="zstd", peak_orig=300, peak_pool=120,
             peak_meta=20, comp_stat=[100, 100, 1]),
        dict(workload("zram", "text", 3, 10.0, 100.0), section="comp",
             variant="zram", alg="zstd", peak_orig=300, peak_pool=120,
             peak_meta=80),
        {"section": "comp_recomp", "variant": "lz4-recomp", "phase": "stored",
         "orig": 400, "compr": 190, "pool": 200},
        {"section": "comp_recomp", "variant": "lz4-recomp", "phase": "swept",
         "orig": 400, "compr": 140, "pool": 150, "recompressed": 77,
         "seconds": 12.0},
        {"section": "comp_recomp", "variant": "zstd", "phase": "stored",
         "orig": 400, "compr": 130, "pool": 140},
        {"section": "time", "name": "static", "seconds": 10.0},
        {"section": "workload", "error": "failed, see section-workload.log"},
    ]
    # Large folios: two shapes (16K+64K at 2x, mTHP off at 4x), two runs
    # of each set-up; units: 20 and 30 MiB/s against zram's 25.
    for folios, oc in (("16K+64K", 2), ("4K", 4)):
        for rep, (zt, gt, ut) in enumerate(((25.0, 24.0, 20.0),
                                            (25.0, 26.0, 30.0))):
            for var, mib_s in (("zram", zt), ("ghostswap", gt),
                               ("ghostswap-units", ut)):
                r = workload(var.split("-")[0], "text", oc, mib_s, 50.0)
                r.update(section="mthp", variant=var, alg="zstd",
                         folios=folios, rep=rep + 1,
                         peak_pool=(20 << 20) if var == "ghostswap-units"
                         else 40 << 20, swpin_64k=100 if oc == 2 else 0,
                         comp_stat=list(range(14)) if var != "zram" else None)
                rows.append(r)
    with open(os.path.join(g, "bench.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    files = {
        "fio/ghostswap-randread-qd1-j1.json": fio_json(30000, 0, 8000),
        "fio/zram-randread-qd1-j1.json": fio_json(20000, 0, 16000),
        # 200 MiB/s: bw in KiB/s.
        "fio/backing-seqwrite.json": json.dumps(
            {"jobs": [{"read": {"total_ios": 0},
                       "write": {"total_ios": 10, "iops": 1600,
                                 "bw": 200 * 1024}}]}),
        "fio/backing-seqwrite-qd1.json": json.dumps(
            {"jobs": [{"read": {"total_ios": 0},
                       "write": {"total_ios": 10, "iops": 800,
                                 "bw": 100 * 1024}}]}),
    }
    for name, text in files.items():
        with open(os.path.join(g, name), "w") as f:
            f.write(text)
    # The static section again, from a boot of the 6.12 LTS kernel.
    lts = os.path.join(d, "guest-lts")
    os.makedirs(lts)
    with open(os.path.join(lts, "bench.jsonl"), "w") as f:
        for r in (
                {"section": "env", "kernel": "6.12.117+deb13-amd64",
                 "cpus": 2, "mem_total": 2 << 30, "quick": 0, "reps": 3},
                {"section": "static", "driver": "ghostswap",
                 "disksize": "64G", "ok": True, "bytes": 64 << 30,
                 "device_kmem": 0, "device_free": 0, "counted": 0,
                 "swapon_kmem": 19 << 20, "swapon_free": 52 << 20}):
            f.write(json.dumps(r) + "\n")
    # The scale section, from a 4-vCPU guest of its own: two runs each.
    iops = {("ghostswap", 1): (10000, 12000), ("ghostswap", 2): (19000, 21000),
            ("ghostswap", 4): (30000, 34000), ("zram", 1): (10000, 10000),
            ("zram", 2): (18000, 18000), ("zram", 4): (16000, 24000)}
    fio_guest(d, "scale", 4, [
        ({"driver": drv, "rw": "randread", "numjobs": nj}, v, 0)
        for (drv, nj), runs in iops.items() for v in runs])
    # The icount section, from a guest of its own: two runs each; 10^9 /
    # IOPS is instructions per I/O.
    iops = {("ghostswap", "randread"): (80000, 80008),
            ("zram", "randread"): (78000, 78002),
            ("ghostswap", "randwrite"): (20000, 20000),
            ("zram", "randwrite"): (25000, 25000)}
    fio_guest(d, "icount", 2, [
        ({"driver": drv, "rw": rw, "iodepth": 1},
         v if rw == "randread" else 0, v if rw == "randwrite" else 0)
        for (drv, rw), runs in iops.items() for v in runs])
    # The icount profile: a perf report for each driver on the text mix,
    # 1000 samples besides perf's own and the idle CPUs', and the run's
    # own line (no file: not a profile).
    g = os.path.join(d, "guest-icount")
    # A module's symbols are known by its object or by its list.
    prof = {"ghostswap": [(20, "kworker/u4:2-ev", "[kernel.kallsyms]",
                           "gs_store_read_nowait"),
                          (10, "usemem", "[ghostswap]", "gs_slot_install"),
                          (670, "usemem", "usemem", "sweep")],
            "zram": [(50, "usemem", "[kernel.kallsyms]", "zram_submit_bio"),
                     (100, "usemem", "[kernel.kallsyms]", "__pi_memset"),
                     (550, "usemem", "[kernel.kallsyms]", "clear_page_erms")]}
    with open(os.path.join(g, "bench.jsonl"), "a") as f:
        for drv, lines in prof.items():
            lines += [(200, "usemem", "[kernel.kallsyms]", "LZ4_compress_fast"),
                      (100, "kswapd0", "[kernel.kallsyms]", "zs_malloc"),
                      (100, "perf", "perf", "record__write"),
                      (400, "swapper", "[kernel.kallsyms]",
                       "pv_native_safe_halt")]
            name = "iprof-%s-text.txt" % drv
            with open(os.path.join(g, name), "w") as t:
                for n, comm, dso, sym in lines:
                    t.write("    %5.2f%%  %12d  %-16s %-18s [%s] %s\n" % (
                        n / 15.0, n, comm, dso,
                        "." if dso == comm else "k", sym))
            f.write(json.dumps({"section": "icount_profile", "driver": drv,
                                "mix": "text", "rep": 1, "rc": 0,
                                "result": None}) + "\n")
            with open(os.path.join(g, drv + ".syms"), "w") as t:
                t.write("gs_store_read_nowait\nzram_submit_bio\n")
            f.write(json.dumps({"section": "icount_profile", "driver": drv,
                                "mix": "text", "file": name,
                                "syms": drv + ".syms"}) + "\n")
    # The series' usemem: two runs of each driver, a third of ghostswap
    # that failed (left out of the medians, and its bad words not).
    with open(os.path.join(g, "bench.jsonl"), "a") as f:
        for drv, rep, procs, out in (("zram", 1, (30000, 26000), 80000),
                                     ("ghostswap", 1, (34000, 27000), 80010),
                                     ("ghostswap", 2, (32000, 27000), 79990),
                                     ("zram", 2, (32000, 26000), 80000)):
            f.write(json.dumps({
                "section": "usemem_series", "driver": drv, "rep": rep,
                "rc": 0, "cg_mib": 128,
                "result": {"nproc": 2, "size_mib": 216,
                           "procs": [{"kbps": k, "secs": 1} for k in procs],
                           "sum_kbps": sum(procs), "bad_words": 0,
                           "complete": True},
                "vmstat": {"pswpout": out, "pswpin": 20,
                           "pgscan_direct": 120000,
                           "workingset_refault_anon": 20}}) + "\n")
        f.write(json.dumps({"section": "usemem_series", "driver": "ghostswap",
                            "rep": 3, "fail": "swapon failed"}) + "\n")
    # The patterns section: one fio pattern (fio's JSON) and one of
    # pagerw (its one line), writes, two runs of each driver; a failed
    # run left out. vm-scalability's usemem: two runs of each driver and
    # one that printed a single rate.
    os.makedirs(os.path.join(g, "fio"), exist_ok=True)
    with open(os.path.join(g, "bench.jsonl"), "a") as f:
        for pat, kind in (("fio-512", "fio"), ("text", "pagerw")):
            f.write(json.dumps({"section": "patterns_fill", "pattern": pat,
                                "mib": 256,
                                "ghostswap_mm_stat": "100 5000 6000",
                                "zram_mm_stat": "100 5001 7000"}) + "\n")
            for drv, rep, iops in (("zram", 1, 20000), ("ghostswap", 1, 20500),
                                   ("ghostswap", 2, 20700), ("zram", 2, 20200),
                                   ("ghostswap", 3, 1)):
                name = "fio/patterns-%s-psync-write-%s-%d.json" % (pat, drv, rep)
                with open(os.path.join(g, name), "w") as t:
                    if kind == "fio":
                        t.write(json.dumps({"jobs": [{"write": {
                            "total_ios": 100, "iops": iops, "bw": 1,
                            "clat_ns": {"percentile": {}}}}]}))
                    else:
                        t.write(json.dumps({"ios": 100, "seconds": 1,
                                            "iops": iops}) + "\n")
                f.write(json.dumps({"section": "patterns", "pattern": pat,
                                    "engine": "psync", "rw": "write",
                                    "driver": drv, "rep": rep,
                                    "rc": 1 if rep == 3 else 0,
                                    "file": name}) + "\n")
        for drv, rep, kbps in (("zram", 1, [30000, 29000]),
                               ("ghostswap", 1, [31000, 30000]),
                               ("ghostswap", 2, [33000, 30400]),
                               ("zram", 2, [30400, 29400]),
                               ("ghostswap", 3, [1000])):
            f.write(json.dumps({"section": "usemem_upstream", "driver": drv,
                                "rep": rep, "rc": 0, "cg_mib": 128,
                                "size": "192M", "kbps": kbps,
                                "vmstat": {"pswpout": 66000,
                                           "thp_swpout": 0}}) + "\n")
    # A kernel report in the icount guest's console (bench_console).
    with open(os.path.join(d, "guest-icount", "console.tap"), "w") as f:
        f.write("ok - bench guest-icount: booted\n"
                "not ok - bench guest-icount: kernel report: WARNING: "
                "at mm/x.c:1\n")
    with open(os.path.join(d, "host.json"), "w") as f:
        json.dump({"host_cpu": "Test CPU", "host_cpus": 2, "accel": "tcg",
                   "icount_qemu":
                   "QEMU 7.2, TCG single-threaded, icount shift=0",
                   "scale_qemu": "QEMU 7.2, TCG multi-threaded",
                   "qemu": "QEMU 7.2", "host_kernel": "6.18",
                   "module_version": "0.1.0", "commit": "abc",
                   "date": "2026-11-23"}, f)


def main():
    d = tempfile.mkdtemp()
    try:
        fixture(d)
        p = subprocess.run([sys.executable, REPORT, d], capture_output=True,
                           text=True)
        check("report.py runs", p.returncode == 0, p.stdout + p.stderr)
        if p.returncode:
            return
        md = open(os.path.join(d, "report.md")).read()
        res = json.load(open(os.path.join(d, "results.json")))
        check("results.json: every section shaped",
              all(k in res for k in ("static", "meta", "ratio", "workload",
                                     "fio", "writeback", "host", "env")),
              sorted(res))
        check("failed sections are listed",
              "workload: failed, see section-workload.log" in md, md)
        check("a kernel report in a guest's console is listed",
              "- console of guest-icount: bench guest-icount: kernel report: "
              "WARNING: at mm/x.c:1" in md, md)
        check("static: zram at 1T fails, with the reason",
              "fails: Cannot allocate memory" in md, md)
        check("static: ghostswap 0 B (counted and measured) vs zram 256 MiB",
              "| 64G | 0 B | 0 B | 256.0 MiB | 0.0000 | 1.0 MiB |" in md, md)
        check("static: the swap core's cost on the 6.12 kernel beside 7.x's",
              "| 64G | 0 B | 0 B | 256.0 MiB | 0.0000 | 1.0 MiB | 52.0 MiB "
              "(kernel allocators: 19.0 MiB) |"
              in md and "swap core at swapon, 6.12.117+deb13-amd64" in md and
              res["env"]["kernel"] == "7.3.4+deb13-amd64", md)
        check("meta: 9.55 B per page from the module's count",
              "| ghostswap | 1000 | 9.3 KiB | 9.3 KiB | 11.7 KiB | 9.55 B |"
              in md, md)
        # ghostswap 300 / 100 = 3.00, zram 300 / 150 = 2.00: 1.5.
        check("ratio: data / (pool + metadata), ghostswap / zram",
              "| lz4 | 3.00 | 2.00 | 1.500 | 50 | 25 | 100 | 100 |" in md, md)
        check("ratio: an algorithm zram lacks is shown with the reason",
              "| lzo-rle | 2.00 | - | - |" in md and
              "zram with lzo-rle: not offered by zram" in md, md)
        check("ratio_swap: data/pool, data/memory, ghostswap / zram",
              "| lz4 | 3.00 | 3.00 | 2.00 | 1.50 | 1.333 | yes |" in md, md)
        check("mthp: each shape's rows, units against zram",
              "| zstd | text | 16K+64K | 2x | ghostswap, units of up to 16 "
              "pages (multi_page=16) | 25.0 (20.0-30.0) | 1.00 | 5.00 | "
              "2.00 | 8 | 10 | 11 | 12 | 13 | 100 | yes |" in md and
              "| zstd | text | 4K | 4x | zram | 25.0 (25.0-25.0) |  | 2.50 "
              "|  | - | - | - | - | - | 0 | yes |" in md, md)
        check("workload: medians of the runs, with their range",
              "| text | 2x | ghostswap | 30.0 (10.0-50.0) |  | 5000 | 10.0 "
              "| 100.0 |" in md and "medians of 3 runs" in md, md)
        check("workload: throughput ratio ghostswap / other",
              "| text | 2x | zram | 20.0 | 1.50 |" in md, md)
        check("workload: a run with bad pages is flagged",
              "| text | 2x | zswap | 15.0 | 2.00 |" in md and
              "**NO (rc 1)**" in md, md)
        check("zswap in front: throughput against zswap + swap file, disk "
              "blocks at the peak and after",
              "| text | zswap + ghostswap (mode zswap, 1 TiB, sparse file) "
              "| 30.0 | 1.50 | 50.0 MiB | 2.00 | 80.0 MiB | 4.0 KiB | yes |"
              in md and "| text | zswap + swap file (1.5 GiB, allocated) "
              "| 20.0 |  | 50.0 MiB | 2.00 | 1.5 GiB | 1.5 GiB | yes |" in md,
              md)
        check("zswap in front: what zswap could hold of the cgroup",
              "(`memory.zswap.max`): 32M." in md, md)
        # data/memory 300/120 = 2.50 against zram's 300/200 = 1.50.
        check("comp: zstd with a dictionary against zram's zstd",
              "| text | ghostswap zstd + dictionary | 3.00 | 2.50 | 1.67 |"
              in md, md)
        check("comp: background recompression, share of zstd's ratio",
              "| lz4, then zstd in the background | 2.67 | 93% |" in md and
              "77 pages in 12 s" in md, md)
        check("comp: compressions per stored page, heuristic verdicts",
              "190 compressions for 200 pages stored (0.950), 1 of them"
              in md and "called 1 of 200 pages incompressible (0.50%)" in md,
              md)
        check("fio: IOPS ratio and p99 in microseconds",
              "| randread | 1 | 1 | 30000 | 20000 | 1.50 | 8 | 16 |" in md, md)
        # Medians: ghostswap 11000, 20000, 32000; zram 10000, 18000, 20000.
        check("scale: IOPS with 1, 2, 4 jobs and their growth, per driver",
              "| randread | 1 | 11000 (10000-12000) | 1.00x | 10000 "
              "(10000-10000) | 1.00x | 1.10 |" in md and
              "| randread | 4 | 32000 (30000-34000) | 2.91x | 20000 "
              "(16000-24000) | 2.00x | 1.60 |" in md and
              "4 vCPUs (QEMU 7.2, TCG multi-threaded)" in md and
              "| randread | 2 | 20000" in md, md)
        # Medians 80004 and 78001: 12499 and 12820 instructions per I/O.
        check("icount: IOPS ratio and instructions per I/O, per driver",
              "| randread | 1 | 80004 (80000-80008) | 78001 (78000-78002) "
              "| 1.026 | 12499 | 12820 | -321 |" in md and
              "| randwrite | 1 | 20000 (20000-20000) | 25000 (25000-25000) "
              "| 0.800 | 50000 | 40000 | +10000 |" in md and
              "(QEMU 7.2, TCG single-threaded, icount shift=0)" in md, md)
        check("icount profile: shares of 1000 samples by group, perf "
              "and idle left out",
              "| text | ghostswap | 1000 | 3.00% | 20.00% | 10.00% | 0.00% "
              "| 67.00% | gs_store_read_nowait 2.00%, gs_slot_install "
              "1.00% |" in md and
              "| text | zram | 1000 | 5.00% | 20.00% | 10.00% | 10.00% "
              "| 55.00% | zram_submit_bio 5.00% |" in md, md)
        # Sums 61000 and 59000 (ghostswap), 56000 and 58000 (zram).
        check("usemem_series: medians of the sums and of each process, "
              "ranges, the kernel's counts",
              "| sum of the processes, KiB/s | 60000 [59000-61000] "
              "| 57000 [56000-58000] | 1.053 |" in md and
              "| the faster process | 33000 [32000-34000] | 31000 "
              "[30000-32000] | 1.065 |" in md and
              "| the slower process | 27000 [27000-27000] | 26000 "
              "[26000-26000] | 1.038 |" in md and
              "| pages swapped out (pswpout) | 80000 [79990-80010] | 80000 "
              "[80000-80000] | 1.000 |" in md and
              "Medians of 2 ghostswap and 2 zram runs" in md and
              "checked after the timed part: yes" in md, md)
        # Medians: ghostswap 20600, zram 20100: 1.025; the pairs' bounds
        # 20500/20200 and 20700/20000.
        check("patterns: fio's JSON and pagerw's line, medians, the "
              "ratio's bounds, failed runs left out, the fill's bytes",
              "| fio's default buffers (50% compressible, 512 B chunks) "
              "| psync | write | 20600 (20500-20700) | 20100 (20000-20200) "
              "| **1.025** (1.015-1.035) |" in md and
              "| the guest's source and script text | psync | write "
              "| 20600 (20500-20700) |" in md and
              "Worst ratio: writes 1.025, reads -." in md and
              "| the guest's source and script text | 5000 | 5001 |" in md,
              md)
        check("usemem_upstream: sums, slower process, medians and ranges, "
              "the failed run counted",
              "| sum of the processes, KB/s | 62200 [61000-63400] | 59400 "
              "[59000-59800] | **1.047** |" in md and
              "| the slower process, KB/s | 30200 [30000-30400] | 29200 "
              "[29000-29400] | **1.034** |" in md and
              "printed no two rates: 1." in md, md)
        # 25600 pages * 4 KiB / 1 s = 100 MiB/s; disk 200 MiB/s.
        check("writeback: rate against the disk's own",
              "| ghostswap writeback (all, checksums: the default) | 25600 "
              "| 100.0 | 0.50 |" in md and
              "| ghostswap writeback (all, writeback_checksum 0) | 25600 "
              "| 200.0 | 1.00 |" in md and
              "| ghostswap writeback (all, checksums and encryption) | 25600 "
              "| 25.0 | 0.12 |" in md and
              "iodepth 1 | - | 100.0 | 0.50 |" in md and
              "| zram writeback (idle after idle all) | 25600 | 50.0 | 0.25 |"
              in md, md)
        check("host and accelerator recorded",
              "Test CPU" in md and "**tcg**" in md, md)
        try:
            import matplotlib  # noqa: F401
            have_mpl = True
        except ImportError:
            have_mpl = False
        pngs = [f for f in os.listdir(d) if f.endswith(".png")]
        if have_mpl:
            check("plots written and linked",
                  len(pngs) >= 5 and all("(%s)" % f in md for f in pngs),
                  pngs)
        else:
            check("no matplotlib: no plots, and the report says so",
                  not pngs and "No plots" in md, pngs)
        bad = os.path.join(d, "guest", "bench.jsonl")
        with open(bad, "a") as f:
            f.write("{not json\n")
        p = subprocess.run([sys.executable, REPORT, d], capture_output=True,
                           text=True)
        check("a broken measurement line is an error with its line number",
              p.returncode != 0 and "bench.jsonl:" in p.stderr, p.stderr)
        shutil.rmtree(os.path.join(d, "guest"))
        p = subprocess.run([sys.executable, REPORT, d], capture_output=True,
                           text=True)
        md = open(os.path.join(d, "report.md")).read()
        check("only the scale and icount guests ran: their tables alone",
              p.returncode == 0 and "## fio with 1, 2 and 4 jobs" in md and
              "## fio counted in instructions" in md and
              "## Static cost" not in md, p.stderr + md)
        shutil.rmtree(os.path.join(d, "guest-scale"))
        p = subprocess.run([sys.executable, REPORT, d], capture_output=True,
                           text=True)
        md = open(os.path.join(d, "report.md")).read()
        check("only the icount guest ran: its table alone",
              p.returncode == 0 and "## fio counted in instructions" in md and
              "## fio with 1, 2 and 4 jobs" not in md, p.stderr + md)
    finally:
        shutil.rmtree(d)
        status = plan()
    sys.exit(status)


if __name__ == "__main__":
    main()
