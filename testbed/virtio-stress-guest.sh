#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the guest, for testbed/virtio-stress.sh: ROUNDS rounds of fio on the
# raw virtio disk with serial "stress" (no ghostswap loaded, no
# filesystem, no swap), each SECONDS long: 4 KiB random reads and writes,
# direct, libaio, two jobs at iodepth 64, so that completions keep coming
# while the guest's interrupt handler takes the last ones. A round that
# runs past three times its length is a hang: the disk's state goes to
# the console (what the guest counts in flight, the virtqueue's
# interrupts) and the host records QEMU's side of the queues
# (testbed/qmp-virtio.py, on "GS-VIRTIO-SNAPSHOT"); the script exits 1.
#
# usage: virtio-stress-guest.sh ROUNDS SECONDS
set -u
. /opt/gs-src/tests/guest/lib.sh
rounds=$1 secs=$2
dev=$(vdisk stress) || exit 2
name=${dev#/dev/}
say() { echo "[stress] $*" >/dev/kmsg; }
state() {
	say "$name inflight (reads writes): $(cat /sys/block/$name/inflight)"
	local f
	for f in /sys/kernel/debug/block/$name/hctx*/busy; do
		say "$f: $(wc -l <"$f") requests"
	done
	grep -i virtio /proc/interrupts | tr -s ' ' | while read -r f; do
		say "interrupts: $f"
	done
}
mount -t debugfs none /sys/kernel/debug 2>/dev/null
for ((r = 1; r <= rounds; r++)); do
	fio --name=stress --filename="$dev" --direct=1 --ioengine=libaio \
		--iodepth=64 --numjobs=2 --rw=randrw --bs=4k --size=1G \
		--time_based --runtime="$secs" --group_reporting \
		--output=/dev/null &
	pid=$!
	for ((t = 0; t < 3 * secs + 60; t++)); do
		kill -0 $pid 2>/dev/null || break
		sleep 1
	done
	if kill -0 $pid 2>/dev/null; then
		say "round $r still runs after $t s: hung"
		state
		echo "GS-VIRTIO-SNAPSHOT stuck" >/dev/kmsg
		sleep 5
		echo 1 >/proc/sys/kernel/sysrq
		echo w >/proc/sysrq-trigger
		echo "HANG round $r" >/opt/gs-out/result
		exit 1
	fi
	wait $pid
	rc=$?
	say "round $r: fio rc $rc, $(awk '{ print $1 + $5 }' "/sys/block/$name/stat") requests so far"
	[ $rc = 0 ] || { echo "FIO-FAILED round $r rc $rc" >/opt/gs-out/result; exit 2; }
done
echo "OK $rounds rounds" >/opt/gs-out/result
