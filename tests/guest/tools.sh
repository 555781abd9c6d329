# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ghostswapctl against the real module, in the guest: each t_ctl_*
# function is one test of the guest suite (suite.sh sources this file).
# ghostswapctl is expected at /usr/local/sbin/ghostswapctl (GS_CTL
# overrides), the sources at /opt/gs-src. Every test leaves the module
# loaded, swap off, the device reset.

# The guest's helpers: fail, sysw, gs_fresh, the stat readers, $PAGES,
# $SYS, $DEV, $CTL.
. /opt/gs-src/tests/guest/lib.sh

# ctl ARGS...: runs the tool; $out, $err and $rc get its results.
ctl() {
	out=$("$CTL" "$@" 2>/tmp/ctl.err)
	rc=$?
	err=$(cat /tmp/ctl.err)
	printf '$ ghostswapctl %s  [exit %s]\n' "$*" "$rc"
	[ -z "$out" ] || printf '%s\n' "$out"
	[ -z "$err" ] || printf '%s\n' "$err"
}

# ctl_expect RC TEXT: the last ctl exited RC, with TEXT in its one-line
# error message.
ctl_expect() {
	[ "$rc" = "$1" ] || fail "exit $rc, want $1"
	case $err in
	*"$2"*) ;;
	*) fail "message '$err' lacks '$2'" ;;
	esac
	[ "$(printf '%s\n' "$err" | grep -vc '^ghostswapctl: warning')" = 1 ] ||
		fail "want a one-line message: $err"
}

# The tool there, the device loaded, swap off, reset.
ctl_fresh() {
	[ -x "$CTL" ] || fail "no $CTL"
	gs_fresh || fail "module loaded, swap off, device reset"
}

# status parsed back against sysfs, --json validated, human sizes.
t_ctl_status() {
	local name alg size data compr total ratio written clusters mnt want
	ctl_fresh
	$PAGES write "$DEV" 0 z:100,t:400,r:50 >/dev/null || fail "write pages"
	ctl
	[ $rc = 0 ] || fail "status: exit $rc"
	[ "$(printf '%s\n' "$out" | head -n 1 | tr -s ' ')" = \
		"NAME ALGORITHM DISKSIZE DATA COMPR TOTAL RATIO WRITTEN CLUSTERS MOUNTPOINT" ] ||
		fail "header"
	[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || fail "want one device line"
	ctl --raw --noheadings --bytes
	read -r name alg size data compr total ratio written clusters mnt <<<"$out"
	cat "$SYS/mm_stat" "$SYS/cluster_stat"
	[ "$name" = "$DEV" ] || fail "NAME $name"
	[ "$alg" = "$(sed 's/.*\[\(.*\)\].*/\1/' "$SYS/comp_algorithm")" ] || fail "ALGORITHM $alg"
	[ "$size" = "$(cat "$SYS/disksize")" ] || fail "DISKSIZE $size"
	[ "$data" = "$(mstat orig)" ] && [ "$data" = $((550 * 4096)) ] ||
		fail "DATA $data"
	[ "$compr" = "$(mstat compr)" ] || fail "COMPR $compr"
	[ "$total" = $(($(mstat used) + $(cstat meta))) ] ||
		fail "TOTAL $total"
	want=$(awk -v o="$data" -v c="$compr" 'BEGIN { printf "%.2f", o / c }')
	[ "$ratio" = "$want" ] || fail "RATIO $ratio, want $want"
	[ "$written" = 0 ] || fail "WRITTEN $written"
	[ "$clusters" = "$(cstat clusters)" ] || fail "CLUSTERS $clusters"
	[ -z "$mnt" ] || fail "MOUNTPOINT '$mnt' with swap off"
	ctl -n --raw -o DISKSIZE,DATA
	[ "$out" = "64G 2.1M" ] || fail "human sizes: '$out'"
	ctl --json
	printf '%s\n' "$out" >/tmp/ctl.json
	python3 -m json.tool /tmp/ctl.json >/dev/null || fail "invalid JSON"
	$PAGES ctl-json /tmp/ctl.json disksize="$(cat "$SYS/disksize")" \
		data="$(mstat orig)" compr="$(mstat compr)" ratio:float \
		mountpoint=null || fail "JSON against sysfs"
	ctl --output-all --raw
	[ "$(printf '%s\n' "$out" | head -n 1 | wc -w)" = \
		"$(printf '%s\n' "$out" | tail -n 1 | tr ' ' '\n' | wc -l)" ] ||
		fail "--output-all: as many fields as columns"
	sysw "$SYS/reset" 1 ok
}

# setup and reset, with swapon, from options, from a file, and loading the
# module itself.
t_ctl_setup_reset() {
	local conf=/tmp/ctl-gs.conf
	ctl_fresh
	ctl setup --size 2G --algorithm zstd --mem-limit 256M --priority 42 --disable-zswap
	[ $rc = 0 ] || fail "setup: exit $rc"
	cat /proc/swaps
	[ "$(awk -v d="$DEV" '$1 == d { print $3, $5 }' /proc/swaps)" = "2097148 42" ] ||
		fail "not swapped on with 2G and priority 42"
	[ "$(cat "$SYS/disksize")" = $((2 << 30)) ] || fail disksize
	grep -q '\[zstd\]' "$SYS/comp_algorithm" || fail comp_algorithm
	[ "$(cat "$SYS/mem_limit")" = $((256 << 20)) ] || fail mem_limit
	[ ! -e /sys/module/zswap/parameters/enabled ] ||
		[ "$(cat /sys/module/zswap/parameters/enabled)" = N ] || fail "zswap on"
	ctl -n --raw -o MOUNTPOINT,PRIORITY,ALGORITHM
	[ "$out" = "[SWAP] 42 zstd" ] || fail "status while swapped on: $out"
	ctl setup --size 1G
	ctl_expect 4 "device is in use"
	ctl reset
	[ $rc = 0 ] || fail "reset: exit $rc"
	grep -q "^$DEV " /proc/swaps && fail "still swapped on"
	[ "$(cat "$SYS/disksize")" = "$(default_disksize)" ] || fail "reset: disksize"
	grep -q '\[lz4\]' "$SYS/comp_algorithm" || fail "reset: comp_algorithm"
	[ "$(cat "$SYS/mem_limit")" = 0 ] || fail "reset: mem_limit"

	cat >"$conf" <<-'EOF'
	# ghostswap.conf for the guest test
	size = 1T
	algorithm = lz4hc   # not the default
	priority = 7
	EOF
	ctl setup --config "$conf" --priority 9
	[ $rc = 0 ] || fail "setup --config: exit $rc"
	[ "$(awk -v d="$DEV" '$1 == d { print $3, $5 }' /proc/swaps)" = "1073741820 9" ] ||
		fail "--config: not swapped on with 1T and priority 9"
	grep -q '\[lz4hc\]' "$SYS/comp_algorithm" || fail "--config: algorithm"
	ctl reset
	[ $rc = 0 ] || fail "reset: exit $rc"

	ctl setup --size 4G --no-swapon
	[ $rc = 0 ] && ! grep -q "^$DEV " /proc/swaps || fail "--no-swapon"
	swapon "$DEV" || fail "swapon after setup --no-swapon (mkswap done?)"
	ctl reset
	[ $rc = 0 ] || fail "reset: exit $rc"

	# Not loaded: setup loads it (and waits for udev).
	rmmod ghostswap || fail rmmod
	ctl setup --size 8G --priority -1
	[ $rc = 0 ] && [ -d "$SYS" ] || fail "setup did not load the module"
	[ "$(awk -v d="$DEV" '$1 == d { print $3 }' /proc/swaps)" = 8388604 ] ||
		fail "not swapped on after loading"
	ctl reset
	[ $rc = 0 ] || fail "reset: exit $rc"
}

# zramctl's command line on the real device: -s DEVICE (reset, algorithm,
# params, size; no swapon), -f, -r DEVICE, and zramctl's columns.
t_ctl_zramctl() {
	local want
	ctl_fresh
	ctl -s 3G -a zstd -p "level=8" /dev/ghostswap
	[ $rc = 0 ] || fail "-s: exit $rc"
	[ "$(cat "$SYS/disksize")" = $((3 << 30)) ] || fail "-s: disksize"
	grep -q '\[zstd\]' "$SYS/comp_algorithm" || fail "-a: comp_algorithm"
	grep -q "^$DEV " /proc/swaps && fail "-s swapped on"
	ctl -f
	[ "$rc|$out" = "0|$DEV" ] || fail "-f: a free device"
	$PAGES write "$DEV" 0 z:10,t:100 >/dev/null || fail "write pages"
	# ZERO-PAGES: same-filled; STREAMS: online CPUs; COMP-RATIO: DATA /
	# TOTAL (pool plus metadata); MEM-USED: the pool's peak.
	ctl -n --raw -o ZERO-PAGES,STREAMS,COMP-RATIO,MEM-USED --bytes
	want="$(mstat same) $(nproc) $(awk -v o="$(mstat orig)" -v u="$(mstat used)" \
		'{ printf "%.4f", o / (u + $4) }' "$SYS/cluster_stat") $(mstat max)"
	[ "$out" = "$want" ] || fail "zramctl's columns: $out, want $want"
	ctl -f
	ctl_expect 4 "no free ghostswap device: $DEV holds data"
	mkswap "$DEV" >/dev/null && swapon "$DEV" || fail swapon
	ctl -r "$DEV"
	ctl_expect 4 "swapoff first"
	swapoff "$DEV" || fail swapoff
	ctl -r "$DEV"
	[ $rc = 0 ] || fail "-r: exit $rc"
	[ "$(cat "$SYS/disksize")" = "$(default_disksize)" ] || fail "-r: not reset"
	ctl -r
	ctl_expect 2 "(raw output is --raw)"
}

# The node's lock: udev holds a shared flock(2) on the node while it
# probes, zramctl-like tools an exclusive one. A change waits for it and
# then succeeds; the holder keeps the node open meanwhile, so a write
# that did not wait would meet EBUSY (checked first, so the test can
# fail). A lock held past the wait: exit 4, naming the lock.
# hold_node_lock SECONDS: a background process holds the node's
# exclusive lock that long, and creates /tmp/lock-done just before it
# lets go; $holder is its pid.
hold_node_lock() {
	local i
	rm -f /tmp/lock-done
	flock -o -x "$DEV" sh -c "sleep $1; touch /tmp/lock-done" &
	holder=$!
	for i in $(seq 50); do
		flock -n -x "$DEV" true 2>/dev/null || return 0
		sleep 0.1
	done
	fail "the holder never took the lock"
}

t_ctl_node_lock() {
	local holder
	ctl_fresh
	hold_node_lock 4
	echo 1G 2>/dev/null >"$SYS/disksize" && fail "disksize written while the node is open"
	ctl -s 1G "$DEV"
	[ $rc = 0 ] || fail "-s behind a held lock: exit $rc"
	[ -e /tmp/lock-done ] || fail "-s returned while the lock was held"
	wait $holder
	[ "$(cat "$SYS/disksize")" = $((1 << 30)) ] || fail "-s: disksize"
	hold_node_lock 30
	ctl reset
	ctl_expect 4 "$DEV: locked for 10 s"
	kill $holder
	wait $holder
	[ "$(cat "$SYS/disksize")" = $((1 << 30)) ] || fail "a refused reset changed the device"
	ctl reset
	[ $rc = 0 ] || fail "reset once the lock is free: exit $rc"
}

# compression_algorithm (zram-generator's form) on the real module: the
# primary, a secondary with its level, as the module reads them back.
t_ctl_compression() {
	local conf=/tmp/ctl-comp.conf
	ctl_fresh
	echo "compression_algorithm = lz4 zstd(level=8) deflate" >"$conf"
	ctl setup --no-swapon -c "$conf"
	[ $rc = 0 ] || fail "setup: exit $rc"
	cat "$SYS/recomp_algorithm"
	grep -q '\[lz4\]' "$SYS/comp_algorithm" || fail "primary: $(cat "$SYS/comp_algorithm")"
	grep -q '^#1: .*\[zstd\]' "$SYS/recomp_algorithm" || fail "priority 1"
	grep -q '^#2: .*\[deflate\]' "$SYS/recomp_algorithm" || fail "priority 2"
	ctl reset
	echo "compression_algorithm = zstd(level=99)" >"$conf"
	ctl setup --no-swapon -c "$conf"
	ctl_expect 1 "algorithm_params"
	ctl reset
}

# The errors, each with its exit code and one-line message.
t_ctl_errors() {
	local algs
	ctl_fresh
	ctl setup --size 12Q
	ctl_expect 2 "bad size '12Q' for size"
	ctl setup --size 16T
	ctl_expect 2 "bad size '16T'"
	ctl setup --algorithm nosuch --no-swapon
	algs=$(tr -d '[]' <"$SYS/comp_algorithm")
	ctl_expect 1 "no such algorithm 'nosuch' (available: $algs)"
	# Open: busy.
	exec 3<"$DEV"
	ctl setup --size 1G --no-swapon
	ctl_expect 4 "device is in use: swapoff and reset first"
	ctl reset
	ctl_expect 4 "another process holds $DEV open"
	exec 3<&-
	# Holding data: refused, with or without a size, and the data kept
	# (mkswap would overwrite page 0).
	$PAGES write "$DEV" 0 t:1 >/dev/null || fail "write"
	ctl setup --size 1G --no-swapon
	ctl_expect 4 "$DEV holds 4K of data, which mkswap would overwrite: reset it first"
	ctl setup --no-swapon
	ctl_expect 4 "$DEV holds 4K of data"
	$PAGES verify "$DEV" 0 t:1 || fail "the data did not survive a refused setup"
	ctl reset
	[ $rc = 0 ] || fail "reset: exit $rc"
	# Swapped on.
	sysw "$SYS/disksize" 1G ok
	mkswap "$DEV" >/dev/null && swapon "$DEV" || fail swapon
	ctl setup --size 2G
	ctl_expect 4 "device is in use"
	# Swapped off, not reset: all it holds is the swap header, which a
	# setup may write again.
	swapoff "$DEV" || fail swapoff
	ctl setup --no-swapon
	[ $rc = 0 ] || fail "setup after swapoff (only the swap header stored): exit $rc: $err"
	ctl reset
	[ $rc = 0 ] && ! grep -q "^$DEV " /proc/swaps || fail "reset of a swapped-on device"
	# Not root.
	if command -v setpriv >/dev/null; then
		out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" reset 2>&1)
		rc=$? err=$out
		ctl_expect 1 "must be run as root"
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" >/dev/null ||
			fail "status as nobody"
	fi
	# Writeback without a backing device.
	if [ -e "$SYS/writeback" ]; then
		ctl writeback huge
		ctl_expect 1 "no backing device"
	else
		ctl writeback huge
		ctl_expect 3 "has no writeback"
	fi
	# Not loaded.
	rmmod ghostswap || fail rmmod
	ctl
	ctl_expect 3 "ghostswap module not loaded"
	ctl reset
	ctl_expect 3 "ghostswap module not loaded"
	modprobe ghostswap || fail modprobe
	udevadm settle 2>/dev/null
}

# A file as the backing device: setup creates it at backing_size
# (allocated), attaches it to a loop device with direct I/O and
# autoclear; writeback and reads go through it; reset lets the module go
# of the loop device and the kernel detaches it by itself.
backing_file_cleanup() {
	ctl reset >/dev/null
	umount /tmp/gs-scratch-mnt 2>/dev/null
	[ -z "${scratch:-}" ] || losetup -d "$scratch" 2>/dev/null
	rm -f /tmp/gs-scratch.img
}

t_ctl_backing_file() {
	local img=/tmp/gs-scratch-mnt/backing.img loop name
	[ -e "$SYS/bd_stat" ] || { echo "no writeback tier in this module: nothing to test"; return 0; }
	ctl_fresh
	modprobe loop 2>/dev/null
	# ext4, which does direct I/O (the guest's /tmp, tmpfs, may not).
	truncate -s 128M /tmp/gs-scratch.img && scratch=$(losetup -f --show /tmp/gs-scratch.img) &&
		mkfs.ext4 -q "$scratch" && mkdir -p /tmp/gs-scratch-mnt &&
		mount "$scratch" /tmp/gs-scratch-mnt || { backing_file_cleanup; fail "scratch ext4"; }
	trap backing_file_cleanup EXIT
	ctl setup --no-swapon --size 1G --backing-dev "$img" --backing-size 32M
	[ $rc = 0 ] || fail "setup with a backing file: exit $rc"
	[ "$(stat -c %s "$img")" = $((32 << 20)) ] || fail "file size $(stat -c %s "$img")"
	[ $(($(stat -c %b "$img") * $(stat -c %B "$img"))) -ge $((32 << 20)) ] ||
		fail "file not allocated: $(du -h "$img")"
	# Allocated: the module maps the file itself, no loop device.
	[ "$(cat "$SYS/backing_dev")" = "$img" ] || fail "backing_dev $(cat "$SYS/backing_dev"), not the file"
	losetup -j "$img" | grep -q . && fail "a loop device over the file: $(losetup -j "$img")"
	fallocate -l 32M "$img" 2>/dev/null && fail "fallocate on the attached file"
	truncate -s 16M "$img" 2>/dev/null && fail "the attached file was truncated"
	ctl doctor
	grep -q "backing device: $img (a file the module maps" <<<"$out" ||
		fail "doctor: $(grep 'backing device' <<<"$out")"
	$PAGES write "$DEV" 0 r:300,t:300 >/dev/null || fail "write pages"
	ctl writeback all
	[ $rc = 0 ] && [ "$(bdstat count)" -gt 0 ] || fail "writeback all: exit $rc, $(bdstat count) pages"
	$PAGES verify "$DEV" 0 r:300,t:300 || fail "data read back through the file"
	ctl reset
	[ $rc = 0 ] || fail "reset: exit $rc"
	# The filesystem's again (no longer marked a swap file).
	fallocate -l 32M "$img" || fail "fallocate refused after reset"
	[ "$(cat "$SYS/backing_dev")" = none ] || fail "reset keeps the file"
	# Kept for the next setup, which takes it as it is (no backing_size).
	ctl setup --no-swapon --backing-dev "$img"
	[ $rc = 0 ] || fail "setup with the existing file: exit $rc"
	ctl reset
	ctl setup --no-swapon --backing-dev /tmp/gs-scratch-mnt/nonexistent.img
	ctl_expect 2 "does not exist: set backing_size to create it"
	[ ! -e /tmp/gs-scratch-mnt/nonexistent.img ] || fail "created without a size"
	# mode zswap: zswap on, a sparse file that grows with what is
	# written and shrinks as it is freed.
	if [ -w /sys/module/zswap/parameters/enabled ]; then
		ctl setup --no-swapon --size 1G --mode zswap \
			--backing-dev /tmp/gs-scratch-mnt/sparse.img --backing-size 64M
		[ $rc = 0 ] || fail "setup --mode zswap: exit $rc"
		[ "$(cat /sys/module/zswap/parameters/enabled)" = Y ] || fail "zswap not on"
		grep -q '\[all\]' $SYS/writeback_direct || fail "writeback_direct: $(cat $SYS/writeback_direct)"
		[ "$(cat $SYS/backing_discard)" = 1 ] || fail "backing_discard off"
		img=/tmp/gs-scratch-mnt/sparse.img
		[ "$(du -k $img | cut -f1)" -le 64 ] || fail "not sparse: $(du -k $img)"
		$PAGES write "$DEV" 1 r:2000 >/dev/null || fail "write pages"
		echo "sparse file after 2000 pages: $(du -k $img | cut -f1) KiB"
		[ "$(du -k $img | cut -f1)" -ge 7000 ] || fail "the file did not grow: $(du -k $img)"
		blkdiscard -f -o 4096 "$DEV" || fail blkdiscard
		sleep 2
		echo "after a discard of the device: $(du -k $img | cut -f1) KiB"
		[ "$(du -k $img | cut -f1)" -le 64 ] || fail "the file did not shrink: $(du -k $img)"
		ctl status
		grep -q "zswap in front" <<<"$out" || fail "status shows no zswap"
		ctl reset
		echo N >/sys/module/zswap/parameters/enabled
	fi
}

# Writeback through the tool: a loop device as backing device.
t_ctl_writeback() {
	local img=/tmp/ctl-backing.img small=/tmp/ctl-small.img loop loop2
	[ -e "$SYS/bd_stat" ] || { echo "no writeback tier in this module: nothing to test"; return 0; }
	ctl_fresh
	modprobe loop 2>/dev/null
	truncate -s 64M "$img" && truncate -s 1M "$small" || fail truncate
	loop=$(losetup -f --show "$img") || fail "losetup"
	ctl setup --backing-dev "$loop" --size 1G --no-swapon
	[ $rc = 0 ] || { losetup -d "$loop"; fail "setup --backing-dev: exit $rc"; }
	ctl -n --raw -o BACKING
	[ "$out" = "$loop" ] || fail "BACKING $out"
	$PAGES write "$DEV" 0 r:256,t:256 >/dev/null || fail "write pages"
	ctl writeback huge
	[ $rc = 0 ] || fail "writeback huge: exit $rc"
	case $out in
	*"+256 pages (1M); backing device holds 256 pages"*) ;;
	*) fail "report: $out" ;;
	esac
	ctl -n --raw -o WRITTEN
	[ "$out" = 1M ] || fail "WRITTEN $out"
	ctl idle all
	[ $rc = 0 ] || fail "idle all"
	ctl writeback idle 100
	[ $rc = 0 ] && [ "$(bdstat count)" = 356 ] || fail "writeback idle 100"
	ctl writeback 50
	[ $rc = 0 ] || fail "writeback 50"
	$PAGES verify "$DEV" 0 r:256,t:256 || fail "data after writeback"
	ctl check
	[ $rc = 0 ] || fail "check: exit $rc"
	ctl compact --backing
	[ $rc = 0 ] || fail "compact --backing"
	ctl compact
	[ $rc = 0 ] || fail "compact"
	ctl --json -o name,written,backing,bd-writes
	printf '%s\n' "$out" | python3 -m json.tool >/dev/null || fail "JSON"
	ctl reset
	[ $rc = 0 ] || fail "reset"
	losetup -d "$loop"
	# A backing device too small: ENOSPC.
	loop2=$(losetup -f --show "$small") || fail "losetup"
	ctl setup --backing-dev "$loop2" --size 1G --no-swapon
	$PAGES write "$DEV" 0 r:512 >/dev/null || fail "write pages"
	ctl writeback huge
	[ $rc = 1 ] && case $err in *"backing device full"*) true ;; *) false ;; esac ||
		fail "want 'backing device full', exit 1"
	ctl reset
	losetup -d "$loop2"
	rm -f "$img" "$small"
}

# The README's five-minute tour, as a newcomer types it: the sh block
# under "## A five-minute tour", run by bash on the device as ctl_fresh
# leaves it, then judged by what it printed and left behind: swap on a
# 1 TiB device, the 192 MiB of text in swap beyond the cgroup's 64 MiB
# (about 130 MiB, compressed), the swap header alone once the file is gone,
# everything undone at the end.
t_readme_tour() {
	local tour=/tmp/readme-tour.sh out rc mm orig compr peak
	ctl_fresh
	awk '/^## A five-minute tour/ { on = 1 }
		on && /^```sh$/ { inb = 1; next }
		inb && /^```$/ { exit }
		inb' /opt/gs-src/README.md >"$tour"
	[ "$(grep -c . "$tour")" -ge 10 ] || fail "no tour found in README.md"
	mountpoint -q /dev/shm || mount -t tmpfs tmpfs /dev/shm
	out=$(cd /tmp && PATH=/usr/local/sbin:$PATH bash -x "$tour" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ $rc = 0 ] || fail "the tour ended with exit $rc"
	grep -qiE 'command not found|no such file|permission denied|usage:|ghostswapctl: ' <<<"$out" &&
		fail "the tour printed an error"
	grep -qE "^$DEV +partition +1024G +0B +100\$" <<<"$out" ||
		fail "swapon --show did not list a 1 TiB $DEV at priority 100"
	# The two mm_stat lines: nine numbers each.
	mm=$(grep -E '^ *[0-9]+( +-?[0-9]+){8} *$' <<<"$out")
	[ "$(wc -l <<<"$mm")" = 2 ] || fail "want two mm_stat lines: $mm"
	read -r orig compr _ <<<"$(head -n 1 <<<"$mm")"
	[ "$orig" -ge $((100 << 20)) ] && [ "$orig" -le $((192 << 20)) ] ||
		fail "DATA after the fill: $orig bytes, want 100-192 MiB"
	[ "$compr" -gt 0 ] && [ $((compr * 2)) -le "$orig" ] ||
		fail "COMPR $compr of DATA $orig: the text did not halve"
	peak=$orig
	read -r orig _ <<<"$(tail -n 1 <<<"$mm")"
	[ "$orig" = 4096 ] || fail "DATA once the file is gone: $orig bytes, want mkswap's header alone (4096)"
	grep -q "^$DEV " /proc/swaps && fail "still swapped on"
	[ ! -e /dev/shm/tour ] && [ ! -d /sys/fs/cgroup/tour ] ||
		fail "the tour left its file or cgroup behind"
	[ "$(cat "$SYS/disksize")" = "$(default_disksize)" ] ||
		fail "the device was not reset"
	echo "tour: DATA $((peak >> 20)) MiB at its fullest"
}
