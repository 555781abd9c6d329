#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A guest's console, from a pipe to a file.

testbed/guest.sh sends virtme-ng's output (the kernel console, the
command's output, QEMU's own messages) through a pipe to this: every
byte goes to CONSOLE as it comes, and QEMU's own messages (lines that
start "qemu-system-") to QEMU_ERR as well.

Why a pipe: virtme-ng has QEMU open /proc/self/fd/1 and /proc/self/fd/2
again for the console and the command's output; a file opened again has
an offset of its own and is truncated, so they wrote over each other's
lines. Why this reader: QEMU writes to the pipe without blocking, and its
emulated serial port drops a byte it could not write after a few tries:
the pipe is made as large as the system allows (1 MiB by default), and
this reader does nothing but copy, so that it never fills.

usage: console-tee.py CONSOLE QEMU_ERR < pipe
"""
import fcntl
import os
import sys

F_SETPIPE_SZ = 1031


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__.split("usage: ")[1])
        return 2
    fd = sys.stdin.fileno()
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            size = int(f.read())
        fcntl.fcntl(fd, F_SETPIPE_SZ, min(size, 1 << 20))
    except (OSError, ValueError):
        pass    # not a pipe, or no larger one: as it is
    partial = b""
    with open(argv[1], "ab", buffering=0) as out, \
            open(argv[2], "ab", buffering=0) as qerr:
        while True:
            data = os.read(fd, 1 << 16)
            if not data:
                break
            out.write(data)
            lines = (partial + data).split(b"\n")
            partial = lines.pop()
            for line in lines:
                if line.startswith(b"qemu-system-"):
                    qerr.write(line + b"\n")
        if partial.startswith(b"qemu-system-"):
            qerr.write(partial + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
