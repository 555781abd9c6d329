#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hibernation aimed at ghostswap, for real: a guest of the main kernel
# (QEMU, no virtme-ng) whose whole root is an initramfs made here, the
# host's static busybox, ghostswap.ko and its dependency as testbed/build.sh
# built them into the guest root, a static gsverify, and
# tests/hibernate-init.sh as /init. The other guests' roots are shared
# filesystems, which do not come back from the freeze and thaw of every
# device that hibernation does; a root in RAM does.
#
# The guest swaps on ghostswap, leaves a stopped workload's pages in it,
# points the kernel's resume device at it and hibernates: the module must
# refuse the image, hibernation fail with EIO, the system go on and the
# workload's pages come back right (hibernate-init.sh says each step).
# Its TAP lines come through the console; the whole console is read for
# kernel reports as every boot's is (testbed/console-scan.py).
#
# Prints TAP on stdout; exits non-zero on any failure.
# usage: tests/hibernate.sh OUTDIR [KVER]   (default: the main kernel;
#        make test runs it on that and on the 6.12 LTS kernel)
set -uo pipefail
GS_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$GS_TOP/testbed/lib.sh"
. "$GS_TOP/testbed/tap.sh"

fail_all() {
	tap_not_ok "$tag: $1" "${@:2}"
	tap_plan
	exit 1
}

out=${1:?usage: tests/hibernate.sh OUTDIR [KVER]}
tag=hibernate
rm -rf "$out"
mkdir -p "$out/initramfs"
kver=${2-$(gs_kver)}
tag="hibernate ($kver)"
[ -n "$kver" ] || fail_all "no kernel in the guest root (testbed/provision.sh)"
mods=$GS_ROOT/lib/modules/$kver

# The initramfs.
ir=$out/initramfs
mkdir -p "$ir/bin" "$ir/lib" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/tmp"
bb=$(PATH=$PATH:/usr/sbin:/sbin command -v busybox) ||
	fail_all "no busybox on the host (testbed/provision.sh installs busybox-static)"
file -L "$bb" | grep -q 'statically linked' ||
	fail_all "$bb is not statically linked (busybox-static)"
cp "$bb" "$ir/bin/busybox"
for a in $("$bb" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$ir/bin/$a"
done
ko=$(find "$mods/updates" "$mods/extra" -name 'ghostswap.ko*' 2>/dev/null | head -n 1)
[ -n "$ko" ] || fail_all "no ghostswap.ko for $kver in the guest root (testbed/build.sh)"
# Its dependencies, loaded by /init in the reverse of modules.dep's order
# (a module's own dependencies come after it there).
deps=$(grep -m1 "^[^:]*/ghostswap.ko[^:]*:" "$mods/modules.dep" | cut -d: -f2)
unpack() {
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -dc "$1" ;;
	*) cat "$1" ;;
	esac >"$2"
}
unpack "$ko" "$ir/lib/ghostswap.ko"
# mod_paths NAME: the files in modules.dep of a module, by its name, or
# of every module an alias names (a soft dependency such as crc32c: each
# is tried at load, as modprobe does).
mod_paths() {
	local n=$1 a
	grep -m1 -E "(^|/)${n//[-_]/[-_]}\.ko[^:]*:" "$mods/modules.dep" | cut -d: -f1 |
		grep . && return
	for a in $(awk -v n="$n" '$1 == "alias" && $2 == n { print $3 }' "$mods/modules.alias"); do
		mod_paths "$a"
	done
}
# add_mod PATH: PATH's soft dependencies ("pre:"), then PATH, in the load
# order (lib/deps); each once.
: >"$ir/lib/deps"
add_mod() {
	local p=$1 b pre pp
	b=$(basename "$p")
	b=${b%%.ko*}
	grep -qx "$b.ko" "$ir/lib/deps" && return
	for pre in $(sed -n "s/^softdep $b pre: //p" "$mods/modules.softdep"); do
		for pp in $(mod_paths "$pre"); do
			add_mod "$pp" || return 1
		done
	done
	unpack "$mods/$p" "$ir/lib/$b.ko" || return 1
	echo "$b.ko" >>"$ir/lib/deps"
}
rdeps=
for d in $deps; do
	rdeps="$d $rdeps"
done
for d in $rdeps; do
	add_mod "$d" || fail_all "the module's dependency $d"
done
cc -static -O2 -Wall -Werror -o "$ir/bin/gsverify" "$GS_TOP/tests/guest/gsverify.c" \
	>"$out/gsverify-build.log" 2>&1 ||
	fail_all "gsverify, built static" "$(tail -n 5 "$out/gsverify-build.log")"
install -m 755 "$GS_TOP/tests/hibernate-init.sh" "$ir/init"
(cd "$ir" && find . | "$bb" cpio -o -H newc 2>/dev/null | gzip -1) >"$out/initramfs.gz" ||
	fail_all "the initramfs"

# The boot: the console is the serial port, through the pipe every guest's
# console takes (testbed/console-tee.py).
gs_qemu_env
gs_log "$tag: booting $kver ($GS_QEMU_DESC), 1G RAM, an initramfs root"
: >"$out/console.log"
: >"$out/qemu.err"
# shellcheck disable=SC2086 # GS_QEMU_OPTS is a list of options
# The CPU as virtme-ng gives the other guests theirs.
cpu="-cpu max"
gs_use_kvm && cpu="-accel kvm -cpu host"
[[ " $GS_QEMU_OPTS " == *" -cpu "* ]] && cpu=
timeout "${GS_GUEST_TIMEOUT:-900}" "$GS_QEMU_BIN" $GS_QEMU_OPTS $cpu -machine q35 \
	-m 1G -smp 2 -nographic -no-reboot -nic none \
	-kernel "$GS_ROOT/boot/vmlinuz-$kver" -initrd "$out/initramfs.gz" \
	-append "console=ttyS0 rdinit=/init panic=-1 oops=panic ignore_loglevel" \
	</dev/null 2>&1 |
	python3 "$GS_TOP/testbed/console-tee.py" "$out/console.log" "$out/qemu.err"
rc=${PIPESTATUS[0]}
echo "$rc" >"$out/exit"

tr -d '\r' <"$out/console.log" | sed -n "s/^GS-TAP \\(not ok\\|ok\\) [0-9]* - /\\1 - $tag: /p; s/^GS-TAP # /# /p" >"$out/guest.tap"
tap_append "$out/guest.tap"
for t in "the module loads" "swapon /dev/ghostswap" "a workload's pages in ghostswap" \
	"hibernation fails with EIO, the system goes on" "the log says why" \
	"the workload's pages after hibernation"; do
	grep -qF -e "ok - $tag: $t" "$out/guest.tap" ||
		tap_not_ok "$tag: $t: not reached (exit $rc; console: $out/console.log)" \
			"$(gs_console_report "$out/console.log")"
done
if tr -d '\r' <"$out/console.log" | grep -q '^GS-END'; then
	tap_ok "$tag: the guest ran its script to the end"
else
	tap_not_ok "$tag: the guest ran its script to the end (exit $rc)" \
		"$(tr -d '\r' <"$out/console.log" | tail -n 20)"
fi
gs_console_tap "$tag" "$out" >"$out/console.tap"
tap_append "$out/console.tap"
tap_plan
exit "$tap_rc"
