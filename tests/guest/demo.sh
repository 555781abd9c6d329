#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README demo, run inside the guest: swapon a 1 TiB /dev/ghostswap and
# push a workload through it. Output goes to /opt/gs-out/demo.txt.
exec >/opt/gs-out/demo.txt 2>&1
set -x
uname -r
modprobe ghostswap
echo 1T >/sys/block/ghostswap/disksize
mkswap /dev/ghostswap
free -m
swapon /dev/ghostswap
cat /proc/swaps
free -m
cat /sys/block/ghostswap/cluster_stat
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/demo
echo 128M >/sys/fs/cgroup/demo/memory.max
# 384 MiB of mixed pages in a 128 MiB cgroup, every byte verified.
sh -c 'echo $$ >/sys/fs/cgroup/demo/cgroup.procs && exec gsverify 384 1 42 str'
grep -E '^(pswpin|pswpout) ' /sys/fs/cgroup/demo/memory.stat
cat /sys/block/ghostswap/cluster_stat
free -m
swapoff /dev/ghostswap
cat /sys/block/ghostswap/cluster_stat
echo 1 >/sys/block/ghostswap/reset
cat /sys/block/ghostswap/cluster_stat
