#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README demo, run inside the guest: swapon a 1 TiB /dev/ghostswap and
# push a workload through it. Output goes to /opt/gs-out/demo.txt.
exec >/opt/gs-out/demo.txt 2>&1
S=/sys/block/ghostswap
run() {
	echo "\$ $*"
	eval "$*"
}
stat_header() {
	echo "  cluster_stat: clusters peak slots_used meta_bytes meta_per_slot stream_bytes"
	echo "  mm_stat: orig_data compr_data mem_used mem_limit mem_used_max same_pages compacted huge huge_since"
}
stats() {
	stat_header
	run cat $S/cluster_stat $S/mm_stat
}

run uname -r
run modprobe ghostswap
# udev probes a new block device (blkid opens it); wait for that to finish.
run udevadm settle
run "echo 1T > $S/disksize"
run mkswap /dev/ghostswap
run free -m
run swapon /dev/ghostswap
run cat /proc/swaps
run free -m
run cat $S/comp_algorithm
stats

mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/demo
run "echo 128M > /sys/fs/cgroup/demo/memory.max"
echo "# 384 MiB of same-filled, text and random pages in a 128 MiB cgroup,"
echo "# every byte verified after swap-in:"
run "sh -c 'echo \$\$ > /sys/fs/cgroup/demo/cgroup.procs && exec gsverify 384 1 42 str' &"
pid=$!
# Show the device while the workload is in swap.
while kill -0 $pid 2>/dev/null; do
	read -r _ _ slots _ <$S/cluster_stat
	[ "$slots" -gt 50000 ] && break
	sleep 1
done
stats
awk '$2 > 0 && $3 > 0 { printf "compression ratio now: %.2f (data/compressed), %.2f (data/pool memory)\n", $1 / $2, $1 / $3 }' $S/mm_stat
run free -m
run wait $pid
run "grep -E '^(pswpin|pswpout) ' /sys/fs/cgroup/demo/memory.stat"
run swapoff /dev/ghostswap
stats
run "echo 1 > $S/reset"
stats
