#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What QEMU's virtio queues hold when a guest asks for it.

Watches the guest's console for lines "GS-VIRTIO-SNAPSHOT NAME" (the
bench's hang watch prints them) and, for each, asks QEMU over its QMP
socket for the state of every queue of every virtio block device: the
guest's avail index as it is in guest memory, the last one QEMU took,
the requests QEMU holds (inuse), the used index it wrote and the one it
last signalled. Appends them to OUT, a block per snapshot. Requests
the guest counts in flight with last-avail-idx behind the avail index:
QEMU was never told of them; used-idx ahead of what the guest took: the
guest was never told they ended.

usage: qmp-virtio.py CONSOLE_LOG QMP_SOCKET OUT
Runs until its parent (testbed/guest.sh) kills it or exits.
"""
import json
import os
import re
import socket
import sys
import time

MARK = re.compile(rb"GS-VIRTIO-SNAPSHOT (\S+)")


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.read()     # the greeting
        self.cmd("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise OSError("QMP closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            r = self.read()
            if "return" in r:
                return r["return"]
            if "error" in r:
                return {"error": r["error"].get("desc", "?")}
            # an event: skip it

    def close(self):
        self.sock.close()


def snapshot(path, name):
    out = ["== %s (%s)" % (name, time.strftime("%H:%M:%S"))]
    q = Qmp(path)
    try:
        for dev in q.cmd("x-query-virtio"):
            if not isinstance(dev, dict) or dev.get("name") != "virtio-blk":
                continue
            # Every answer below is an object (an error too: cmd()).
            st = q.cmd("x-query-virtio-status", path=dev["path"])
            nvq = st.get("num-vqs", 0)
            drive = q.cmd("qom-get", path=dev["path"].rsplit("/", 1)[0],
                          property="drive")
            out.append("%s (drive %s): broken %s, %d queues" % (
                dev["path"], drive, st.get("broken"), nvq))
            for i in range(nvq):
                qs = q.cmd("x-query-virtio-queue-status",
                           path=dev["path"], queue=i)
                el = q.cmd("x-query-virtio-queue-element",
                           path=dev["path"], queue=i)
                avail = el.get("avail", {})
                used = el.get("used", {})
                out.append("  queue %d: %s" % (i, json.dumps({
                    "avail-idx (guest)": avail.get("idx"),
                    "avail-flags": avail.get("flags"),
                    "last-avail-idx": qs.get("last-avail-idx"),
                    "shadow-avail-idx": qs.get("shadow-avail-idx"),
                    "inuse": qs.get("inuse"),
                    "used-idx": qs.get("used-idx"),
                    "used-flags": used.get("flags"),
                    "signalled-used": qs.get("signalled-used"),
                    "signalled-used-valid": qs.get("signalled-used-valid"),
                    "vring-num": qs.get("vring-num"),
                    "error": qs.get("error") or el.get("error"),
                })))
    finally:
        q.close()
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    console, sock, outp = sys.argv[1:]
    pos = 0
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(2)
        try:
            if os.path.getsize(console) < pos:
                pos = 0     # written anew
            with open(console, "rb") as f:
                f.seek(pos)
                data = f.read()
        except OSError:
            continue
        # Only whole lines: a mark may be half written.
        cut = data.rfind(b"\n") + 1
        pos += cut
        for m in MARK.finditer(data[:cut]):
            name = m.group(1).decode(errors="replace")
            try:
                lines = snapshot(sock, name)
            except (OSError, ValueError, KeyError) as e:
                lines = ["== %s: no answer from QMP: %s" % (name, e)]
            with open(outp, "a") as f:
                f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
