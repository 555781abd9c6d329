#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What QEMU's virtio block queues hold when a guest asks for it.

Watches the guest's console for lines "GS-VIRTIO-SNAPSHOT NAME" (the
bench's hang watch prints them) and, for each, asks QEMU over its QMP
socket for the state of every queue of every virtio block device.
Appends to OUT a block per snapshot:

  == NAME (HH:MM:SS)
  PATH (drive DRIVE): broken B, status BITS, vm-running R, event-idx E, N queues
    queue I: {JSON}
  ...

The device line is x-query-virtio-status, read before any queue.
"broken true": QEMU had called virtio_error() on the device and serves
it no more (its reason, "Desc next is N" and the like, is on QEMU's
stderr: console.log); the line below it says so. BITS: the status the
driver set (ACKNOWLEDGE DRIVER FEATURES_OK DRIVER_OK; NEEDS_RESET once
broken). The status is read again after the queues; should "broken"
have changed meanwhile, a line "PATH: broken B after its queues were
read" follows.

Each queue's JSON, from QEMU's side (x-query-virtio-queue-status):
  last-avail-idx    the avail index up to which QEMU took requests
  shadow-avail-idx  the guest's avail index as QEMU last read it
  inuse             requests QEMU took and has not completed
  used-idx          the used index QEMU wrote
  signalled-used    the used index of its last interrupt (valid if
                    signalled-used-valid; with event-idx only)
  vring-num         the ring's size
from the guest's memory, at the ring addresses QEMU gives (HMP xp of
16-bit words; no descriptor is read):
  avail-idx, avail-flags     the guest's avail index and flags
  used-event                 (event-idx) the guest wants an interrupt
                             once the used index passes it
  ring-used-idx, used-flags  the used index and flags as the guest sees
                             them (ring-used-idx equals used-idx)
  avail-event                (event-idx) QEMU wants a kick once the
                             avail index passes it
and worked out:
  not-taken  avail-idx - last-avail-idx (mod 65536): requests the guest
             made available that QEMU has not taken
  error      why values are null: QMP's error, "ring not set up" (its
             addresses 0: no driver yet), "packed ring: not read", or
             "cannot read guest memory at ADDR"

Reading a hang: requests the guest counts in flight with not-taken
above 0 and QEMU idle: QEMU was never told of them (or never looked);
not-taken 0 and inuse 0, used-idx ahead of what the guest completed:
the guest was never told they ended.

Not used: x-query-virtio-queue-element. Without an index it decodes
the descriptor chain at the avail-ring slot of last-avail-idx, pending
or not; on a queue that has caught up that slot is stale, its indirect
table freed and reused by the guest, and a garbage link makes QEMU
call virtio_error() ("Desc next is 65535"): the query broke the device
it looked at.

usage: qmp-virtio.py CONSOLE_LOG QMP_SOCKET OUT
       qmp-virtio.py --self-test   (against a fake QMP server; no QEMU)
Runs until its parent (testbed/guest.sh) kills it or exits.
"""
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time

MARK = re.compile(rb"GS-VIRTIO-SNAPSHOT (\S+)")

# A queue's JSON, in this order.
KEYS = ("avail-idx", "avail-flags", "used-event", "last-avail-idx",
        "shadow-avail-idx", "not-taken", "inuse", "used-idx",
        "ring-used-idx", "used-flags", "avail-event", "signalled-used",
        "signalled-used-valid", "vring-num", "error")
FROM_QEMU = ("last-avail-idx", "shadow-avail-idx", "inuse", "used-idx",
             "signalled-used", "signalled-used-valid", "vring-num")


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
        """The command's answer; an error as {"error": its text}."""
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


def is_error(r):
    return isinstance(r, dict) and "error" in r


def parse_xp(text):
    """HMP xp's answer ("ADDR: 0x0001 0x0002", a line per 8 or fewer
    words) as a list of ints; None if QEMU could not read there."""
    vals = []
    for line in text.splitlines():
        _, sep, rest = line.partition(":")
        if not sep:
            continue
        if "Cannot access" in rest:
            return None
        vals += [int(w, 16) for w in rest.split() if w.startswith("0x")]
    return vals


def read_u16(q, addr, n):
    """n 16-bit words of guest memory at physical address addr, or None."""
    r = q.cmd("human-monitor-command",
              **{"command-line": "xp /%dhx 0x%x" % (n, addr)})
    if not isinstance(r, str):
        return None
    vals = parse_xp(r)
    return vals if vals is not None and len(vals) == n else None


def names(entries):
    """The names of QMP's decoded flags ("NAME: what it means")."""
    return [e.split(":", 1)[0].strip() for e in entries]


def queue_state(q, path, i, event_idx, packed):
    s = dict.fromkeys(KEYS)
    qs = q.cmd("x-query-virtio-queue-status", path=path, queue=i)
    if is_error(qs):
        s["error"] = qs["error"]
        return s
    for k in FROM_QEMU:
        s[k] = qs.get(k)
    num = qs.get("vring-num") or 0
    avail = qs.get("vring-avail") or 0
    used = qs.get("vring-used") or 0
    if packed:
        s["error"] = "packed ring: not read"
    elif not (num and avail and used):
        s["error"] = "ring not set up"
    else:
        # Split ring (virtio 1.x 2.7): avail = flags, idx, ring[num],
        # used_event; used = flags, idx, {id, len}[num], avail_event.
        reads = [(avail, 2, ("avail-flags", "avail-idx")),
                 (used, 2, ("used-flags", "ring-used-idx"))]
        if event_idx:
            reads += [(avail + 4 + 2 * num, 1, ("used-event",)),
                      (used + 4 + 8 * num, 1, ("avail-event",))]
        for addr, n, keys in reads:
            vals = read_u16(q, addr, n)
            if vals is None:
                s["error"] = "cannot read guest memory at 0x%x" % addr
                break
            s.update(zip(keys, vals))
    if s["avail-idx"] is not None and s["last-avail-idx"] is not None:
        s["not-taken"] = (s["avail-idx"] - s["last-avail-idx"]) % 0x10000
    return s


def device(q, path):
    out = []
    st = q.cmd("x-query-virtio-status", path=path)
    if is_error(st):
        return ["%s: x-query-virtio-status: %s" % (path, st["error"])]
    broken = st.get("broken")
    feats = st.get("guest-features") or {}
    feats = set(names(feats.get("transports", []) +
                      feats.get("dev-features", [])))
    event_idx = "VIRTIO_RING_F_EVENT_IDX" in feats
    packed = "VIRTIO_F_RING_PACKED" in feats
    status = [n.replace("VIRTIO_CONFIG_S_", "")
              for n in names((st.get("status") or {}).get("statuses", []))]
    drive = q.cmd("qom-get", path=path.rsplit("/", 1)[0], property="drive")
    if is_error(drive):
        drive = "?"
    nvq = st.get("num-vqs", 0)
    out.append("%s (drive %s): broken %s, status %s, vm-running %s, "
               "event-idx %s, %d queues" % (
                   path, drive, json.dumps(broken),
                   " ".join(status) or "none", json.dumps(st.get("vm-running")),
                   "on" if event_idx else "off", nvq))
    if broken:
        out.append("  broken before this snapshot read its queues: QEMU "
                   "serves the device no more (why: QEMU's stderr)")
    for i in range(nvq):
        out.append("  queue %d: %s" % (
            i, json.dumps(queue_state(q, path, i, event_idx, packed))))
    st2 = q.cmd("x-query-virtio-status", path=path)
    if not is_error(st2) and st2.get("broken") != broken:
        out.append("%s: broken %s after its queues were read" % (
            path, json.dumps(st2.get("broken"))))
    return out


def snapshot(path, name, now=None):
    out = ["== %s (%s)" % (name, now or time.strftime("%H:%M:%S"))]
    q = Qmp(path)
    try:
        devs = q.cmd("x-query-virtio")
        if is_error(devs):
            out.append("x-query-virtio: %s" % devs["error"])
            devs = []
        for dev in devs:
            if dev.get("name") == "virtio-blk":
                out += device(q, dev["path"])
    finally:
        q.close()
    return out


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
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
            except (OSError, ValueError, KeyError, AttributeError) as e:
                lines = ["== %s: no answer from QMP: %s" % (name, e)]
            with open(outp, "a") as f:
                f.write("\n".join(lines) + "\n")


# ------------------------------------------------------------ self-test

def fake_qemu(sock, mem, devices, queues, calls):
    """A QMP server answering as QEMU 7.2 does, for one connection.
    mem: guest memory, {address: 16-bit word}; calls: each command."""
    conn, _ = sock.accept()
    f = conn.makefile("rwb")

    def send(obj):
        f.write(json.dumps(obj).encode() + b"\r\n")
        f.flush()

    send({"QMP": {"version": {}, "capabilities": ["oob"]}})
    for line in f:
        msg = json.loads(line)
        name, args = msg["execute"], msg.get("arguments", {})
        calls.append(name)
        send({"event": "NOTHING", "data": {}})     # events are skipped
        if name == "qmp_capabilities":
            send({"return": {}})
        elif name == "x-query-virtio":
            send({"return": [{"name": d["name"], "path": p}
                             for p, d in devices.items()]})
        elif name == "x-query-virtio-status":
            send({"return": devices[args["path"]]})
        elif name == "x-query-virtio-queue-status":
            qs = queues.get((args["path"], args["queue"]))
            if qs is None:
                send({"error": {"class": "GenericError", "desc":
                                "Invalid virtqueue number %d" % args["queue"]}})
            else:
                send({"return": qs})
        elif name == "qom-get":
            send({"return": "drive-" + args["path"].rsplit("/", 1)[1]})
        elif name == "human-monitor-command":
            m = re.match(r"xp /(\d+)hx 0x([0-9a-f]+)$", args["command-line"])
            n, addr = int(m.group(1)), int(m.group(2), 16)
            text = ""
            for a in range(addr, addr + 2 * n, 16):     # 8 words a line
                words = range(a, min(a + 16, addr + 2 * n), 2)
                if not all(w in mem for w in words):
                    text += "%016x: Cannot access memory\r\n" % a
                    break
                text += "%016x: %s\r\n" % (
                    a, " ".join("0x%04x" % mem[w] for w in words))
            send({"return": text})
        else:
            send({"error": {"class": "GenericError", "desc": "no " + name}})
    conn.close()


def self_test():
    ev = ["VIRTIO_RING_F_EVENT_IDX: Used & avail. event fields enabled",
          "VIRTIO_F_VERSION_1: Device compliant for v1 spec (legacy)"]
    ok = ["VIRTIO_CONFIG_S_%s: x" % s for s in
          ("ACKNOWLEDGE", "DRIVER", "FEATURES_OK", "DRIVER_OK")]

    def status(nvq, broken=False, feats=ev, statuses=ok):
        return {"name": "virtio-blk", "broken": broken, "num-vqs": nvq,
                "vm-running": True, "status": {"statuses": statuses},
                "guest-features": {"transports": feats, "dev-features": []}}

    def qstatus(avail, used, last, inuse, used_idx, num=256):
        return {"vring-num": num, "vring-desc": avail - 4096 if avail else 0,
                "vring-avail": avail, "vring-used": used,
                "last-avail-idx": last, "shadow-avail-idx": last,
                "inuse": inuse, "used-idx": used_idx, "signalled-used": used_idx,
                "signalled-used-valid": True}
    a, b = "/machine/peripheral-anon/device[1]", "/machine/peripheral/vdc"
    c = "/machine/peripheral/vdd"
    devices = {a + "/virtio-backend": status(2),
               "/machine/peripheral/net0/virtio-backend": {"name": "virtio-net"},
               b + "/virtio-backend": status(1, True, [], ok[:2] + [
                   "VIRTIO_CONFIG_S_NEEDS_RESET: x"]),
               c + "/virtio-backend": status(2, statuses=[])}
    queues = {(a + "/virtio-backend", 0): qstatus(0x11000, 0x12000, 358, 0, 358),
              (a + "/virtio-backend", 1): qstatus(0x21000, 0x22000, 355, 0, 355),
              (b + "/virtio-backend", 0): qstatus(0x31000, 0x32000, 7, 0, 7, 128),
              (c + "/virtio-backend", 0): qstatus(0, 0, 0, 0, 0)}
    mem = {}
    for base, words in ((0x11000, [1, 358]), (0x11000 + 4 + 512, [358]),
                        (0x12000, [0, 358]), (0x12000 + 4 + 2048, [358]),
                        (0x21000, [0, 358]), (0x21000 + 4 + 512, [355]),
                        (0x22000, [0, 355]), (0x22000 + 4 + 2048, [355])):
        for k, w in enumerate(words):
            mem[base + 2 * k] = w
    # vdc's used ring is outside guest memory
    mem[0x31000], mem[0x31002] = 0, 7

    def q(v):
        return json.dumps(dict(zip(KEYS, v)))
    want = [
        "== t (00:00:00)",
        a + "/virtio-backend (drive drive-device[1]): broken false, status "
        "ACKNOWLEDGE DRIVER FEATURES_OK DRIVER_OK, vm-running true, "
        "event-idx on, 2 queues",
        "  queue 0: " + q([358, 1, 358, 358, 358, 0, 0, 358, 358, 0, 358,
                           358, True, 256, None]),
        "  queue 1: " + q([358, 0, 355, 355, 355, 3, 0, 355, 355, 0, 355,
                           355, True, 256, None]),
        b + "/virtio-backend (drive drive-vdc): broken true, status "
        "ACKNOWLEDGE DRIVER NEEDS_RESET, vm-running true, event-idx off, "
        "1 queues",
        "  broken before this snapshot read its queues: QEMU serves the "
        "device no more (why: QEMU's stderr)",
        "  queue 0: " + q([7, 0, None, 7, 7, 0, 0, 7, None, None, None, 7,
                           True, 128, "cannot read guest memory at 0x32000"]),
        c + "/virtio-backend (drive drive-vdd): broken false, status none, "
        "vm-running true, event-idx on, 2 queues",
        "  queue 0: " + q([None, None, None, 0, 0, None, 0, 0, None, None,
                           None, 0, True, 256, "ring not set up"]),
        "  queue 1: " + q([None] * 14 + ["Invalid virtqueue number 1"]),
    ]
    fails = []
    with tempfile.TemporaryDirectory() as d:
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(d + "/sock")
        srv.listen(1)
        calls = []
        t = threading.Thread(target=fake_qemu,
                             args=(srv, mem, devices, queues, calls))
        t.start()
        got = snapshot(d + "/sock", "t", "00:00:00")
        t.join(10)
        srv.close()
    if got != want:
        fails.append("snapshot:\n got: %s\nwant: %s" % (
            "\n     ".join(got), "\n     ".join(want)))
    if any(c.startswith("x-query-virtio-queue-element") for c in calls):
        fails.append("x-query-virtio-queue-element was called")
    if calls.index("x-query-virtio-status") > calls.index(
            "x-query-virtio-queue-status"):
        fails.append("a queue was read before its device's status")
    for text, want_vals in (
            ("0000000000001000: 0x0001 0x0166\r\n", [1, 358]),
            ("0000000000001000: 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 "
             "0x0000 0x0000\r\n0000000000001010: 0x0007\r\n", [0] * 8 + [7]),
            ("000000fffffff000: Cannot access memory\r\n", None)):
        if parse_xp(text) != want_vals:
            fails.append("parse_xp(%r) = %r" % (text, parse_xp(text)))
    for f in fails:
        print("FAIL " + f)
    print("qmp-virtio.py self-test: %s" % ("failed" if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    main()
