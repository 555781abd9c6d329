#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The guest tests' Python: pages of known kinds on a block device (4 KiB
each), and the checks that shell does badly.

usage: pages.py COMMAND ARGS...     pages.py [COMMAND] --help
  write DEV FIRST_PAGE SPEC [SEED]        write pages of known kinds
  verify DEV FIRST_PAGE SPEC [SEED]       read them back, compare
  write-each DEV FIRST_PAGE SPEC [SEED]   one write a page, count failures
  discard DEV FIRST_PAGE COUNT [STEP]     discard every STEP-th page
  split-io DEV PAGE                       I/O with blocks split over pages
  read-eio DEV PAGE [split]               a read that must fail with EIO
  read-flaky DEV FIRST_PAGE SPEC SECONDS [SEED]
                                          reads from a flickering device
  verify-each DEV FIRST_PAGE SPEC [SEED]  each page right, failed or wrong
  read-watch DEV FIRST_PAGE SPEC STOP [SEED]
                                          verify round and round until STOP
  plaintext FILE FIRST_PAGE SPEC [SEED]   SPEC's pages and words in FILE
  debug-slab-bytes                        slab bytes of a debugging kernel
  kmemleak REPORT SYMBOLS                 kmemleak's objects of ours
  ctl-json FILE CHECK...                  ghostswapctl --json, checked

SPEC: comma-separated KIND:COUNT runs, KIND one of
    z  zero page             s  one repeated 64-bit word (varies per page)
    t  text-like page        r  random page (incompressible)
    T  the same text page every time
  and N*(SPEC): SPEC N times over, e.g. 4096*(t:1,z:1) (every other page).
Content is a pure function of (seed, page number; SEED defaults to 1), so
verify needs nothing but the same arguments. Exit status: 0 ok, 1 a check
failed, 2 a failed write (write), 3 bad usage.
"""
# Only os and sys here: every command imports what it needs.
# debug-slab-bytes counts the kernel's bookkeeping for every object while
# it runs, and is called around a measurement: it must stay as light as a
# bare interpreter (no libraries loaded, no text made).
import os
import sys

PAGE = 4096
BLKDISCARD = 0x1277
WORDS = [b"swap ", b"page ", b"cluster ", b"slot ", b"memory ", b"the ",
         b"of ", b"kernel ", b"ghost ", b"table ", b"compressed ", b"and ",
         b"a ", b"zram ", b"writeback ", b"entry\n"]


def make_text(size):
    import random
    rng = random.Random(0)
    out = bytearray()
    while len(out) < size:
        out += WORDS[rng.randrange(len(WORDS))]
        if rng.randrange(8) == 0:
            out += b"%d " % rng.randrange(100000)
    return bytes(out)


TEXT = b""  # 256 KiB of text, made for the first text page


def text_page(rng):
    """A text-like page: a window of TEXT at a page-specific offset."""
    global TEXT
    if not TEXT:
        TEXT = make_text(256 * 1024)
    off = rng.randrange(len(TEXT) - PAGE)
    return TEXT[off:off + PAGE]


def page(kind, seed, n):
    import random
    import struct
    rng = random.Random(seed * 1000003 + n)
    if kind == "z":
        return bytes(PAGE)
    if kind == "s":
        word = rng.getrandbits(64) or 1
        return struct.pack("<Q", word) * (PAGE // 8)
    if kind == "t":
        return text_page(rng)
    if kind == "T":
        return text_page(random.Random(seed))
    if kind == "r":
        return rng.randbytes(PAGE)
    sys.exit("unknown page kind " + kind)


def split_top(spec):
    """SPEC's items at the top level: its commas outside parentheses."""
    items, depth, cur = [], 0, ""
    for ch in spec:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    return items + [cur]


def kinds(spec):
    """The page kinds of SPEC, one per page, in order."""
    import re
    for item in split_top(spec):
        m = re.fullmatch(r"(\d+)\*\((.*)\)", item)
        if m:
            for _ in range(int(m.group(1))):
                yield from kinds(m.group(2))
            continue
        kind, count = item.split(":")
        for _ in range(int(count)):
            yield kind


def pages_of(first, spec, seed):
    """(page number, kind, content) of every page of SPEC from FIRST."""
    for n, kind in enumerate(kinds(spec), int(first)):
        yield n, kind, page(kind, seed, n)


def open_dev(dev, flags):
    return os.open(dev, flags | os.O_DIRECT)


def page_buffer(size=PAGE):
    """An aligned buffer for O_DIRECT I/O."""
    import mmap
    return mmap.mmap(-1, size)


def write_pages(dev, first, spec, seed):
    """Write the pages of SPEC from FIRST, one direct write each; yield
    (page number, None) for each page written, (page number, OSError) for
    each write that failed."""
    fd = open_dev(dev, os.O_WRONLY)
    buf = page_buffer()
    for n, _, want in pages_of(first, spec, int(seed)):
        buf[:] = want
        try:
            os.pwrite(fd, buf, n * PAGE)
        except OSError as e:
            yield n, e
        else:
            yield n, None


def cmd_write(dev, first, spec, seed="1"):
    """write DEV FIRST_PAGE SPEC [SEED]

    The pages of SPEC from page FIRST_PAGE on, one direct write each.
    Prints a summary; on a failed write, how many pages were written, and
    exits 2.
    """
    total = 0
    for n, err in write_pages(dev, first, spec, seed):
        if err:
            print("write failed at page %d after %d pages: %s"
                  % (n, total, err.strerror))
            return 2
        total += 1
    print("write %d pages (%s) ok" % (total, spec))
    return 0


def cmd_verify(dev, first, spec, seed="1"):
    """verify DEV FIRST_PAGE SPEC [SEED]

    Read back what write wrote with the same arguments. Prints a summary;
    exits 1 on the first page that differs.
    """
    fd = open_dev(dev, os.O_RDONLY)
    buf = page_buffer()
    total = 0
    for n, kind, want in pages_of(first, spec, int(seed)):
        if os.preadv(fd, [buf], n * PAGE) != PAGE or buf[:] != want:
            print("MISMATCH at page %d (kind %s)" % (n, kind))
            return 1
        total += 1
    print("verify %d pages (%s) ok" % (total, spec))
    return 0


def cmd_write_each(dev, first, spec, seed="1"):
    """write-each DEV FIRST_PAGE SPEC [SEED]

    As write, but a failed write (an I/O error) does not stop it. Prints
    only the number of writes that failed.
    """
    print(sum(1 for _, err in write_pages(dev, first, spec, seed) if err))
    return 0


def cmd_discard(dev, first, count, step="1"):
    """discard DEV FIRST_PAGE COUNT [STEP]

    Discard COUNT single pages, FIRST_PAGE, FIRST_PAGE + STEP, ...
    (BLKDISCARD, one call a page).
    """
    import fcntl
    import struct
    fd = os.open(dev, os.O_WRONLY)
    pages = range(int(first), int(first) + int(count) * int(step), int(step))
    for n in pages:
        fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", n * PAGE, PAGE))
    print("discard %d pages from page %s, every %s ok" % (len(pages), first, step))
    return 0


def cmd_split_io(dev, first):
    """split-io DEV PAGE

    Three random pages written at PAGE from a buffer at a 512-byte offset,
    so that every block lies across two memory pages; read back into a
    buffer at a 1024-byte offset, then aligned: both must match.
    """
    fd = open_dev(dev, os.O_RDWR)
    at = int(first) * PAGE
    data = os.urandom(3 * PAGE)
    buf = page_buffer(4 * PAGE)
    buf[512:512 + len(data)] = data
    assert os.pwritev(fd, [memoryview(buf)[512:512 + len(data)]], at) == len(data)
    out = page_buffer(4 * PAGE)
    assert os.preadv(fd, [memoryview(out)[1024:1024 + len(data)]], at) == len(data)
    assert out[1024:1024 + len(data)] == data, "split read mismatch"
    whole = page_buffer(3 * PAGE)
    os.preadv(fd, [whole], at)
    assert whole[:] == data, "aligned read mismatch"
    print("split-page direct I/O round trip ok")
    return 0


def cmd_read_eio(dev, n, how="one"):
    """read-eio DEV PAGE [split]

    Read one page; it must fail with EIO. With split, one read of PAGE
    and the page after it, the second across two pages of memory: the device
    starts the first page's read at once and leaves the second to a
    worker, so two parts of one read fail apart.
    """
    import errno
    fd = open_dev(dev, os.O_RDONLY)
    buf = page_buffer()
    iov = [buf]
    if how == "split":
        # The second page 512 bytes into a buffer of its own: it lies
        # across two pages of memory (each length a whole block, as
        # O_DIRECT wants on every kernel).
        b = page_buffer(2 * PAGE)
        iov = [buf, memoryview(b)[512:512 + PAGE]]
    elif how != "one":
        print(usage(cmd_read_eio), file=sys.stderr)
        return 3
    try:
        os.preadv(fd, iov, int(n) * PAGE)
    except OSError as e:
        assert e.errno == errno.EIO, e
        print("read: Input/output error (as expected)")
        return 0
    print("a read from a failed device succeeded")
    return 1


def cmd_read_flaky(dev, first, spec, seconds, seed="1"):
    """read-flaky DEV FIRST_PAGE SPEC SECONDS [SEED]

    Read the pages of SPEC round and round for SECONDS: each read must
    fail or return the right data, never other data, and both outcomes
    must be seen.
    """
    import time
    fd = open_dev(dev, os.O_RDONLY)
    buf = page_buffer()
    want = list(pages_of(first, spec, int(seed)))
    ok = err = i = 0
    end = time.time() + float(seconds)
    while time.time() < end:
        n, _, data = want[i % len(want)]
        i += 1
        try:
            os.preadv(fd, [buf], n * PAGE)
        except OSError:
            err += 1
            continue
        if buf[:] != data:
            print("page %d: wrong data" % n)
            return 1
        ok += 1
    print("flaky device: %d reads right, %d failed, none wrong" % (ok, err))
    if not (ok and err):
        print("want both outcomes")
        return 1
    return 0


def verify_pass(fd, buf, want, failed):
    """One read of each page of @want: failed ones (any OSError) go to
    @failed. Returns (right, [wrong page numbers])."""
    right, wrong = 0, []
    for n, _, data in want:
        try:
            got = os.preadv(fd, [buf], n * PAGE)
        except OSError:
            failed.add(n)
            continue
        if got != PAGE or buf[:] != data:
            wrong.append(n)
        else:
            right += 1
    return right, wrong


def cmd_verify_each(dev, first, spec, seed="1"):
    """verify-each DEV FIRST_PAGE SPEC [SEED]

    Read each page once: it is right, or its read failed, or it is wrong
    (other data). Prints "right R, failed F (PAGES), wrong W"; exits 1 if
    any page was wrong.
    """
    fd = open_dev(dev, os.O_RDONLY)
    failed = set()
    right, wrong = verify_pass(fd, page_buffer(),
                               list(pages_of(first, spec, int(seed))), failed)
    print("right %d, failed %d (%s), wrong %d" %
          (right, len(failed), " ".join(map(str, sorted(failed))), len(wrong)))
    return 1 if wrong else 0


def cmd_plaintext(path, first, spec, seed="1"):
    """plaintext FILE FIRST_PAGE SPEC [SEED]

    What FILE (a backing device's image) shows of the pages of SPEC:
    prints "pages P, words W": P of SPEC's non-zero pages found whole at a
    page boundary, W places where a text page's words (3 in a row) are.
    """
    import re
    with open(path, "rb") as f:
        img = f.read()
    blocks = {img[i:i + PAGE] for i in range(0, len(img), PAGE)}
    found = sum(1 for _, kind, want in pages_of(first, spec, int(seed))
                if kind != "z" and want in blocks)
    words = b"|".join(re.escape(w) for w in WORDS)
    runs = len(re.findall(b"(?:(?:" + words + b")(?:[0-9]+ )?){3}", img))
    print("pages %d, words %d" % (found, runs))
    return 0


def cmd_read_watch(dev, first, spec, stop, seed="1"):
    """read-watch DEV FIRST_PAGE SPEC STOP [SEED]

    A verified reader: reads every page round and round until the file
    STOP exists, then once more. Prints the passes made and the pages
    whose read ever failed; exits 1 at the first page with other data.
    """
    fd = open_dev(dev, os.O_RDONLY)
    buf = page_buffer()
    want = list(pages_of(first, spec, int(seed)))
    failed = set()
    passes = 0
    last = False
    while True:
        last = os.path.exists(stop)
        _, wrong = verify_pass(fd, buf, want, failed)
        passes += 1
        if wrong:
            print("page %d: wrong data" % wrong[0])
            return 1
        if last:
            break
    print("%d passes, failed %s, none wrong" %
          (passes, " ".join(map(str, sorted(failed))) or "none"))
    return 0


def cmd_debug_slab_bytes():
    """debug-slab-bytes

    Bytes a debugging kernel's bookkeeping holds in the slab: every
    kmemleak object, and for each live slab object what KASAN adds to it
    (the slot less the object size). Prints the number.
    """
    total = 0
    for line in open("/proc/slabinfo").readlines()[2:]:
        f = line.split()
        name, active, objs, slot = f[0], int(f[1]), int(f[2]), int(f[3])
        if name == "kmemleak_object":
            total += objs * slot
            continue
        try:
            size = int(open("/sys/kernel/slab/%s/object_size" % name).read())
        except OSError:
            continue
        total += active * (slot - size)
    print(total)
    return 0


def cmd_kmemleak(report, symbols):
    """kmemleak REPORT SYMBOLS

    Of the unreferenced objects in REPORT (a copy of
    /sys/kernel/debug/kmemleak), those ghostswap allocated: a frame of
    ours by name, or a bare address (module code that is gone: after rmmod
    the module's frames print so, and everything else in the debug kernel
    is built in), named from SYMBOLS (the module's lines of
    /proc/kallsyms, saved while it was loaded). Prints the counts and the
    first five of ours; exits 1 if there is one.
    """
    import re
    text = open(report).read()
    syms = []
    for line in open(symbols):
        f = line.split()
        if len(f) >= 3 and f[1] in "tT":
            syms.append((int(f[0], 16), f[2]))
    syms.sort()

    def name(addr):
        best = None
        for a, s in syms:
            if a > addr:
                break
            best = (a, s)
        if best and addr - best[0] < 1 << 16:
            return "%s+0x%x [ghostswap]" % (best[1], addr - best[0])
        return "unloaded module code"

    objs = [o for o in re.split(r"(?m)^(?=unreferenced object)", text)
            if o.strip()]
    ours = []
    for o in objs:
        frames = [ln.strip()
                  for ln in o.split("backtrace", 1)[-1].splitlines()[1:]]
        bare = [f for f in frames if re.fullmatch(r"0x[0-9a-f]+", f)]
        if bare or any(re.search(r"ghostswap|\bgs_", f) for f in frames):
            for f in bare:
                o = o.replace("    " + f + "\n",
                              "    %s (%s)\n" % (f, name(int(f, 16))))
            ours.append(o)
    print("kmemleak: %d unreferenced objects, %d allocated by ghostswap"
          % (len(objs), len(ours)))
    for o in ours[:5]:
        print(o.rstrip())
    return 1 if ours else 0


def cmd_ctl_json(path, *checks):
    """ctl-json FILE CHECK...

    FILE (- for stdin) holds the output of ghostswapctl --json, which must
    list exactly one device; every CHECK must hold for it. CHECK is
    KEY=VALUE (the field as JSON writes it, a string without its quotes:
    name=/dev/ghostswap, priority=77, mountpoint=null) or KEY:TYPE (int,
    float, str, null). Prints the device.
    """
    import json
    import re
    text = sys.stdin.read() if path == "-" else open(path).read()
    dev, = json.loads(text)["blockdevices"]
    types = {"int": int, "float": float, "str": str, "null": type(None)}
    bad = []
    for check in checks:
        m = re.fullmatch(r"([^=:]+)([=:])(.*)", check)
        if not m or m.group(1) not in dev:
            bad.append("%s: no such field" % check)
            continue
        key, op, want = m.groups()
        got = dev[key]
        if op == ":":
            if type(got) is not types[want]:
                bad.append("%s is %r, not of type %s" % (key, got, want))
        elif (got if isinstance(got, str) else json.dumps(got)) != want:
            bad.append("%s is %r, want %s" % (key, got, want))
    print("ghostswapctl --json:", dev)
    for b in bad:
        print(b)
    return 1 if bad else 0


COMMANDS = {
    "write": cmd_write,
    "verify": cmd_verify,
    "write-each": cmd_write_each,
    "discard": cmd_discard,
    "split-io": cmd_split_io,
    "read-eio": cmd_read_eio,
    "read-flaky": cmd_read_flaky,
    "verify-each": cmd_verify_each,
    "read-watch": cmd_read_watch,
    "plaintext": cmd_plaintext,
    "debug-slab-bytes": cmd_debug_slab_bytes,
    "kmemleak": cmd_kmemleak,
    "ctl-json": cmd_ctl_json,
}


def usage(fn=None):
    import inspect
    if fn is None:
        return __doc__.strip()
    return "usage: pages.py " + inspect.cleandoc(fn.__doc__)


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 3
    fn = COMMANDS.get(args[0])
    if fn is None:
        print("pages.py: unknown command %s\n\n%s" % (args[0], usage()),
              file=sys.stderr)
        return 3
    if args[1:2] in (["-h"], ["--help"]):
        print(usage(fn))
        return 0
    try:
        return fn(*args[1:])
    except TypeError:
        # Wrong number of arguments (a TypeError of the call itself).
        if sys.exc_info()[2].tb_next is not None:
            raise
        print(usage(fn), file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
