#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the guest kernel with the guest root under QEMU (KVM where a usable
# one exists, software emulation otherwise) and run one command in it.
# The repository is visible read-only at /opt/gs-src; OUTDIR is writable
# at /opt/gs-out. The guest console goes to OUTDIR/console.log, QEMU's
# own messages also to OUTDIR/qemu.err.
# GS_SYSTEMD=1 boots with systemd as init, the root read-write: only for
# a throwaway root (GS_BOOT_ROOT, see tests/boot.sh). GS_APPEND: more
# kernel command line. GS_KVER: boot that release's /boot/vmlinuz-GS_KVER
# of the guest root instead of the Debian kernel (virtme-ng takes the
# modules from the root's /lib/modules/GS_KVER); GS_KERNEL: another image;
# GS_ARCH=arm64 boots an arm64 one (below).
# COMMAND runs with GS_GUEST_PAGING set: the page-table levels the guest
# was given (testbed/lib.sh, gs_qemu_env).
#
# usage: testbed/guest.sh OUTDIR COMMAND...
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$(cd "$1" && pwd)
shift
kver=${GS_KVER:-$(gs_kver)}
kimg=${GS_KERNEL:-$GS_ROOT/boot/vmlinuz-$kver}
export PATH=$GS_VENV/bin:$PATH:/usr/sbin:/sbin
kvm=--disable-kvm
gs_use_kvm && kvm=
init=()
# GS_ARCH=arm64: an arm64 root and kernel (GS_BOOT_ROOT, GS_KERNEL; the
# arm64 lane, testbed/arm64.sh), always emulated; virtme-ng's shell init
# runs there, its initramfs on the root's static busybox.
if [ "${GS_ARCH:-x86_64}" = arm64 ]; then
	kvm=--disable-kvm
	init+=(--arch arm64 --busybox "$GS_BOOT_ROOT/usr/bin/busybox")
fi
[ -z "${GS_APPEND:-}" ] || init+=(--append "$GS_APPEND")
if [ "${GS_SYSTEMD:-0}" = 1 ]; then
	[ "$GS_BOOT_ROOT" != "$GS_ROOT" ] ||
		gs_die "GS_SYSTEMD=1 needs a throwaway GS_BOOT_ROOT"
	init+=(--systemd --rw)
fi
# GS_DISKS="NAME:SIZE ...": blank virtio disks (sparse files in OUTDIR),
# serial NAME, e.g. backing devices for the writeback tier.
# GS_DISK_OPTS: more properties of each (",indirect_desc=off", ...).
vng_args=()
for d in ${GS_DISKS:-}; do
	img=$out/disk-${d%%:*}.img
	rm -f "$img"
	truncate -s "${d#*:}" "$img"
	vng_args+=("--qemu-opts=-drive file=$img,if=none,id=${d%%:*},format=raw,cache=unsafe"
		"--qemu-opts=-device virtio-blk-pci,drive=${d%%:*},serial=${d%%:*}${GS_DISK_OPTS:-}")
done
rm -f "$out/exit" "$out/running"
# GS_VIRTIO_TRACE=1: QEMU's trace events of its virtio queues (kicks,
# requests taken and completed, interrupts) logged to
# OUTDIR/virtio-trace.log, and read at the end into
# OUTDIR/virtio-trace.txt by testbed/virtio-trace.py: which side lost a
# request the guest waits for.
if [ "${GS_VIRTIO_TRACE:-0}" = 1 ]; then
	printf '%s\n' virtio_queue_notify virtqueue_pop virtqueue_flush \
		virtio_notify virtio_notify_irqfd virtio_blk_req_complete \
		virtio_blk_handle_read virtio_blk_handle_write >"$out/virtio-trace.events"
	: >"$out/virtio-trace.log"
	vng_args+=("--qemu-opts=-trace events=$out/virtio-trace.events -D $out/virtio-trace.log")
fi
gs_qemu_env
[ -z "$GS_QEMU_OPTS" ] || vng_args+=("--qemu-opts=$GS_QEMU_OPTS")
# GS_QEMU_EXTRA: more QEMU options (testbed/tcg-litmus.sh's shared memory
# device). GS_PIN_CPU=LIST: the emulator, every thread of it, runs on
# those host CPUs only (taskset -c LIST); "auto", the default under
# single-threaded TCG: on the one CPU the fewest other pinned guests
# hold (gs_pin_cpu_take); "off": anywhere. Under single-threaded TCG a
# guest's locked add (Linux's smp_mb(), virtio_mb()) is no barrier
# against QEMU's other threads, and a virtio interrupt can be lost for
# good (Documentation/testing.md, "A virtio interrupt lost under
# single-threaded TCG"); on one host CPU nothing can reorder them.
[ -z "${GS_QEMU_EXTRA:-}" ] || vng_args+=("--qemu-opts=$GS_QEMU_EXTRA")
# Under KVM, or with a TCG thread per vCPU (whose locked instructions are
# atomic on the host), the default is "off".
if [ -z "$kvm" ] || [ "$GS_QEMU_MULTI" = 1 ]; then
	pin_cpu=${GS_PIN_CPU:-off}
else
	pin_cpu=${GS_PIN_CPU:-auto}
fi
pin=()
case $pin_cpu in
off) ;;
auto)
	pin=(taskset -c "$(gs_pin_cpu_take)")
	trap gs_pin_cpu_drop EXIT ;;
*)	pin=(taskset -c "$pin_cpu") ;;
esac
[ ${#pin[@]} = 0 ] || GS_QEMU_DESC="$GS_QEMU_DESC, on host CPU ${pin[2]}"
vng_args+=(--qemu "$GS_QEMU_BIN")
# A guest that dies is a failed run: no second boot. OUTDIR/exit keeps the
# exit status (124: killed at GS_GUEST_TIMEOUT) for the report
# (gs_guest_died in testbed/lib.sh).
rm -f "$out/qemu.pid" "$out/pinned"
if [ "$GS_QEMU_MULTI" = 1 ]; then
	vng_args+=("--qemu-opts=-name debug-threads=on -pidfile $out/qemu.pid")
	gs_qemu_multi_lock
	gs_qemu_pin_vcpus "$out/qemu.pid" "${GS_CPUS:-2}" >"$out/pinned" 2>&1 &
	pinner=$!
fi
# QEMU's monitor on a socket of its own: when the guest prints
# "GS-VIRTIO-SNAPSHOT NAME" (the bench's hang watch does), what QEMU's
# virtio block queues hold goes to OUTDIR/virtio-queues.txt.
qmpdir=$(mktemp -d /tmp/gs-qmp.XXXXXX)
: >"$out/console.log"
vng_args+=("--qemu-opts=-qmp unix:$qmpdir/sock,server=on,wait=off")
python3 "$GS_TOP/testbed/qmp-virtio.py" "$out/console.log" "$qmpdir/sock" \
	"$out/virtio-queues.txt" </dev/null >/dev/null 2>&1 &
qmpw=$!
gs_log "booting $kver ($GS_QEMU_DESC), ${GS_MEM:-2G} RAM, running: $*"
# The console through a pipe (testbed/console-tee.py says why): every
# line kept, in order, in OUTDIR/console.log; QEMU's own messages
# ("qemu-system-...: ") copied to OUTDIR/qemu.err too. The whole log is
# read on the host afterwards (gs_console_tap in testbed/lib.sh).
: >"$out/qemu.err"
t0=$(date +%s.%N)
set +e
${pin[@]+"${pin[@]}"} timeout "${GS_GUEST_TIMEOUT:-2400}" vng --run "$kimg" \
	--root "$GS_BOOT_ROOT" ${init[@]+"${init[@]}"} $kvm \
	--memory "${GS_MEM:-2G}" --cpus "${GS_CPUS:-2}" \
	--rodir "/opt/gs-src=$GS_TOP" --rwdir "/opt/gs-out=$out" \
	${vng_args[@]+"${vng_args[@]}"} \
	--verbose --exec "echo GS-GUEST-UP >/dev/kmsg; export GS_GUEST_PAGING=$GS_GUEST_PAGING; $*" \
	</dev/null 2>&1 |
	python3 "$GS_TOP/testbed/console-tee.py" "$out/console.log" "$out/qemu.err"
rc=${PIPESTATUS[0]}
set -e
echo "$rc" >"$out/exit"
[ "${GS_VIRTIO_TRACE:-0}" != 1 ] ||
	python3 "$GS_TOP/testbed/virtio-trace.py" "$out/virtio-trace.log" \
		>"$out/virtio-trace.txt" 2>&1 || true
kill "$qmpw" 2>/dev/null || true
rm -rf "$qmpdir"
[ -z "${pinner:-}" ] || kill "$pinner" 2>/dev/null || true
# What the guest cost the host: OUTDIR/cpu, "WALL CPU" in seconds, CPU
# the user and system time of QEMU (and virtme-ng around it). CPU above
# WALL: its vCPUs ran at the same instant on more than one host CPU.
t1=$(date +%s.%N)
times >"$out/times"	# in this shell: a pipeline's subshell has no children
echo "$(awk -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", t1 - t0 }') $(gs_times_cpu "$out/times")" \
	>"$out/cpu"
rm -f "$out/times"
grep -q 'GS-GUEST-UP' "$out/console.log" ||
	gs_log "the guest died before userspace: $(grep -m1 -E "$GS_REPORT_RE" "$out/console.log")"
exit $rc
