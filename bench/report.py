#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guest's benchmark measurements into a report.

usage: report.py RESULTS_DIR

Reads RESULTS_DIR/guest/bench.jsonl (one JSON object per measurement, see
bench/guest/bench.sh), the fio outputs under RESULTS_DIR/guest/fio/, the
perf summaries, each guest's console.tap (the kernel reports in its
console: a failing line is an error of the report) and
RESULTS_DIR/host.json. Writes RESULTS_DIR/results.json
(everything, shaped per section), RESULTS_DIR/report.md (tables; every
comparison as a ratio ghostswap / other, same guest boot) and PNG plots.
Without matplotlib the plots are left out and the report says so.
"""
import json
import os
import re
import sys

DRIVERS = ("ghostswap", "zram", "zswap")
COLORS = {"ghostswap": "#2b6cb0", "zram": "#dd6b20", "zswap": "#38a169",
          "disk": "#718096"}


def mib(b):
    return b / 1048576.0


def fmt_bytes(b):
    if b is None:
        return "-"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(b) >= div:
            return "%.1f %s" % (b / div, unit)
    return "%d B" % b


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def fmt_count(v):
    """A count (a median may be a float) as a whole number, or -."""
    return "-" if v is None else "%d" % round(v)


def fmt_ratio(r):
    return "-" if r is None else "%.2f" % r


def load_jsonl(path, lane=None):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise SystemExit("%s:%d: bad JSON: %s" % (path, n, e))
            if lane:
                r["lane"] = lane
            rows.append(r)
    return rows


def load(resdir):
    rows = []
    main = os.path.join(resdir, "guest", "bench.jsonl")
    if os.path.exists(main):    # absent when only "scale" ran
        rows = load_jsonl(main)
    # The scale section runs in a 4-vCPU guest of its own.
    scale = os.path.join(resdir, "guest-scale", "bench.jsonl")
    if os.path.exists(scale):
        rows += load_jsonl(scale, "scale")
    # The fio rows counted in instructions, in a guest of their own.
    icount = os.path.join(resdir, "guest-icount", "bench.jsonl")
    if os.path.exists(icount):
        rows += load_jsonl(icount, "icount")
    # The static cost measured again on the 6.12 LTS kernel, if it ran.
    lts = os.path.join(resdir, "guest-lts", "bench.jsonl")
    if os.path.exists(lts):
        rows += load_jsonl(lts, "lts")
    # Each guest's console, read for kernel reports (bench/run.sh's
    # bench_console): its failing lines, as errors of the report.
    for g in ("guest", "guest-scale", "guest-icount", "guest-lts"):
        try:
            with open(os.path.join(resdir, g, "console.tap")) as f:
                rows += [{"section": "console of " + g,
                          "error": line.split(" - ", 1)[-1].strip()}
                         for line in f if line.startswith("not ok")]
        except OSError:
            pass
    host = {}
    hp = os.path.join(resdir, "host.json")
    if os.path.exists(hp):
        with open(hp) as f:
            host = json.load(f)
    return rows, host


def fio_summary(resdir, rel, guest="guest"):
    """IOPS (read + write) and the worst p99 completion latency, in us."""
    try:
        with open(os.path.join(resdir, guest, rel)) as f:
            text = f.read()
        # fio may print notes before its JSON.
        data = json.loads(text[text.index("{"):])
    except (OSError, ValueError):
        return None
    job = data["jobs"][0]
    iops = 0.0
    p99 = 0.0
    bw = 0.0
    for d in ("read", "write"):
        s = job.get(d, {})
        if not s.get("total_ios"):
            continue
        iops += s.get("iops", 0.0)
        bw += s.get("bw", 0.0)  # KiB/s
        pct = s.get("clat_ns", {}).get("percentile", {})
        p99 = max(p99, pct.get("99.000000", 0) / 1000.0)
    return {"iops": iops, "p99_us": p99, "bw_kib_s": bw}


def pattern_iops(resdir, r):
    """IOPS of a run of the patterns section: fio's JSON, or pagerw's
    one line; None if the run failed."""
    if r.get("rc"):
        return None
    path = os.path.join(resdir, "guest-icount", r.get("file", ""))
    try:
        with open(path) as f:
            text = f.read()
        data = json.loads(text[text.index("{"):])
    except (OSError, ValueError):
        return None
    if "jobs" not in data:
        return data.get("iops")
    return fio_summary(resdir, r["file"], "guest-icount")["iops"]


def fmt_num(v, f):
    """@v in format @f; "-" for none (a run that printed nothing)."""
    return "-" if v is None else f % v


def median(vals):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    m = len(vals) // 2
    return vals[m] if len(vals) % 2 else (vals[m - 1] + vals[m]) / 2.0


def merge_runs(rows, keys):
    """Rows of repeated runs (field "rep") merged per @keys: numbers are
    medians; "runs" counts them; "spread" gives min and max of mib_s or
    iops; a failed run (rc != 0, bad pages) marks the merged row."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    out = []
    for runs in groups.values():
        m = dict(runs[0])
        m["runs"] = len(runs)
        m.pop("rep", None)
        for k, v in runs[0].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and k not in keys and k not in ("rep", "rc"):
                m[k] = median(r.get(k) for r in runs)
        m["rc"] = max((r.get("rc") or 0 for r in runs), default=0)
        results = [r["result"] for r in runs if isinstance(r.get("result"), dict)]
        if results:
            res = dict(results[0])
            for k in ("fill_s", "sweep_s", "mib_s", "swapins", "majflt"):
                res[k] = median(x.get(k) for x in results)
            res["lat_us"] = {p: median(x.get("lat_us", {}).get(p)
                                       for x in results)
                             for p in ("p50", "p90", "p99", "p999", "max")}
            res["bad_pages"] = sum(x.get("bad_pages", 0) for x in results)
            res["verified_pages"] = sum(x.get("verified_pages", 0)
                                        for x in results)
            if len(results) < len(runs):
                m["rc"] = m["rc"] or 1      # a run printed nothing
            m["result"] = res
            speeds = [x["mib_s"] for x in results if x.get("mib_s")]
        else:
            if any("result" in r for r in runs):
                m["result"] = None
            speeds = [r.get("iops") or r.get("kib_s") for r in runs
                      if r.get("iops") or r.get("kib_s")]
        if speeds:
            m["spread"] = [min(speeds), max(speeds)]
        out.append(m)
    return out


# zsmalloc's functions (mm/zsmalloc.c, 7.3) that a profile can name.
ZSMALLOC_SYMS = frozenset("""
    __free_zspage __free_zspage_lockless __zs_compact alloc_zpdesc
    alloc_zspage async_free_zspage cache_alloc_handle cache_alloc_zspage
    cache_free_handle cache_free_zspage class_stat_add class_stat_sub
    create_page_chain find_alloced_obj find_get_zspage fix_fullness_group
    free_zpdesc free_zspage get_first_obj_offset get_fullness_group
    get_next_zpdesc get_size_class_index get_zspage_inuse handle_to_obj
    init_zspage insert_zspage location_to_obj lock_zspage mod_zspage_inuse
    obj_allocated obj_class_get_and_lock obj_free obj_malloc
    obj_to_class_idx obj_to_location obj_to_zpdesc record_obj remove_zspage
    reset_zpdesc set_first_obj_offset set_freeobj get_freeobj zs_free
    zs_malloc zs_obj_read_begin zs_obj_read_end zs_obj_write
    zs_get_total_pages zs_lookup_class_index zspage_read_lock
    zspage_read_unlock zspage_write_trylock zspage_write_unlock
    zpdesc_inc_zone_page_state zpdesc_dec_zone_page_state
""".split())

# Where an idle CPU's samples fall.
IDLE_SYMS = ("pv_native_safe_halt", "native_safe_halt", "default_idle",
             "acpi_idle", "mwait_idle", "intel_idle", "poll_idle",
             "cpuidle", "do_idle", "cpu_idle")

# The kernel's memset and memcpy, under the names a profile gives them.
STRING_SYMS = frozenset("""
    memset __memset __pi_memset memset_orig memcpy __memcpy __pi_memcpy
    memcpy_orig memmove __memmove
""".split())

# The groups of the instruction profile, in the report's order.
PROFILE_GROUPS = ("module", "LZ4", "zsmalloc", "memset, memcpy", "rest")


def profile_group(comm, dso, sym, module_syms=frozenset()):
    """The group of one line of perf report --sort comm,dso,sym: the
    driver's own module (by object, or by @module_syms, its symbols),
    the compressor, zsmalloc, memset and memcpy, everything else; or
    perf's own process and idle CPUs, left out of the shares."""
    if comm == "perf":
        return "perf"
    if sym.startswith(IDLE_SYMS):
        return "idle"
    if dso in ("[ghostswap]", "[zram]") or sym in module_syms:
        return "module"
    if sym.startswith("LZ4_"):
        return "LZ4"
    if sym in ZSMALLOC_SYMS:
        return "zsmalloc"
    if sym in STRING_SYMS:
        return "memset, memcpy"
    return "rest"


def read_icount_profile(path, syms_path):
    """Samples by group of a perf report (bench.sh's b_icount_profile),
    and the module's own symbols by samples; None if unreadable. The
    file at @syms_path lists the modules' symbols, one a line."""
    line_re = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(.*?)\s+(\S+)\s+"
                         r"\[[^\]]\]\s+(\S+)")
    groups = dict.fromkeys(PROFILE_GROUPS + ("perf", "idle"), 0)
    module = {}
    try:
        with open(syms_path) as f:
            module_syms = frozenset(f.read().split())
    except OSError:
        module_syms = frozenset()
    try:
        with open(path) as f:
            for line in f:
                m = line_re.match(line)
                if not m:
                    continue
                n, comm, dso, sym = int(m.group(1)), m.group(2), \
                    m.group(3), m.group(4)
                g = profile_group(comm, dso, sym, module_syms)
                groups[g] += n
                if g == "module":
                    module[sym] = module.get(sym, 0) + n
    except OSError:
        return None
    if not sum(groups[g] for g in PROFILE_GROUPS):
        return None
    return {"groups": groups,
            "module_syms": sorted(module.items(), key=lambda kv: -kv[1])}


def shape(rows, host, resdir):
    res = {"host": host, "env": {}, "env_lts": {}, "static_lts": [],
           "scale": [], "env_scale": {}, "icount": [], "env_icount": {},
           "icount_workload": [], "icount_profile": {}, "usemem_series": [],
           "patterns": [], "patterns_fill": [], "usemem_upstream": [],
           "static": [], "meta": [], "ratio": [],
           "ratio_swap": [], "workload": [], "fio": [], "writeback": {},
           "comp": [], "comp_recomp": [], "comp_dict": {}, "zswap": [],
           "mthp": [], "icount_mthp": [],
           "profile": {}, "errors": [], "time": {}}
    wb_runs = []
    for r in rows:
        sec = r.get("section")
        if "error" in r:
            res["errors"].append(r)
            continue
        # The fio guests of their own: lane, section and guest share a name.
        lane = r.get("lane")
        if lane in ("scale", "icount"):
            if sec in ("icount_workload", "usemem_series", "icount_mthp",
                       "patterns_fill", "usemem_upstream"):
                res[sec].append(r)
            elif sec == "patterns":
                r["iops"] = pattern_iops(resdir, r)
                res[sec].append(r)
            elif sec == "icount_profile":
                if "file" in r:
                    g = os.path.join(resdir, "guest-icount")
                    prof = read_icount_profile(
                        os.path.join(g, r["file"]),
                        os.path.join(g, r.get("syms", "")))
                    if prof:
                        res[sec][r["driver"] + " " + r["mix"]] = prof
            elif sec == lane:
                s = fio_summary(resdir, r["file"], "guest-" + lane)
                if s:
                    r.update(s)
                res[lane].append(r)
            elif sec == "env":
                res["env_" + lane] = r
            continue
        if lane == "lts":
            if sec == "static":
                res["static_lts"].append(r)
            elif sec == "env":
                res["env_lts"] = r
            continue
        if sec == "env":
            res["env"] = r
        elif sec == "time":
            res["time"][r["name"]] = r["seconds"]
        elif sec in ("static", "meta", "ratio", "workload", "ratio_swap",
                     "comp", "comp_recomp", "zswap", "mthp"):
            res[sec].append(r)
        elif sec == "comp_dict":
            res["comp_dict"] = r
        elif sec == "fio":
            s = fio_summary(resdir, r["file"])
            if s:
                r.update(s)
            res["fio"].append(r)
        elif sec == "writeback":
            if r["driver"] in ("disk", "disk_qd1"):
                s = fio_summary(resdir, r["file"]) or {}
                res["writeback"][r["driver"] + "_kib_s"] = s.get("bw_kib_s")
            else:
                r["kib_s"] = r["pages"] * 4 / r["seconds"] \
                    if r.get("seconds") else None
                wb_runs.append(r)
        elif sec == "profile" and "file" in r:
            try:
                with open(os.path.join(resdir, "guest", r["file"])) as f:
                    key = r["driver"] + (" " + r["rw"] if "rw" in r else "")
                    res["profile"][key] = f.read().splitlines()
            except OSError:
                pass
    res["workload"] = merge_runs(res["workload"],
                                 ("driver", "mix", "overcommit"))
    res["ratio_swap"] = merge_runs(res["ratio_swap"], ("driver", "alg"))
    res["comp"] = merge_runs(res["comp"], ("variant", "mix"))
    res["zswap"] = merge_runs(res["zswap"], ("driver", "mix"))
    for k in ("mthp", "icount_mthp"):
        res[k] = merge_runs(res[k], ("variant", "mix", "alg", "folios",
                                     "overcommit"))
    res["fio"] = merge_runs(res["fio"],
                            ("driver", "rw", "iodepth", "numjobs"))
    res["scale"] = merge_runs(res["scale"], ("driver", "rw", "numjobs"))
    res["icount"] = merge_runs(res["icount"], ("driver", "rw", "iodepth"))
    res["patterns"] = merge_runs(res["patterns"],
                                 ("driver", "pattern", "engine", "rw"))
    res["icount_workload"] = merge_runs(res["icount_workload"],
                                        ("driver", "mix", "overcommit"))
    for m in merge_runs(wb_runs, ("driver",)):
        res["writeback"][m["driver"]] = m
    return res


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


# ------------------------------------------------------------- tables

def t_static(res):
    lts = res["static_lts"]
    lts_kernel = res["env_lts"].get("kernel", "6.12")
    out = ["| disksize | ghostswap (its counters) | ghostswap | zram "
           "| ghostswap / zram | swap core at swapon |" +
           (" swap core at swapon, %s |" % lts_kernel if lts else ""),
           "|---|---|---|---|---|---|" + ("---|" if lts else "")]

    def swapon(rows, size, free=False):
        g = find(rows, driver="ghostswap", disksize=size)
        if not g:
            return "-"
        if not g.get("ok"):
            return "fails: %s" % g.get("fail", "?")
        if free:
            return "%s (kernel allocators: %s)" % (
                fmt_bytes(g.get("swapon_free")),
                fmt_bytes(g.get("swapon_kmem")))
        return fmt_bytes(g.get("swapon_kmem"))

    for size in ("16G", "64G", "1T"):
        g = find(res["static"], driver="ghostswap", disksize=size)
        z = find(res["static"], driver="zram", disksize=size)
        if not g and not z:
            continue
        gd = g["device_kmem"] if g and g.get("ok") else None
        zd = z["device_kmem"] if z and z.get("ok") else None
        zs = fmt_bytes(zd) if zd is not None else \
            "fails: %s" % (z or {}).get("fail", "?")
        r = ratio(gd, zd)
        out.append("| %s | %s | %s | %s | %s | %s |%s" % (
            size, fmt_bytes(g.get("counted")) if g and g.get("ok") else "-",
            fmt_bytes(gd), zs,
            "%.4f" % r if r is not None else "-",
            swapon(res["static"], size),
            " %s |" % swapon(lts, size, free=True) if lts else ""))
    out.append("")
    if lts:
        out.append("*swap core at swapon, %s*: the same measurement in a "
                   "second boot of Debian's 6.12 LTS kernel, whose swap "
                   "core allocates memory for every slot (`swap_map`, "
                   "`swap_cgroup`, the zero bitmap), as the fall in free "
                   "memory: `swap_cgroup`'s pages come from the page "
                   "allocator, so the kernel allocators' count (slab + "
                   "vmalloc + per-CPU) misses them. ghostswap's default "
                   "disksize there is twice the RAM, at most 64 GiB."
                   % lts_kernel)
        out.append("")
    out.append("*its counters*: what ghostswap's `cluster_stat` and "
               "`mm_stat` say it holds. The other columns: kernel memory "
               "(slab + vmalloc + per-CPU, from /proc/meminfo) "
               "a device allocates when `disksize` is written, before "
               "anything is stored; a few KiB either way is the rest of the "
               "guest. *swap core*: what `swapon` of a device of that size "
               "then costs the kernel itself (the same for any swap device "
               "of that size).")
    return out


def t_meta(res):
    g = find(res["meta"], driver="ghostswap")
    z = find(res["meta"], driver="zram")
    out = ["| driver | pages stored | metadata (module's count) | "
           "metadata (slab cache) | metadata (free memory) | per page |",
           "|---|---|---|---|---|---|"]
    if g:
        out.append("| ghostswap | %d | %s | %s | %s | %.2f B |" % (
            g["pages"], fmt_bytes(g["counted_meta"]),
            fmt_bytes(g["slab_meta"]), fmt_bytes(g["measured_meta"]),
            g["counted_meta"] / g["pages"]))
    if z:
        out.append("| zram (disksize %s) | %d | - | - | %s | %.2f B |" % (
            fmt_bytes(z["disksize"]), z["pages"],
            fmt_bytes(z["measured_meta"]),
            z["measured_meta"] / z["pages"]))
    out.append("")
    out.append("*free memory*: memory gone after storing the data set, less "
               "the compressed pool (zsmalloc's count): what the driver "
               "spends beside the data. zram's is its per-slot table for "
               "the whole disksize (16 bytes per slot), so it is paid per "
               "*possible* page, not per stored page.")
    return out


def mem_ratio(r):
    """Data stored / memory used for it (pool and metadata)."""
    if not r or "orig" not in r:
        return None
    return r["orig"] / (r["pool"] + r["meta"])


def t_ratio(res):
    out = ["| algorithm | ghostswap ratio | zram ratio | ghostswap / zram "
           "| ghostswap write MiB/s | zram write MiB/s | ghostswap read MiB/s "
           "| zram read MiB/s |",
           "|---|---|---|---|---|---|---|---|"]
    notes = []
    for alg in ("lz4", "lzo-rle", "zstd"):
        g = find(res["ratio"], driver="ghostswap", alg=alg)
        z = find(res["ratio"], driver="zram", alg=alg)
        if not g or "orig" not in g:
            continue
        gr = mem_ratio(g)
        zr = mem_ratio(z)
        if z and "fail" in z:
            notes.append("zram with %s: %s." % (alg, z["fail"]))

        def speed(r, k):
            return "%.0f" % (r["mib"] / r[k]) if r and k in r else "-"
        out.append("| %s | %.2f | %s | %s | %s | %s | %s | %s |" % (
            alg, gr, fmt_ratio(zr),
            "%.3f" % (gr / zr) if zr else "-",
            speed(g, "write_s"), speed(z, "write_s"),
            speed(g, "read_s"), speed(z, "read_s")))
    out.append("")
    out.append("Ratio: data stored / memory used for it (zsmalloc pool plus "
               "metadata; zram's metadata counted only for the pages "
               "stored, 16 B each, which flatters it). Data set: the "
               "guest's own libraries, binaries and shared files, written "
               "to the raw device with 1 MiB direct writes, then read back. "
               + " ".join(notes))
    return out


def peak_ratio(r, meta=True):
    """Data / memory at the fullest moment of a swap workload."""
    if not r or not r.get("peak_orig"):
        return None
    mem = r.get("peak_pool", 0) + (r.get("peak_meta", 0) if meta else 0)
    return r["peak_orig"] / mem if mem else None


def t_ratio_swap(res):
    out = ["| algorithm | ghostswap data/pool | zram data/pool | "
           "ghostswap data/memory | zram data/memory | ghostswap / zram "
           "(memory) | verified |",
           "|---|---|---|---|---|---|---|"]
    notes = []
    for alg in ("lz4", "lzo-rle", "zstd"):
        g = find(res["ratio_swap"], driver="ghostswap", alg=alg)
        z = find(res["ratio_swap"], driver="zram", alg=alg)
        if not g or "fail" in g:
            continue
        if z and "fail" in z:
            notes.append("zram with %s: %s." % (alg, z["fail"]))
            z = None
        ok = all(r.get("rc") == 0 and wl_get(r, "bad_pages") == 0
                 for r in (g, z) if r)
        gm, zm = peak_ratio(g), peak_ratio(z)
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            alg, fmt_ratio(peak_ratio(g, False)),
            fmt_ratio(peak_ratio(z, False)), fmt_ratio(gm), fmt_ratio(zm),
            "%.3f" % (gm / zm) if gm and zm else "-",
            "yes" if ok else "**NO**"))
    out.append("")
    out.append("The mixed swap workload (usemem, zero, same-filled, text and "
               "random pages in turn, 3x a 64 MiB cgroup, one sweep), at its "
               "fullest moment. *data/pool*: compression alone; "
               "*data/memory*: with each driver's metadata (ghostswap: its "
               "clusters; zram: its table for its 2 GiB disksize). " +
               " ".join(notes))
    return out


def wl_get(r, key):
    res = r.get("result")
    if not isinstance(res, dict):
        return None
    if key.startswith("lat_"):
        return res.get("lat_us", {}).get(key[4:])
    return res.get(key)


def with_spread(v, r, fmt):
    """A median, with the range of the runs behind it."""
    if v is None:
        return "-"
    sp = r.get("spread") if r else None
    if sp and r.get("runs", 1) > 1:
        return (fmt + " (" + fmt + "-" + fmt + ")") % (v, sp[0], sp[1])
    return fmt % v


def t_workload(res):
    out = ["| mix | overcommit | driver | MiB/s | vs ghostswap | swap-ins "
           "| p50 us | p99 us | p99.9 us | peak data | data/memory "
           "| verified |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for oc in (2, 4):
        for mix in ("zero-heavy", "text", "random"):
            g = find(res["workload"], driver="ghostswap", mix=mix,
                     overcommit=oc)
            for drv in DRIVERS:
                r = find(res["workload"], driver=drv, mix=mix, overcommit=oc)
                if not r:
                    continue
                thr = wl_get(r, "mib_s")
                gthr = wl_get(g, "mib_s") if g else None
                ok = r.get("rc") == 0 and wl_get(r, "bad_pages") == 0
                if r.get("rc") == 137 and not wl_get(r, "bad_pages"):
                    verdict = "OOM-killed"
                else:
                    verdict = "yes" if ok else "**NO (rc %s)**" % r.get("rc")
                out.append(
                    "| %s | %dx | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        mix, oc, drv, with_spread(thr, r, "%.1f"),
                        fmt_ratio(ratio(gthr, thr)) if drv != "ghostswap" else "",
                        fmt_num(wl_get(r, "swapins"), "%.0f"),
                        fmt_num(wl_get(r, "lat_p50"), "%.1f"),
                        fmt_num(wl_get(r, "lat_p99"), "%.1f"),
                        fmt_num(wl_get(r, "lat_p999"), "%.1f"),
                        fmt_bytes(r.get("peak_orig")),
                        fmt_ratio(peak_ratio(r)), verdict))
    out.append("")
    runs = max((r.get("runs", 1) for r in res["workload"]), default=1)
    out.append("usemem (bench/guest/usemem.c) in a memory cgroup of %s MiB, "
               "%s sweeps over 2x and 4x that, every page verified; "
               "medians of %d runs per driver, drivers in rotating order "
               "(the range in brackets). "
               "*MiB/s*: swept per second (generation and verification "
               "included, the same work for every driver); *vs ghostswap*: "
               "ghostswap's throughput / this driver's (> 1: ghostswap is "
               "faster). *swap-ins*: pages not in memory when touched "
               "(mincore); latency of their first access. *data/memory*: "
               "data held / (pool + metadata) at the fullest moment. "
               "zswap runs in "
               "front of a swap file on ext4 on a virtio disk; its "
               "compressed pool is charged to the cgroup, zram's and "
               "ghostswap's are not, and its shrinker is on (it writes cold "
               "entries back to the swap file): where it was still "
               "OOM-killed, its pool (incompressible pages are kept as "
               "they are) filled the cgroup." % (
                   (res["workload"][0]["limit_mib"] if res["workload"] else "?"),
                   (wl_get(res["workload"][0], "passes")
                    if res["workload"] else "?"), runs))
    return out


ZSWAP_DRIVERS = (
    ("zswap-gs", "zswap + ghostswap (mode zswap, 1 TiB, sparse file)"),
    ("zswap-gsraw", "zswap + ghostswap (mode zswap, 1 TiB, on the raw "
     "disk: no loop device, no filesystem)"),
    ("zswap-gsa", "zswap + ghostswap (mode zswap, 1 TiB, file allocated "
     "in full, 256 MiB, no discards)"),
    ("zswap-gsmap", "zswap + ghostswap (mode zswap, 1 TiB, file allocated "
     "in full, 256 MiB, mapped by the module: no loop device)"),
    ("zswap-gschunks", "zswap + ghostswap (mode zswap, 1 TiB, a directory "
     "of chunk files the module adds and releases)"),
    ("zswap", "zswap + swap file (1.5 GiB, allocated)"),
    ("ghostswap", "ghostswap alone"),
    ("zram", "zram"),
)


def t_zswap(res):
    out = ["| mix | set-up | MiB/s | vs zswap + swap file | peak memory "
           "| data/memory | disk at the peak | disk after exit | verified |",
           "|---|---|---|---|---|---|---|---|---|"]
    for mix in ("zero-heavy", "text", "random"):
        zf = find(res["zswap"], driver="zswap", mix=mix)
        zthr = wl_get(zf, "mib_s") if zf else None
        for drv, label in ZSWAP_DRIVERS:
            r = find(res["zswap"], driver=drv, mix=mix)
            if not r:
                continue
            thr = wl_get(r, "mib_s")
            ok = r.get("rc") == 0 and wl_get(r, "bad_pages") == 0
            if r.get("rc") == 137 and not wl_get(r, "bad_pages"):
                verdict = "OOM-killed"
            else:
                verdict = "yes" if ok else "**NO (rc %s)**" % r.get("rc")
            mem = (r.get("peak_pool") or 0) + (r.get("peak_meta") or 0)
            disk = drv in ("zswap", "zswap-gs", "zswap-gsa", "zswap-gsraw",
                           "zswap-gsmap", "zswap-gschunks")
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                mix, label, with_spread(thr, r, "%.1f"),
                fmt_ratio(ratio(thr, zthr)) if drv != "zswap" else "",
                fmt_bytes(mem) if r.get("peak_orig") else "-",
                fmt_ratio(peak_ratio(r)),
                fmt_bytes(r.get("disk_peak_kib", 0) * 1024) if disk else "-",
                disk_after(r) if disk else "-",
                verdict))
    out.append("")
    out.append("The swap workload (usemem, 2x a 64 MiB cgroup) with zswap "
               "in front of a swap file allocated in full, and in front of "
               "ghostswap in mode zswap (`writeback_direct = all`, "
               "`backing_discard`, a 1 TiB sparse file on the same ext4; "
               "or a file allocated in full as the swap file, no "
               "discards), "
               "against ghostswap alone and zram; medians of the runs, "
               "set-ups in rotating order. What zswap may hold of the "
               "cgroup (`memory.zswap.max`): %s. *peak memory*: pool + metadata "
               "at the fullest moment (zswap + ghostswap: both); *disk*: "
               "blocks allocated (du) at the peak and 2 s after the "
               "workload exited (a chunk directory: and 8 s after, once "
               "its spare chunk's 5 s have passed)."
               % zswap_cg_max(res["zswap"]))
    return out


def disk_after(r):
    """The disk blocks 2 s after the workload exited, and 8 s after if
    measured (a chunk directory)."""
    cell = fmt_bytes(r.get("disk_after_kib", 0) * 1024)
    if r.get("disk_settled_kib") is not None:
        cell += " (%s at 8 s)" % fmt_bytes(r["disk_settled_kib"] * 1024)
    return cell


def zswap_cg_max(rows):
    """What zswap could hold of the zswap section's cgroup, as the rows
    say (rows from before the field: all of it)."""
    seen = sorted({r.get("zswap_cg_max", "max") for r in rows})
    return ", ".join("all of it" if v == "max" else v for v in seen)


MTHP_VARIANTS = (
    ("zram", "zram"),
    ("ghostswap", "ghostswap, page by page (multi_page=0)"),
    ("ghostswap-units", "ghostswap, units of up to 16 pages "
     "(multi_page=16)"),
)


def fmt_verified(r):
    """A workload row's verdict: every page verified, the run clean."""
    if r.get("rc") == 0 and wl_get(r, "bad_pages") == 0:
        return "yes"
    return "**NO (rc %s)**" % r.get("rc")


def mthp_shapes(rows):
    """[(mix, folios, overcommit)] of the mthp rows, in their order: the
    mTHP sizes on ("16K+64K", "4K": off; None in rows from before the
    field) and the cgroup's overcommit."""
    out = []
    for r in rows:
        k = (r.get("mix"), r.get("folios"), r.get("overcommit"))
        if k not in out:
            out.append(k)
    return out


def mthp_shape_cells(folios, oc):
    return "%s | %s" % (folios or "16K+64K", "%dx" % oc if oc else "-")


def t_mthp(res):
    out = ["| algorithm | mix | folios | cgroup | set-up | MiB/s | vs zram "
           "| data/memory "
           "| vs zram | units stored | units read whole | pages read "
           "alone | of them copied | units split "
           "| 64 KiB folios swapped in whole | verified |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for alg in ("zstd", "lz4"):
        for mix, folios, oc in mthp_shapes(res["mthp"]):
            shape = dict(mix=mix, alg=alg, folios=folios, overcommit=oc)
            z = find(res["mthp"], variant="zram", **shape)
            zthr = wl_get(z, "mib_s") if z else None
            for var, label in MTHP_VARIANTS:
                r = find(res["mthp"], variant=var, **shape)
                if not r:
                    continue
                thr = wl_get(r, "mib_s")
                cs = r.get("comp_stat") or []
                units = " | ".join("%d" % cs[i] if len(cs) > i else "-"
                                   for i in (8, 10, 11, 12, 13))
                out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s "
                           "| %s | %s |" % (
                               alg, mix, mthp_shape_cells(folios, oc), label,
                               with_spread(thr, r, "%.1f"),
                               fmt_ratio(ratio(thr, zthr))
                               if var != "zram" else "",
                               fmt_ratio(peak_ratio(r)),
                               fmt_ratio(ratio(peak_ratio(r), peak_ratio(z)))
                               if var != "zram" else "",
                               units, fmt_count(r.get("swpin_64k")),
                               fmt_verified(r)))
    out.append("")
    out.append("The swap workload (usemem at *cgroup* times a 64 MiB "
               "cgroup) with the mTHP sizes of *folios* on (4K: mTHP off): "
               "large folios go out whole, and come back "
               "whole on a synchronous device. Medians of the runs, "
               "set-ups in rotating order. *data/memory*: data over pool "
               "+ metadata at the fullest moment; *units*: comp_stat's "
               "units ever stored, units read whole, pages read out of a "
               "unit alone, of them copied out of the CPU's copy of the "
               "unit, units split (over the run).")
    return out


def kinstr_per_swapped_page(r):
    """Thousands of instructions of the whole guest per page swapped out
    or in, over usemem's run (its fill and sweep), on the icount guest."""
    pages = (r.get("pswpout") or 0) + (r.get("pswpin") or 0)
    fill, sweep = wl_get(r, "fill_s"), wl_get(r, "sweep_s")
    if not pages or fill is None or sweep is None:
        return None
    return (fill + sweep) * 1e6 / pages


def t_icount_mthp(res):
    """The mthp section on the instruction counter."""
    rows = res["icount_mthp"]
    out = ["| algorithm | mix | folios | cgroup | set-up | MiB/Ginstr "
           "| vs zram "
           "| kinstr per page swapped | vs zram | p99 swap-in, kinstr "
           "| data/memory | verified |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for alg in ("zstd", "lz4"):
        for mix, folios, oc in mthp_shapes(rows):
            shape = dict(mix=mix, alg=alg, folios=folios, overcommit=oc)
            z = find(rows, variant="zram", **shape)
            zk = kinstr_per_swapped_page(z) if z else None
            for var, label in MTHP_VARIANTS:
                r = find(rows, variant=var, **shape)
                if not r:
                    continue
                k = kinstr_per_swapped_page(r)
                p99 = wl_get(r, "lat_p99")
                out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s "
                           "| %s | %s |" % (
                               alg, mix, mthp_shape_cells(folios, oc), label,
                               with_spread(wl_get(r, "mib_s"), r, "%.1f"),
                               fmt_ratio(ratio(wl_get(r, "mib_s"),
                                               wl_get(z, "mib_s") if z
                                               else None))
                               if var != "zram" else "",
                               "%.1f" % k if k else "-",
                               fmt_ratio(ratio(zk, k))
                               if var != "zram" else "",
                               "%.1f" % p99 if p99 is not None else "-",
                               fmt_ratio(peak_ratio(r)), fmt_verified(r)))
    out.append("")
    out.append("The mthp section on the guest of the instruction counter "
               "(1 ns an instruction): *MiB/Ginstr*: MiB swept per 10^9 "
               "instructions of the whole guest; *kinstr per page "
               "swapped*: the guest's instructions over usemem's run "
               "divided by the pages swapped out and in (pswpout + "
               "pswpin), and *vs zram* how many times fewer; p99 of a "
               "swap-in's first access in thousands of instructions.")
    return out


def comp_per_page(rows):
    """Compressions per stored page, summed over ghostswap runs (comp_stat:
    compressions, stored, stored as they are by the heuristic)."""
    c = p = h = 0
    for r in rows:
        cs = r.get("comp_stat")
        if isinstance(cs, list) and len(cs) >= 3:
            c, p, h = c + cs[0], p + cs[1], h + cs[2]
    return c, p, h


def t_comp(res):
    out = ["| mix | variant | data/pool | data/memory | vs zram zstd "
           "(memory) | MiB/s | verified |",
           "|---|---|---|---|---|---|---|"]
    for mix in ("zero-heavy", "text"):
        z = find(res["comp"], variant="zram", mix=mix)
        for v in ("gs-dict", "gs-zstd", "zram"):
            r = find(res["comp"], variant=v, mix=mix)
            if not r:
                continue
            ok = r.get("rc") == 0 and wl_get(r, "bad_pages") == 0
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                mix, {"gs-dict": "ghostswap zstd + dictionary",
                      "gs-zstd": "ghostswap zstd",
                      "zram": "zram zstd"}[v],
                fmt_ratio(peak_ratio(r, False)), fmt_ratio(peak_ratio(r)),
                fmt_ratio(ratio(peak_ratio(r), peak_ratio(z)))
                if v != "zram" else "",
                with_spread(wl_get(r, "mib_s"), r, "%.1f"),
                "yes" if ok else "**NO**"))
    d = res.get("comp_dict") or {}
    runs = max((r.get("runs", 1) for r in res["comp"]), default=1)
    out.append("")
    out.append("The swap workload (usemem, %s sweeps over 3x a %s MiB "
               "cgroup, every page verified) at its fullest moment, "
               "medians of %d runs in rotating order. The dictionary "
               "(%s bytes) was trained by `ghostswapctl dict` on the memory "
               "of a running usemem with other data (another seed): not the "
               "data measured. *data/memory*: with each driver's metadata "
               "(zram: its table for its 2 GiB disksize)." % (
                   wl_get(res["comp"][0], "passes") if res["comp"] else "?",
                   res["comp"][0].get("limit_mib") if res["comp"] else "?",
                   runs, d.get("bytes", "?")))
    rc = res.get("comp_recomp") or []
    zs = find(rc, variant="zstd", phase="stored")
    l0 = find(rc, variant="lz4-recomp", phase="stored")
    l1 = find(rc, variant="lz4-recomp", phase="swept")
    if zs and l0 and l1:
        def r_of(x):
            return x["orig"] / x["pool"] if x.get("pool") else None
        out += ["", "| corpus stored with | data/pool | of zstd's |",
                "|---|---|---|"]
        for name, x in (("lz4", l0), ("lz4, then zstd in the background",
                                      l1), ("zstd", zs)):
            out.append("| %s | %s | %s |" % (
                name, fmt_ratio(r_of(x)),
                "%.0f%%" % (100 * r_of(x) / r_of(zs)) if r_of(zs) else "-"))
        out.append("")
        out.append("The corpus of the ratio section written to the raw "
                   "device with lz4, marked idle, then recompressed with "
                   "zstd by the background sweep at 25%% of one CPU: %s "
                   "pages in %.0f s, every byte read back and compared." % (
                       l1.get("recompressed"), l1.get("seconds", 0)))
    c, p, h = comp_per_page(res["workload"] + res["comp"] +
                            res["ratio_swap"])
    raws = [r for r in res["workload"] + res["comp"]
            if r.get("driver") == "ghostswap" and r.get("mix") == "text"]
    tc, tp, th = comp_per_page(raws)
    out.append("")
    out.append("Compressions per stored page (comp_stat), every ghostswap "
               "swap workload run of this report: %s compressions for %s "
               "pages stored (%s), %s of them stored as they are by the "
               "incompressible-page heuristic without a compression. On "
               "the text mix, whose pages all compress, the heuristic "
               "called %s of %s pages incompressible (%s)." % (
                   c, p, "%.3f" % (c / p) if p else "-", h, th, tp,
                   "%.2f%%" % (100.0 * th / tp) if tp else "-"))
    return out


def t_fio(res):
    out = ["| rw | iodepth | jobs | ghostswap IOPS | zram IOPS | "
           "ghostswap / zram | ghostswap p99 us | zram p99 us |",
           "|---|---|---|---|---|---|---|---|"]
    for rw in ("randread", "randwrite", "randrw"):
        for qd in (1, 32):
            for nj in (1, 2):
                g = find(res["fio"], driver="ghostswap", rw=rw, iodepth=qd,
                         numjobs=nj)
                z = find(res["fio"], driver="zram", rw=rw, iodepth=qd,
                         numjobs=nj)
                if not g or not z or "iops" not in g or "iops" not in z:
                    continue
                out.append("| %s | %d | %d | %s | %s | %.2f | %.0f | %.0f |" % (
                    rw, qd, nj, with_spread(g["iops"], g, "%.0f"),
                    with_spread(z["iops"], z, "%.0f"),
                    g["iops"] / z["iops"], g["p99_us"], z["p99_us"]))
    runs = max((r.get("runs", 1) for r in res["fio"]), default=1)
    out.append("")
    out.append("fio, 4 KiB, direct, libaio, on the raw devices (lz4), over "
               "a 256 MiB region (64 MiB in a BENCH_QUICK run) filled first "
               "with 50%%-compressible data; "
               "medians of %d runs, the two drivers alternating (the range "
               "in brackets)." % runs)
    return out


def t_scale(res):
    """IOPS with 1, 2 and 4 fio jobs on the 4-vCPU guest, and how they
    grow against 1 job, for each driver."""
    out = ["| rw | jobs | ghostswap IOPS | growth | zram IOPS | growth | "
           "ghostswap / zram |", "|---|---|---|---|---|---|---|"]
    for rw in ("randread", "randwrite"):
        one = {d: find(res["scale"], driver=d, rw=rw, numjobs=1)
               for d in ("ghostswap", "zram")}
        for nj in (1, 2, 4):
            g = find(res["scale"], driver="ghostswap", rw=rw, numjobs=nj)
            z = find(res["scale"], driver="zram", rw=rw, numjobs=nj)
            if not g or not z or "iops" not in g or "iops" not in z:
                continue

            def growth(r, d):
                base = one[d]
                if not base or not base.get("iops"):
                    return "-"
                return "%.2fx" % (r["iops"] / base["iops"])
            out.append("| %s | %d | %s | %s | %s | %s | %.2f |" % (
                rw, nj, with_spread(g["iops"], g, "%.0f"),
                growth(g, "ghostswap"), with_spread(z["iops"], z, "%.0f"),
                growth(z, "zram"), g["iops"] / z["iops"]))
    runs = max((r.get("runs", 1) for r in res["scale"]), default=1)
    out.append("")
    out.append("fio, 4 KiB, direct, libaio, iodepth 1 per job, on a guest "
               "with %s vCPUs (%s); growth: IOPS against 1 job of the same "
               "driver; medians of %d runs, the drivers alternating." % (
                   res["env_scale"].get("cpus", "?"),
                   res["host"].get("scale_qemu", "?"), runs))
    return out


def t_icount(res):
    """The fio rows on the guest whose clock counts instructions: IOPS,
    and what one I/O costs in instructions (10^9 / IOPS at 1 ns each)."""
    out = ["| rw | iodepth | ghostswap IOPS | zram IOPS | ghostswap / zram | "
           "instructions per I/O, ghostswap | zram | difference |",
           "|---|---|---|---|---|---|---|---|"]
    for rw in ("randread", "randwrite", "randrw"):
        for qd in (1, 32):
            g = find(res["icount"], driver="ghostswap", rw=rw, iodepth=qd)
            z = find(res["icount"], driver="zram", rw=rw, iodepth=qd)
            if not g or not z or not g.get("iops") or not z.get("iops"):
                continue
            gi, zi = 1e9 / g["iops"], 1e9 / z["iops"]
            out.append("| %s | %d | %s | %s | %.3f | %.0f | %.0f | %+.0f |" % (
                rw, qd, with_spread(g["iops"], g, "%.0f"),
                with_spread(z["iops"], z, "%.0f"), g["iops"] / z["iops"],
                gi, zi, gi - zi))
    runs = max((r.get("runs", 1) for r in res["icount"]), default=1)
    out.append("")
    out.append("fio, 4 KiB, direct, libaio, 1 job kept on vCPU 1, as in the "
               "fio table, on a guest run by QEMU's instruction counter "
               "(%s): its clock advances 1 ns per instruction executed by "
               "either vCPU, so IOPS count instructions and the host's "
               "load does not move them. Instructions per I/O: 10^9 / "
               "IOPS, what one I/O costs the whole guest (fio and the "
               "kernel included). Every instruction counts the same here, "
               "whatever it costs on real hardware (a cache miss, a "
               "division). Medians of "
               "%d runs, the drivers alternating." % (
                   res["host"].get("icount_qemu", "?"), runs))
    return out


def t_icount_workload(res):
    """The swap workload on the same guest: MiB swept per 10^9
    instructions, and swap-in latencies in thousands of instructions."""
    rows = res["icount_workload"]
    out = ["| mix | overcommit | ghostswap MiB/Ginstr | zram MiB/Ginstr "
           "| ghostswap / zram | p50, kinstr: ghostswap | zram "
           "| p99, kinstr: ghostswap | zram | verified |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for oc in (2, 4):
        for mix in ("zero-heavy", "text", "random"):
            g = find(rows, driver="ghostswap", mix=mix, overcommit=oc)
            z = find(rows, driver="zram", mix=mix, overcommit=oc)
            if not g or not z:
                continue
            ok = all(r.get("rc") == 0 and wl_get(r, "bad_pages") == 0
                     for r in (g, z))
            r = ratio(wl_get(g, "mib_s"), wl_get(z, "mib_s"))
            lat = ["%.1f" % v if v is not None else "-" for v in
                   (wl_get(g, "lat_p50"), wl_get(z, "lat_p50"),
                    wl_get(g, "lat_p99"), wl_get(z, "lat_p99"))]
            out.append("| %s | %dx | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                mix, oc, with_spread(wl_get(g, "mib_s"), g, "%.1f"),
                with_spread(wl_get(z, "mib_s"), z, "%.1f"),
                "%.3f" % r if r else "-", lat[0], lat[1], lat[2], lat[3],
                "yes" if ok else "**NO**"))
    runs = max((r.get("runs", 1) for r in rows), default=1)
    out.append("")
    out.append("The swap workload of the table above, ghostswap and zram "
               "only, on the guest of the instruction counter: *MiB/Ginstr*: "
               "MiB swept per 10^9 instructions of the whole guest (usemem, "
               "reclaim, kswapd, the driver), latencies of a swap-in's "
               "first access in thousands of instructions. Medians of %d "
               "runs, the drivers alternating (the range in brackets): "
               "reclaim depends on the clock, which counts instructions "
               "here, so runs still differ a little." % runs)
    return out


def runs_by_driver(rows):
    """{driver: its rows} of ghostswap and zram, or None unless both ran."""
    by = {d: [r for r in rows if r["driver"] == d] for d in ("ghostswap", "zram")}
    return by if by["ghostswap"] and by["zram"] else None


def driver_rows(by, lines, ratio_fmt):
    """A table of LINES (label, value of a run) for both drivers: medians
    [min-max], and ghostswap's median over zram's in RATIO_FMT."""
    out = ["| | ghostswap | zram | ghostswap / zram |", "|---|---|---|---|"]
    for label, f in lines:
        g, z = ((median(v), min(v), max(v)) for v in
                ([f(r) for r in by[d]] for d in ("ghostswap", "zram")))
        out.append("| %s | %.0f [%.0f-%.0f] | %.0f [%.0f-%.0f] | %s |" % (
            label, g[0], g[1], g[2], z[0], z[1], z[2],
            ratio_fmt % (g[0] / z[0]) if z[0] else "-"))
    return out


def t_usemem_series(res):
    """The swap-table series' workload: each driver's runs, their medians
    and ranges, and what the kernel did meanwhile."""
    rows = [r for r in res["usemem_series"] if isinstance(r.get("result"), dict)]
    by = runs_by_driver(rows)
    if not by:
        return ["(no complete run of both drivers)"]
    procs = lambda i: lambda r: sorted(p["kbps"] for p in r["result"]["procs"])[i]
    vm = lambda k: lambda r: (r.get("vmstat") or {}).get(k, 0)
    lines = [("sum of the processes, KiB/s", lambda r: r["result"]["sum_kbps"]),
             ("the faster process", procs(-1)),
             ("the slower process", procs(0)),
             ("pages swapped out (pswpout)", vm("pswpout")),
             ("pages swapped in (pswpin)", vm("pswpin")),
             ("reclaim scans (pgscan_direct)", vm("pgscan_direct")),
             ("anon refaults", vm("workingset_refault_anon"))]
    out = driver_rows(by, lines, "%.3f")
    ok = all(r.get("rc") == 0 and r["result"].get("bad_words") == 0
             and r["result"].get("complete") for r in rows)
    out.append("")
    out.append(
        "Two processes each write %s MiB once (every 8-byte word its index) "
        "in a %s MiB memory cgroup, lz4: the run the swap-table series "
        "measures with vm-scalability's `usemem -O -y -x -n 2` "
        "(bench/guest/usemem_series.c). On the instruction counter: KiB/s "
        "are KiB per 10^9 instructions, each process timed from the common "
        "start to the end of its writes, as usemem does (usemem also counts "
        "an eighth more bytes: the same factor for both). Medians of %d "
        "ghostswap and %d zram runs in the order zram, ghostswap, ghostswap, "
        "zram, the range in brackets; the kernel's counts are of the writes "
        "alone. One word of every 8th page read back and checked after the timed part: %s." % (
            by["zram"][0]["result"]["size_mib"], by["zram"][0].get("cg_mib"),
            len(by["ghostswap"]), len(by["zram"]), "yes" if ok else "**NO**"))
    return out


PATTERN_NAMES = {
    "fio-512": "fio's default buffers (50% compressible, 512 B chunks)",
    "fio-4k": "fio, 50% compressible in 4 KiB chunks",
    "zeros": "zeros (fio's zero_buffers)",
    "random": "random (fio's refill_buffers)",
    "counters": "usemem's counters (each word its index)",
    "binaries": "the guest's binaries and libraries",
    "text": "the guest's source and script text",
}


def t_patterns(res):
    """Each data pattern, writes and reads, psync and libaio: ghostswap's
    IOPS against zram's, on the instruction counter."""
    rows = res["patterns"]
    out = ["| data | engine | rw | ghostswap IOPS | zram IOPS | "
           "ghostswap / zram | instructions per I/O, ghostswap | zram |",
           "|---|---|---|---|---|---|---|---|"]
    pats = []
    for r in rows:
        if r["pattern"] not in pats:
            pats.append(r["pattern"])
    worst = {}
    for pat in pats:
        for eng in ("psync", "libaio"):
            for rw in ("write", "read"):
                g = find(rows, driver="ghostswap", pattern=pat, engine=eng,
                         rw=rw)
                z = find(rows, driver="zram", pattern=pat, engine=eng, rw=rw)
                if not g or not z or not g.get("iops") or not z.get("iops"):
                    continue
                rt = g["iops"] / z["iops"]
                sp = ""
                if g.get("spread") and z.get("spread"):
                    sp = " (%.3f-%.3f)" % (g["spread"][0] / z["spread"][1],
                                          g["spread"][1] / z["spread"][0])
                worst[rw] = min(worst.get(rw, 9), rt)
                out.append("| %s | %s | %s | %s | %s | **%.3f**%s | %.0f | %.0f |" % (
                    PATTERN_NAMES.get(pat, pat), eng, rw,
                    with_spread(g["iops"], g, "%.0f"),
                    with_spread(z["iops"], z, "%.0f"), rt, sp,
                    1e9 / g["iops"], 1e9 / z["iops"]))
    fills = {r["pattern"]: r for r in res["patterns_fill"]}
    out.append("")
    out.append("4 KiB random writes and reads, direct, iodepth 1, "
               "the writer kept on vCPU 1, both drivers lz4, on the "
               "guest of the instruction counter (%s): IOPS count "
               "instructions of the whole guest. Each pattern first "
               "fills %s MiB of both devices; reads read what the fill "
               "wrote. The fio patterns by fio, the others by "
               "bench/guest/pagerw.c. Medians of %d runs, the drivers "
               "alternating; in brackets each driver's range, and for the "
               "ratio the lowest and highest any pair of runs could give. "
               "Worst ratio: writes %s, reads %s." % (
                   res["host"].get("icount_qemu", "?"),
                   next(iter(fills.values()), {}).get("mib", "?"),
                   max((r.get("runs", 1) for r in rows), default=1),
                   "%.3f" % worst["write"] if "write" in worst else "-",
                   "%.3f" % worst["read"] if "read" in worst else "-"))
    if fills:
        out.extend(["", "| data | compressed bytes after the fill: ghostswap "
                    "| zram |", "|---|---|---|"])
        for pat in pats:
            fr = fills.get(pat)
            if not fr:
                continue
            cz = lambda v: (str(v).split() + ["?", "?"])[1]
            out.append("| %s | %s | %s |" % (
                PATTERN_NAMES.get(pat, pat), cz(fr.get("ghostswap_mm_stat")),
                cz(fr.get("zram_mm_stat"))))
    return out


def t_usemem_upstream(res):
    """vm-scalability's usemem itself: the two processes' KB/s per
    driver, medians and ranges."""
    rows = [r for r in res["usemem_upstream"]
            if r.get("rc") == 0 and len(r.get("kbps") or []) == 2]
    by = runs_by_driver(rows)
    if not by:
        return ["(no complete run of both drivers)"]
    vm = lambda k: lambda r: (r.get("vmstat") or {}).get(k, 0)
    lines = [("sum of the processes, KB/s", lambda r: sum(r["kbps"])),
             ("the slower process, KB/s", lambda r: min(r["kbps"])),
             ("the faster process, KB/s", lambda r: max(r["kbps"])),
             ("pages swapped out (pswpout)", vm("pswpout")),
             ("huge pages swapped out whole (thp_swpout)", vm("thp_swpout"))]
    out = driver_rows(by, lines, "**%.3f**")
    failed = len(res["usemem_upstream"]) - len(rows)
    out.append("")
    out.append(
        "vm-scalability's own usemem, built from its source: `usemem "
        "--init-time -O -y -x -n 2 %s` in a %s MiB memory cgroup, lz4, "
        "zswap off. On the instruction counter its KB/s are KiB per 10^9 "
        "instructions. Medians of %d ghostswap and %d zram runs in the "
        "order zram, ghostswap, ghostswap, zram, the range in brackets; "
        "runs that failed or printed no two rates: %d." % (
            rows[0].get("size"), rows[0].get("cg_mib"), len(by["ghostswap"]),
            len(by["zram"]), failed))
    return out


def t_icount_profile(res):
    """Where the workload's instructions go, per driver and mix: shares
    of the samples (perf and idle left out), and what a module costing
    nothing could gain at most."""
    prof = res["icount_profile"]
    out = ["| mix | driver | samples | module | LZ4 | zsmalloc "
           "| memset, memcpy | rest (usemem, faults, reclaim) "
           "| module's top symbols |",
           "|---|---|---|---|---|---|---|---|---|"]
    for mix in ("text", "zero-heavy"):
        for drv in ("ghostswap", "zram"):
            p = prof.get(drv + " " + mix)
            if not p:
                continue
            g = p["groups"]
            total = sum(g[k] for k in PROFILE_GROUPS)
            share = {k: g[k] / total for k in PROFILE_GROUPS}
            top = ", ".join("%s %.2f%%" % (sym, 100.0 * n / total)
                            for sym, n in p["module_syms"][:4])
            out.append("| %s | %s | %d | %s | %s |" % (
                mix, drv, total, " | ".join(
                    "%.2f%%" % (100 * share[k]) for k in PROFILE_GROUPS),
                top or "-"))
    out.append("")
    out.append("perf on the guest of the instruction counter, sampling "
               "every CPU on its clock (cpu-clock), which advances with "
               "instructions there, while usemem runs that mix at 2x "
               "(one run per driver). The shares are of the samples, perf's "
               "own process and idle CPUs left out; *module* is the "
               "driver's own code (compressor glue included), *LZ4* the "
               "kernel's library, *zsmalloc* its allocator's functions, "
               "*memset, memcpy* the kernel's, whoever calls them (lz4's "
               "table clearing among them); everything else the driver "
               "has the kernel do (the memory allocator) is in *rest*. A "
               "CPU's samples fall every 1/rate s of a clock that both "
               "vCPUs advance: work done while the other vCPU is busy "
               "too counts twice, so these are proportions of one run, "
               "not instruction counts.")
    return out


def t_writeback(res):
    wb = res["writeback"]
    disk = wb.get("disk_kib_s")
    out = ["| what | pages | MiB/s | / disk's own sequential write |",
           "|---|---|---|---|"]
    if disk:
        out.append("| backing disk, fio sequential write 128k, iodepth 4 "
                   "| - | %.1f | 1.00 |" % (disk / 1024))
    if wb.get("disk_qd1_kib_s"):
        out.append("| backing disk, fio sequential write 128k, iodepth 1 "
                   "| - | %.1f | %s |" % (wb["disk_qd1_kib_s"] / 1024,
                                         fmt_ratio(ratio(wb["disk_qd1_kib_s"],
                                                         disk))))
    what = {
        "ghostswap-nosum": ("ghostswap", "all, writeback_checksum 0"),
        "ghostswap": ("ghostswap", "all, checksums: the default"),
        "ghostswap-encrypt": ("ghostswap", "all, checksums and encryption"),
        "zram": ("zram", "idle after idle all"),
    }
    for drv in ("ghostswap-nosum", "ghostswap", "ghostswap-encrypt", "zram"):
        r = wb.get(drv)
        if not r or not r.get("kib_s"):
            continue
        sp = r.get("spread")
        out.append("| %s writeback (%s) | %d | %s | %s |" % (
            what[drv][0], what[drv][1],
            r["pages"], with_spread(r["kib_s"] / 1024,
                                    dict(r, spread=[x / 1024 for x in sp])
                                    if sp else r, "%.1f"),
            fmt_ratio(ratio(r["kib_s"], disk))))
    out.append("")
    out.append("The same 60%-compressible data in both; the backing device "
               "is a virtio disk backed by a sparse file on the host.")
    return out


# -------------------------------------------------------------- plots

def plots(res, resdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    made = []

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(os.path.join(resdir, name), dpi=110)
        plt.close(fig)
        made.append(name)

    # Static cost.
    sizes = [s for s in ("16G", "64G", "1T")
             if find(res["static"], disksize=s)]
    if sizes:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        w = 0.38
        for i, drv in enumerate(("ghostswap", "zram")):
            for j, s in enumerate(sizes):
                r = find(res["static"], driver=drv, disksize=s)
                x = j + (i - 0.5) * w
                if r and r.get("ok"):
                    v = max(mib(r["device_kmem"]), 0)
                    ax.bar(x, v, w, color=COLORS[drv],
                           label=drv if j == 0 else None)
                    ax.text(x, v, "%.1f" % v, ha="center", va="bottom",
                            fontsize=8)
                elif r:
                    ax.text(x, 0, "fails", ha="center", va="bottom",
                            color=COLORS[drv], fontsize=9, rotation=90)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels(["disksize " + s for s in sizes])
        ax.set_ylabel("MiB before any data")
        ax.set_title("Static memory cost of the device")
        ax.legend()
        save(fig, "static.png")

    # Workload throughput and latency.
    keys = [(mix, oc) for oc in (2, 4)
            for mix in ("zero-heavy", "text", "random")
            if find(res["workload"], mix=mix, overcommit=oc)]
    if keys:
        for metric, title, fname, ylabel in (
                ("mib_s", "Swap workload throughput (higher is better)",
                 "workload_throughput.png", "MiB/s"),
                ("lat_p99", "Swap-in latency p99 (lower is better)",
                 "workload_p99.png", "microseconds"),
                ("lat_p50", "Swap-in latency p50 (lower is better)",
                 "workload_p50.png", "microseconds")):
            fig, ax = plt.subplots(figsize=(8, 3.8))
            w = 0.27
            for i, drv in enumerate(DRIVERS):
                xs, ys = [], []
                for j, (mix, oc) in enumerate(keys):
                    r = find(res["workload"], driver=drv, mix=mix,
                             overcommit=oc)
                    v = wl_get(r, metric) if r else None
                    if v is not None:
                        xs.append(j + (i - 1) * w)
                        ys.append(v)
                ax.bar(xs, ys, w, color=COLORS[drv], label=drv)
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels(["%s\n%dx" % k for k in keys])
            ax.set_ylabel(ylabel)
            ax.set_title(title)
            ax.legend()
            save(fig, fname)

    # fio IOPS.
    cfgs = [(rw, qd, nj) for rw in ("randread", "randwrite", "randrw")
            for qd in (1, 32) for nj in (1, 2)
            if find(res["fio"], rw=rw, iodepth=qd, numjobs=nj)]
    if cfgs:
        fig, ax = plt.subplots(figsize=(9, 3.8))
        w = 0.4
        for i, drv in enumerate(("ghostswap", "zram")):
            xs, ys = [], []
            for j, (rw, qd, nj) in enumerate(cfgs):
                r = find(res["fio"], driver=drv, rw=rw, iodepth=qd,
                         numjobs=nj)
                if r and "iops" in r:
                    xs.append(j + (i - 0.5) * w)
                    ys.append(r["iops"])
            ax.bar(xs, ys, w, color=COLORS[drv], label=drv)
        ax.set_xticks(range(len(cfgs)))
        ax.set_xticklabels(["%s\nqd%d j%d" % c for c in cfgs], fontsize=7)
        ax.set_ylabel("IOPS (4 KiB)")
        ax.set_title("fio on the raw devices")
        ax.legend()
        save(fig, "fio_iops.png")

    # Compression ratio.
    algs = [a for a in ("lz4", "lzo-rle", "zstd")
            if find(res["ratio"], alg=a)]
    if algs:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        w = 0.38
        for i, drv in enumerate(("ghostswap", "zram")):
            xs, ys = [], []
            for j, a in enumerate(algs):
                r = find(res["ratio"], driver=drv, alg=a)
                if mem_ratio(r):
                    xs.append(j + (i - 0.5) * w)
                    ys.append(mem_ratio(r))
            ax.bar(xs, ys, w, color=COLORS[drv], label=drv)
            for x, y in zip(xs, ys):
                ax.text(x, y, "%.2f" % y, ha="center", va="bottom",
                        fontsize=8)
        ax.set_xticks(range(len(algs)))
        ax.set_xticklabels(algs)
        ax.set_ylabel("data / memory")
        ax.set_title("Compression ratio, same data")
        ax.legend()
        save(fig, "ratio.png")

    # Writeback.
    wb = res["writeback"]
    bars = [("disk, qd4 (fio)", wb.get("disk_kib_s"), COLORS["disk"]),
            ("disk, qd1 (fio)", wb.get("disk_qd1_kib_s"), COLORS["disk"])]
    for drv, label in (("ghostswap-nosum", "ghostswap, no sums"),
                       ("ghostswap", "ghostswap"),
                       ("ghostswap-encrypt", "ghostswap, encrypted"),
                       ("zram", "zram")):
        if wb.get(drv):
            bars.append((label, wb[drv].get("kib_s"),
                         COLORS[drv.split("-")[0]]))
    bars = [b for b in bars if b[1]]
    if len(bars) > 1:
        fig, ax = plt.subplots(figsize=(7, 3.8))
        ax.bar([b[0] for b in bars], [b[1] / 1024 for b in bars],
               color=[b[2] for b in bars])
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)
        ax.set_ylabel("MiB/s")
        ax.set_title("Writeback to the backing device")
        save(fig, "writeback.png")
    return made


def report(res, made, resdir):
    h = res["host"]
    # Only the scale or the icount guest ran.
    e = res["env"] or res["env_scale"] or res["env_icount"]
    md = ["# ghostswap benchmarks", ""]
    md.append("Host: %s (%s CPUs), kernel %s; %s; accelerator: **%s**%s." % (
        h.get("host_cpu", "?"), h.get("host_cpus", "?"),
        h.get("host_kernel", "?"), h.get("qemu", "?"), h.get("accel", "?"),
        " (software emulation: absolute numbers mean little, compare "
        "ratios)" if h.get("accel") == "tcg" else ""))
    md.append("Guest: kernel %s, %s CPUs, %s of memory. ghostswap %s (%s), "
              "%s. zswap: zpool %s, max_pool_percent %s, shrinker on for "
              "the workloads (the kernel's default: %s)." % (
                  e.get("kernel", "?"), e.get("cpus", "?"),
                  fmt_bytes(e.get("mem_total")), h.get("module_version", "?"),
                  h.get("commit", "?"), h.get("date", "?"),
                  e.get("zswap_zpool", "?"), e.get("zswap_max_pool_percent", "?"),
                  e.get("zswap_shrinker_default", "?")))
    md.append("")
    imgs = made or ()   # None: no matplotlib
    md.append("All drivers ran in the same guest boot, same kernel, same "
              "algorithm (lz4 unless stated). Rerun: `make bench`.")
    if res["errors"]:
        md += ["", "**Sections with errors, and kernel reports:**", ""]
        md += ["- %s: %s" % (r.get("section"), r.get("error"))
               for r in res["errors"]]

    def sec(title, table, img=None, note=None):
        md.extend(["", "## " + title, ""])
        if note:
            md.extend([note, ""])
        md.extend(table)
        if img and img in imgs:
            md.extend(["", "![%s](%s)" % (title, img)])

    if res["static"]:
        sec("Static cost", t_static(res), "static.png")
    if res["meta"]:
        sec("Metadata per stored page", t_meta(res))
    if res["ratio"]:
        sec("Compression ratio per algorithm", t_ratio(res), "ratio.png")
    if res["ratio_swap"]:
        sec("Compression ratio per algorithm, swap workload",
            t_ratio_swap(res))
    if res["workload"]:
        sec("Swap workload", t_workload(res), "workload_throughput.png")
        for img in ("workload_p50.png", "workload_p99.png"):
            if img in imgs:
                md.extend(["", "![%s](%s)" % (img, img)])
    if res["zswap"]:
        sec("zswap in front", t_zswap(res))
    if res["mthp"]:
        sec("Large folios compressed whole", t_mthp(res))
    if res["comp"] or res["comp_recomp"]:
        sec("Compression engine", t_comp(res))
    if res["fio"]:
        sec("fio on the raw devices", t_fio(res), "fio_iops.png")
    if res["scale"]:
        sec("fio with 1, 2 and 4 jobs", t_scale(res))
    if res["icount"]:
        sec("fio counted in instructions", t_icount(res))
    if res["icount_workload"]:
        sec("Swap workload counted in instructions", t_icount_workload(res))
    if res["icount_mthp"]:
        sec("Large folios counted in instructions", t_icount_mthp(res))
    if res["usemem_series"]:
        sec("The swap-table series' usemem, counted in instructions",
            t_usemem_series(res))
    if res["patterns"]:
        sec("fio's rows on seven kinds of data, counted in instructions",
            t_patterns(res))
    if res["usemem_upstream"]:
        sec("vm-scalability's usemem, counted in instructions",
            t_usemem_upstream(res))
    if res["icount_profile"]:
        sec("Where the swap workload's instructions go",
            t_icount_profile(res))
    if res["writeback"]:
        sec("Writeback", t_writeback(res), "writeback.png")
    if res["profile"]:
        md.extend(["", "## Profile", "",
                   "perf, whole guest (idle left out), while fio does 4 KiB "
                   "reads or writes at iodepth 1 on the raw device.", ""])
        for key, lines in sorted(res["profile"].items()):
            md.extend(["%s, top symbols:" % key, "", "```"] + lines[:20] +
                      ["```", ""])
    if res["time"]:
        md.extend(["", "Section times (s): " + ", ".join(
            "%s %.0f" % kv for kv in res["time"].items())])
    if made is None:
        md.extend(["", "(No plots: matplotlib is not installed.)"])
    md.append("")
    return "\n".join(md)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    resdir = sys.argv[1]
    rows, host = load(resdir)
    res = shape(rows, host, resdir)
    res["raw"] = rows      # every measurement as the guest recorded it
    made = plots(res, resdir)
    with open(os.path.join(resdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    with open(os.path.join(resdir, "report.md"), "w") as f:
        f.write(report(res, made, resdir))
    print("report.md, results.json, %d plots in %s" % (len(made or []), resdir))


if __name__ == "__main__":
    main()
