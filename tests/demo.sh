#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Demo: provision the test bed, build and install ghostswap by DKMS in the
# guest root, boot the stock Debian 7.x kernel in QEMU and swapon a 1 TiB
# /dev/ghostswap with a workload going through it.
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

out=${GS_RESULTS:-$GS_TOP/results}/demo
rm -rf "$out"
mkdir -p "$out"
export GS_LOGDIR=$out/logs
"$GS_TOP/testbed/provision.sh"
"$GS_TOP/testbed/build.sh" >"$out/build.tap" || { cat "$out/build.tap"; exit 1; }
"$GS_TOP/testbed/guest.sh" "$out" bash /opt/gs-src/tests/guest/demo.sh || true
[ -s "$out/demo.txt" ] || gs_die "the guest produced no output, see $out/console.log"
cat "$out/demo.txt"
# The kernel's word on the run: a report in the console fails the demo.
gs_console_tap demo "$out" | sed 's/^# /  /' ||
	gs_die "the kernel reported a problem during the demo, see $out/console.log"
