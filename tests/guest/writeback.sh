# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The guest suite's writeback tier, sourced by suite.sh, with the two
# virtio disks of tests/run.sh as backing devices (gsback, 1 GiB; gssmall,
# 8 MiB): backing_dev and the errors it gives, bad input for every
# writeback attribute, writeback on demand and its budget, backing
# compaction, direct writes, a full backing device, a verified swap
# workload under a pool limit, writeback racing raw I/O, and the
# writeback rate.

# The guest's helpers: fail, sysw, the stat readers, vdisk,
# attach_backing, gs_check, run_cg, wl, sample_peak, $PAGES, $SYS, $DEV.
. /opt/gs-src/tests/guest/lib.sh

# backing_dev: what it accepts and what it refuses, with which errno.
t_wb_setup() {
	local big small
	big=$(vdisk gsback) && small=$(vdisk gssmall) || fail "no backing disks"
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "backing_dev without one"
	[ "$(bdstat count)" = 0 ] || fail "bd_stat without backing"
	sysw $SYS/writeback all "No such device"
	sysw $SYS/backing_compact 1 "No such device"
	sysw $SYS/backing_dev /nonexistent "No such file or directory"
	# A regular file its filesystem cannot map (tmpfs), refused before
	# anything is allocated for it (t_wb_file: one that can).
	truncate -s 64M /dev/shm/gs-file || fail "file on tmpfs"
	sysw $SYS/backing_dev /dev/shm/gs-file "Operation not supported"
	[ "$(du -k /dev/shm/gs-file | cut -f1)" = 0 ] || fail "tmpfs file allocated"
	rm -f /dev/shm/gs-file
	dmesg | grep "cannot be mapped once" | tail -n 1
	sysw $SYS/backing_dev /dev/null "Block device required"
	# A directory on tmpfs: no chunk file there can be mapped either.
	mkdir -p /dev/shm/gs-dir || fail "directory on tmpfs"
	sysw $SYS/backing_dev /dev/shm/gs-dir "Operation not supported"
	[ -z "$(ls -A /dev/shm/gs-dir)" ] || fail "something left in /dev/shm/gs-dir"
	rmdir /dev/shm/gs-dir
	sysw $SYS/backing_dev "" "Invalid argument"
	sysw $SYS/backing_dev $DEV "Invalid argument"
	dmesg | grep "is ghostswap itself" | tail -n 1
	# A device someone holds exclusively (here: swap) is busy.
	mkswap "$small" >/dev/null && swapon "$small" || fail "swapon $small"
	sysw $SYS/backing_dev "$small" "Device or resource busy"
	swapoff "$small"
	# So is a mounted one.
	mkfs.ext4 -q -F "$small" && mkdir -p /tmp/gs-mnt && mount "$small" /tmp/gs-mnt ||
		fail "mount $small"
	sysw $SYS/backing_dev "$small" "Device or resource busy"
	umount /tmp/gs-mnt
	# Holding data, or open: no change.
	$PAGES write $DEV 0 t:1 >/dev/null || fail write
	sysw $SYS/backing_dev "$big" "Device or resource busy"
	sysw $SYS/reset 1 ok
	# Blanks around the path are not part of it.
	sysw $SYS/backing_dev "  $big  " ok
	[ "$(cat $SYS/backing_dev)" = "$big" ] || fail "backing_dev shows '$(cat $SYS/backing_dev)'"
	# Held by us now: nobody else can have it exclusively.
	out=$(mkswap "$big" 2>&1) && swapon "$big" 2>/dev/null && fail "swapon of our backing device"
	sysw $SYS/backing_dev "$small" "Device or resource busy"
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	sysw $SYS/backing_dev none "Device or resource busy"
	swapoff $DEV
	# Still holds the swap header: no change until it is empty.
	sysw $SYS/backing_dev none "Device or resource busy"
	# -f: blkdiscard refuses a device with a signature on it (swap's).
	blkdiscard -f $DEV || fail blkdiscard
	sysw $SYS/backing_dev none ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "detach"
	sysw $SYS/backing_dev "$small" ok
	# reset detaches (zram semantics).
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "reset keeps the backing device"
	cat $SYS/bd_stat
}

# Bad input for every writeback attribute.
t_wb_bad_input() {
	local v
	attach_backing "$(vdisk gsback)"
	for v in "" junk "idle idle" "all 0" "all -1" "all 1x" "-5" "0" cold \
		"type=" "type=nosuch" "huge 99999999999999999999999"; do
		sysw $SYS/writeback "$v" "Invalid argument"
	done
	for v in "" 0 -1 abc "1 2" allx; do
		sysw $SYS/idle "$v" "Invalid argument"
	done
	for v in "" -1 abc 1.5 18446744073709551616; do
		sysw $SYS/writeback_limit "$v" "Invalid argument"
	done
	for v in "" maybe 2; do
		sysw $SYS/writeback_limit_enable "$v" "Invalid argument"
		sysw $SYS/writeback_shrinker "$v" "Invalid argument"
	done
	for v in "" nosuch "huge huge"; do
		sysw $SYS/writeback_direct "$v" "Invalid argument"
	done
	sysw $SYS/bd_stat 1 "Permission denied"
	# Valid ones on an empty device: nothing to do, no error.
	sysw $SYS/writeback all ok
	sysw $SYS/writeback "type=idle" ok
	sysw $SYS/writeback 100 ok
	sysw $SYS/idle all ok
	sysw $SYS/idle 60 ok
	sysw $SYS/backing_compact 1 ok
	grep -q '\[none\]' $SYS/writeback_direct || fail "writeback_direct: $(cat $SYS/writeback_direct)"
	[ "$(cat $SYS/writeback_shrinker)" = 1 ] || fail "shrinker default"
	[ "$(bdstat writes)" = 0 ] || fail "bd_writes on an empty device"
	sysw $SYS/reset 1 ok
}

# On demand: idle, huge, incompressible, counts, the budget; every page
# read back from the backing device intact.
t_wb_on_demand() {
	local w0 rest limit
	attach_backing "$(vdisk gsback)"
	$PAGES write $DEV 0 t:1000,r:200,s:100 || fail write
	sysw $SYS/writeback idle ok
	[ "$(bdstat count)" = 0 ] || fail "nothing was idle"
	sysw $SYS/idle all ok
	$PAGES verify $DEV 0 t:100 >/dev/null || fail verify	# read: not idle
	sysw $SYS/writeback "idle 300" ok
	[ "$(bdstat count)" = 300 ] || fail "idle 300: $(bdstat count)"
	sysw $SYS/writeback huge ok
	[ "$(bdstat count)" = 500 ] || fail "huge: $(bdstat count)"
	[ "$(mstat huge)" = 0 ] || fail "huge pages left in the pool"
	sysw $SYS/writeback idle ok
	[ "$(bdstat count)" = 1100 ] || fail "idle: $(bdstat count), pages 0..99 were read"
	sysw $SYS/writeback_limit 40 ok
	sysw $SYS/writeback_limit_enable 1 ok
	w0=$(bdstat writes)
	sysw $SYS/writeback all "Input/output error"
	[ $(($(bdstat writes) - w0)) = 40 ] || fail "budget: $(($(bdstat writes) - w0)) written"
	[ "$(cat $SYS/writeback_limit)" = 0 ] || fail "budget left: $(cat $SYS/writeback_limit)"
	sysw $SYS/writeback_limit_enable 0 ok
	sysw $SYS/writeback all ok
	[ "$(bdstat count)" = 1200 ] || fail "all: $(bdstat count)"
	cat $SYS/mm_stat $SYS/bd_stat
	# Written back pages still count as stored data (zram semantics).
	[ "$(mstat orig)" = $((1300 * 4096)) ] || fail "orig_data_size"
	[ "$(mstat compr)" = 0 ] && [ "$(mstat same)" = 100 ] || fail "mm_stat after writeback all"
	$PAGES verify $DEV 0 t:1000,r:200,s:100 || fail "verify from the backing device"
	[ "$(bdstat reads)" -ge 1200 ] || fail "bd_reads $(bdstat reads)"
	gs_check
	# Every byte of the tier counted: reverse map clusters in its slab.
	[ "$(slab_objs gs_bk_cluster "$(bdstat clusters)")" = "$(bdstat clusters)" ] ||
		fail "slab gs_bk_cluster $(grep gs_bk_cluster /proc/slabinfo), KFENCE $(kfence_objs gs_bk_cluster) vs bd_stat $(bdstat clusters)"
	# The rest: the writeback batches' pages (writeback_batch_size, 32 by
	# default, in two batches) and their bookkeeping (<= 8 KiB; with
	# lockdep, whose maps grow every lock and completion in it, the
	# bookkeeping is one 16 KiB allocation), and reserves of requests
	# started from the submit path: 32 for reads of written-back pages
	# (<= 256 bytes each), 4 for direct writes (<= 512 bytes) and 4 for
	# runs of reads (<= 1 KiB); each twice that with lockdep's maps.
	[ "$(cat $SYS/writeback_batch_size)" = 32 ] || fail "writeback_batch_size $(cat $SYS/writeback_batch_size)"
	rest=$(($(bdstat meta) - $(bdstat clusters) * $(slab_obj_size gs_bk_cluster) - 32 * 4096))
	limit=$((8192 + 32 * 256 + 4 * 512 + 4 * 1024))
	[ -e /proc/lockdep ] && limit=$((16384 + 2 * (32 * 256 + 4 * 512 + 4 * 1024)))
	[ "$rest" -gt 0 ] && [ "$rest" -le $limit ] || fail "bd_meta_bytes $(bdstat meta), rest $rest (limit $limit)"
	# Freed pages free their backing slots.
	blkdiscard -o 0 -l $((600 * 4096)) $DEV || fail blkdiscard
	[ "$(bdstat count)" = 600 ] || fail "after discard: $(bdstat count)"
	gs_check
	sysw $SYS/reset 1 ok
}

# zram's writeback ABI: page_index= and page_indexes= (several in one
# write, with type= or without), writeback_batch_size, initstate,
# compressed_writeback; the examples of zram.rst verbatim.
t_wb_abi() {
	local n m0
	[ "$(cat $SYS/initstate)" = 1 ] || fail "initstate $(cat $SYS/initstate)"
	attach_backing "$(vdisk gsback)"
	# Text 0..999, random 1000..1199, same-filled 1200..1299.
	$PAGES write $DEV 0 t:1000,r:200,s:100 >/dev/null || fail write
	sysw $SYS/writeback page_index=5 ok
	[ "$(bdstat count)" = 1 ] || fail "page_index=5: $(bdstat count)"
	sysw $SYS/writeback "page_index=42 page_index=99 page_indexes=100-200 page_indexes=500-700" ok
	[ "$(bdstat count)" = 305 ] || fail "zram.rst's mixed example: $(bdstat count)"
	sysw $SYS/writeback "page_indexes=1-100 page_indexes=200-300" ok
	# 1..100 less 5, 42, 99 and 100; 200 was taken.
	[ "$(bdstat count)" = 501 ] || fail "zram.rst's ranges example: $(bdstat count)"
	# With a mode: only its pages in the ranges.
	sysw $SYS/writeback "type=huge page_indexes=950-1049" ok
	[ "$(bdstat count)" = 551 ] || fail "type=huge in a range: $(bdstat count)"
	sysw $SYS/writeback "huge page_index=1100" ok
	[ "$(bdstat count)" = 552 ] || fail "huge page_index=1100: $(bdstat count)"
	# Same-filled pages are never written back; a count caps the ranges.
	sysw $SYS/writeback "page_indexes=1200-1299" ok
	[ "$(bdstat count)" = 552 ] || fail "same-filled written back"
	sysw $SYS/writeback "page_indexes=1101-1199 10" ok
	[ "$(bdstat count)" = 562 ] || fail "ranges with a count: $(bdstat count)"
	n=$(($(cat $SYS/disksize) / 4096))
	sysw $SYS/writeback "page_index=$n" "Numerical result out of range"
	sysw $SYS/writeback "page_indexes=0-$n" "Numerical result out of range"
	sysw $SYS/writeback "page_indexes=20-10" "Numerical result out of range"
	sysw $SYS/writeback "page_indexes=10" "Invalid argument"
	sysw $SYS/writeback "page_index=x" "Invalid argument"
	sysw $SYS/writeback "page_index=" "Invalid argument"
	sysw $SYS/writeback "type=idle type=huge" "Invalid argument"
	sysw $SYS/writeback "cold" "Invalid argument"
	sysw $SYS/writeback "page_size=4" "Invalid argument"
	[ "$(bdstat count)" = 562 ] || fail "a refused write moved pages: $(bdstat count)"
	# writeback_batch_size: zram's default, bounds, every size moves all.
	[ "$(cat $SYS/writeback_batch_size)" = 32 ] || fail "writeback_batch_size default"
	sysw $SYS/writeback_batch_size 0 "Invalid argument"
	sysw $SYS/writeback_batch_size 257 "Invalid argument"
	sysw $SYS/writeback_batch_size many "Invalid argument"
	m0=$(bdstat meta)
	sysw $SYS/writeback_batch_size 256 ok
	[ $(($(bdstat meta) - m0)) -ge $((224 * 4096)) ] || fail "256 pages in flight: bd_meta_bytes $m0 -> $(bdstat meta)"
	sysw $SYS/writeback "page_indexes=300-499" ok
	sysw $SYS/writeback_batch_size 1 ok
	[ $((m0 - $(bdstat meta))) -ge $((31 * 4096)) ] || fail "1 page in flight: bd_meta_bytes $m0 -> $(bdstat meta)"
	sysw $SYS/writeback "page_indexes=701-999" ok
	[ "$(bdstat count)" = $((562 + 199 + 299)) ] || fail "with 256 and 1 in flight: $(bdstat count)"
	$PAGES verify $DEV 0 t:1000,r:200,s:100 || fail "verify"
	gs_check
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/writeback_batch_size)" = 32 ] || fail "reset did not bring writeback_batch_size back to 32"
	[ "$(cat $SYS/initstate)" = 1 ] || fail "initstate after reset"
	# compressed_writeback (zram 7.0): written back as stored, always; the
	# example of zram.rst verbatim.
	[ "$(cat $SYS/compressed_writeback)" = 1 ] ||
		fail "compressed_writeback $(cat $SYS/compressed_writeback)"
	sysw $SYS/compressed_writeback yes ok
	sysw $SYS/compressed_writeback 1 ok
	sysw $SYS/compressed_writeback 0 "Operation not supported"
	sysw $SYS/compressed_writeback no "Operation not supported"
	sysw $SYS/compressed_writeback maybe "Invalid argument"
	[ "$(cat $SYS/compressed_writeback)" = 1 ] || fail "compressed_writeback changed"
}

# idle N per page, with zram's meaning of an access (a store or a read),
# and the user's idle mark apart from the cold clock's: pages of one
# cluster age apart, and a cold writeback does not make read pages idle.
uptime_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

t_wb_idle_age() {
	local n t_stored t_read e
	attach_backing "$(vdisk gsback)"
	# One cluster: 0..99 will be read, 100..199 left alone, 200..299
	# stored again.
	$PAGES write $DEV 0 t:300 >/dev/null || fail write
	t_stored=$(uptime_ms)
	sleep 8
	t_read=$(uptime_ms)
	$PAGES verify $DEV 0 t:100 >/dev/null || fail "verify 0..99"
	$PAGES write $DEV 200 t:100 >/dev/null || fail "write 200..299"
	# idle N must fall between the two ages: above what the pages read
	# can reach by the writeback (the reads took e ms, on a loaded
	# machine seconds), below the age of those left alone, less the
	# second an age may understate. The sleep is stretched to fit.
	e=$(($(uptime_ms) - t_read))
	n=$((e / 1000 + 4))
	while [ $(($(uptime_ms) - t_stored)) -lt $(((n + 2) * 1000)) ]; do
		sleep 1
	done
	echo "reads took $e ms: idle $n"
	sysw $SYS/idle $n ok
	sysw $SYS/writeback idle ok
	[ "$(bdstat count)" = 100 ] || fail "idle $n took $(bdstat count) pages, not the 100 left alone"
	sysw $SYS/idle 3600 ok
	sysw $SYS/writeback idle ok
	[ "$(bdstat count)" = 100 ] || fail "idle 3600 took pages: $(bdstat count)"
	# Everything marked, 0..49 read after the mark; then a cold writeback
	# of 10 pages, whose sweep marks every page it passes cold. writeback
	# idle takes the 150 still marked idle, less any the cold one took:
	# never the pages read since the mark (that would make 190).
	sysw $SYS/idle all ok
	$PAGES verify $DEV 0 t:50 >/dev/null || fail "verify 0..49"
	sysw $SYS/writeback 10 ok
	[ "$(bdstat count)" = 110 ] || fail "cold writeback of 10: $(bdstat count)"
	sysw $SYS/writeback idle ok
	n=$(($(bdstat count) - 110))
	echo "writeback idle after a cold writeback: $n pages"
	[ "$n" -ge 140 ] && [ "$n" -le 150 ] || fail "writeback idle took $n pages, want 140..150"
	$PAGES verify $DEV 0 t:200 >/dev/null || fail "verify 0..199"
	$PAGES verify $DEV 200 t:100 >/dev/null || fail "verify 200..299"
	gs_check
	sysw $SYS/reset 1 ok
}

# backing_compact packs the device: pages move down into holes.
t_wb_compact() {
	local i r0 w0
	attach_backing "$(vdisk gsback)"
	$PAGES write $DEV 0 t:2000 >/dev/null || fail write
	sysw $SYS/writeback all ok
	$PAGES discard $DEV 0 1000 2 || fail "discard"
	[ "$(bdstat count)" = 1000 ] || fail "count $(bdstat count)"
	r0=$(bdstat reads)
	w0=$(bdstat writes)
	sysw $SYS/backing_compact 1 ok
	cat $SYS/bd_stat
	[ "$(bdstat reloc)" = 500 ] || fail "relocated $(bdstat reloc), want 500"
	# Its I/O in its own columns, not in zram's.
	[ "$(bdstat reads)" = "$r0" ] && [ "$(bdstat writes)" = "$w0" ] ||
		fail "compaction counted in bd_reads/bd_writes: $(cat $SYS/bd_stat)"
	[ "$(bdstat creads)" = 500 ] && [ "$(bdstat cwrites)" = 500 ] ||
		fail "compaction I/O: $(bdstat creads) read, $(bdstat cwrites) written"
	gs_check
	cat /sys/kernel/debug/ghostswap/table | head -n 3
	$PAGES verify $DEV 0 '1000*(z:1,t:1)' || fail "data after backing compaction"
	sysw $SYS/reset 1 ok
}

# writeback_direct: incompressible pages go straight to the device.
t_wb_direct() {
	attach_backing "$(vdisk gsback)"
	sysw $SYS/writeback_direct incompressible ok
	$PAGES write $DEV 0 r:300,t:300 || fail write
	[ "$(bdstat count)" = 300 ] && [ "$(mstat huge)" = 0 ] ||
		fail "direct: $(cat $SYS/bd_stat $SYS/mm_stat)"
	$PAGES verify $DEV 0 r:300,t:300 || fail verify
	gs_check
	sysw $SYS/reset 1 ok
}

# swap_ra_delta SEED: a verified swap workload of twice a 32 MiB cgroup
# (the lanes' smaller one: GS_WORKLOAD_DIV); prints the pages the swap
# core read ahead meanwhile (none where the device is synchronous:
# swap-in then skips readahead). The limit is memory.high: with
# writeback_direct=all every page swapped out is a write to the backing
# disk, and a hard limit's OOM killer may end the workload while they
# are all in flight on an emulator that runs other guests beside.
swap_ra_delta() {
	local ra0 rc lim
	lim=$(wl_limit 32)
	ra0=$(awk '$1 == "swap_ra" { print $2 }' /proc/vmstat)
	CG_LIMIT=memory.high run_cg gs-ra "$lim" gsverify $((lim * 2)) 2 "$1" tr >&2
	rc=$?
	echo $(($(awk '$1 == "swap_ra" { print $2 }' /proc/vmstat) - ra0))
	return $rc
}

# wbt_watch DISK OUT: until killed, samples what DISK's write throttling
# (debugfs rqos/wbt/inflight: class 0 background writeback, 1 swap, 2
# discards) has in flight, every 10 ms; when killed (SIGTERM) it writes
# to OUT the most seen of each class, the samples taken and those with a
# swap write in flight: "BG SWAP DISCARD SAMPLES SWAP_SAMPLES".
# (Builtins only: the pause is a read from a FIFO nobody writes.)
wbt_watch() {
	local f=/sys/kernel/debug/block/${1##*/}/rqos/wbt/inflight
	local m0=0 m1=0 m2=0 n=0 h=0 c v
	rm -f "$2.fifo" && mkfifo "$2.fifo" && exec 9<>"$2.fifo" || return 1
	trap 'echo "$m0 $m1 $m2 $n $h" >"$2"; exit 0' TERM
	while :; do
		while read -r c _ v; do
			case $c in
			0:) [ "$v" -gt $m0 ] && m0=$v ;;
			1:) [ "$v" -gt $m1 ] && m1=$v
			    [ "$v" -gt 0 ] && h=$((h + 1)) ;;
			2:) [ "$v" -gt $m2 ] && m2=$v ;;
			esac
		done <"$f"
		n=$((n + 1))
		read -rt 0.01 -u 9 _
	done
}

# writeback_direct=all: pages go to the backing device as they are, a run
# of a bio's pages with one write started from the submit path. fio's
# verified jobs (4-64 KiB bios, trims) on the raw device, the disk's
# write throttling watched meanwhile: backing writes are swap I/O
# (REQ_SWAP), counted in its swap class as the swap core's own writes to
# a swap device are, never in the background class of a filesystem's
# writeback (nothing else writes to this disk). Then swap on it:
# the device tells swap it is not synchronous, so swap reads ahead, as it
# does not (or next to nothing) from the same device in its default mode.
t_wb_direct_all() {
	local rc c0 ra disk q lat w bg sw dc n h
	disk=$(vdisk gsback) || fail "no backing disk"
	attach_backing "$disk"
	sysw $SYS/writeback_direct all ok
	sysw $SYS/disksize 4T ok
	c0=$(awk '{ print $1 }' $SYS/comp_stat)
	# Throttling on, at the default target of a disk that is not
	# rotational, if the disk came up without it.
	q=/sys/block/${disk##*/}/queue
	lat=$(cat $q/wbt_lat_usec) || fail "no write throttling on $disk"
	[ "$lat" != 0 ] || echo 2000 >$q/wbt_lat_usec || fail "wbt_lat_usec on $disk"
	[ -r /sys/kernel/debug/block/${disk##*/}/rqos/wbt/inflight ] ||
		fail "no wbt inflight in debugfs for $disk"
	wbt_watch "$disk" "$GS_OUT/wbt-direct" &
	w=$!
	DEV=$DEV FIO_SIZE="$(wl 32)M" fio /opt/gs-src/tests/guest/verify.fio >"$GS_OUT/fio-direct.log" 2>&1
	rc=$?
	kill $w
	wait $w 2>/dev/null
	rm -f "$GS_OUT/wbt-direct.fifo"
	echo "$lat" >$q/wbt_lat_usec
	read -r bg sw dc n h <"$GS_OUT/wbt-direct"
	echo "write throttling of $disk, the most in flight in $n samples: background $bg, swap $sw ($h samples with one), discards $dc"
	grep -E 'err=|READ:|WRITE:|TRIM:|verify' "$GS_OUT/fio-direct.log"
	[ $rc = 0 ] || { tail -n 30 "$GS_OUT/fio-direct.log"; fail "fio exit $rc"; }
	fio_checked "$GS_OUT/fio-direct.log" || fail "fio reported errors"
	cat $SYS/mm_stat $SYS/bd_stat $SYS/io_stat
	[ "$(bdstat writes)" -gt "$(wl 8192)" ] || fail "only $(bdstat writes) pages went to the backing device"
	[ "$(awk '{ print $1 }' $SYS/comp_stat)" = "$c0" ] || fail "pages were compressed: $(cat $SYS/comp_stat)"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] || fail "backing I/O errors"
	[ "$(awk '{ print $1 + $2 }' $SYS/io_stat)" = 0 ] || fail "failed bios: $(cat $SYS/io_stat)"
	[ "$bg" = 0 ] || fail "backing writes in the background writeback's class ($bg in flight)"
	[ "$sw" -gt 0 ] || fail "no backing write seen in the swap class in $n samples"
	gs_check
	blkdiscard $DEV || fail blkdiscard
	[ "$(bdstat count)" = 0 ] || fail "discard left $(bdstat count) pages on the backing device"

	sysw $SYS/disksize 64G ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	ra=$(swap_ra_delta 31) || fail "gsverify on writeback_direct=all"
	swapoff $DEV || fail swapoff
	echo "writeback_direct=all: $ra pages read ahead, $(bdstat writes) written to the backing device"
	[ "$ra" -gt 0 ] || fail "no readahead: the device still says it is synchronous"
	gs_check
	sysw $SYS/reset 1 ok
	swap_on lz4 64G || fail swapon
	ra=$(swap_ra_delta 32) || fail "gsverify in the default mode"
	swapoff $DEV || fail swapoff
	echo "writeback_direct=none: $ra pages read ahead"
	# Other tasks may swap in with readahead (shmem); the workload not.
	[ "$ra" -le 64 ] || fail "$ra pages read ahead from a synchronous device"
	sysw $SYS/reset 1 ok
}

# The backing device fills up: writeback stops with ENOSPC, nothing lost.
t_wb_full() {
	attach_backing "$(vdisk gssmall)"
	$PAGES write $DEV 0 t:3000 >/dev/null || fail write
	sysw $SYS/writeback all "No space left on device"
	[ "$(bdstat count)" = 2048 ] || fail "8 MiB holds 2048 pages, not $(bdstat count)"
	$PAGES verify $DEV 0 t:3000 || fail verify
	gs_check
	sysw $SYS/reset 1 ok
}

# Data stored, the share of it on the backing device (%), pages there,
# pool bytes, pages written back.
wb_sample() {
	local c w o u
	read -r c _ w _ <$SYS/bd_stat
	read -r o _ u _ <$SYS/mm_stat
	[ "$o" -gt 0 ] || { echo 0; return; }
	echo "$o $((c * 4096 * 100 / o)) $c $u $w"
}

# The verified 3x-overcommit swap workload with a pool limit that sends
# most pages to the backing device; every byte checked. Reports the
# share written back at the fullest moment and the writeback rate.
t_wb_workload() {
	local cg=/sys/fs/cgroup/gs-wb rc sampler
	attach_backing "$(vdisk gsback)"
	sysw $SYS/mem_limit "$(wl 12)M" ok
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	rm -f /tmp/wb.best
	# The share written back when the most data is stored.
	sample_peak /tmp/wb.best 0.3 wb_sample &
	sampler=$!
	# Text and random pages only: same-filled ones are never written back.
	run_cg gs-wb "$(wl_limit 40)" gsverify "$(wl 120)" 2 17 tr
	rc=$?
	kill $sampler; wait $sampler 2>/dev/null
	cat $SYS/mm_stat $SYS/bd_stat $SYS/io_stat
	read -r orig share count used writes </tmp/wb.best
	echo "fullest: $((orig >> 20)) MiB stored, $((count * 4096 >> 20)) MiB on the backing device ($share%), pool $((used >> 20)) MiB"
	echo "workload: written back $share% of the stored data at the fullest moment" >>"$GS_OUT/ratios.txt"
	[ $rc = 0 ] || fail "gsverify"
	[ "$share" -gt 50 ] || fail "only $share% written back"
	[ "$(iostat failed_writes)" = 0 ] || fail "failed writes: $(iostat failed_writes)"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] || fail "backing I/O errors"
	gs_check
	swapoff $DEV || fail swapoff
	# Only the swap header may be left (it may have gone out too).
	[ "$(bdstat count)" -le 1 ] && [ "$(cstat slots)" = 1 ] ||
		fail "left after swapoff: $(bdstat count) backing slots, $(cstat slots) slots"
	gs_check
	sysw $SYS/reset 1 ok
}

# Units beside a backing device: the verified workload with 16 and 64
# KiB mTHP on, multi_page=16 and a pool limit that sends most pages to
# the backing device. Writeback takes the units it wants whole, each as
# the compressed extent it is; swap-ins read them back. Every page
# checked by the workload, the table and the reverse map by the debug
# check, fewer backing slots than the pages they hold, nothing left
# after swapoff.
t_wb_units() {
	local t=/sys/kernel/mm/transparent_hugepage sz rc
	attach_backing "$(vdisk gsback)"
	sysw $SYS/multi_page 16 ok
	sysw $SYS/mem_limit "$(wl 12)M" ok
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	for sz in 16 64; do echo always >$t/hugepages-${sz}kB/enabled; done
	run_cg gs-wb-units "$(wl_limit 40)" gsverify "$(wl 120)" 2 19 tr
	rc=$?
	for sz in 16 64; do echo never >$t/hugepages-${sz}kB/enabled; done
	echo "mm_stat: $(cat $SYS/mm_stat)"
	echo "bd_stat: $(cat $SYS/bd_stat)"
	echo "comp_stat: $(cat $SYS/comp_stat)"
	[ $rc = 0 ] || fail "gsverify with units and a backing device"
	[ "$(compstat units_stored)" -gt 0 ] || fail "no unit stored"
	[ "$(compstat units_written)" -gt 0 ] || fail "no unit written back whole"
	[ "$(bdstat writes)" -gt 0 ] || fail "nothing written back"
	[ "$(iostat failed_writes)" = 0 ] || fail "failed writes: $(iostat failed_writes)"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] || fail "backing I/O errors"
	gs_check
	swapoff $DEV || fail swapoff
	[ "$(compstat units)" = 0 ] || fail "units left after swapoff: $(compstat units)"
	[ "$(bdstat count)" -le 1 ] && [ "$(cstat slots)" = 1 ] ||
		fail "left after swapoff: $(bdstat count) backing slots, $(cstat slots) slots"
	sysw $SYS/reset 1 ok
}

# zswap_gsverify DATA_MIB SEED: zswap on, a verified workload of
# DATA_MIB in a 32 MiB cgroup whose zswap pool is capped at 8 MiB (so
# that pages reach the swap device), zswap off again. Returns gsverify's
# status.
zswap_gsverify() {
	local cg=/sys/fs/cgroup/gs-zswap zs=/sys/module/zswap/parameters rc
	echo 1 >$zs/enabled || return 1
	mkdir -p $cg
	echo $(($(wl_limit 32) << 20)) >$cg/memory.max
	echo $((8 << 20)) >$cg/memory.zswap.max
	(echo $BASHPID >$cg/cgroup.procs && exec gsverify "$(wl "$1")" 2 "$2" tr)
	rc=$?
	echo "memcg: $(grep -E '^(zswpout|zswpin|pswpin|pswpout) ' $cg/memory.stat | tr '\n' ' ')"
	rmdir $cg
	echo 0 >$zs/enabled
	return $rc
}

# writeback_direct=all behind zswap without a backing device: what zswap
# rejects or writes back is kept in the pool as it is (RAW, a full page
# each), never compressed again, and every page verified.
t_zswap_pool() {
	local rc c0
	[ -w /sys/module/zswap/parameters/enabled ] || fail "no zswap in this kernel"
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	sysw $SYS/writeback_direct all ok
	sysw $SYS/disksize 1T ok
	c0=$(awk '{ print $1 }' $SYS/comp_stat)
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	zswap_gsverify 64 29
	rc=$?
	cat $SYS/mm_stat $SYS/comp_stat
	[ $rc = 0 ] || fail "gsverify with zswap in front"
	[ "$(mstat huge_since)" -gt 1000 ] || fail "few pages reached ghostswap: $(mstat huge_since) stored as they are"
	[ "$(awk '{ print $1 }' $SYS/comp_stat)" = "$c0" ] || fail "pages were compressed again: $(cat $SYS/comp_stat)"
	gs_check
	swapoff $DEV || fail swapoff
	sysw $SYS/reset 1 ok
}

# backing_discard and writeback_direct=all behind zswap: zswap on in front
# (its pool capped per cgroup, so pages do reach us), ghostswap storing
# what reaches it uncompressed on a sparse file (a loop device with direct
# I/O on ext4); every page verified, and the file's blocks given back as
# slots are freed.
t_wb_zswap_sparse() {
	local disk mnt=/tmp/gs-sparse f loop rc
	local zs=/sys/module/zswap/parameters kib peak=0 c0 sampler
	[ -w $zs/enabled ] || fail "no zswap in this kernel"
	disk=$(vdisk gsback) || fail "no backing disk"
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	mkfs.ext4 -q -F "$disk" && mkdir -p $mnt && mount "$disk" $mnt ||
		fail "ext4 on $disk"
	f=$mnt/backing.img
	modprobe loop 2>/dev/null
	truncate -s 8G $f && loop=$(losetup --find --show --direct-io=on $f) ||
		fail "loop device on $f"
	sysw $SYS/backing_discard 1 "No such device"
	attach_backing "$loop"
	sysw $SYS/backing_discard 1 ok
	sysw $SYS/backing_discard maybe "Invalid argument"
	sysw $SYS/writeback_direct all ok
	grep -q '\[all\]' $SYS/writeback_direct || fail "writeback_direct: $(cat $SYS/writeback_direct)"
	c0=$(awk '{ print $1 }' $SYS/comp_stat)
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	(while :; do du -k $f | cut -f1; sleep 0.5; done >/tmp/gs-sparse.du) &
	sampler=$!
	zswap_gsverify 96 23
	rc=$?
	kill $sampler; wait $sampler 2>/dev/null
	peak=$(sort -n /tmp/gs-sparse.du | tail -n 1)
	cat $SYS/mm_stat $SYS/bd_stat $SYS/comp_stat
	echo "backing file at the peak: ${peak} KiB allocated of 8 GiB"
	[ $rc = 0 ] || fail "gsverify with zswap in front"
	[ "$(bdstat writes)" -gt 1000 ] || fail "little reached ghostswap: $(bdstat writes) pages written"
	[ "$(awk '{ print $1 }' $SYS/comp_stat)" = "$c0" ] || fail "pages were compressed again: $(cat $SYS/comp_stat)"
	[ "$peak" -gt 4000 ] || fail "the file never grew: $peak KiB"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] || fail "backing I/O errors"
	gs_check
	swapoff $DEV || fail swapoff
	blkdiscard -f $DEV || fail blkdiscard
	# Discards follow frees within a tenth of a second or so.
	sleep 2
	kib=$(du -k $f | cut -f1)
	echo "after swapoff: $kib KiB allocated, $(bdstat count) pages, $(bdstat discarded) slots discarded"
	[ "$kib" -le 1024 ] || fail "the backing file keeps $kib KiB after swapoff"
	[ "$(bdstat discarded)" -ge "$(bdstat writes)" ] || fail "discarded $(bdstat discarded) of $(bdstat writes) slots"
	[ "$(bdstat discard_errors)" = 0 ] || fail "$(bdstat discard_errors) discards failed"
	gs_check
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_discard)" = 0 ] || fail "reset keeps backing_discard"
	grep -q '\[none\]' $SYS/writeback_direct || fail "reset keeps writeback_direct"
	losetup -d "$loop"
	umount $mnt
}

# A regular file as the backing device, mapped once as a swap file is
# (no loop device): allocated in full at attach, its blocks written and
# read with bios straight to the filesystem's disk, and the file guarded
# against writes, truncation, reallocation, defragmentation, unlink,
# rename and swapon while attached; a verified workload with zswap in front; the file the
# filesystem's again after reset.
t_wb_file() {
	local disk mnt=/tmp/gs-file f rc kib w0 w1 dname n
	[ -w /sys/module/zswap/parameters/enabled ] || fail "no zswap in this kernel"
	disk=$(vdisk gsback) || fail "no backing disk"
	dname=$(basename "$(readlink -f "$disk")")
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	mkfs.ext4 -q -F "$disk" && mkdir -p $mnt && mount "$disk" $mnt ||
		fail "ext4 on $disk"
	# Fragmented: the filesystem filled with 64 KiB files and every
	# other one deleted, so that the file is made of those holes and
	# runs of pages cross extents (a bio for each part).
	mkdir -p $mnt/frag
	python3 - $mnt/frag <<'PY' || fail "filling $mnt"
import os, sys
i = 0
while True:
    fd = os.open(f"{sys.argv[1]}/{i}", os.O_CREAT | os.O_WRONLY)
    try:
        os.posix_fallocate(fd, 0, 65536)
    except OSError:
        break
    finally:
        os.close(fd)
    i += 1
for j in range(0, i, 2):
    os.unlink(f"{sys.argv[1]}/{j}")
print(f"{i} files of 64 KiB, every other one deleted")
PY
	f=$mnt/backing
	truncate -s 256M $f || fail "truncate $f"
	[ "$(du -k $f | cut -f1)" = 0 ] || fail "sparse file has blocks"
	attach_backing "$f"
	dmesg | grep "backing file $f" | tail -n 1
	n=$(dmesg | sed -n "s|.*backing file $f: 65536 pages (of 65536) in \([0-9]*\) extents.*|\1|p" | tail -n 1)
	[ "${n:-0}" -ge 1000 ] || fail "the file is in ${n:-?} extents, not fragmented"
	kib=$(du -k $f | cut -f1)
	echo "attached: $kib KiB allocated"
	[ "$kib" -ge $((256 << 10)) ] || fail "not allocated in full: $kib KiB"
	# What the filesystem refuses now, as for a swap file.
	echo x >>$f 2>/dev/null && fail "a write to the attached file"
	truncate -s 128M $f 2>/dev/null && fail "truncate of the attached file"
	fallocate -p -o 0 -l 1M $f 2>/dev/null && fail "hole punched in the attached file"
	fallocate -l 512M $f 2>/dev/null && fail "the attached file grew"
	# e4defrag moves blocks with EXT4_IOC_MOVE_EXT, refused for it.
	filefrag -v $f >/tmp/gs-file.before || fail filefrag
	e4defrag $f
	filefrag -v $f | diff -q /tmp/gs-file.before - >/dev/null ||
		fail "e4defrag moved the attached file's blocks"
	rm -f $f 2>/dev/null; [ -e $f ] || fail "unlink of the attached file"
	mv $f $f.moved 2>/dev/null && fail "rename of the attached file"
	cp /etc/hostname $f 2>/dev/null && fail "a copy onto the attached file"
	swapon $f 2>/dev/null && fail "swapon of the attached file"
	umount $mnt 2>/dev/null && fail "umount under the attached file"
	[ "$(stat -c %s $f)" = $((256 << 20)) ] || fail "size changed: $(stat -c %s $f)"
	# Whether runs crossed extents is in the data: every page verified.
	sysw $SYS/writeback_direct all ok
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	w0=$(awk '{ print $7 }' /sys/block/$dname/stat)
	zswap_gsverify 96 31
	rc=$?
	w1=$(awk '{ print $7 }' /sys/block/$dname/stat)
	cat $SYS/mm_stat $SYS/bd_stat
	echo "$dname: $(((w1 - w0) / 8)) pages written to the disk, $(bdstat writes) by ghostswap"
	[ $rc = 0 ] || fail "gsverify with zswap in front"
	[ "$(bdstat writes)" -gt 1000 ] || fail "little reached the file: $(bdstat writes) pages written"
	# Straight to the disk: every page ghostswap wrote is a write there.
	[ $(((w1 - w0) / 8)) -ge "$(bdstat writes)" ] ||
		fail "the disk saw $(((w1 - w0) / 8)) pages of $(bdstat writes)"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] &&
		[ "$(bdstat sumerr)" = 0 ] || fail "backing I/O errors"
	gs_check
	swapoff $DEV || fail swapoff
	gs_check
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "reset keeps the file"
	# The filesystem's again.
	truncate -s 0 $f || fail "truncate after reset"
	rm -f $f
	umount $mnt || fail "umount after reset"
}

# wb_until N ROUNDS: writeback all, a round every half second, until N
# pages are on the backing device (a store that grows takes what fits,
# the rest on later rounds); prints the rounds taken.
wb_until() {
	local i
	for i in $(seq "$2"); do
		echo all >$SYS/writeback 2>/dev/null
		[ "$(bdstat count)" = "$1" ] && break
		sleep 0.5
	done
	echo "$i"
}

# A file on xfs and on btrfs as the backing store: each maps it through
# its own swap_activate (xfs through iomap, btrfs its own, which wants
# the file NOCOW: chattr +C while it is empty, as for a swap file there),
# refuses what it refuses of a swap file, and pages written back to it
# read back whole.
t_wb_file_fs() {
	local disk mnt=/tmp/gs-file f fs n dname w0 w1
	disk=$(vdisk gsback) || fail "no backing disk"
	dname=$(basename "$(readlink -f "$disk")")
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	mkdir -p $mnt
	# A failure half-way leaves the disk to the next tests all the same.
	trap "echo 1 >$SYS/reset 2>/dev/null; umount $mnt 2>/dev/null; chunk_mib_default" EXIT
	# Chunk files of 8 MiB: the directory's part below moves an eighth
	# of the pages the default's 64 MiB would need for the same chunks.
	sysw $CHUNK_MIB 8 ok
	for fs in xfs btrfs; do
		wipefs -qa "$disk"
		mkfs.$fs -q -f "$disk" >/dev/null && mount "$disk" $mnt ||
			fail "$fs on $disk"
		f=$mnt/backing
		touch $f || fail "$fs: touch"
		if [ $fs = btrfs ]; then
			chattr +C $f || fail "btrfs: chattr +C"
		fi
		truncate -s 64M $f || fail "$fs: truncate"
		attach_backing "$f"
		n=$(dmesg | sed -n "s|.*backing file $f: \([0-9]*\) pages (of 16384) in \([0-9]*\) extents of \(.*\)|\1 pages, \2 extents of \3|p" | tail -n 1)
		echo "$fs: $n"
		[ "${n%% *}" = 16384 ] || fail "$fs: mapped ${n:-nothing}"
		echo x >>$f 2>/dev/null && fail "$fs: a write to the attached file"
		truncate -s 32M $f 2>/dev/null && fail "$fs: truncate of the attached file"
		fallocate -p -o 0 -l 1M $f 2>/dev/null && fail "$fs: hole punched in the attached file"
		cp --reflink=always $f $mnt/clone 2>/dev/null && fail "$fs: the attached file reflinked"
		rm -f $mnt/clone
		filefrag -v $f >/tmp/gs-file.before || fail "$fs: filefrag"
		if [ $fs = xfs ]; then
			xfs_fsr $f >/dev/null 2>&1
		else
			btrfs filesystem defragment -f $f 2>/dev/null &&
				fail "btrfs: defragment of the attached file"
		fi
		filefrag -v $f | diff -q /tmp/gs-file.before - >/dev/null ||
			fail "$fs: the attached file's blocks moved"
		umount $mnt 2>/dev/null && fail "$fs: umount under the attached file"
		w0=$(awk '{ print $7 }' /sys/block/$dname/stat)
		$PAGES write $DEV 0 t:2000,r:500 >/dev/null || fail "$fs: write"
		sysw $SYS/writeback all ok
		[ "$(bdstat count)" = 2500 ] || fail "$fs: $(bdstat count) pages written back, not 2500"
		w1=$(awk '{ print $7 }' /sys/block/$dname/stat)
		echo "$fs: $(((w1 - w0) / 8)) pages written to $dname"
		[ $(((w1 - w0) / 8)) -ge 2500 ] || fail "$fs: the disk saw $(((w1 - w0) / 8)) pages"
		$PAGES verify $DEV 0 t:2000,r:500 || fail "$fs: verify"
		[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] &&
			[ "$(bdstat sumerr)" = 0 ] || fail "$fs: backing I/O errors"
		gs_check
		sysw $SYS/reset 1 ok
		# The filesystem's again.
		truncate -s 0 $f || fail "$fs: truncate after reset"
		rm -f $f
		# A file ghostswapctl creates is made NOCOW while empty where
		# that matters (btrfs), so the module maps it too.
		$CTL setup --no-swapon --size 1G --backing-dev $mnt/ctl.img \
			--backing-size 16M >/dev/null || fail "$fs: ghostswapctl setup with a file"
		[ "$(cat $SYS/backing_dev)" = $mnt/ctl.img ] ||
			fail "$fs: backing_dev $(cat $SYS/backing_dev), not the file"
		lsattr $mnt/ctl.img
		$CTL reset >/dev/null || fail "$fs: ghostswapctl reset"
		rm -f $mnt/ctl.img
		# A directory of chunk files there (on btrfs NOCOW, which its
		# chunks inherit).
		mkdir $mnt/chunks
		if [ $fs = btrfs ]; then
			chattr +C $mnt/chunks || fail "btrfs: chattr +C on the directory"
		fi
		$CTL setup --no-swapon --size 1G --backing-dev $mnt/chunks >/dev/null ||
			fail "$fs: ghostswapctl setup with a directory"
		$PAGES write $DEV 0 t:2500 >/dev/null || fail "$fs: write"
		n=$(wb_until 2500 20)
		echo "$fs: $(bdstat count) pages written back to chunk files after $n rounds"
		[ "$(bdstat count)" = 2500 ] || fail "$fs: $(bdstat count) pages written back to chunk files"
		$PAGES verify $DEV 0 t:2500 || fail "$fs: verify from chunk files"
		gs_check
		$CTL reset >/dev/null || fail "$fs: ghostswapctl reset"
		rmdir $mnt/chunks || fail "$fs: chunk files left in the directory"
		umount $mnt || fail "$fs: umount after reset"
	done
}

# A directory as the backing store: chunk files (64 MiB, unnamed; the
# module's chunk_mib) are added as writeback needs them, one spare ahead,
# and released when what they held is gone, so the filesystem gets its
# blocks back.
fs_used_kib() { df --output=used -k "$1" | tail -n 1 | tr -d ' '; }

# The chunk files' size in MiB for directories attached from now on;
# chunk_mib_default puts the module's default back.
CHUNK_MIB=/sys/module/ghostswap/parameters/chunk_mib
chunk_mib_default() { echo 64 >$CHUNK_MIB 2>/dev/null; }

# chunks_gone MNT BASE [KIB]: wait up to 15 s for the chunks to be
# released, down to KIB (default: under 1 MiB) above BASE; prints the
# KiB taken.
chunks_gone() {
	local used i
	for i in $(seq 30); do
		used=$(($(fs_used_kib "$1") - $2))
		[ "$used" -le "${3:-1023}" ] && break
		sleep 0.5
	done
	echo "$used"
}

# chunks_ext4 MNT: the device swapped off and reset, a fresh ext4 on the
# backing disk at MNT with an empty MNT/chunks; CHUNKS_BASE the KiB the
# filesystem uses then. Reset and unmounted, chunk_mib back to its
# default, when the test exits.
chunks_ext4() {
	local disk
	disk=$(vdisk gsback) || fail "no backing disk"
	swapoff $DEV 2>/dev/null
	sysw $SYS/reset 1 ok
	# No blocks reserved for root (the chunks are root's): what df
	# says is free is what a chunk can take.
	mkfs.ext4 -q -F -m 0 "$disk" && mkdir -p "$1" && mount "$disk" "$1" ||
		fail "ext4 on $disk"
	trap "echo 1 >$SYS/reset 2>/dev/null; umount $1 2>/dev/null; chunk_mib_default" EXIT
	mkdir "$1/chunks"
	CHUNKS_BASE=$(fs_used_kib "$1")
}

t_wb_chunks() {
	local mnt=/tmp/gs-chunks base used n i v d
	chunks_ext4 $mnt
	base=$CHUNKS_BASE
	# chunk_mib: 64 by default; a power of two from 4 to 1024, nothing
	# else. 8 MiB chunks here: the same number of chunks as 64 MiB ones
	# would need for eight times the pages.
	[ "$(cat $CHUNK_MIB)" = 64 ] || fail "chunk_mib $(cat $CHUNK_MIB) by default, not 64"
	for v in 0 2 6 48 2048 -8 8x ''; do
		echo "$v" >$CHUNK_MIB 2>/dev/null && fail "chunk_mib took '$v'"
	done
	dmesg | grep "invalid chunk_mib '8x'" || fail "no message for chunk_mib 8x"
	sysw $CHUNK_MIB 8 ok
	# The first chunk is added at once, kept 5 s if nothing comes: both
	# read first (a debug kernel took 10 s over the checks below).
	attach_backing $mnt/chunks
	n=$(bdstat capacity)
	used=$(($(fs_used_kib $mnt) - base))
	dmesg | grep "backing directory $mnt/chunks: chunks of 8 MiB" | tail -n 1 |
		grep . || fail "no 8 MiB chunks in the log"
	echo "attached: $used KiB taken"
	[ "$used" -ge $((8 << 10)) ] && [ "$used" -lt $((16 << 10)) ] ||
		fail "attached with $used KiB taken, not one chunk"
	[ "$n" = 2048 ] || fail "capacity $n, not one chunk's 2048 pages"
	$CTL doctor | grep "backing device: $mnt/chunks (a directory of chunk files" ||
		fail "doctor does not name the directory"
	# 5000 pages: three chunks' worth with a spare, added as writeback
	# runs short (it takes what fits, the rest on the next rounds).
	$PAGES write $DEV 0 t:5000 >/dev/null || fail write
	i=$(wb_until 5000 60)
	n=$(bdstat count)
	used=$(($(fs_used_kib $mnt) - base))
	echo "written back: $n pages after $i rounds; $used KiB taken"
	[ "$n" = 5000 ] || fail "only $n pages written back"
	[ "$used" -ge $((3 * 8 << 10)) ] && [ "$used" -le $((4 * 8 << 10 + 4096)) ] ||
		fail "$used KiB taken for 5000 pages: not 3 chunks and a spare"
	# What the module has in place is what the filesystem gave it.
	n=$(bdstat capacity)
	[ $((n * 4)) -le "$used" ] && [ $((n * 4 + 4096)) -ge "$used" ] ||
		fail "capacity $n pages, but $used KiB taken on the filesystem"
	$PAGES verify $DEV 0 t:5000 || fail verify
	gs_check
	# Spread thin: 750 pages left over three chunks. The worker asks
	# for backing compaction, which moves the top ones down, and the
	# chunks emptied go: one is left. With backing_discard on, as
	# ghostswapctl's mode zswap sets it: the compaction worker waits for
	# the discards of the slots it frees (and the host's scan of the
	# console fails a wait that reclaim could not rely on).
	sysw $SYS/backing_discard 1 ok
	d=$(bdstat discarded)
	n=$(bdstat reloc)
	blkdiscard -o $((500 << 12)) -l $((2000 << 12)) $DEV &&
		blkdiscard -o $((2625 << 12)) -l $((1875 << 12)) $DEV &&
		blkdiscard -o $((4625 << 12)) -l $((375 << 12)) $DEV ||
		fail "discards"
	for i in $(seq 120); do
		used=$(($(fs_used_kib $mnt) - base))
		[ "$used" -lt $((9 << 10)) ] && break
		sleep 0.5
	done
	n=$(($(bdstat reloc) - n))
	echo "750 pages left over 3 chunks: $n moved down, $used KiB taken after $((i / 2)) s"
	[ "$used" -ge $((8 << 10)) ] && [ "$used" -lt $((9 << 10)) ] ||
		fail "$used KiB taken for 750 pages, not one chunk"
	[ "$n" -gt 0 ] || fail "nothing moved down"
	[ "$(bdstat count)" = 750 ] && [ "$(bdstat capacity)" = 2048 ] ||
		fail "after compaction: $(cat $SYS/bd_stat)"
	d=$(($(bdstat discarded) - d))
	echo "discarded meanwhile: $d slots"
	[ "$d" -ge "$n" ] || fail "$d slots discarded, fewer than the $n moved"
	sysw $SYS/backing_discard 0 ok
	$PAGES verify $DEV 0 t:500,z:2000,t:125,z:1875,t:125,z:375 ||
		fail "verify after compaction"
	gs_check
	# Freed: every chunk goes, the spare too.
	blkdiscard $DEV || fail blkdiscard
	used=$(chunks_gone $mnt "$base")
	echo "after a discard of everything: $used KiB taken"
	[ "$used" -lt 1024 ] || fail "$used KiB still taken"

	# Frozen: no chunk is added (nor waited for); the pages stay in
	# memory, and go once the filesystem thaws.
	fsfreeze -f $mnt || fail fsfreeze
	$PAGES write $DEV 0 t:2500 >/dev/null || fail "write while frozen"
	echo all >$SYS/writeback 2>/dev/null
	n=$(bdstat count)
	echo "frozen: $n pages written back; bd_stat: $(cat $SYS/bd_stat)"
	# The worker tries (and fails) behind the writeback: within a second.
	for i in $(seq 20); do
		[ "$(bdstat grow_error)" = 11 ] && break
		sleep 0.2
	done
	[ "$(bdstat grow_error)" = 11 ] || fail "grow_error $(bdstat grow_error) while frozen, not 11 (EAGAIN)"
	$CTL doctor | grep "cannot take a new chunk file (its filesystem is frozen" ||
		fail "doctor does not say the filesystem is frozen"
	fsfreeze -u $mnt || fail "fsfreeze -u"
	i=$(wb_until 2500 40)
	echo "thawed: $(bdstat count) pages written back after $i rounds"
	[ "$(bdstat count)" = 2500 ] || fail "after the thaw: $(bdstat count) pages written back"
	[ "$(bdstat grow_error)" = 0 ] || fail "grow_error $(bdstat grow_error) after the thaw"
	$PAGES verify $DEV 0 t:2500 || fail "verify after the thaw"
	blkdiscard $DEV || fail blkdiscard
	used=$(chunks_gone $mnt "$base")
	[ "$used" -lt 1024 ] || fail "$used KiB still taken after the thaw"

	# Behind zswap (writeback_direct all), pages go past the pool as
	# they come: 3000 pages written one by one past the first chunk's
	# 2048 all reach the chunks, none waits in the pool for the next
	# chunk.
	sysw $SYS/writeback_direct all ok
	$PAGES write $DEV 1 t:1 >/dev/null || fail "write, direct"
	for i in $(seq 40); do
		[ "$(bdstat capacity)" -ge 2048 ] && break
		sleep 0.25
	done
	[ "$(bdstat capacity)" -ge 2048 ] || fail "no chunk added for a direct page: $(cat $SYS/bd_stat)"
	$PAGES write $DEV 1 t:3000 >/dev/null || fail "write, direct"
	n=$(bdstat count)
	echo "direct: $n of 3000 pages on the chunks, capacity $(bdstat capacity); mm_stat $(cat $SYS/mm_stat)"
	[ "$n" = 3000 ] || fail "direct: $n of 3000 pages on the chunks, the rest in memory"
	$PAGES verify $DEV 1 t:3000 || fail "verify, direct"
	# Direct stores alone keep a spare ahead. 5 s after the last one the
	# spare goes (two chunks hold the 3000 pages); 100 more pages, which
	# fit in the room left, must bring it back before that room runs out.
	# (A store that told the chunk store nothing let the spare go while
	# pages went on, and the next chunk came only once one found no room.)
	for i in $(seq 60); do
		[ "$(bdstat capacity)" = 4096 ] && break
		sleep 0.25
	done
	[ "$(bdstat capacity)" = 4096 ] || fail "idle: the spare kept, bd_stat $(cat $SYS/bd_stat)"
	$PAGES write $DEV 3001 t:100 >/dev/null || fail "write, direct after idle"
	for i in $(seq 40); do
		[ "$(bdstat capacity)" -ge 6144 ] && break
		sleep 0.25
	done
	echo "direct after idle: $(bdstat count) pages on the chunks, capacity $(bdstat capacity)"
	[ "$(bdstat capacity)" -ge 6144 ] && [ "$(bdstat count)" = 3100 ] ||
		fail "direct stores did not bring back a spare: bd_stat $(cat $SYS/bd_stat)"
	$PAGES verify $DEV 3001 t:100 || fail "verify, direct after idle"
	# Frozen: pages past the room of the chunks in place stay in memory
	# as they are, and no error reaches the device, also for a bio that
	# crosses the end of that room (the submit path starts what fits,
	# the worker finds no room for the rest).
	fsfreeze -f $mnt || fail fsfreeze
	n=$(bdstat capacity)
	head -c $(((n + 1000) << 12)) /dev/urandom >/tmp/gs-direct.bin
	v=$(awk '{ print $2 }' $SYS/io_stat)
	dd if=/tmp/gs-direct.bin of=$DEV bs=128K oflag=direct status=none ||
		fail "a direct write past the room of $n pages failed"
	echo "frozen, direct: $(bdstat count) of $((n + 1000)) pages on $n slots; mm_stat $(cat $SYS/mm_stat)"
	[ "$(awk '{ print $2 }' $SYS/io_stat)" = "$v" ] ||
		fail "failed writes: io_stat $(cat $SYS/io_stat)"
	[ "$(bdstat count)" -le "$n" ] && [ "$(bdstat werr)" = 0 ] ||
		fail "frozen, direct: bd_stat $(cat $SYS/bd_stat)"
	cmp -n $(((n + 1000) << 12)) /tmp/gs-direct.bin $DEV || fail "verify, direct"
	fsfreeze -u $mnt || fail "fsfreeze -u"
	rm -f /tmp/gs-direct.bin
	sysw $SYS/writeback_direct none ok
	blkdiscard $DEV || fail blkdiscard
	used=$(chunks_gone $mnt "$base")
	[ "$used" -lt 1024 ] || fail "$used KiB still taken after the direct pages"

	# Full: what fits is written back, the rest stays in memory; no
	# error reaches the device.
	fallocate -l $(($(df --output=avail -k $mnt | tail -n 1) - (12 << 10)))K $mnt/filler ||
		fail "filling $mnt"
	$PAGES write $DEV 0 t:5000 >/dev/null || fail "write, the filesystem full"
	i=$(wb_until 5000 10)
	n=$(bdstat count)
	echo "full: $n pages written back after $i rounds; $(dmesg | grep 'cannot add a chunk' | tail -n 1)"
	[ "$n" -ge 2048 ] && [ "$n" -lt 5000 ] || fail "full: $n pages written back"
	[ "$(bdstat werr)" = 0 ] || fail "write errors: $(cat $SYS/bd_stat)"
	[ "$(bdstat grow_error)" = 28 ] && [ "$(bdstat grow_errors)" -ge 1 ] ||
		fail "full, but bd_stat says: $(cat $SYS/bd_stat)"
	$CTL doctor | grep "cannot take a new chunk file (its filesystem is full" ||
		fail "doctor does not say the filesystem is full"
	$PAGES verify $DEV 0 t:5000 || fail "verify, the filesystem full"
	gs_check
	blkdiscard $DEV || fail blkdiscard
	rm $mnt/filler

	# zswap in front, in mode zswap, with the default 64 MiB chunks:
	# every page verified.
	chunk_mib_default
	sysw $SYS/reset 1 ok
	sysw $SYS/backing_dev $mnt/chunks ok
	sysw $SYS/writeback_direct all ok
	sysw $SYS/disksize 1T ok
	mkswap $DEV >/dev/null && swapon $DEV || fail swapon
	zswap_gsverify 96 37 || fail "gsverify with zswap in front"
	cat $SYS/bd_stat
	[ "$(bdstat writes)" -gt 1000 ] || fail "little reached the chunks: $(bdstat writes) pages written"
	[ "$(bdstat werr)" = 0 ] && [ "$(bdstat rerr)" = 0 ] &&
		[ "$(bdstat sumerr)" = 0 ] || fail "backing I/O errors"
	[ "$(awk '{ print $1 + $2 }' $SYS/io_stat)" = 0 ] ||
		fail "failed bios: $(cat $SYS/io_stat)"
	swapoff $DEV || fail swapoff
	gs_check
	# Swap's header (page 0) stays in memory: every chunk goes.
	used=$(chunks_gone $mnt "$base")
	echo "after the workload: $used KiB taken"
	[ "$used" -lt 1024 ] || fail "$used KiB still taken after the workload"
	sysw $SYS/reset 1 ok
	[ "$(cat $SYS/backing_dev)" = none ] || fail "reset keeps the directory"
	umount $mnt || fail "umount after reset"
}

# Reset while a chunk directory (8 MiB chunks) grows, shrinks and
# compacts: each of three rounds leaves 3000 pages at the top to move
# down, and resets 0.0-0.1, 0.1-0.2 or 0.2-0.3 s after the compaction
# has moved its first page, with a writeback under way too. The chunk
# worker is stopped first, a compaction under way ends at its next
# page, every chunk goes, and the kernel log stays clean. At least one
# reset must come in the middle of a compaction (some pages moved, not
# all).
t_wb_chunks_reset() {
	local mnt=/tmp/gs-chunks base used i j t d0 moved=0 mid=0
	chunks_ext4 $mnt
	base=$CHUNKS_BASE
	sysw $CHUNK_MIB 8 ok
	d0=$(dmesg | wc -l)
	for i in 1 2 3; do
		attach_backing $mnt/chunks
		$PAGES write $DEV 0 t:10000 >/dev/null || fail "write, round $i"
		wb_until 10000 60 >/dev/null
		# 3000 pages at the top, 1000 at the bottom: compaction has
		# 3000 to move down, and is asked to within a second.
		blkdiscard -o $((1000 << 12)) -l $((6000 << 12)) $DEV ||
			fail "blkdiscard, round $i"
		# And pages to write back meanwhile (reset waits for the
		# round; not for a compaction).
		$PAGES write $DEV 1000 t:500 >/dev/null ||
			fail "write, round $i"
		(echo all >$SYS/writeback) 2>/dev/null &
		for j in $(seq 200); do
			[ "$(bdstat reloc)" -gt 0 ] && break
			sleep 0.05
		done
		sleep "0.$((i - 1))$((RANDOM % 10))"
		moved=$(bdstat reloc)
		t=$(date +%s%N)
		echo 1 >$SYS/reset || fail "reset, round $i"
		echo "round $i: $moved of 3000 pages moved down when the reset came, reset in $((($(date +%s%N) - t) / 1000000)) ms"
		[ "$moved" -gt 0 ] && [ "$moved" -lt 3000 ] && mid=$((mid + 1))
		wait
		[ "$(cat $SYS/backing_dev)" = none ] || fail "reset kept the directory"
	done
	[ $mid -ge 1 ] || fail "no reset came in the middle of a compaction"
	used=$(chunks_gone $mnt "$base")
	echo "after the resets: $used KiB taken"
	[ "$used" -lt 1024 ] || fail "$used KiB still taken after reset"
	[ -z "$(ls -A $mnt/chunks)" ] || fail "files left in the directory: $(ls -A $mnt/chunks)"
	kernel_reports $((d0 + 1)) && fail "the kernel log reports a problem"
	umount $mnt || fail "umount after the resets"
	trap - EXIT
	chunk_mib_default
}

# Writeback racing raw I/O: fio writes, reads and trims with verification
# while writeback, idle marking and backing compaction run in a loop.
t_wb_race() {
	local loop rc log=/tmp/wbrace.compact ok busy bad
	attach_backing "$(vdisk gsback)"
	: >$log
	# Each compaction's outcome: done, busy (a page a reader held for
	# 100 ticks: EBUSY, as documented), or any other error, which fails.
	(while :; do
		echo all >$SYS/writeback 2>/dev/null
		echo all >$SYS/idle
		if out=$( (echo 1 >$SYS/backing_compact) 2>&1); then
			echo ok >>$log
		else
			case $out in
			*"Device or resource busy"*) echo busy >>$log ;;
			*) echo "error: $out" >>$log ;;
			esac
		fi
		echo 64 >$SYS/writeback 2>/dev/null
		sleep 0.1
	done) &
	loop=$!
	DEV=$DEV FIO_SIZE="$(wl 32)M" fio /opt/gs-src/tests/guest/wbrace.fio >"$GS_OUT/wbrace.log" 2>&1
	rc=$?
	kill $loop; wait $loop 2>/dev/null
	grep -E 'READ:|WRITE:|TRIM:|verify|err=' "$GS_OUT/wbrace.log"
	cat $SYS/bd_stat
	ok=$(grep -c '^ok$' $log)
	busy=$(grep -c '^busy$' $log)
	bad=$(grep -c '^error' $log)
	echo "compactions: $ok done, $busy busy, $bad failed; $(bdstat reloc) pages relocated"
	[ $rc = 0 ] || { tail -n 20 "$GS_OUT/wbrace.log"; fail "fio"; }
	fio_checked "$GS_OUT/wbrace.log" || fail "fio"
	[ "$(bdstat writes)" -gt 0 ] && [ "$(bdstat reads)" -gt 0 ] ||
		fail "the race never touched the backing device"
	[ "$bad" = 0 ] || fail "compaction failed: $(grep -m3 '^error' $log | tr '\n' ' ')"
	[ "$ok" -gt 0 ] || fail "no compaction ran to its end"
	[ "$(bdstat reloc)" -gt 0 ] || fail "compaction relocated no page during the race"
	gs_check
	sysw $SYS/reset 1 ok
}

# One writeback of 128 MiB of 60%-compressible data to $big, checksums
# $1 (1 or 0), encryption $2 (1 or 0): prints its rate in KiB/s.
wb_rate_once() {
	local t0 t1 n
	attach_backing "$big" >&2
	sysw $SYS/writeback_checksum "$1" ok >&2
	sysw $SYS/writeback_encrypt "$2" ok >&2
	fio --name=fill --filename=$DEV --rw=write --bs=1M --size=128M \
		--direct=1 --buffer_compress_percentage=60 \
		--buffer_compress_chunk=4k --refill_buffers >/dev/null 2>&1 ||
		fail "fill"
	t0=$(date +%s.%N)
	sysw $SYS/writeback all ok >&2
	t1=$(date +%s.%N)
	n=$(bdstat count)
	[ "$n" = 32768 ] || fail "written back $n"
	gs_check >&2
	sysw $SYS/reset 1 ok >&2
	awk -v n=$n -v a=$t0 -v b=$t1 'BEGIN { printf "%d\n", n * 4 / (b - a) }'
}

# Writeback rate against the backing device's own sequential write rate,
# same guest boot: with checksums (the default), without, and with
# checksums and encryption (three alternating runs each, medians). A
# measurement: reported, not asserted.
t_wb_rate() {
	local big own i on=() off=() enc=() mon moff menc
	big=$(vdisk gsback)
	sysw $SYS/reset 1 ok
	fio --name=seq --filename="$big" --rw=write --bs=128k --size=256M \
		--direct=1 --ioengine=libaio --iodepth=4 --output-format=terse \
		--terse-version=3 >/tmp/fio.seq 2>&1 || fail "fio on $big"
	own=$(awk -F';' '{ print $48 }' /tmp/fio.seq)	# write bandwidth, KiB/s
	for i in 1 2 3; do
		on+=("$(wb_rate_once 1 0)") && off+=("$(wb_rate_once 0 0)") &&
			enc+=("$(wb_rate_once 1 1)") || fail "writeback run $i"
	done
	mon=$(printf '%s\n' "${on[@]}" | sort -n | sed -n 2p)
	moff=$(printf '%s\n' "${off[@]}" | sort -n | sed -n 2p)
	menc=$(printf '%s\n' "${enc[@]}" | sort -n | sed -n 2p)
	echo "writeback: 32768 pages, median $mon KiB/s (runs ${on[*]}) with checksums, $moff KiB/s (runs ${off[*]}) without, $menc KiB/s (runs ${enc[*]}) with checksums and encryption; $big sequential write (fio, 128k, direct): $own KiB/s; ratio $(awk -v r="$mon" -v o="$own" 'BEGIN { printf "%.2f", r / o }') with checksums, $(awk -v r="$moff" -v o="$own" 'BEGIN { printf "%.2f", r / o }') without, $(awk -v r="$menc" -v o="$own" 'BEGIN { printf "%.2f", r / o }') encrypted; checksums cost $(awk -v a="$mon" -v b="$moff" 'BEGIN { printf "%.0f", (1 - a / b) * 100 }')% of the rate, encryption $(awk -v a="$menc" -v b="$mon" 'BEGIN { printf "%.0f", (1 - a / b) * 100 }')% more" |
		tee -a "$GS_OUT/ratios.txt"
}

# corrupt_slot IMAGE SLOT MODE: change backing slot SLOT's page in the
# loop device's file underneath: MODE bit flips one bit, garbage writes
# random bytes over it. The page as it was goes to /tmp/gs-saved.SLOT.
corrupt_slot() {
	dd if="$1" of="/tmp/gs-saved.$2" bs=4096 skip="$2" count=1 status=none ||
		fail "save slot $2"
	case $3 in
	bit) python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]) * 4096 + 100)
c = f.read(1); f.seek(-1, 1); f.write(bytes([c[0] ^ 4]))' "$1" "$2" ;;
	garbage) dd if=/dev/urandom of="$1" bs=4096 seek="$2" count=1 \
		conv=notrunc status=none ;;
	esac || fail "corrupt slot $2"
}

# Encryption at rest: with writeback_encrypt, the backing device's image
# holds none of the pages (written back, compressed or as they are, and
# written directly) and none of their text; without it, it holds them
# (the control: the search finds what is there). Everything reads back.
t_wb_encrypt() {
	local img=/tmp/gs-enc.img loop out spec=t:200,r:56 e
	sysw $SYS/reset 1 ok
	modprobe loop 2>/dev/null
	[ "$(cat $SYS/writeback_encrypt)" = 0 ] || fail "encryption on by default"
	sysw $SYS/writeback_encrypt maybe "Invalid argument"
	for e in 0 1; do
		rm -f $img
		truncate -s 4M $img && loop=$(losetup -f --show $img) || fail "loop device"
		sysw $SYS/writeback_encrypt $e ok
		[ "$(cat $SYS/writeback_encrypt)" = $e ] || fail "writeback_encrypt reads $(cat $SYS/writeback_encrypt)"
		sysw $SYS/backing_dev "$loop" ok
		$PAGES write $DEV 0 $spec >/dev/null || fail write
		sysw $SYS/writeback all ok
		sysw $SYS/writeback_direct huge ok
		$PAGES write $DEV 300 r:8 >/dev/null || fail "direct write"
		[ "$(bdstat count)" = 264 ] || fail "on the device: $(bdstat count)"
		# Holding data: no change (the key would not read it back).
		sysw $SYS/writeback_encrypt $((1 - e)) "Device or resource busy"
		out=$($PAGES plaintext $img 0 $spec,z:44,r:8) || fail "plaintext: $out"
		echo "writeback_encrypt $e: the image shows $out"
		if [ $e = 0 ]; then
			[ "$out" != "${out#pages 64, words }" ] && [ "${out#*words }" -gt 0 ] ||
				fail "control: the search did not find the plaintext ($out)"
		else
			[ "$out" = "pages 0, words 0" ] || fail "plaintext on the device: $out"
		fi
		$PAGES verify $DEV 0 $spec || fail "verify, writeback_encrypt $e"
		$PAGES verify $DEV 300 r:8 || fail "verify direct, writeback_encrypt $e"
		gs_check
		sysw $SYS/reset 1 ok
		losetup -d "$loop"
	done
	[ "$(cat $SYS/writeback_encrypt)" = 0 ] || fail "reset keeps encryption on"
	rm -f $img
}

# A backing device that returns other data than was written, while a
# verified reader runs: a file under a loop device, changed underneath
# (one bit flipped, whole pages of garbage) in pages in use. Every
# changed page fails its reads with EIO, none returns other data, no
# other page fails; each failed read counted (bd_stat), and doctor says
# so. The pages are not lost: with the data put back, all read right.
t_wb_checksum() {
	local img=/tmp/gs-lying.img loop b bad="3 50 120 201 255" s0 out reader
	local spec=t:200,r:56
	sysw $SYS/reset 1 ok
	rm -f /tmp/gs-saved.* /tmp/gs-watch.stop
	modprobe loop 2>/dev/null
	truncate -s 64M $img && loop=$(losetup -f --show $img) || fail "loop device"
	sysw $SYS/backing_dev "$loop" ok
	[ "$(cat $SYS/writeback_checksum)" = 1 ] || fail "checksums off by default"
	sysw $SYS/writeback_checksum maybe "Invalid argument"
	$PAGES write $DEV 0 $spec >/dev/null || fail write
	# Holding data: no change (pages without a checksum could be read).
	sysw $SYS/writeback_checksum 0 "Device or resource busy"
	sysw $SYS/writeback all ok
	# On a fresh backing device, page N went to backing slot N.
	[ "$(bdstat count)" = 256 ] || fail "written back: $(bdstat count)"
	$PAGES read-watch $DEV 0 $spec /tmp/gs-watch.stop >/tmp/gs-watch.out &
	reader=$!
	for b in $bad; do
		sleep 0.5
		if [ "$b" = 3 ]; then corrupt_slot $img "$b" bit
		else corrupt_slot $img "$b" garbage; fi
	done
	sleep 1
	touch /tmp/gs-watch.stop
	wait $reader || fail "the reader: $(cat /tmp/gs-watch.out)"
	cat /tmp/gs-watch.out
	grep -q "failed $bad, none wrong" /tmp/gs-watch.out ||
		fail "pages that failed: $(cat /tmp/gs-watch.out), want $bad"
	# Each read of a changed page is one checksum error, exactly.
	s0=$(bdstat sumerr)
	[ "$s0" -ge 5 ] && [ "$(bdstat rerr)" = "$s0" ] ||
		fail "bd_stat: $s0 checksum errors, $(bdstat rerr) failed reads"
	out=$($PAGES verify-each $DEV 0 $spec) || fail "verify-each: $out"
	echo "$out"
	[ "$out" = "right 251, failed 5 (${bad}), wrong 0" ] || fail "one pass: $out"
	[ $(($(bdstat sumerr) - s0)) = 5 ] || fail "one pass: $(($(bdstat sumerr) - s0)) checksum errors"
	dmesg | grep "checksum mismatch" | tail -n 2
	out=$(/usr/local/sbin/ghostswapctl doctor 2>&1)
	grep "backing device" <<<"$out"
	grep -q "FAIL  backing device: $loop returned other data than was written for $((s0 + 5)) pages" <<<"$out" ||
		fail "doctor: $out"
	# The device honest again: nothing was dropped.
	for b in $bad; do
		dd if=/tmp/gs-saved.$b of=$img bs=4096 seek="$b" conv=notrunc status=none
	done
	$PAGES verify $DEV 0 $spec || fail "verify once the data is back"
	gs_check
	sysw $SYS/reset 1 ok
	losetup -d "$loop"
	rm -f $img /tmp/gs-saved.* /tmp/gs-watch.*
}
