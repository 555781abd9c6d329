#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A reproducer of the test bed's lost virtio notification, with nothing
# of ghostswap in it: one guest as every test boots it (testbed/guest.sh:
# the same QEMU, TCG mode, machine and kernel), a blank 2 GiB virtio disk,
# and fio on that raw disk in rounds (testbed/virtio-stress-guest.sh)
# until one hangs or ROUNDS have run. OUTDIR/result says which ("HANG
# round N" or "OK N rounds"); on a hang, OUTDIR/virtio-queues.txt holds
# QEMU's side of the disk's queues. Exits 0 only if no round hung.
#
# usage: testbed/virtio-stress.sh OUTDIR [ROUNDS [SECONDS]]   (default 60 x 30 s)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || gs_die "usage: testbed/virtio-stress.sh OUTDIR [ROUNDS [SECONDS]]"
out=$1 rounds=${2:-60} secs=${3:-30}
mkdir -p "$out"
rm -f "$out/result"
GS_DISKS="stress:2G" GS_GUEST_TIMEOUT=$((rounds * (4 * secs + 90) + 600)) \
	"$GS_TOP/testbed/guest.sh" "$out" \
	"bash /opt/gs-src/testbed/virtio-stress-guest.sh $rounds $secs" || true
[ -s "$out/result" ] || gs_die "the guest wrote no result: $out/console.log"
gs_log "virtio stress: $(cat "$out/result")"
grep -q '^OK' "$out/result"
