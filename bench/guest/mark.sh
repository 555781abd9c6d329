#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mark.sh LABEL: in a guest whose QEMU counts instructions by address
# (bench/qemu/gs_pc_count.c, bench/funcs.sh), have the plugin dump its
# counts as pcs-LABEL.txt and start again from zero ("reset": only start
# again), and wait until it has. The request goes through $GS_OUT/ctl.
out=${GS_OUT:-/opt/gs-out}
echo "$1" >"$out/ctl.tmp" && mv "$out/ctl.tmp" "$out/ctl" || exit 1
for ((i = 0; i < 600; i++)); do
	[ -e "$out/ctl" ] || exit 0
	sleep 0.1
done
echo "the plugin did not take the request $1" >&2
exit 1
