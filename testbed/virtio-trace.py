#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""QEMU's side of the guest's virtio block disks, from its trace log.

testbed/guest.sh with GS_VIRTIO_TRACE=1 has QEMU log six trace events
of its virtio queues to OUTDIR/virtio-trace.log (QEMU's "log" trace
backend, -D): the guest's kicks (virtio_queue_notify), the requests
QEMU takes (virtqueue_pop) and ends (virtio_blk_req_complete), the used
ring's updates (virtqueue_flush) and the interrupts it sends
(virtio_notify, virtio_notify_irqfd); virtio_blk_handle_read and
_write name each request's sector. This script reads that log and says,
for each queue of each block device, what QEMU did last and what it
still holds:

  vq VQ (vdev VDEV): K kicks, P taken, C completed, F flushed, I interrupts
    in QEMU: N taken, not completed (oldest: write sector S, line L)
    last: kick line A, taken line B, completed line C, interrupt line D
    verdict: ...

The verdicts, for a hang where the guest counts requests in flight:
  "QEMU holds N requests it took and never completed": the backend
      (the image file, QEMU's block layer) is stuck;
  "N requests completed after the last interrupt": QEMU ended them
      and did not interrupt the guest. A loss only if the guest asked
      for an interrupt: with event-idx it often has not (its driver
      polls the used ring, or wants one only later), and healthy runs
      end so on some queues; virtio-queues.txt's used-event says;
  "idle": every request QEMU took was completed and interrupted for.
      Requests the guest still counts in flight then never reached
      QEMU: no kick, or a kick QEMU found nothing new at (the ring's
      avail index, virtio-queues.txt's not-taken, says which).
A virtio-blk request is its queue element (VirtIOBlockReq begins with
one), so "elem" of virtqueue_pop is "req" of the block events.

usage: virtio-trace.py LOG       the summary, on stdout
       virtio-trace.py --self-test
"""
import re
import sys

LINE = re.compile(r'^(?:\d+@\d+\.\d+:)?(\w+) (.*)$')
FIELD = re.compile(r'(\w+) (\S+)')
EVENTS = ("virtio_queue_notify", "virtqueue_pop", "virtqueue_flush",
          "virtio_notify", "virtio_notify_irqfd", "virtio_blk_req_complete",
          "virtio_blk_handle_read", "virtio_blk_handle_write")


class Queue:
    def __init__(self, vq):
        self.vq = vq
        self.vdev = None
        self.kicks = self.taken = self.completed = 0
        self.flushed = self.irqs = 0
        self.since_irq = 0      # completed since the last interrupt
        self.inflight = {}      # elem -> [line, what]
        self.last = {"kick": 0, "taken": 0, "completed": 0, "interrupt": 0}


def parse(lines):
    """(queues by vq, the block devices' vdevs) from the log's lines."""
    queues, blk, where = {}, set(), {}

    def q(vq):
        return queues.setdefault(vq, Queue(vq))

    for n, line in enumerate(lines, 1):
        m = LINE.match(line.strip())
        if not m or m.group(1) not in EVENTS:
            continue
        ev, f = m.group(1), dict(FIELD.findall(m.group(2)))
        if ev == "virtio_queue_notify":
            x = q(f["vq"])
            x.vdev = f["vdev"]
            x.kicks += 1
            x.last["kick"] = n
        elif ev == "virtqueue_pop":
            x = q(f["vq"])
            x.taken += 1
            x.last["taken"] = n
            x.inflight[f["elem"]] = [n, "request"]
            where[f["elem"]] = x
        elif ev == "virtqueue_flush":
            q(f["vq"]).flushed += int(f["count"])
        elif ev in ("virtio_notify", "virtio_notify_irqfd"):
            x = q(f["vq"])
            x.vdev = f["vdev"]
            x.irqs += 1
            x.since_irq = 0
            x.last["interrupt"] = n
        elif ev in ("virtio_blk_handle_read", "virtio_blk_handle_write"):
            blk.add(f["vdev"])
            x = where.get(f["req"])
            if x and f["req"] in x.inflight:
                x.inflight[f["req"]][1] = "%s sector %s" % (
                    ev.rsplit("_", 1)[1], f["sector"])
        elif ev == "virtio_blk_req_complete":
            blk.add(f["vdev"])
            x = where.pop(f["req"], None)
            if x is None:
                continue
            x.completed += 1
            x.since_irq += 1
            x.last["completed"] = n
            x.inflight.pop(f["req"], None)
    return queues, blk


def verdict(x):
    if x.inflight:
        return "QEMU holds %d requests it took and never completed: " \
            "its backend is stuck" % len(x.inflight)
    if x.since_irq:
        return "%d requests completed after the last interrupt: the " \
            "guest was not told of them, which is a loss only if it " \
            "asked to be (virtio-queues.txt: used-event behind used-idx)" \
            % x.since_irq
    return "idle: every request QEMU took was completed and interrupted for"


def summary(queues, blk):
    out = []
    for x in sorted(queues.values(), key=lambda x: (x.vdev or "", x.vq)):
        if x.vdev not in blk:
            continue
        out.append("vq %s (vdev %s): %d kicks, %d taken, %d completed, "
                   "%d flushed, %d interrupts" %
                   (x.vq, x.vdev, x.kicks, x.taken, x.completed, x.flushed,
                    x.irqs))
        if x.inflight:
            line, what = min(x.inflight.values())
            out.append("  in QEMU: %d taken, not completed (oldest: %s, "
                       "line %d)" % (len(x.inflight), what, line))
        out.append("  last: " + ", ".join("%s line %d" % kv
                                          for kv in x.last.items()))
        out.append("  verdict: " + verdict(x))
    if not out:
        out.append("no virtio block request in the log")
    return "\n".join(out)


def self_test():
    ok = True

    def log(*reqs, tail=()):
        lines = ["virtio_queue_notify vdev 0xd1 n 0 vq 0xq1",
                 "virtio_queue_notify vdev 0x9p n 0 vq 0xq9",
                 "virtqueue_pop vq 0xq9 elem 0xe9 in_num 1 out_num 1"]
        for r in reqs:
            lines += ["virtqueue_pop vq 0xq1 elem %s in_num 1 out_num 2" % r,
                      "virtio_blk_handle_write vdev 0xd1 req %s sector 8 "
                      "nsectors 8" % r]
        return lines + list(tail)

    done = ["4242@1.000001:virtio_blk_req_complete vdev 0xd1 req 0xa "
            "status 0", "virtqueue_flush vq 0xq1 count 1"]
    cases = [
        ("idle", log("0xa", tail=done + ["virtio_notify vdev 0xd1 vq 0xq1"]),
         ["1 taken, 1 completed, 1 flushed, 1 interrupts", "verdict: idle"]),
        ("stuck", log("0xa", "0xb", tail=done),
         ["in QEMU: 1 taken, not completed (oldest: write sector 8, line 6)",
          "never completed"]),
        ("no interrupt", log("0xa", tail=done),
         ["1 requests completed after the last interrupt"]),
        ("not block", ["virtio_queue_notify vdev 0x9p n 0 vq 0xq9",
                       "garbage", "virtqueue_pop vq 0xq9 elem 0xe in_num 1 "
                       "out_num 1"], ["no virtio block request"]),
    ]
    for name, lines, want in cases:
        got = summary(*parse(lines))
        for w in want:
            if w not in got:
                print("self-test %s: %r not in:\n%s" % (name, w, got))
                ok = False
        if "0xq9" in got:
            print("self-test %s: a queue of no block device:\n%s" % (name, got))
            ok = False
    print("virtio-trace.py self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__.split("usage: ")[1])
        return 2
    with open(sys.argv[1], errors="replace") as f:
        print(summary(*parse(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
