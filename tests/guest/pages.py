#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write or verify pages of known kinds on a block device (4 KiB each).

usage: pages.py write|verify DEV FIRST_PAGE SPEC [SEED]
  SPEC: comma-separated KIND:COUNT runs, KIND one of
    z  zero page             s  one repeated 64-bit word (varies per page)
    t  text-like page        r  random page (incompressible)
    T  the same text page every time
Content is a pure function of (seed, page number), so verify needs nothing
but the same arguments. Prints a summary; exits 1 on the first mismatch, 2 on a failed write
(after printing how many pages were written).
"""
import mmap
import os
import random
import struct
import sys

PAGE = 4096
WORDS = [b"swap ", b"page ", b"cluster ", b"slot ", b"memory ", b"the ",
         b"of ", b"kernel ", b"ghost ", b"table ", b"compressed ", b"and ",
         b"a ", b"zram ", b"writeback ", b"entry\n"]


def make_text(size):
    rng = random.Random(0)
    out = bytearray()
    while len(out) < size:
        out += WORDS[rng.randrange(len(WORDS))]
        if rng.randrange(8) == 0:
            out += b"%d " % rng.randrange(100000)
    return bytes(out)


TEXT = make_text(256 * 1024)


def text_page(rng):
    """A text-like page: a window of TEXT at a page-specific offset."""
    off = rng.randrange(len(TEXT) - PAGE)
    return TEXT[off:off + PAGE]


def page(kind, seed, n):
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


def main():
    op, dev, first, spec = sys.argv[1:5]
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    n = int(first)
    runs = [(k, int(c)) for k, c in (r.split(":") for r in spec.split(","))]
    fd = os.open(dev, (os.O_WRONLY if op == "write" else os.O_RDONLY)
                 | os.O_DIRECT)
    buf = mmap.mmap(-1, PAGE)
    total = 0
    for kind, count in runs:
        for _ in range(count):
            want = page(kind, seed, n)
            if op == "write":
                buf[:] = want
                try:
                    os.pwrite(fd, buf, n * PAGE)
                except OSError as e:
                    print("write failed at page %d after %d pages: %s"
                          % (n, total, e.strerror))
                    sys.exit(2)
            else:
                if os.preadv(fd, [buf], n * PAGE) != PAGE or buf[:] != want:
                    print("MISMATCH at page %d (kind %s)" % (n, kind))
                    sys.exit(1)
            n += 1
            total += 1
    print("%s %d pages (%s) ok" % (op, total, spec))


if __name__ == "__main__":
    main()
