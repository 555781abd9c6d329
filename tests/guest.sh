#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the guest kernel with the guest root under QEMU (KVM where a usable
# one exists, software emulation otherwise) and run one command in it.
# The repository is visible read-only at /opt/gs-src; OUTDIR is writable
# at /opt/gs-out. The guest console goes to OUTDIR/console.log.
#
# usage: tests/guest.sh OUTDIR COMMAND...
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$(cd "$1" && pwd)
shift
kver=$(gs_kver)
export PATH=$GS_VENV/bin:$PATH:/usr/sbin:/sbin
kvm=--disable-kvm
gs_use_kvm && kvm=
gs_log "booting $kver (${kvm:-kvm}${kvm:+, software emulation}), ${GS_MEM:-2G} RAM, running: $*"
timeout "${GS_GUEST_TIMEOUT:-2400}" vng --run "$GS_ROOT/boot/vmlinuz-$kver" \
	--root "$GS_ROOT" $kvm --memory "${GS_MEM:-2G}" --cpus "${GS_CPUS:-2}" \
	--rodir "/opt/gs-src=$GS_TOP" --rwdir "/opt/gs-out=$out" \
	--verbose --exec "$*" </dev/null >"$out/console.log" 2>&1
