#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packaging end to end: a guest root as an admin's machine has it after
# "dkms install" (testbed/build.sh did that in the guest root) and "make
# install" of the tools, with a configuration of a main file and drop-ins
# written and ghostswap.service enabled, boots with systemd as init and
# must come up with swap on /dev/ghostswap set up per the configuration.
# tests/guest/boot.sh checks that inside the guest (and the udev path: the
# device appearing starts the service), writing TAP.
#
# The guest root is not changed: the boot runs on an overlay of it whose
# upper layer is thrown away afterwards.
#
# usage: tests/boot.sh OUTDIR   (prints TAP on stdout)
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"
. "$(dirname "$0")/boot-lib.sh"

out=$(mkdir -p "$1" && cd "$1" && pwd)
gs_overlay_lock
ov=$GS_CACHE/boot-overlay
merged=$ov/root
TAP_LOGS=$out
# shellcheck disable=SC2064
trap "gs_overlay_remove '$ov'" EXIT

# What an admin does after the DKMS install: make install, then the
# configuration and systemctl enable (tests/boot-lib.sh).
install() {
	local src=$merged/tmp/gs-install
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$GS_TOP" && cp -r Makefile dkms.conf tools man systemd udev etc "$src/")
	GS_ROOT=$merged gs_chroot sh -c 'set -e
		make -C /tmp/gs-install tools install PREFIX=/usr
		rm -rf /tmp/gs-install' && gs_boot_config "$merged"
}

tap_step "overlay of the guest root" overlay gs_overlay_mount "$ov" || exit 1
tap_step "make install, /etc/ghostswap.conf, systemctl enable ghostswap.service" \
	install install || exit 1
gs_boot_guest "$merged" "$out"
tap_plan
exit $tap_rc
