#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the guest kernel with the guest root under QEMU (KVM where a usable
# one exists, software emulation otherwise) and run one command in it.
# The repository is visible read-only at /opt/gs-src; OUTDIR is writable
# at /opt/gs-out. The guest console goes to OUTDIR/console.log.
# GS_SYSTEMD=1 boots with systemd as init, the root read-write: only for
# a throwaway root (GS_BOOT_ROOT, see tests/boot.sh). GS_APPEND: more
# kernel command line.
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
init=()
[ -z "${GS_APPEND:-}" ] || init+=(--append "$GS_APPEND")
if [ "${GS_SYSTEMD:-0}" = 1 ]; then
	[ "$GS_BOOT_ROOT" != "$GS_ROOT" ] ||
		gs_die "GS_SYSTEMD=1 needs a throwaway GS_BOOT_ROOT"
	init+=(--systemd --rw)
fi
# GS_DISKS="NAME:SIZE ...": blank virtio disks (sparse files in OUTDIR),
# serial NAME, e.g. backing devices for the writeback tier.
disks=()
for d in ${GS_DISKS:-}; do
	img=$out/disk-${d%%:*}.img
	rm -f "$img"
	truncate -s "${d#*:}" "$img"
	disks+=("--qemu-opts=-drive file=$img,if=none,id=${d%%:*},format=raw,cache=unsafe"
		"--qemu-opts=-device virtio-blk-pci,drive=${d%%:*},serial=${d%%:*}")
done
# The boot itself sometimes dies under software emulation before userspace
# starts (seen: an int3 Oops while the kernel patches its own text on the
# other vCPU). Such a boot ran nothing of ours: boot again, up to 3 times.
for try in 1 2 3; do
	gs_log "booting $kver (${kvm:-kvm}${kvm:+, software emulation}), ${GS_MEM:-2G} RAM, running: $*"
	rc=0
	timeout "${GS_GUEST_TIMEOUT:-2400}" vng --run "$GS_ROOT/boot/vmlinuz-$kver" \
		--root "$GS_BOOT_ROOT" ${init[@]+"${init[@]}"} $kvm \
		--memory "${GS_MEM:-2G}" --cpus "${GS_CPUS:-2}" \
		--rodir "/opt/gs-src=$GS_TOP" --rwdir "/opt/gs-out=$out" \
		${disks[@]+"${disks[@]}"} \
		--verbose --exec "echo GS-GUEST-UP >/dev/kmsg; $*" \
		</dev/null >"$out/console.log" 2>&1 || rc=$?
	grep -q 'GS-GUEST-UP' "$out/console.log" && exit $rc
	cp "$out/console.log" "$out/console-failed-boot-$try.log"
	gs_log "the guest died before userspace (try $try):" \
		"$(grep -m1 -E 'Oops|panic|BUG' "$out/console.log")"
done
exit 1
