#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every kernel report in a guest's console log, as TAP.

Reads the console file a guest boot wrote on the host (testbed/guest.sh's
OUTDIR/console.log) from its first byte to its last, so that nothing the
guest's own ring buffer may have lost by then is missed, and fails on
every kernel report in it: BUG, WARNING, Oops, panic, KASAN, KFENCE,
UBSAN, lockdep, a sleeping call in atomic context, an allocation failure
that printed its warning, a hung task, an RCU stall, a soft or hard
lockup, page poisoning's corruption report, a bad page state, a list
corruption, a slab object overwritten (slub_debug), a kmemleak leak, a
work item of ours on a deprecated workqueue, a report of ghostswap's
bio watch (module/gs_bio_watch.c). Only the kernel's lines are
read (those a printk time stamp starts): what the test scripts print
about reports is not one.

A test that makes a report on purpose brackets it with two lines written
to /dev/kmsg:

    GS-EXPECT-REPORT begin TAG
    GS-EXPECT-REPORT end TAG

Reports between them are expected: each window must hold at least one
(it shows that the scan sees a real report), and none of them fails
the boot. A window that never ends runs to the end of the log.

QEMU's own error messages (lines that start "qemu-system-"), in the
console or in the file given with --qemu-err, fail too: a virtio device
that QEMU marked broken is a failed run. Its warnings, and its word that
a display or audio module of another build was not loaded, are only
shown.

--all-lines reads every line as the kernel's (a console with no time
stamps and nothing else in it: UML's, under KUnit); --ignore REGEX
leaves the report lines it matches to a check of their own (KCSAN's
under kunit/run.sh --kcsan).

usage: console-scan.py NAME CONSOLE [--qemu-err FILE] [--all-lines]
       [--ignore REGEX]
Prints TAP lines (ok / not ok - NAME: ...); exits 1 on any failure.
"""
import re
import sys

# Matched against a printk line's text, after its time stamp: the
# kernel starts its reports at the start of the text (a message's own
# prefix, "watchdog: " or "rcu: ", where it has one); anything else that
# writes to /dev/kmsg (an init's "WARNING: failed to run ...", a test's
# line) starts with a name of its own.
REPORTS = [
    r"^BUG: ",                       # BUG(), KFENCE, KASAN, bad page, ...
    r"^BUG [^ ]+ \((Not t|T)ainted",  # slub_debug: an object overwritten
    r"kernel BUG at ",
    r"^WARNING: ",                   # WARN(), lockdep's reports
    r"^Oops\b|^Internal error: Oops",
    r"^Kernel panic",
    r"^general protection fault",
    r"^UBSAN: ",
    r"^INFO: (possible|inconsistent|suspicious|trying to register)",
    r"possible circular locking dependency",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"possible irq lock inversion",
    r"suspicious RCU usage",
    r"bad unlock balance",
    r"held lock freed",
    r"lock held when returning to user space",
    r"sleeping function called from invalid context",
    r"^\S+: page allocation failure: ",
    r"^INFO: task .* blocked for more than",
    r"^rcu: INFO: .*detected stalls?",
    r"^rcu: .*self-detected stall",
    r"^pagealloc: memory corruption",
    r"^watchdog: BUG: soft lockup",
    r"[Ww]atchdog detected hard LOCKUP",
    r"Bad page (state|map)",
    r"^list_(add|del) corruption",
    r"^unreferenced object 0x",
    r"^kmemleak: [0-9]+ new suspected",
    r"^workqueue: work func gs_[a-z0-9_]+ .*deprecated workqueue",
    r"^(ghostswap|gs_bio_watch): bio watch: ",  # module/gs_bio_watch.c
]
REPORT_RE = re.compile("|".join(REPORTS))
# A printk line: "[   12.345678] text", or with the caller "[ T123]".
KERNEL_RE = re.compile(r"^\s*\[\s*\d+\.\d+\]\s?(\[\s*[TC]\d+\]\s?)?(.*)$")
EXPECT_RE = re.compile(r"GS-EXPECT-REPORT (begin|end) (\S+)")
QEMU_RE = re.compile(r"^qemu-system-[a-z0-9_]+: ")
# QEMU's messages that say nothing of the guest: a display or audio
# module of another build that it does not load, and its warnings
# (shown, not failed).
QEMU_BENIGN_RE = re.compile(r": (failed to (initialize|open) module: |warning: )")
CONTEXT = 25
MAX_REPORTS = 20


def kernel_lines(path, every):
    """(number, text) of every printk line of the file at @path (with
    @every, of every line)."""
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            line = line.replace("\r", "")
            m = KERNEL_RE.match(line)
            if m:
                yield n, m.group(2), line
            elif every:
                yield n, line, line


def scan(path, every=False, ignore=None):
    """(reports, windows, nlines): reports as (line number, text, context,
    window tag or None); windows as {tag: reports seen}. Report lines that
    @ignore matches are not reports."""
    reports = []
    windows = {}
    open_tags = []
    lines = list(kernel_lines(path, every))
    for i, (n, text, _) in enumerate(lines):
        m = EXPECT_RE.search(text)
        if m:
            tag = m.group(2)
            if m.group(1) == "begin":
                open_tags.append(tag)
                windows.setdefault(tag, 0)
            elif tag in open_tags:
                open_tags.remove(tag)
            continue
        if not REPORT_RE.search(text) or (ignore and ignore.search(text)):
            continue
        ctx = [t for _, t, _ in lines[i + 1:i + 1 + CONTEXT]]
        tag = open_tags[-1] if open_tags else None
        if tag is not None:
            windows[tag] += 1
        reports.append((n, text, ctx, tag))
    return reports, windows, len(lines)


def qemu_errors(paths):
    out = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                for raw in f:
                    line = raw.decode("utf-8", "replace").strip()
                    if QEMU_RE.match(line):
                        out.append(line)
        except FileNotFoundError:
            pass
    # The same line in the console and in the file of its own: once.
    out = list(dict.fromkeys(out))
    return ([l for l in out if not QEMU_BENIGN_RE.search(l)],
            [l for l in out if QEMU_BENIGN_RE.search(l)])


def main(argv):
    args = argv[1:]
    qerr = None
    ignore = None
    every = "--all-lines" in args
    if every:
        args.remove("--all-lines")
    if "--qemu-err" in args:
        i = args.index("--qemu-err")
        qerr = args[i + 1]
        del args[i:i + 2]
    if "--ignore" in args:
        i = args.index("--ignore")
        ignore = re.compile(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.stderr.write(__doc__.split("usage: ")[1])
        return 2
    name, path = args
    try:
        reports, windows, nlines = scan(path, every, ignore)
    except OSError as e:
        print(f"not ok - {name}: no console log to scan ({e})")
        return 1
    rc = 0
    if nlines == 0:
        print(f"not ok - {name}: the console log {path} holds no kernel line")
        return 1
    unexpected = [r for r in reports if r[3] is None]
    for n, text, ctx, _ in unexpected[:MAX_REPORTS]:
        print(f"not ok - {name}: kernel report at line {n} of the console: {text}")
        for c in ctx:
            print(f"# {c}")
        rc = 1
    if len(unexpected) > MAX_REPORTS:
        print(f"# {name}: {len(unexpected) - MAX_REPORTS} more reports not shown")
    if not unexpected:
        print(f"ok - {name}: no kernel report in the console log "
              f"({nlines} kernel lines read from the start)")
    for tag, seen in windows.items():
        if seen:
            print(f"ok - {name}: the report made on purpose ({tag}) is seen "
                  f"in the console log ({seen} report lines)")
        else:
            print(f"not ok - {name}: the report made on purpose ({tag}) "
                  "is not in the console log")
            rc = 1
    qe, benign = qemu_errors([path] + ([qerr] if qerr else []))
    for line in benign[:CONTEXT]:
        print(f"# {name}: {line}")
    if qe:
        print(f"not ok - {name}: QEMU reported errors")
        for line in qe[:CONTEXT]:
            print(f"# {line}")
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
