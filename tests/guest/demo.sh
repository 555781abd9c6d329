#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README demo, run inside the guest: swapon a 1 TiB /dev/ghostswap and
# push a workload through it. Output goes to /opt/gs-out/demo.txt.

# The guest's helpers: guest_setup, $SYS, $GS_OUT.
. /opt/gs-src/tests/guest/lib.sh
exec >"$GS_OUT/demo.txt" 2>&1
guest_setup

# show COMMAND: the command as typed, then what it prints.
show() {
	echo "\$ $*"
	eval "$*"
}
stat_header() {
	echo "  cluster_stat: clusters peak slots_used meta_bytes meta_per_slot stream_bytes"
	echo "  mm_stat: orig_data compr_data mem_used mem_limit mem_used_max same_pages compacted huge huge_since"
}
stats() {
	stat_header
	show cat $SYS/cluster_stat $SYS/mm_stat
}

show uname -r
show modprobe ghostswap
# udev probes a new block device (blkid opens it); wait for that to finish.
show udevadm settle
show "echo 1T > $SYS/disksize"
show mkswap /dev/ghostswap
show free -m
show swapon /dev/ghostswap
show cat /proc/swaps
show free -m
show cat $SYS/comp_algorithm
stats

mkdir -p /sys/fs/cgroup/demo
show "echo 128M > /sys/fs/cgroup/demo/memory.max"
echo "# 384 MiB of same-filled, text and random pages in a 128 MiB cgroup,"
echo "# every byte verified after swap-in:"
show "sh -c 'echo \$\$ > /sys/fs/cgroup/demo/cgroup.procs && exec gsverify 384 1 42 str' &"
pid=$!
# Show the device while the workload is in swap.
while kill -0 $pid 2>/dev/null; do
	read -r _ _ slots _ <$SYS/cluster_stat
	[ "$slots" -gt 50000 ] && break
	sleep 1
done
stats
awk '$2 > 0 && $3 > 0 { printf "compression ratio now: %.2f (data/compressed), %.2f (data/pool memory)\n", $1 / $2, $1 / $3 }' $SYS/mm_stat
show free -m
show wait $pid
show "grep -E '^(pswpin|pswpout) ' /sys/fs/cgroup/demo/memory.stat"
show swapoff /dev/ghostswap
stats
show "echo 1 > $SYS/reset"
stats
