#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the hibernation guest (tests/hibernate.sh): busybox, the
# module and a static gsverify in an initramfs, nothing else. A root in
# RAM survives what hibernation does to devices (every device frozen,
# then thawed when the image is not written; the shared filesystems of
# the other guests do not come back from that).
#
# ghostswap swapped on, a workload's pages in it, the kernel told to
# resume from ghostswap, then "echo disk > /sys/power/state": the module
# refuses the image, hibernation fails with EIO, the system goes on, and
# the workload's pages come back right. TAP lines on the console, each
# prefixed "GS-TAP ", read by the host.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmpfs /tmp

n=0
ok() { n=$((n + 1)); echo "GS-TAP ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "GS-TAP not ok $n - $1"; shift; for l in "$@"; do echo "GS-TAP # $l"; done; }
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
finish() {
	echo "GS-TAP 1..$n"
	echo "GS-END"
	sync
	poweroff -f
}

SYS=/sys/block/ghostswap
# Its dependencies; of the modules an alias names, those the CPU lacks
# refuse (crc32c-intel without SSE 4.2), and the generic one serves.
while read -r m; do
	insmod "/lib/$m" 2>/dev/null || echo "($m not loaded)"
done </lib/deps
if ! insmod /lib/ghostswap.ko || [ ! -d $SYS ]; then
	not_ok "the module loads" "$(dmesg | tail -n 5)"
	finish
fi
ok "the module loads ($(cat /sys/module/ghostswap/version))"
mdev -s 2>/dev/null
[ -b /dev/ghostswap ] || mknod /dev/ghostswap b "$(cut -d: -f1 $SYS/dev)" "$(cut -d: -f2 $SYS/dev)"
# 4 GiB: on 6.12 the swap core pays memory per slot, and 1 TiB of it
# would leave too little for the image's copy.
echo 4G >$SYS/disksize
mkswap /dev/ghostswap >/dev/null && swapon /dev/ghostswap
check "swapon /dev/ghostswap" grep -q '^/dev/ghostswap' /proc/swaps
if ! grep -qw disk /sys/power/state; then
	not_ok "hibernation in this kernel" "/sys/power/state: $(cat /sys/power/state)"
	finish
fi

# A workload whose pages sit in the device, stopped: gsverify fills 128
# MiB in a 48 MiB memory cgroup, stops itself, and verifies every page
# when continued.
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/hib
echo $((48 << 20)) >/sys/fs/cgroup/hib/memory.max
sh -c 'echo $$ >/sys/fs/cgroup/hib/cgroup.procs &&
	GSVERIFY_STOP=1 exec /bin/gsverify 128 1 23 zstr' >/tmp/gsverify.out 2>&1 &
i=0
st=
while [ $i -lt 600 ]; do
	pid=$(pidof gsverify)
	st=$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)
	[ "$st" = T ] && break
	sleep 0.2
	i=$((i + 1))
done
out=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
if [ "$st" = T ] && [ "${out:-0}" -gt 1000 ]; then
	ok "a workload's pages in ghostswap: $out swapped out, mm_stat $(cat $SYS/mm_stat | tr -s ' ')"
else
	not_ok "a workload's pages in ghostswap" "state '$st', pswpout '$out'" "$(cat /tmp/gsverify.out)"
	finish
fi
stored0=$(awk '{ print $1 }' $SYS/mm_stat)
fw0=$(awk '{ print $2 }' $SYS/io_stat)

# The kernel told to resume from ghostswap (resume=, or systemd's choice
# of the swap of highest priority that is not zram), then hibernation.
cat $SYS/dev >/sys/power/resume
check "the resume device is ghostswap's" [ "$(cat /sys/power/resume)" = "$(cat $SYS/dev)" ]
# The smallest image the kernel can make: it swaps out what it can
# first, in the window, and those writes (the swap core's) are stored.
echo 0 >/sys/power/image_size
sw0=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
echo "gs-test: hibernation aimed at ghostswap" >/dev/kmsg
msg=$(echo disk 2>&1 >/sys/power/state)
rc=$?
echo "echo disk > /sys/power/state: exit $rc: $msg"
if [ $rc != 0 ] && echo "$msg" | grep -q "Input/output error"; then
	ok "hibernation fails with EIO, the system goes on"
else
	not_ok "hibernation fails with EIO, the system goes on" "exit $rc: $msg"
fi
log=$(dmesg | sed -n '/gs-test: hibernation aimed at ghostswap/,$p')
check "the log says why" eval 'echo "$log" | grep -q "ghostswap: refusing the hibernation image: /dev/ghostswap keeps its pages in RAM"'
refused=$(echo "$log" | sed -n 's/.*ghostswap: hibernation over: \([0-9]*\) writes of its image refused.*/\1/p')
check "the refused writes counted when hibernation is over (${refused:-none})" [ "${refused:-0}" -ge 1 ]
check "hibernation went as far as writing its image" eval 'echo "$log" | grep -q "PM: hibernation: Allocated [0-9]* pages for snapshot"'
sw=$(($(awk '$1 == "pswpout" { print $2 }' /proc/vmstat) - sw0))
check "pages swapped out in the window were taken: $sw" [ "$sw" -gt 0 ]
check "the refusals are not swap's failed writes" [ "$(awk '{ print $2 }' $SYS/io_stat)" = "$fw0" ]
echo 0:0 >/sys/power/resume 2>/dev/null

# The workload's pages, every one verified.
kill -CONT "$pid"
wait
if grep -q '^verified' /tmp/gsverify.out; then
	ok "the workload's pages after hibernation: $(cat /tmp/gsverify.out | tr '\n' ' ')"
else
	not_ok "the workload's pages after hibernation" "$(cat /tmp/gsverify.out)"
fi
c=$(head -n 1 /sys/kernel/debug/ghostswap/check)
check "the table against the reverse map: $c mismatches" [ "$c" = 0 ]
echo "stored before: $stored0 bytes; now mm_stat $(cat $SYS/mm_stat | tr -s ' ')"
swapoff /dev/ghostswap
check "swapoff" [ "$(awk '{ print $1 }' $SYS/mm_stat)" -le 4096 ]
finish
