#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Does the emulator keep a guest's full barrier against a host thread?
# The store-buffering litmus test, with nothing of ghostswap in it: one
# guest as every test boots it (testbed/guest.sh: the same QEMU, TCG mode
# and kernel) with an ivshmem device, and a host process on the file
# behind it. Each round the guest stores x = 1, runs a barrier, loads y;
# the host stores y = 1, mfence, loads x (testbed/litmus/). Both reading
# 0 is what a full barrier on each side forbids, and what a virtio driver
# and device rely on when one re-arms its interrupt and the other decides
# whether to send one. Per barrier: "none" (the control: the test sees
# the reordering at all), "lock-addl" (x86-64 Linux's smp_mb() and
# virtio_mb()), "mfence", "xchg" (smp_store_mb()).
# Unpinned by default (GS_PIN_CPU=off for testbed/guest.sh, which would
# otherwise pin the guest alone); GS_PIN_CPU=N runs the emulator and the
# host process on host CPU N only.
# The table goes to OUTDIR/litmus.txt and stdout.
#
# usage: testbed/tcg-litmus.sh OUTDIR [ROUNDS [HOST_DELAY [GUEST_DELAY]]]
#        (default 3000000 rounds a mode, delays 3500 and 40 loops: on
#        the 2-core test bed, about 1% of rounds overlapping closely)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || gs_die "usage: testbed/tcg-litmus.sh OUTDIR [ROUNDS [HOST_DELAY [GUEST_DELAY]]]"
mkdir -p "$1"
out=$(cd "$1" && pwd)
rounds=${2:-3000000} hdelay=${3:-3500} gdelay=${4:-40}
export GS_PIN_CPU=${GS_PIN_CPU:-off}
case $GS_PIN_CPU in
off | [0-9] | [0-9][0-9]) ;;
*) gs_die "GS_PIN_CPU=$GS_PIN_CPU: one host CPU's number, or off" ;;
esac
src=$GS_TOP/testbed/litmus
gcc -O2 -Wall -o "$out/sb-host" "$src/sb-host.c"
gcc -O2 -Wall -static -o "$out/sb-guest" "$src/sb-guest.c"
shm=$(mktemp /dev/shm/gs-litmus.XXXXXX)
trap 'rm -f "$shm"' EXIT
truncate -s 1M "$shm"
GS_QEMU_EXTRA="-object memory-backend-file,id=litmus,mem-path=$shm,size=1M,share=on -device ivshmem-plain,memdev=litmus" \
	GS_GUEST_TIMEOUT=$((rounds / 50 + 1200)) \
	"$GS_TOP/testbed/guest.sh" "$out" /opt/gs-out/sb-guest &
guest=$!
pin=()
[ "$GS_PIN_CPU" = off ] || pin=(taskset -c "$GS_PIN_CPU")
rc=0
${pin[@]+"${pin[@]}"} "$out/sb-host" "$shm" "$rounds" "$hdelay" "$gdelay" \
	none lock-addl mfence xchg | tee "$out/litmus.txt" || rc=$?
wait "$guest" || true
gs_log "litmus: GS_PIN_CPU=$GS_PIN_CPU, $(gs_qemu_env && echo "$GS_QEMU_DESC")"
exit $rc
