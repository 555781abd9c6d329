#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of the admin tooling, on the host: builds ghostswapctl with the
# top-level Makefile (in a scratch copy of the sources) and runs it against
# fake sysfs trees (GHOSTSWAP_SYSFS, GHOSTSWAP_PROC; sysfs writes and
# commands recorded through GHOSTSWAP_TRACE). Errors the real module gives
# (EBUSY, EINVAL, ENODEV, ...) come from tests/tools/fault.c, preloaded:
# root ignores file modes. Also: make install/clean, the systemd units, the
# example configuration, and lint of the man pages, which must document
# every key, command and option the tool's source takes. Last, the test
# harness's own parts: tests/run.sh's summary (skips counted apart, and
# failing) and kunit/json2tap.py.
#
# Prints TAP on stdout; exits non-zero on any failure. Needs cc, make,
# python3, groff and man (groff-base, man-db); setpriv for the not-root
# cases and systemd-analyze for the units (skipped without them).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
export LC_ALL=C MANPAGER=cat PAGER=cat
unset GHOSTSWAP_SYSFS GHOSTSWAP_PROC GHOSTSWAP_DRYRUN GHOSTSWAP_TRACE GS_FAULT GS_SIDE

# TAP: tap_ok, tap_not_ok, tap_skip, tap_plan.
. "$top/testbed/tap.sh"
# same DESC GOT WANT
same() {
	if [ "$2" = "$3" ]; then tap_ok "$1"; else tap_not_ok "$1" "got:" "$2" "want:" "$3"; fi
}
# t DESC CMD...: the command succeeding is the test.
t() {
	local d=$1 o
	shift
	if o=$("$@" 2>&1); then tap_ok "$d"; else tap_not_ok "$d" "$o"; fi
}

# ------------------------------------------------------------- building

src=$tmp/src
mkdir -p "$src"
(cd "$top" && cp -r Makefile dkms.conf tools man systemd udev etc "$src/")
rm -f "$src/tools/ghostswapctl"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")

if make -C "$src" tools >"$tmp/build.log" 2>&1 &&
	! grep -qi 'warning' "$tmp/build.log"; then
	tap_ok "make tools: builds tools/ghostswapctl, -std=c11 -Wall -Wextra -Werror, no warnings"
else
	tap_not_ok "make tools" "$(cat "$tmp/build.log")"
	tap_plan
	exit 1
fi
CTL=$src/tools/ghostswapctl
t "builds with -Wpedantic too" \
	${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -DGS_VERSION="\"$ver\"" \
	-o "$tmp/ctl-pedantic" "$top"/tools/*.c
t "only libc: no library besides libc in the binary" \
	sh -c "! objdump -p '$CTL' 2>/dev/null | awk '/NEEDED/ { print \$2 }' | grep -v '^libc\.so'"

${CC:-cc} -shared -fPIC -O2 -Wall -Werror -o "$tmp/fault.so" "$top/tests/tools/fault.c" -ldl ||
	tap_not_ok "build the fault shim"
SHIM=$tmp/fault.so

out=$("$CTL" --version)
same "--version: version from dkms.conf" "$out" "ghostswapctl $ver"
out=$("$CTL" --help)
rc=$?
if [ $rc = 0 ] && grep -q 'Exit status:' <<<"$out" &&
	grep -q ' 4  the device is busy' <<<"$out" && grep -q 'GHOSTSWAP_SYSFS' <<<"$out"; then
	tap_ok "--help: exit 0, documents exit codes and environment"
else
	tap_not_ok "--help" "$out"
fi
out=$("$CTL" setup --help)
[ $? = 0 ] && grep -q 'Setup options' <<<"$out" && tap_ok "setup --help" || tap_not_ok "setup --help"

# -------------------------------------------------------------- fake trees

# fake_no_data DIR: the fake device's mm_stat says it holds nothing.
fake_no_data() {
	printf '%8s %8s %8s %8s %8s %8s %8s %8s %8s\n' 0 0 0 0 0 0 0 0 0 \
		>"$1/sys/block/ghostswap/mm_stat"
}

# mkfake DIR [old]: sysfs and proc of a loaded ghostswap, swap off. "old": a
# module without the writeback tier (no bd_stat, backing_dev, writeback...).
# Its mm_stat says it holds 400 MiB of data if FAKE_DATA is 1, none if 0.
FAKE_DATA=1
mkfake() {
	local f=$1 d=$1/sys/block/ghostswap a
	rm -rf "$f"
	mkdir -p "$d" "$f/proc" "$f/sys/module/zswap/parameters" "$f/sys/kernel/debug" \
		"$f/sys/devices/system/cpu"
	echo 0-1 >"$f/sys/devices/system/cpu/online"
	echo 1099511627776 >"$d/disksize"
	echo "lzo lzo-rle [lz4] lz4hc zstd deflate" >"$d/comp_algorithm"
	# zram's format for mm_stat; the others as the module prints them.
	if [ "$FAKE_DATA" = 1 ]; then
		printf '%8s %8s %8s %8s %8s %8s %8s %8s %8s\n' 419430400 120586240 \
			127000576 0 130023424 12345 12 678 900 >"$d/mm_stat"
	else
		fake_no_data "$f"
	fi
	printf '%8s %8s %8s %8s %8s %8s\n' 210 250 102400 1028160 10.04 16384 \
		>"$d/cluster_stat"
	printf '%8s %8s %8s %8s\n' 0 2 0 5000 >"$d/io_stat"
	echo 0 >"$d/mem_limit"
	echo 252:0 >"$d/dev"
	for a in reset compact mem_used_max; do : >"$d/$a"; done
	echo N >"$f/sys/module/zswap/parameters/enabled"
	printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n' >"$f/proc/swaps"
	[ "${2:-}" = old ] && return
	printf '%8s %8s %8s %8s %8s %8s %8s %8s\n' 100 7 100 1 4896 0 0 3 >"$d/bd_stat"
	echo none >"$d/backing_dev"
	echo 0 >"$d/writeback_limit"
	echo 0 >"$d/writeback_limit_enable"
	for a in writeback idle backing_compact algorithm_params; do : >"$d/$a"; done
	mkdir -p "$f/sys/kernel/debug/ghostswap"
	echo 0 >"$f/sys/kernel/debug/ghostswap/check"
}
swapped_on() {
	printf '%-40s%s\t%s\t%s\t%s\n' /dev/ghostswap partition 1073741820 \
		0 "${2:-100}" >>"$1/proc/swaps"
}
F=$tmp/fake
S=$F/sys/block/ghostswap

# ctl ARGS...: the tool on $F; sets $out, $err, $rc, $tr (the trace).
ctl() {
	: >"$F/trace"
	GHOSTSWAP_SYSFS=$F/sys GHOSTSWAP_PROC=$F/proc GHOSTSWAP_TRACE=$F/trace \
		"$CTL" "$@" >"$F/out" 2>"$F/err"
	rc=$?
	out=$(cat "$F/out")
	err=$(cat "$F/err")
	tr=$(cat "$F/trace")
}
# ctl_fault SPEC ARGS...: the same with writes failing as SPEC says.
ctl_fault() {
	local spec=$1
	shift
	LD_PRELOAD=$SHIM GS_FAULT=$spec ctl "$@"
}
# expect DESC RC [STDERR_TEXT]: the last run exited RC; with a text, its
# error is one line containing it.
expect() {
	local d=$1 want=$2 text=${3:-}
	if [ "$rc" != "$want" ]; then
		tap_not_ok "$d" "exit $rc, want $want" "stdout: $out" "stderr: $err"
	elif [ -n "$text" ] && ! grep -qF -- "$text" <<<"$err"; then
		tap_not_ok "$d" "stderr lacks '$text'" "stderr: $err"
	elif [ -n "$text" ] && [ "$(grep -vc '^ghostswapctl: warning' <<<"$err")" != 1 ]; then
		tap_not_ok "$d" "want a one-line message" "stderr: $err"
	else
		tap_ok "$d"
	fi
}

# ------------------------------------------------------------------ status

mkfake "$F"
ctl
same "status (default): zramctl-like table, human sizes" "$out" \
"NAME           ALGORITHM DISKSIZE DATA COMPR  TOTAL RATIO WRITTEN CLUSTERS MOUNTPOINT
/dev/ghostswap lz4             1T 400M  115M 122.1M  3.48    400K      210"
expect "status: exit 0, nothing on stderr (zswap off)" 0
[ -z "$err" ] || tap_not_ok "status: stderr is empty" "$err"

ctl status --bytes
same "status --bytes" "$out" \
"NAME           ALGORITHM      DISKSIZE      DATA     COMPR     TOTAL RATIO WRITTEN CLUSTERS MOUNTPOINT
/dev/ghostswap lz4       1099511627776 419430400 120586240 128028736  3.48  409600      210"

ctl --raw
same "status --raw: one space, no alignment, empty last field kept" "$out" \
"NAME ALGORITHM DISKSIZE DATA COMPR TOTAL RATIO WRITTEN CLUSTERS MOUNTPOINT
/dev/ghostswap lz4 1T 400M 115M 122.1M 3.48 400K 210 "

ctl --raw --noheadings --bytes
same "status --raw --noheadings --bytes" "$out" \
"/dev/ghostswap lz4 1099511627776 419430400 120586240 128028736 3.48 409600 210 "

ctl -n
same "status --noheadings" "$out" \
"/dev/ghostswap lz4             1T 400M  115M 122.1M  3.48    400K      210"

ctl --output name,ratio,data
same "status --output NAME,RATIO,DATA (any case, given order)" "$out" \
"NAME           RATIO DATA
/dev/ghostswap  3.48 400M"

ctl -o +BACKING,pool,slots,zero-pages,bd-meta,failed-writes
same "status --output +COLS: added to the default ones" "$out" \
"NAME           ALGORITHM DISKSIZE DATA COMPR  TOTAL RATIO WRITTEN CLUSTERS MOUNTPOINT BACKING   POOL  SLOTS ZERO-PAGES BD-META FAILED-WRITES
/dev/ghostswap lz4             1T 400M  115M 122.1M  3.48    400K      210            none    121.1M 102400      12345    4.8K             2"

# zramctl's columns, names and meanings: MEM-USED is the peak, ZERO-PAGES
# the same-filled pages, MIGRATED mm_stat's pages_compacted, STREAMS a
# count (online CPUs), COMP-RATIO DATA/TOTAL with four decimals.
echo "0-1,4-5" >"$F/sys/devices/system/cpu/online"
ctl -o mem-used,zero-pages,migrated,streams,comp-ratio,total,stream-mem --bytes
same "status: zramctl's columns with zramctl's meanings" "$out" \
" MEM-USED ZERO-PAGES MIGRATED STREAMS COMP-RATIO     TOTAL STREAM-MEM
130023424      12345       12       4     3.2761 128028736      16384"
bad=
for c in same-pages:ZERO-PAGES mem-peak:MEM-USED compacted:MIGRATED; do
	ctl -o "name,${c%%:*}"
	[ $rc = 2 ] && grep -qiF "column ${c%%:*}" <<<"$err" &&
		grep -qF "is now called ${c#*:}" <<<"$err" || bad="$bad [$c] $err"
done
same "status: a column's old name is refused, naming the new one" "$bad" ""

ctl --output-all --raw --noheadings --bytes
same "status --output-all: every column" "$out" \
"/dev/ghostswap lz4 1099511627776 419430400 120586240 128028736 3.48 409600 210  0 130023424 127000576 1028160 12345 678 12 102400 250 4 16384 3.2761  none 7 100 4896 0 2 0"

ctl -o name,nosuch
expect "status --output with an unknown column: usage error" 2 "unknown column: 'nosuch'"
ctl -o ""
expect "status --output with nothing: usage error" 2 "no columns"
ctl --json --raw
expect "status --json --raw: usage error" 2 "exclude"
ctl status extra
expect "status with another device: usage error" 2 "extra: not a ghostswap device (there is one: /dev/ghostswap)"
ctl status /dev/ghostswap extra
expect "status with an extra argument: usage error" 2 "unexpected argument 'extra'"
ctl /dev/ghostswap -n -o name
same "status DEVICE (zramctl's form): the device's line" "$rc $out" "0 /dev/ghostswap"
ctl ghostswap -n -o name
same "status with the kernel name" "$rc $out" "0 /dev/ghostswap"
ctl --bogus
expect "unknown option: usage error" 2 "unknown option '--bogus'"
ctl -x
expect "unknown short option: usage error" 2 "invalid option -- 'x'"
ctl -o
expect "option without its argument: usage error" 2 "needs an argument"
ctl frobnicate
expect "unknown command: usage error" 2 "unknown command 'frobnicate'"

ctl --json
if [ $rc = 0 ] && python3 -m json.tool "$F/out" >/dev/null 2>"$tmp/json.err"; then
	tap_ok "status --json: valid JSON (python3 -m json.tool)"
else
	tap_not_ok "status --json: valid JSON" "$out" "$(cat "$tmp/json.err")"
fi
t "status --json: numbers as numbers, keys as lowercase columns" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["blockdevices"]
assert len(d) == 1, d
d = d[0]
want = {"name": "/dev/ghostswap", "algorithm": "lz4", "disksize": 1 << 40,
        "data": 419430400, "compr": 120586240, "total": 127000576 + 1028160,
        "ratio": 3.48, "written": 100 * 4096, "clusters": 210,
        "mountpoint": None}
assert d == want, d
assert all(type(d[k]) is int for k in ("disksize", "data", "compr", "total", "written", "clusters"))
assert type(d["ratio"]) is float
' "$F/out"
ctl -J -o name,priority,mountpoint,mem-limit,backing
swapped_on "$F" 5
ctl -J -o name,priority,mountpoint,mem-limit,backing
t "status --json: mountpoint and priority when swapped on" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["blockdevices"][0]
assert d == {"name": "/dev/ghostswap", "priority": 5, "mountpoint": "[SWAP]",
             "mem-limit": 0, "backing": "none"}, d
' "$F/out"

ctl -o NAME,MOUNTPOINT,PRIORITY
same "status: [SWAP] and the priority from /proc/swaps" "$out" \
"NAME           MOUNTPOINT PRIORITY
/dev/ghostswap [SWAP]            5"

mkfake "$F"
printf '%-40s%s\t%s\t%s\t%s\n' /dev/sda2 partition 1000 0 -2 >>"$F/proc/swaps"
ctl -n -o MOUNTPOINT,NAME
same "status: another device in /proc/swaps is not ours" "$out" "           /dev/ghostswap"

# Human sizes as util-linux prints them.
hum=
for v in 0 1023 1024 1536 1048575 12345678 1073741824 1610612736 \
	1099511627776 17592186036224 1152921504606846976; do
	echo "$v" >"$S/disksize"
	ctl -n --raw -o DISKSIZE
	hum="$hum $out"
done
same "human sizes: B K M G T E, one decimal, rounded" "$hum" \
	" 0B 1023B 1K 1.5K 1024K 11.8M 1G 1.5G 1T 16T 1E"

mkfake "$F"
printf '%s\n' "  0 0 0 0 0 0 0 0 0" >"$S/mm_stat"
ctl -n -o RATIO,DATA
same "status: no data: RATIO is -" "$out" "    -   0B"
ctl -J -o ratio
t "status --json: no data: ratio is null" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["blockdevices"][0] == {"ratio": None}' "$F/out"

mkfake "$F"
echo "$(cat "$S/mm_stat") 77 88" >"$S/mm_stat"
echo "$(cat "$S/cluster_stat") 99" >"$S/cluster_stat"
echo "$(cat "$S/io_stat") 1 2 3" >"$S/io_stat"
echo "$(cat "$S/bd_stat") 11 12" >"$S/bd_stat"
ctl -n --raw
same "status: extra trailing columns in every stat file are ignored" "$out" \
	"/dev/ghostswap lz4 1T 400M 115M 122.1M 3.48 400K 210 "

echo "1 2 3" >"$S/mm_stat"
ctl
expect "status: a short mm_stat is an error" 1 "unexpected contents in $F/sys/block/ghostswap/mm_stat"

mkfake "$F" old
ctl -o +BACKING,BD-READS --raw
same "status, older module (no bd_stat, backing_dev): WRITTEN 0, BACKING none" "$out" \
"NAME ALGORITHM DISKSIZE DATA COMPR TOTAL RATIO WRITTEN CLUSTERS MOUNTPOINT BACKING BD-READS
/dev/ghostswap lz4 1T 400M 115M 122.1M 3.48 0B 210  none 0"

mkfake "$F"
echo "lz4" >"$S/comp_algorithm"
echo /dev/vdb >"$S/backing_dev"
ctl -n -o ALGORITHM,BACKING
same "status: comp_algorithm without brackets; backing device path" "$out" "lz4       /dev/vdb"
echo 16 >"$S/multi_page"
ctl -o NAME,MULTI-PAGE
same "status -o MULTI-PAGE: multi_page" "$out" \
"NAME           MULTI-PAGE
/dev/ghostswap         16"
ctl -J -o multi-page
t "status --json: multi-page a number" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["blockdevices"][0] == {"multi-page": 16}' "$F/out"
rm "$S/multi_page"
ctl -n -o MULTI-PAGE
same "status -o MULTI-PAGE, a module without multi_page: 0" "$rc $out" "0          0"

rm -rf "$F/sys/block/ghostswap"
ctl
expect "status: module not loaded: exit 3" 3 "ghostswap module not loaded"

mkfake "$F"
echo Y >"$F/sys/module/zswap/parameters/enabled"
ctl -n
if [ $rc = 0 ] && grep -q 'warning: zswap is enabled' <<<"$err" &&
	! grep -q zswap <<<"$out"; then
	tap_ok "status: zswap enabled: warning on stderr only"
else
	tap_not_ok "status: zswap warning" "stdout: $out" "stderr: $err"
fi
echo N >"$F/sys/module/zswap/parameters/enabled"
ctl -n
same "status: zswap disabled: no warning" "$err" ""
rm -rf "$F/sys/module/zswap"
ctl -n
same "status: no zswap in the kernel: no warning" "$err" ""

# ---------------------------------------------------- zramctl's options

# Without a command, zramctl's -s/-a/-p/-t DEVICE, -f and -r DEVICE do
# what they do in zramctl.
mkfake "$F"
ctl -s 2G -a zstd -p "level=8" /dev/ghostswap
same "zramctl -s DEV: reset, algorithm, params, size; no mkswap, no swapon" "$rc
$out
$tr" "0
dry run: udevadm settle
run udevadm settle
write block/ghostswap/reset 1
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/algorithm_params level=8
write block/ghostswap/disksize 2147483648"
ctl --size 1G --streams 4 ghostswap
same "zramctl --streams: accepted, ignored with a warning" "$rc|$err|$(tail -n 1 <<<"$tr")" \
	"0|ghostswapctl: warning: --streams ignored: ghostswap has one compression stream per online CPU|write block/ghostswap/disksize 1073741824"
printf '%8s %8s %8s %8s %8s %8s %8s %8s %8s\n' 0 0 0 0 0 0 0 0 0 >"$S/mm_stat"
ctl -f
same "zramctl -f: a free device is printed" "$rc|$(grep -v 'dry run' <<<"$out")" "0|/dev/ghostswap"
ctl -f -s 1G
same "zramctl -f -s: set up, then the device printed" "$rc
$(grep -v 'dry run' <<<"$out")
$(grep -c write <<<"$tr")" "0
/dev/ghostswap
2"
ctl -r /dev/ghostswap
same "zramctl -r DEV: reset" "$rc|$out|$tr" "0|/dev/ghostswap: reset|write block/ghostswap/reset 1"
swapped_on "$F"
ctl -r /dev/ghostswap
expect "zramctl -r on a swapped-on device: refused, nothing written (no swapoff)" 4 \
	"/dev/ghostswap is swapped on: swapoff first, or use 'ghostswapctl reset'"
ctl -f
expect "zramctl -f on a swapped-on device: exit 4" 4 "no free ghostswap device: /dev/ghostswap is swapped on"
ctl -s 1G /dev/ghostswap
expect "zramctl -s on a swapped-on device: exit 4" 4 "device is in use"
same "zramctl -s on a swapped-on device: nothing written" "$(grep -c write <<<"$tr")" 0
mkfake "$F"
ctl -f
expect "zramctl -f on a device holding data: exit 4" 4 "no free ghostswap device: /dev/ghostswap holds data"
ctl -r
expect "-r without a device (once --raw): refused, naming --raw" 2 \
	"-r is --reset, as in zramctl, and needs the device: 'ghostswapctl -r /dev/ghostswap' (raw output is --raw)"
same "-r without a device: nothing written" "$tr" ""
ctl -r -n
expect "-r -n (an old raw listing): refused" 2 "(raw output is --raw)"
ctl -a zstd /dev/ghostswap
expect "zramctl -a without -s: usage error" 2 "go with --size"
ctl -s 1G
expect "zramctl -s without a device or -f: usage error" 2 "--size needs the device, or --find"
ctl -f /dev/ghostswap
expect "zramctl -f with a device: usage error" 2 "--find excludes a device argument"
ctl -s 1G /dev/zram0
expect "zramctl -s another device: usage error" 2 "/dev/zram0: not a ghostswap device"
ctl -t many -s 1G /dev/ghostswap
expect "zramctl -t not a number: usage error" 2 "bad --streams 'many'"
ctl -r -s 1G /dev/ghostswap
expect "zramctl -r with -s: usage error" 2 "--reset excludes"
ctl_fault algorithm_params=EINVAL -s 1G -p "level=99" /dev/ghostswap
expect "zramctl -p the module refuses: exit 1, named" 1 "algorithm_params"

# setup refuses a device that holds data (mkswap would overwrite page 0),
# before it writes anything; a single page is let through only if it is
# a swap header, which a fake device cannot show.
mkfake "$F"
ctl setup --size 1G -a zstd
expect "setup: a device holding data: exit 4, nothing written" 4 \
	"/dev/ghostswap holds 400M of data, which mkswap would overwrite: reset it first ('ghostswapctl reset')"
same "setup: a device holding data: the files unchanged" \
	"$(cat "$F/sys/block/ghostswap/comp_algorithm" "$F/sys/block/ghostswap/disksize")" \
	"lzo lzo-rle [lz4] lz4hc zstd deflate
1099511627776"
printf '%8s %8s %8s %8s %8s %8s %8s %8s %8s\n' 4096 30 0 0 0 0 0 0 0 \
	>"$F/sys/block/ghostswap/mm_stat"
ctl setup
expect "setup: one page that is not a swap header: refused" 4 \
	"/dev/ghostswap holds 4K of data"

# The setup tests below run on a device without data.
FAKE_DATA=0

# setup's -p is zramctl's --algorithm-params; a number (the old
# --priority) is refused naming --priority.
mkfake "$F"
ctl setup --no-swapon -a zstd -p "level=3 dict=/etc/z.dict"
same "setup -p: algorithm_params after the algorithm" "$rc
$(grep -E 'comp_alg|algorithm_params' <<<"$tr")" "0
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/algorithm_params level=3 dict=/etc/z.dict"
ctl setup -p 10
expect "setup -p NUMBER (once --priority): refused, naming --priority" 2 \
	"setup: -p is --algorithm-params, as in zramctl; for the swap priority use --priority 10"
same "setup -p NUMBER: nothing written" "$tr" ""

# ------------------------------------------------------------------- setup

mkfake "$F"
ctl setup --size 1T --algorithm zstd --mem-limit 2G --priority 50
same "setup: the sysfs writes and commands, in order" "$tr" \
"run udevadm settle
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 1099511627776
write block/ghostswap/mem_limit 2147483648
run mkswap /dev/ghostswap
run swapon -p 50 /dev/ghostswap"
expect "setup: exit 0" 0
same "setup: the values reach the files" \
	"$(cat "$S/comp_algorithm" "$S/disksize" "$S/mem_limit")" \
	"zstd
1099511627776
2147483648"
grep -q '^dry run: swapon -p 50 /dev/ghostswap$' <<<"$out" &&
	grep -q '^/dev/ghostswap: 1T, swap on, priority 50$' <<<"$out" &&
	tap_ok "setup: GHOSTSWAP_SYSFS implies a dry run: commands printed, summary" ||
	tap_not_ok "setup: dry run output" "$out"

mkfake "$F"
ctl setup -s 3g -a lz4hc -m 0 -B /dev/vdb -w 1000 --priority 7 -Z
same "setup: every option (backing device, writeback limit, zswap off)" "$tr" \
"run udevadm settle
write module/zswap/parameters/enabled N
write block/ghostswap/backing_dev /dev/vdb
write block/ghostswap/comp_algorithm lz4hc
write block/ghostswap/disksize 3221225472
write block/ghostswap/mem_limit 0
write block/ghostswap/writeback_limit_enable 1
write block/ghostswap/writeback_limit 1000
run mkswap /dev/ghostswap
run swapon -p 7 /dev/ghostswap"
same "setup --disable-zswap: zswap off" "$(cat "$F/sys/module/zswap/parameters/enabled")" N

mkfake "$F"
for a in writeback_direct writeback_shrinker writeback_checksum writeback_encrypt writeback_batch_size; do : >"$S/$a"; done
ctl setup --writeback-direct incompressible --writeback-shrinker no \
	--writeback-checksum no --writeback-encrypt yes --writeback-batch-size 64 --no-swapon
same "setup --writeback-direct, --writeback-shrinker, --writeback-checksum, --writeback-encrypt, --writeback-batch-size" "$(grep write <<<"$tr")" \
"write block/ghostswap/writeback_direct incompressible
write block/ghostswap/writeback_shrinker 0
write block/ghostswap/writeback_checksum 0
write block/ghostswap/writeback_encrypt 1
write block/ghostswap/writeback_batch_size 64"
ctl setup --writeback-batch-size 257
expect "setup: --writeback-batch-size over 256" 2 "bad writeback_batch_size '257' (want 1..256 pages)"
ctl setup --writeback-batch-size 0
expect "setup: --writeback-batch-size 0" 2 "bad writeback_batch_size '0' (want 1..256 pages)"
ctl setup --writeback-checksum maybe
expect "setup: bad --writeback-checksum" 2 "bad value 'maybe' for writeback_checksum"
ctl setup --writeback-direct sometimes
expect "setup: bad --writeback-direct" 2 "bad writeback_direct 'sometimes' (want none, huge, incompressible or all)"
ctl setup --writeback-shrinker perhaps
expect "setup: bad --writeback-shrinker" 2 "bad value 'perhaps' for writeback_shrinker"

# --multi-page: written while the device holds no data and is not open,
# so first: before the backing device and disksize. Units and a backing
# device coexist (writeback splits a unit), so both are written together.
mkfake "$F"
echo 0 >"$S/multi_page"
ctl setup --multi-page 16 --size 1G -a zstd --no-swapon
same "setup --multi-page 16: multi_page written first, before disksize" "$rc
$tr" "0
run udevadm settle
write block/ghostswap/multi_page 16
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 1073741824
run mkswap /dev/ghostswap"
same "setup --multi-page 16: the value reaches the file" "$(cat "$S/multi_page")" 16
bad=
for v in 3 32 -1 abc 2 1 64 "" "16 "; do
	ctl setup --multi-page "$v" --size 1G
	[ $rc = 2 ] && [ -z "$tr" ] &&
		[ "$err" = "ghostswapctl: bad multi_page '$v' (want 0 (off), 4, 8 or 16)" ] ||
		bad="$bad [$v]: rc $rc $err"
done
same "setup: bad --multi-page (3, 32, -1, abc, ...): usage error naming 0, 4, 8, 16; nothing written" "$bad" ""
same "setup: bad --multi-page: multi_page unchanged" "$(cat "$S/multi_page")" 16
mkfake "$F"
echo 0 >"$S/multi_page"
ctl setup --multi-page 16 --backing-dev /dev/vdb --size 1G -a zstd --no-swapon
same "setup --multi-page 16 --backing-dev: both written, multi_page first, then backing_dev, before disksize" "$rc
$(grep write <<<"$tr")" "0
write block/ghostswap/multi_page 16
write block/ghostswap/backing_dev /dev/vdb
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 1073741824"
same "setup --multi-page 16 --backing-dev: both reach their files" \
	"$(cat "$S/multi_page" "$S/backing_dev")" "16
/dev/vdb"
mkfake "$F"
echo 0 >"$S/multi_page"
ctl setup --multi-page 8 --backing-dev "$tmp/backing.img" --backing-size 1G --size 1G --no-swapon
same "setup --multi-page 8 with a backing file: multi_page, the file mapped, disksize" "$rc
$(grep -E 'write|mapped|attach' <<<"$tr")" "0
write block/ghostswap/multi_page 8
run use $tmp/backing.img as it is, mapped by the module
write block/ghostswap/backing_dev $tmp/backing.img
write block/ghostswap/disksize 1073741824"
mkfake "$F"
echo 0 >"$S/multi_page"
echo /dev/vdc >"$S/backing_dev"
ctl setup --multi-page 4 --backing-dev /dev/vdb --no-swapon
same "setup --multi-page 4 --backing-dev over another backing device: multi_page, then none, then the new one" "$rc
$(grep write <<<"$tr")" "0
write block/ghostswap/multi_page 4
write block/ghostswap/backing_dev none
write block/ghostswap/backing_dev /dev/vdb"
echo /dev/vdc >"$S/backing_dev"
ctl setup --multi-page 16 --backing-dev none --no-swapon
same "setup --multi-page 16 --backing-dev none: multi_page, then the backing device detached" "$rc
$(grep write <<<"$tr")" "0
write block/ghostswap/multi_page 16
write block/ghostswap/backing_dev none"
mkfake "$F"
echo 0 >"$S/multi_page"
printf 'backing_dev = /dev/vdb\n' >"$tmp/mp.conf"
ctl setup -c "$tmp/mp.conf" --multi-page 16 --size 1G --no-swapon
same "setup --multi-page with the configuration's backing_dev: both written, multi_page first" "$rc
$(grep write <<<"$tr")" "0
write block/ghostswap/multi_page 16
write block/ghostswap/backing_dev /dev/vdb
write block/ghostswap/disksize 1073741824"
mkfake "$F"
echo 0 >"$S/multi_page"
ctl_fault multi_page=EBUSY setup --multi-page 16 --size 1G
expect "setup: EBUSY from multi_page: exit 4, clear message" 4 \
	"cannot set multi_page to 16: the device must hold no data and not be open (swapoff and reset first: 'ghostswapctl reset')"
same "setup: EBUSY from multi_page: settle, retry once, then stop before disksize" "$tr" \
"run udevadm settle
write block/ghostswap/multi_page 16
run udevadm settle
write block/ghostswap/multi_page 16"
same "setup: EBUSY from multi_page: the file unchanged" "$(cat "$S/multi_page")" 0
ctl_fault multi_page=EBUSY setup --multi-page 16 --backing-dev /dev/vdb --size 1G
expect "setup: EBUSY from multi_page with --backing-dev: exit 4" 4 \
	"cannot set multi_page to 16: the device must hold no data and not be open"
same "setup: EBUSY from multi_page with --backing-dev: stops before backing_dev" \
	"$(grep -c backing_dev <<<"$tr") $(cat "$S/backing_dev")" "0 none"
ctl_fault multi_page=EBUSY:1 setup --multi-page 16 --no-swapon
expect "setup: EBUSY from multi_page once (udev probing): the retry succeeds" 0
ctl_fault multi_page=EINVAL setup --multi-page 4
expect "setup: EINVAL from multi_page" 1 "multi_page: the module refused '4' (want 0, 4, 8 or 16)"
ctl_fault multi_page=EOPNOTSUPP setup --multi-page 8
expect "setup: another error from multi_page: exit 1, the file and the error named" 1 \
	"cannot write '8' to $F/sys/block/ghostswap/multi_page: Operation not supported"
mkfake "$F"
echo 16 >"$S/multi_page"
ctl_fault backing_dev=EOPNOTSUPP:1 setup --multi-page 16 --no-swapon --backing-dev "$tmp/backing.img" --backing-size 1G
same "setup: a file the module cannot map, with multi_page on: on a loop device instead, as without" "$rc
$(grep -E 'attach|mapped|write' <<<"$tr")
$(grep -c 'cannot map it as it maps a swap file: on a loop device instead' <<<"$out")" "0
write block/ghostswap/multi_page 16
run use $tmp/backing.img as it is, mapped by the module
write block/ghostswap/backing_dev $tmp/backing.img
run attach $tmp/backing.img to a loop device (direct I/O, autoclear)
write block/ghostswap/backing_dev /dev/loop-of-$tmp/backing.img
1"
rm "$S/multi_page"
ctl setup --multi-page 16
expect "setup --multi-page on a module without multi_page: exit 3" 3 "has no 'multi_page' attribute"

# mode zswap: zswap turned on, pages stored as they are, discards.
mkfake "$F"
for a in writeback_direct backing_discard; do : >"$S/$a"; done
echo N >"$F/sys/module/zswap/parameters/enabled"
ctl setup --mode zswap -B /dev/vdb --no-swapon
same "setup --mode zswap: zswap on, writeback_direct all, backing_discard 1" "$(grep write <<<"$tr")" \
"write module/zswap/parameters/enabled Y
write block/ghostswap/backing_dev /dev/vdb
write block/ghostswap/writeback_direct all
write block/ghostswap/backing_discard 1"
mkfake "$F"
for a in writeback_direct backing_discard; do : >"$S/$a"; done
echo Y >"$F/sys/module/zswap/parameters/enabled"
ctl setup --mode zswap --backing-discard no --no-swapon
same "setup --mode zswap without a backing device; zswap already on" "$rc $(grep write <<<"$tr")" \
"0 write block/ghostswap/writeback_direct all
write block/ghostswap/backing_discard 0"
mkfake "$F"
echo "none huge incompressible [all]" >"$S/writeback_direct"
echo Y >"$F/sys/module/zswap/parameters/enabled"
ctl status
same "status in mode zswap, debugfs unreadable: said so, no zswap warning" "$rc $(grep zswap <<<"$out$err")" \
"0 zswap in front: on (its pool: mount debugfs and run as root to see it)"
mkdir -p "$F/sys/kernel/debug/zswap"
echo 1048576 >"$F/sys/kernel/debug/zswap/pool_total_size"
echo 300 >"$F/sys/kernel/debug/zswap/stored_pages"
ctl status
same "status in mode zswap: zswap's pool beside ours" "$rc $(grep zswap <<<"$out$err")" \
"0 zswap in front: pool 1M, 300 pages stored"
echo N >"$F/sys/module/zswap/parameters/enabled"
ctl status
same "status in mode zswap with zswap off: a warning" "$rc $(grep -c 'mode zswap, but zswap is off' <<<"$err")" "0 1"
mkfake "$F"
for a in writeback_direct backing_discard; do : >"$S/$a"; done
echo N >"$F/sys/module/zswap/parameters/enabled"
ctl setup --mode zswap -Z --no-swapon
same "setup --mode zswap overrides --disable-zswap" "$rc $(grep -c 'disable_zswap is ignored' <<<"$out") $(cat "$F/sys/module/zswap/parameters/enabled")" "0 1 Y"
ctl setup --mode zswap --writeback-direct huge
expect "setup: --mode zswap with another writeback_direct" 2 "mode zswap stores pages as they are: writeback_direct must be all, not huge"
ctl setup --mode zram
expect "setup: bad --mode" 2 "bad mode 'zram' (want standalone or zswap)"
ctl setup --backing-discard sometimes
expect "setup: bad --backing-discard" 2 "bad value 'sometimes' for backing_discard"
mkfake "$F"
rm -rf "$F/sys/module/zswap"
ctl setup --mode zswap --no-swapon
expect "setup --mode zswap: a kernel without zswap" 1 "mode zswap: zswap is not in this kernel"

mkfake "$F"
echo /dev/vdb >"$S/backing_dev"
ctl setup --backing-dev /dev/vdb --writeback-limit none
same "setup: backing device already set: left alone; writeback limit none" "$tr" \
"run udevadm settle
write block/ghostswap/writeback_limit_enable 0
run mkswap /dev/ghostswap
run swapon -p 100 /dev/ghostswap"

mkfake "$F"
echo /dev/vdc >"$S/backing_dev"
ctl setup --backing-dev /dev/vdb --no-swapon
same "setup: another backing device: detached first" "$(grep write <<<"$tr")" \
"write block/ghostswap/backing_dev none
write block/ghostswap/backing_dev /dev/vdb"

mkfake "$F"
ctl setup
same "setup without settings: default priority 100, nothing written" "$tr" \
"run udevadm settle
run mkswap /dev/ghostswap
run swapon -p 100 /dev/ghostswap"

ctl setup --priority -1 --no-swapon
same "setup --no-swapon: mkswap only" "$tr" \
"run udevadm settle
run mkswap /dev/ghostswap"
ctl setup --priority -1
same "setup --priority -1: swapon without -p" "$(tail -n 1 <<<"$tr")" \
	"run swapon /dev/ghostswap"

ctl setup --size 1048577 --mem-limit none
same "setup: sizes rounded up to 4 KiB; mem_limit none is 0" \
	"$(grep write <<<"$tr")" \
"write block/ghostswap/disksize 1052672
write block/ghostswap/mem_limit 0"

ctl setup --size 17592186036224
same "setup: largest size (16T - 8K)" "$(grep write <<<"$tr")" \
	"write block/ghostswap/disksize 17592186036224"
ctl setup --size 1m
same "setup: smallest size, lower case suffix" "$(grep write <<<"$tr")" \
	"write block/ghostswap/disksize 1048576"

# What swapon costs the kernel's swap core (swapon_cost, as on 6.12 for
# 1 TiB): a warning above 2% of MemTotal, naming the module's default
# when that is smaller; setup goes on.
mkfake "$F"
printf 'MemTotal:        2000000 kB\nMemFree:          500000 kB\n' >"$F/proc/meminfo"
echo 851443712 >"$S/swapon_cost"
mkdir -p "$F/sys/module/ghostswap/parameters"
echo 4096000000 >"$F/sys/module/ghostswap/parameters/disksize"
ctl setup --size 1T
expect "setup: swapon costing 41% of RAM: exit 0" 0
same "setup: swapon costing 41% of RAM: one warning, the default named" "$err" \
"ghostswapctl: warning: swapon of /dev/ghostswap at 1T makes this kernel's swap core allocate 812M (41% of RAM), used or not: a smaller size costs less (the module's default here is 3.8G)"
same "setup: swapon costing 41% of RAM: mkswap and swapon still run" \
	"$(tail -n 2 <<<"$tr")" "run mkswap /dev/ghostswap
run swapon -p 100 /dev/ghostswap"
echo 1099511627776 >"$F/sys/module/ghostswap/parameters/disksize"
ctl setup --no-swapon
same "setup: the default is no smaller: the warning names none" "$err" \
"ghostswapctl: warning: swapon of /dev/ghostswap at 1T makes this kernel's swap core allocate 812M (41% of RAM), used or not: a smaller size costs less"
echo 25165824 >"$S/swapon_cost"
ctl setup --size 1T
same "setup: swapon costing 1% of RAM (7.x, 1 TiB): no warning" "$rc $err" "0 "
rm "$F/proc/meminfo"
echo 851443712 >"$S/swapon_cost"
ctl setup --size 1T
same "setup: no MemTotal: no warning" "$rc $err" "0 "

bad=
for v in "" abc -1 1Z 0 4095 1020K 0x100 "1 G" 18446744073709551616 \
	99999999999P 16T 17T "1G junk" 123456789012345678901234 "1.5.G" "ram" \
	"2 ** 3" "1//2" "min(1G" "max()" "(2G" "2G)" "1/0" "1G/(1-1)" "-(-(-1G))" \
	"ram2" "ramp * 2" "1e3"; do
	ctl setup --size "$v"
	[ $rc = 2 ] && [ -z "$tr" ] && grep -qF "bad size '$v' for size" <<<"$err" ||
		bad="$bad [$v]: rc $rc $err"
done
same "setup: bad sizes: usage error, nothing written" "$bad" ""
ctl setup --mem-limit 12Q
expect "setup: bad mem_limit" 2 "bad size '12Q' for mem_limit"
for v in 32768 -2 abc ""; do
	ctl setup --priority "$v"
	[ $rc = 2 ] || break
done
expect "setup: bad priority (32768, -2, abc, empty): usage error" 2 "bad priority"
ctl setup --writeback-limit -5
expect "setup: bad writeback limit" 2 "bad writeback_limit '-5'"
ctl setup --size
expect "setup: --size without a value" 2 "needs an argument"
ctl setup now
expect "setup: stray argument" 2 "unexpected argument 'now'"

swapped_on "$F"
ctl setup --size 1G
expect "setup: swapped on: device busy, exit 4" 4 "device is in use: swapoff and reset first"
same "setup: swapped on: nothing written" "$(grep write <<<"$tr")" ""

mkfake "$F"
ctl_fault disksize=EBUSY setup --size 1G
expect "setup: EBUSY from disksize: exit 4, clear message" 4 \
	"device is in use: swapoff and reset first ('ghostswapctl reset')"
same "setup: EBUSY: settle, retry once, then stop" "$tr" \
"run udevadm settle
write block/ghostswap/disksize 1073741824
run udevadm settle
write block/ghostswap/disksize 1073741824"
ctl_fault disksize=EBUSY:1 setup --size 1G
expect "setup: EBUSY once (udev probing): the retry succeeds" 0
ctl_fault comp_algorithm=EINVAL setup --algorithm nosuch
expect "setup: unknown algorithm: lists the available ones" 1 \
	"no such algorithm 'nosuch' (available: lzo lzo-rle lz4 lz4hc zstd deflate)"
ctl_fault comp_algorithm=EBUSY setup --algorithm zstd
expect "setup: EBUSY from comp_algorithm" 4 "device is in use"
ctl_fault backing_dev=EBUSY setup --backing-dev /dev/vdb
expect "setup: EBUSY from backing_dev" 4 "cannot set backing device '/dev/vdb': busy"
ctl_fault backing_dev=ENOTBLK setup --backing-dev /dev/null
expect "setup: backing device not a block device" 1 "'/dev/null' is neither a block device, a regular file nor a directory"
ctl setup --backing-dev /tmp --backing-size 1G
expect "setup: a backing directory with backing_size: usage error" 2 "backing_dev /tmp is a directory: it grows by chunk files as writeback needs, backing_size does not apply"
same "setup: a backing directory with backing_size: nothing written" "$(grep -c write <<<"$tr")" 0
mkfake "$F"
ctl setup --no-swapon --backing-dev /tmp
same "setup: a backing directory: written as it is, for the module's chunk files" "$rc
$(grep -E 'attach|mapped|backing_dev' <<<"$tr")" "0
write block/ghostswap/backing_dev /tmp"
mkfake "$F"
ctl setup --no-swapon --backing-dev "$tmp/backing.img" --backing-size "ram / 2"
expect "setup: --backing-size as an expression needs MemTotal" 2 "ram is unknown"
ctl setup --no-swapon --backing-dev "$tmp/backing.img" --backing-size 1G
same "setup: a backing file: written as it is, for the module to map (dry run)" "$rc
$(grep -E 'attach|mapped|backing_dev' <<<"$tr")" "0
run use $tmp/backing.img as it is, mapped by the module
write block/ghostswap/backing_dev $tmp/backing.img"
mkfake "$F"
: >"$S/backing_discard"
ctl setup --no-swapon --backing-dev "$tmp/backing.img" --backing-size 1G --backing-discard yes
same "setup: a sparse backing file (backing_discard): attached to a loop device, that device written (dry run)" "$rc
$(grep -E 'attach|mapped|backing_dev ' <<<"$tr")" "0
run attach $tmp/backing.img to a loop device (direct I/O, autoclear)
write block/ghostswap/backing_dev /dev/loop-of-$tmp/backing.img"
mkfake "$F"
ctl_fault backing_dev=EOPNOTSUPP:1 setup --no-swapon --backing-dev "$tmp/backing.img" --backing-size 1G
same "setup: a file the module cannot map: on a loop device instead, and says so" "$rc
$(grep -E 'attach|mapped|backing_dev' <<<"$tr")
$(grep -c 'cannot map it as it maps a swap file: on a loop device instead' <<<"$out")" "0
run use $tmp/backing.img as it is, mapped by the module
write block/ghostswap/backing_dev $tmp/backing.img
run attach $tmp/backing.img to a loop device (direct I/O, autoclear)
write block/ghostswap/backing_dev /dev/loop-of-$tmp/backing.img
1"
printf 'backing_dev = %s\nbacking_size = 2G\nbacking_discard = yes\n' "$tmp/backing.img" >"$tmp/backing.conf"
mkfake "$F"
: >"$S/backing_discard"
ctl setup --no-swapon -c "$tmp/backing.conf"
same "config: backing_dev a file, backing_size, backing_discard" "$rc $(grep -c 'attach' <<<"$tr")" "0 1"
mkfake "$F"
ctl_fault backing_dev=ENOENT setup --backing-dev /dev/nosuch
expect "setup: ENOENT from backing_dev: no such device" 1 "no such device '/dev/nosuch'"
ctl_fault backing_dev=EINVAL setup --backing-dev /dev/ghostswap
expect "setup: EINVAL from backing_dev" 1 "'/dev/ghostswap' cannot be a backing device"
ctl_fault disksize=EINVAL setup --size 1G
expect "setup: the module refuses a size" 1 "bad size '1073741824' for disksize"
ctl_fault mem_limit=EACCES setup --mem-limit 1G
expect "setup: permission denied" 1 "permission denied writing $F/sys/block/ghostswap/mem_limit"
ctl_fault enabled=EPERM setup --disable-zswap
expect "setup: zswap cannot be disabled" 1 "cannot disable zswap"

rm "$S/disksize"
mkdir "$S/disksize"
ctl setup --size 1G
expect "setup: a directory in place of disksize (EISDIR)" 1 "is a directory"

mkfake "$F" old
ctl setup --backing-dev /dev/vdb
expect "setup --backing-dev on an older module: exit 3" 3 "has no 'backing_dev' attribute"
ctl setup --writeback-limit 10
expect "setup --writeback-limit on an older module: exit 3" 3 "has no 'writeback_limit_enable' attribute"
rm -rf "$F/sys/module/zswap"
ctl setup --disable-zswap --no-swapon
same "setup --disable-zswap without zswap in the kernel: fine" "$rc $(grep -c 'zswap is not in this kernel' <<<"$out")" "0 1"

rm -rf "$S"
ctl setup --size 1G
expect "setup: module not loaded: modprobe (dry run), then exit 3" 3 "ghostswap module not loaded"
same "setup: module not loaded: runs modprobe ghostswap first" "$(head -n 1 <<<"$tr")" \
	"run modprobe ghostswap"

# The commands for real (GHOSTSWAP_DRYRUN=0), through stand-ins on PATH
# that record their arguments; modprobe creates the fake device.
bin=$tmp/bin
mkdir -p "$bin"
for c in udevadm mkswap swapon swapoff mount; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/cmds"\nexit ${FAIL_%s:-0}\n' \
		"$c" "$tmp" "$c" >"$bin/$c"
done
printf '#!/bin/sh\necho "modprobe $*" >>"%s/cmds"\n[ -n "$FAIL_modprobe" ] && exit 1\ncp -r "%s/template" "%s"\n' \
	"$tmp" "$tmp" "$S" >"$bin/modprobe"
chmod 755 "$bin"/*
mkfake "$tmp/tpl"
cp -r "$tmp/tpl/sys/block/ghostswap" "$tmp/template"
mkfake "$F"
rm -rf "$S"
: >"$tmp/cmds"
PATH=$bin:$PATH GHOSTSWAP_DRYRUN=0 ctl setup --size 2G
same "setup, commands for real: modprobe, settle, mkswap, swapon" "$rc
$(cat "$tmp/cmds")" \
"0
modprobe ghostswap
udevadm settle
mkswap /dev/ghostswap
swapon -p 100 /dev/ghostswap"
same "setup, commands for real: the device configured" "$(cat "$S/disksize")" 2147483648
rm -rf "$S"
FAIL_modprobe=1 PATH=$bin:$PATH GHOSTSWAP_DRYRUN=0 ctl setup
expect "setup: modprobe fails: exit 3" 3 "ghostswap module not loaded and 'modprobe ghostswap' failed"
mkfake "$F"
FAIL_swapon=255 PATH=$bin:$PATH GHOSTSWAP_DRYRUN=0 ctl setup
expect "setup: swapon fails: exit 1" 1 "swapon /dev/ghostswap failed (exit 255)"
FAIL_mkswap=1 PATH=$bin:$PATH GHOSTSWAP_DRYRUN=0 ctl setup
expect "setup: mkswap fails: exit 1" 1 "mkswap /dev/ghostswap failed (exit 1)"
GHOSTSWAP_DRYRUN=1 GHOSTSWAP_SYSFS=$F/sys GHOSTSWAP_PROC=$F/proc \
	"$CTL" setup --no-swapon >"$F/out" 2>&1
same "GHOSTSWAP_DRYRUN=1: commands printed" "$(grep '^dry run' "$F/out")" \
"dry run: udevadm settle
dry run: mkswap /dev/ghostswap"

# -------------------------------------------------------------------- dict

# A fake process 4242: an anonymous mapping of 64 pages at 0x10000000 (text
# pages, but page 3 same-filled and page 5 not in memory), a file-backed
# one (not sampled), /proc/4242/mem and pagemap to read them from.
mkproc() {
	local p=$1/proc/4242
	mkdir -p "$p"
	printf '%s\n' "10000000-10040000 rw-p 00000000 00:00 0 " \
		"20000000-20010000 rw-p 00000000 08:01 1234 /usr/lib/libfake.so" \
		>"$p/maps"
	python3 - "$p" <<-'PY'
	import struct, sys
	d = sys.argv[1]
	base = 0x10000000
	with open(d + "/mem", "wb") as f:
	    for i in range(64):
	        f.seek(base + i * 4096)
	        if i == 3:
	            f.write(b"\xab" * 4096)
	        else:
	            f.write((("page %d of swap text, " % i) * 200).encode()[:4096])
	        f.seek(0x20000000 + i * 4096 if i < 16 else 0)
	with open(d + "/pagemap", "wb") as f:
	    for i in range(64):
	        f.seek((base // 4096 + i) * 8)
	        f.write(struct.pack("<Q", 0 if i == 5 else 1 << 63))
	PY
}
mkproc "$F"
ctl dict
expect "dict: no output file is a usage error" 2 "want one output file"
ctl dict --pages 5 "$tmp/d"
expect "dict: --pages below 10 refused" 2 "bad --pages '5'"
for sz in 100 2M x; do
	ctl dict --size $sz "$tmp/d"
	expect "dict: --size $sz refused" 2 "bad --size '$sz'"
done
ctl dict --pages 1000 "$tmp/dict"
same "dict: the present, not same-filled anonymous pages sampled, zstd --train run" \
	"$rc $(grep -c '^dict: 62 pages sampled' <<<"$out") $(grep -c 'run zstd --train -r /tmp/ghostswap-dict\.[A-Za-z0-9]* -o '"$tmp"'/dict --maxdict=65536 -q -f' <<<"$tr")" \
	"0 1 1"
same "dict: its samples removed" "$(ls -d /tmp/ghostswap-dict.* 2>/dev/null | wc -l)" 0
rm -rf "$F/proc/4242"
ctl dict "$tmp/dict"
expect "dict: nothing to sample is a failure" 1 "only 0 pages to sample"
if command -v zstd >/dev/null; then
	mkproc "$F"
	GHOSTSWAP_PROC=$F/proc GHOSTSWAP_DRYRUN=0 "$CTL" dict --pages 60 \
		--size 8K "$tmp/real.dict" >"$F/out" 2>&1
	same "dict: zstd trains a dictionary of at most --size bytes" \
		"$? $([ -s "$tmp/real.dict" ] && [ "$(stat -c %s "$tmp/real.dict")" -le 8192 ] && echo sized)" \
		"0 sized"
	rm -rf "$F/proc/4242"
else
	tap_skip "dict: zstd trains a dictionary" "no zstd"
fi

# ------------------------------------------------------------------ config

cfg=$tmp/gs.conf
cat >"$cfg" <<'EOF'
# a comment

size = 1T
  algorithm=zstd   # trailing comment
mem_limit = 512M
backing_dev = /dev/vdb
priority = 10
disable_zswap = yes
swapon = yes
writeback_limit = 4096
writeback_direct = huge
writeback_shrinker = yes
writeback_checksum = yes
writeback_encrypt = no
writeback_batch_size = 128
idle_writeback = 3600
EOF
mkfake "$F"
for a in writeback_direct writeback_shrinker writeback_checksum writeback_encrypt writeback_batch_size; do : >"$S/$a"; done
ctl setup --config "$cfg"
same "setup --config: every key" "$tr" \
"run udevadm settle
write module/zswap/parameters/enabled N
write block/ghostswap/backing_dev /dev/vdb
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 1099511627776
write block/ghostswap/mem_limit 536870912
write block/ghostswap/writeback_limit_enable 1
write block/ghostswap/writeback_limit 4096
write block/ghostswap/writeback_direct huge
write block/ghostswap/writeback_shrinker 1
write block/ghostswap/writeback_checksum 1
write block/ghostswap/writeback_encrypt 0
write block/ghostswap/writeback_batch_size 128
run mkswap /dev/ghostswap
run swapon -p 10 /dev/ghostswap"
mkfake "$F"
ctl setup -c "$cfg" --size 2G -a lz4 --priority 20 --no-swapon
same "setup --config: command line options win" "$(grep -E 'disksize|comp_alg|swapon' <<<"$tr")" \
"write block/ghostswap/comp_algorithm lz4
write block/ghostswap/disksize 2147483648"
printf 'size = 1G\nsize = 2G\nswapon = no\n' >"$cfg"
ctl setup -c "$cfg"
same "config: a key given twice takes the last value; swapon = no" "$tr" \
"run udevadm settle
write block/ghostswap/disksize 2147483648
run mkswap /dev/ghostswap"

mkfake "$F"
ctl setup --config "$top/etc/ghostswap.conf"
same "the example etc/ghostswap.conf is valid" "$rc
$tr" \
"0
run udevadm settle
write module/zswap/parameters/enabled N
write block/ghostswap/comp_algorithm lz4
run mkswap /dev/ghostswap
run swapon -p 100 /dev/ghostswap"

# cfgerr DESC LINE_NO MESSAGE CONTENT: the file is refused, FILE:LINE named.
cfgerr() {
	printf '%b' "$4" >"$cfg"
	ctl setup --config "$cfg"
	if [ $rc = 2 ] && [ -z "$tr" ] && [ "$err" = "ghostswapctl: $cfg:$2: $3" ]; then
		tap_ok "config: $1"
	else
		tap_not_ok "config: $1" "exit $rc, trace '$tr'" "stderr: $err" \
			"want: ghostswapctl: $cfg:$2: $3"
	fi
}
cfgerr "unknown key, with file:line" 3 "unknown key 'sise'" \
	"# x\nsize = 1G\nsise = 2G\n"
cfgerr "line without =" 2 "expected 'key = value'" "size = 1G\nalgorithm zstd\n"
cfgerr "no key" 1 "expected 'key = value'" " = 5\n"
cfgerr "empty value" 1 "no value for 'size'" "size =   # nothing\n"
cfgerr "bad size" 2 "bad size '1Q' for size: unexpected character after a number at 'Q' (column 2) (want bytes with an optional suffix K M G T P, or an expression of ram in MiB)" \
	"\nsize = 1Q\n"
cfgerr "size out of range" 1 "bad size '0' for size (want 1M to 16T-8K: decimal bytes, optional suffix K M G T P; or an expression of ram in MiB)" \
	"size = 0\n"
cfgerr "bad boolean" 1 "bad value 'maybe' for disable_zswap (want yes or no)" \
	"disable_zswap = maybe\n"
cfgerr "bad priority" 1 "bad priority '99999' (want -1..32767)" "priority = 99999\n"
cfgerr "bad idle_writeback" 1 "bad idle_writeback '0' (want seconds, at least 1)" \
	"idle_writeback = 0\n"
cfgerr "keys are case sensitive" 1 "unknown key 'Size'" "Size = 1G\n"
cfgerr "algorithm with a blank" 1 "bad value 'lz4 zstd' for algorithm" \
	"algorithm = lz4 zstd\n"
cfgerr "bad multi_page" 2 "bad multi_page '32' (want 0 (off), 4, 8 or 16)" \
	"size = 1G\nmulti_page = 32\n"
cfgerr "multi_page not a number" 1 "bad multi_page 'on' (want 0 (off), 4, 8 or 16)" \
	"multi_page = on\n"

# multi_page from the file: before backing_dev and disksize.
mkfake "$F"
echo 0 >"$S/multi_page"
printf 'size = 2G\nalgorithm = zstd\nmulti_page = 8\n' >"$cfg"
ctl setup --no-swapon -c "$cfg"
same "config: multi_page written before comp_algorithm and disksize" "$rc
$(grep write <<<"$tr")" "0
write block/ghostswap/multi_page 8
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 2147483648"
ctl setup --no-swapon -c "$cfg" --multi-page 0
same "config: --multi-page wins over the file's multi_page" "$(grep multi_page <<<"$tr")" \
	"write block/ghostswap/multi_page 0"
ctl config -c "$cfg"
same "config -c: multi_page shown with its line" "$(grep multi_page <<<"$out")" \
	"multi_page = 8                  # $cfg:3"
printf 'size = 1G\nbacking_dev = /dev/vdb\nmulti_page = 16\n' >"$cfg"
ctl setup --no-swapon -c "$cfg"
same "config: multi_page with backing_dev: both written, multi_page first, before disksize" "$rc
$(grep write <<<"$tr")" "0
write block/ghostswap/multi_page 16
write block/ghostswap/backing_dev /dev/vdb
write block/ghostswap/disksize 1073741824"
ctl setup --config "$tmp/nonexistent.conf"
expect "config: a missing file: usage error" 2 "cannot read $tmp/nonexistent.conf"

# compression_algorithm, zram-generator's form: the primary with its
# parameters, then the secondary algorithms, priority 1, 2, 3.
mkfake "$F"
: >"$S/recomp_algorithm"
printf 'compression_algorithm = lz4 zstd(level=8,dict=/etc/z.dict) deflate\n' >"$cfg"
ctl setup --no-swapon -c "$cfg"
same "compression_algorithm: primary, then recomp_algorithm and params by priority" "$rc
$(grep -E 'comp_alg|algorithm_params|recomp' <<<"$tr")" "0
write block/ghostswap/comp_algorithm lz4
write block/ghostswap/recomp_algorithm algo=zstd priority=1
write block/ghostswap/algorithm_params priority=1 level=8 dict=/etc/z.dict
write block/ghostswap/recomp_algorithm algo=deflate priority=2"
printf 'compression_algorithm = zstd(level=3)\n' >"$cfg"
ctl setup --no-swapon -c "$cfg"
same "compression_algorithm: the primary's parameters to algorithm_params" "$(grep -E 'comp_alg|algorithm_params|recomp' <<<"$tr")" \
"write block/ghostswap/comp_algorithm zstd
write block/ghostswap/algorithm_params level=3"
cfgerr "compression_algorithm: recompress's parameters refused, the reason said" 1 \
	"compression_algorithm: 'type=idle' are recompress parameters: ghostswap recompresses idle pages by itself (recompress_auto, see ghostswap(4))" \
	"compression_algorithm = zstd(level=3) lz4(type=idle)\n"
cfgerr "compression_algorithm: parameters without an algorithm" 1 \
	"compression_algorithm: parameters 'level=1' without an algorithm" \
	"compression_algorithm = zstd (level=1)\n"
cfgerr "compression_algorithm: four secondaries" 1 \
	"compression_algorithm: at most 3 secondary algorithms" \
	"compression_algorithm = lz4 zstd deflate lz4hc lzo\n"
cfgerr "compression_algorithm: an unclosed parenthesis" 1 \
	"compression_algorithm: 'zstd(level=3': want ALG(PARAMS) without blanks" \
	"compression_algorithm = zstd(level=3\n"

# Sizes as expressions of ram (MiB), zram-generator's grammar. MemTotal
# 2000000 kB is 1953.125 MiB.
mkfake "$F"
printf 'MemTotal:        2000000 kB\n' >"$F/proc/meminfo"
# size EXPR: what setup writes to disksize for it, or its error.
size_of() {
	ctl setup --no-swapon --size "$1"
	if [ $rc = 0 ]; then sed -n 's|^write block/ghostswap/disksize ||p' <<<"$tr"; else echo "$err"; fi
}
got=
for e in "ram * 4" "RAM*4" "min(ram * 4, 4G)" "max(ram / 2, 1G)" "ram / 2" \
	"2 + 3 * 4" "(2 + 3) * 4" "-ram + 4000" "ram * 0.25" "min(8G, 1T, ram)" \
	"1.5G" "512K * 4" "max(1, 2, 3) - 1" " ram "; do
	got="$got$e = $(size_of "$e")
"
done
same "setup --size: expressions of ram, in MiB" "$got" \
"ram * 4 = 8192000000
RAM*4 = 8192000000
min(ram * 4, 4G) = 4294967296
max(ram / 2, 1G) = 1073741824
ram / 2 = 1024000000
2 + 3 * 4 = 14680064
(2 + 3) * 4 = 20971520
-ram + 4000 = 2146304000
ram * 0.25 = 512000000
min(8G, 1T, ram) = 2048000000
1.5G = 1610612736
512K * 4 = 2097152
max(1, 2, 3) - 1 = 2097152
 ram  = 2048000000
"
ctl setup --no-swapon --size "ram / 3"
same "setup --size: an expression is rounded up to 4 KiB" "$(grep disksize <<<"$tr")" \
	"write block/ghostswap/disksize 682668032"
ctl setup --size "ram - 4000"
expect "setup --size: an expression below 1M: usage error, nothing written" 2 \
	"bad size 'ram - 4000' for size: it is -2146304000 bytes here (ram = 1953 MiB); want 1M to 16T-8K"
same "setup --size: an expression below 1M: nothing written" "$tr" ""
ctl setup --size "ram * 10000"
expect "setup --size: an expression above 16T-8K: usage error" 2 "want 1M to 16T-8K"
ctl setup --size "min(ram, 1/0)"
expect "setup --size: division by zero, where" 2 \
	"bad size 'min(ram, 1/0)' for size: division by zero at '0)' (column 12)"
ctl setup --size "ram + foo"
expect "setup --size: an unknown name, where" 2 \
	"bad size 'ram + foo' for size: unknown name (want ram, min or max) at 'foo' (column 7)"
deep=$(printf '(%.0s' $(seq 40))1$(printf ')%.0s' $(seq 40))
ctl setup --size "$deep"
expect "setup --size: nesting too deep is an error, not a crash" 2 "nested too deeply"
ctl setup --no-swapon --mem-limit "min(ram / 2, 8G)"
same "setup --mem-limit: an expression" "$rc $(grep mem_limit <<<"$tr")" \
	"0 write block/ghostswap/mem_limit 1024000000"
ctl setup --no-swapon --mem-limit "max(ram - 2000, 0)"
same "setup --mem-limit: an expression of 0 is no limit" "$rc $(grep mem_limit <<<"$tr")" \
	"0 write block/ghostswap/mem_limit 0"
printf 'size = min(ram * 4, 64G)\nmem_limit = ram / 4\n' >"$cfg"
ctl setup --no-swapon --config "$cfg"
same "config: size and mem_limit as expressions" "$(grep -E 'disksize|mem_limit' <<<"$tr")" \
"write block/ghostswap/disksize 8192000000
write block/ghostswap/mem_limit 512000000"
rm "$F/proc/meminfo"
ctl setup --size "ram * 2"
expect "setup --size: ram without MemTotal: usage error" 2 "ram is unknown (no MemTotal in meminfo)"
ctl setup --no-swapon --size "4G / 2"
same "setup --size: an expression without ram needs no MemTotal" "$rc $(grep disksize <<<"$tr")" \
	"0 write block/ghostswap/disksize 2147483648"

# The system's configuration: main file and drop-ins in /etc, /run,
# /usr/local/lib, /usr/lib (under GHOSTSWAP_CONFROOT), as systemd orders
# them; the kernel command line's systemd.ghostswap.
R=$tmp/confroot
rm -rf "$R"
mkdir -p "$R/usr/lib/ghostswap.conf.d" "$R/usr/local/lib" "$R/run/ghostswap.conf.d" \
	"$R/etc/ghostswap.conf.d"
printf 'size = 3G\nalgorithm = lz4\npriority = 5\nmem_limit = 100M\n' >"$R/usr/lib/ghostswap.conf"
printf 'priority = 6\ndisable_zswap = yes\n' >"$R/usr/local/lib/ghostswap.conf"
printf 'algorithm = zstd\n' >"$R/usr/lib/ghostswap.conf.d/20-vendor.conf"
printf 'size = 5G\n' >"$R/usr/lib/ghostswap.conf.d/60-vendor.conf"
printf 'size = 4G\n' >"$R/run/ghostswap.conf.d/50-run.conf"
printf 'size = 6G\npriority = 8\n' >"$R/etc/ghostswap.conf.d/50-run.conf"
printf 'mem_limit = ram / 8\n' >"$R/etc/ghostswap.conf.d/30-local.conf"
printf 'not a conf file\n' >"$R/etc/ghostswap.conf.d/README"
mkfake "$F"
printf 'MemTotal:        2000000 kB\n' >"$F/proc/meminfo"
echo "BOOT_IMAGE=/vmlinuz root=/dev/vda quiet" >"$F/proc/cmdline"
# ctlr ARGS...: ctl with the configuration under $R.
ctlr() { GHOSTSWAP_CONFROOT=$R ctl "$@"; }
ctlr setup --system-config
same "setup -C: main file from the highest directory, drop-ins by name, same name hidden" \
	"$rc
$(grep -E 'zswap|comp_alg|disksize|mem_limit|swapon' <<<"$tr")" \
"0
write module/zswap/parameters/enabled N
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 5368709120
write block/ghostswap/mem_limit 256000000
run swapon -p 8 /dev/ghostswap"
ctlr config
same "config: the files in reading order, each key with its origin" "$rc
$out" \
"0
# setup --system-config reads, in this order:
#   $R/usr/local/lib/ghostswap.conf
#   $R/usr/lib/ghostswap.conf.d/20-vendor.conf
#   $R/etc/ghostswap.conf.d/30-local.conf
#   $R/etc/ghostswap.conf.d/50-run.conf
#   $R/usr/lib/ghostswap.conf.d/60-vendor.conf
size = 5G                       # $R/usr/lib/ghostswap.conf.d/60-vendor.conf:1
algorithm = zstd                # $R/usr/lib/ghostswap.conf.d/20-vendor.conf:1
mem_limit = ram / 8             # $R/etc/ghostswap.conf.d/30-local.conf:1; here 244.1M (256000000 bytes)
priority = 8                    # $R/etc/ghostswap.conf.d/50-run.conf:2
disable_zswap = yes             # $R/usr/local/lib/ghostswap.conf:2"
ln -s /dev/null "$R/etc/ghostswap.conf.d/60-vendor.conf"
ln -s /dev/null "$R/etc/ghostswap.conf"
ctlr setup -C
same "setup -C: links to /dev/null mask the main file and a vendor drop-in" \
	"$rc
$(grep -E 'zswap|comp_alg|disksize|mem_limit|swapon' <<<"$tr")" \
"0
write block/ghostswap/comp_algorithm zstd
write block/ghostswap/disksize 6442450944
write block/ghostswap/mem_limit 256000000
run swapon -p 8 /dev/ghostswap"
ctlr setup -C --size 1G --priority 9
same "setup -C: command line options win over the files" \
	"$(grep -E 'disksize|swapon' <<<"$tr")" \
"write block/ghostswap/disksize 1073741824
run swapon -p 9 /dev/ghostswap"
printf 'size = lots\n' >"$R/run/ghostswap.conf.d/40-bad.conf"
ctlr setup -C
expect "setup -C: an error names the drop-in and line, nothing written" 2 \
	"$R/run/ghostswap.conf.d/40-bad.conf:1: bad size 'lots' for size"
same "setup -C: an error in a drop-in: nothing written" "$tr" ""
ctlr config
expect "config: an error in a drop-in: exit 2, named" 2 "$R/run/ghostswap.conf.d/40-bad.conf:1"
rm "$R/run/ghostswap.conf.d/40-bad.conf"
ctlr setup -C -c "$cfg"
expect "setup: --config and --system-config together: usage error" 2 "exclude each other"
echo "quiet systemd.ghostswap=0" >"$F/proc/cmdline"
ctlr setup -C
same "setup -C: systemd.ghostswap=0 turns it off: says so, does nothing, exit 0" \
	"$rc|$out|$tr" "0|systemd.ghostswap=0 on the kernel command line: the boot setup is off|"
ctlr setup --size 2G --no-swapon
same "setup without -C: systemd.ghostswap=0 does not apply" "$rc $(grep disksize <<<"$tr")" \
	"0 write block/ghostswap/disksize 2147483648"
ctlr config
same "config: names the switch when it is off" "$(grep systemd.ghostswap <<<"$out")" \
	"# systemd.ghostswap=0 on the kernel command line: the boot setup is off"
printf 'idle_writeback = 60\n' >"$R/etc/ghostswap.conf.d/70-wb.conf"
ctlr writeback -C
same "writeback -C: systemd.ghostswap=0: nothing written" "$rc|$tr" "0|"
echo "systemd.ghostswap=off systemd.ghostswap=yes" >"$F/proc/cmdline"
ctlr writeback -C
same "writeback -C: idle_writeback from a drop-in; the last switch counts" "$rc
$tr" "0
write block/ghostswap/idle 60
write block/ghostswap/writeback idle"
echo "systemd.ghostswap=perhaps" >"$F/proc/cmdline"
ctlr setup -C --no-swapon
same "setup -C: a switch that is not a boolean: warned about, ignored" "$rc|$err" \
	"0|ghostswapctl: warning: kernel command line: ignoring 'systemd.ghostswap=perhaps' (want systemd.ghostswap=0 or =1)"
rm -rf "$R"/etc "$R"/run "$R"/usr
echo "systemd.ghostswap" >"$F/proc/cmdline"
ctlr setup -C
same "setup -C: no files (systemd.ghostswap): the module's defaults" "$rc
$tr" "0
run udevadm settle
run mkswap /dev/ghostswap
run swapon -p 100 /dev/ghostswap"
ctlr config
same "config: no files" "$rc
$out" "0
# no configuration files: setup --system-config uses the defaults
# systemd.ghostswap on the kernel command line: the boot setup runs with or without files"
ctl config -c "$top/etc/ghostswap.conf"
same "config -c: one file's keys (the example)" "$rc
$(cut -d'#' -f1 <<<"$out" | sed 's/ *$//')" "0

algorithm = lz4
priority = 100
disable_zswap = yes"

# ------------------------------------------------------------------ doctor
# From here on the fake device holds data again.
FAKE_DATA=1

# Fake dkms, systemctl and journalctl answering from $DOC_*; a fake root
# for the udev rule and the configuration.
dbin=$tmp/doctor-bin
mkdir -p "$dbin"
printf '#!/bin/sh\necho "$DOC_DKMS"\n' >"$dbin/dkms"
printf '#!/bin/sh\ncase $1 in is-enabled) echo "$DOC_ENABLED" ;; is-active) echo "$DOC_ACTIVE" ;; esac\n' >"$dbin/systemctl"
printf '#!/bin/sh\necho "$DOC_LOG"\n' >"$dbin/journalctl"
chmod 755 "$dbin"/*
D=$tmp/doctor-root
rm -rf "$D"
mkdir -p "$D/lib/udev/rules.d" "$D/etc"
: >"$D/lib/udev/rules.d/60-ghostswap.rules"
printf 'size = 8G\n' >"$D/etc/ghostswap.conf"
mkfake "$F"
mkdir -p "$F/sys/module/ghostswap"
echo "$ver" >"$F/sys/module/ghostswap/version"
echo "quiet" >"$F/proc/cmdline"
swapped_on "$F" 100
printf '%-40s%s\t%s\t%s\t%s\n' /dev/sda2 partition 1000 0 -2 >>"$F/proc/swaps"
# doctor: ctl doctor with the fakes.
doctor() {
	PATH=$dbin:$PATH GHOSTSWAP_CONFROOT=$D ctl doctor
}
DOC_DKMS="ghostswap/$ver, $(uname -r), x86_64: installed" DOC_ENABLED=enabled \
	DOC_ACTIVE=active doctor
same "doctor: a healthy chain: every check ok, exit 0" "$rc
$out" "0
ok    dkms: ghostswap/$ver, $(uname -r), x86_64: installed
ok    module: version $ver loaded, as the tools
ok    swap: /dev/ghostswap on, priority 100, used first
ok    backing device: none (no writeback tier in use)
ok    udev: /lib/udev/rules.d/60-ghostswap.rules
ok    systemd: ghostswap.service enabled
ok    configuration: 1 file, valid ('ghostswapctl config' shows them)
ok    zswap: off
ok    hibernation: not available on this machine (no 'disk' in /sys/power/state)"
# A backing directory: its chunks in place; then it cannot grow.
mkdir -p "$tmp/chunks"
echo "$tmp/chunks" >"$S/backing_dev"
echo "100 7 100 1 4896 0 0 0 0 0 0 0 0 32768 0 0" >"$S/bd_stat"
DOC_DKMS="ghostswap/$ver, $(uname -r), x86_64: installed" DOC_ENABLED=enabled DOC_ACTIVE=active doctor
same "doctor: a backing directory: its chunk files in place" "$rc
$(grep backing <<<"$out")" "0
ok    backing device: $tmp/chunks (a directory of chunk files the module adds and maps: block I/O on its filesystem's disk), no I/O errors
ok    backing directory: 128 MiB of chunk files in place, 0 MiB used"
echo "100 7 100 1 4896 0 0 0 0 0 0 0 0 16384 3 28" >"$S/bd_stat"
DOC_DKMS="ghostswap/$ver, $(uname -r), x86_64: installed" DOC_ENABLED=enabled DOC_ACTIVE=active doctor
same "doctor: a backing directory on a full filesystem: named, exit 0" "$rc
$(grep 'backing directory' <<<"$out")" "0
warn  backing directory: $tmp/chunks cannot take a new chunk file (its filesystem is full; 3 times so far): writeback takes no more pages than the 64 MiB in place hold, the rest stay in memory"
echo "100 7 100 1 4896 0 0 0 0 0 0 0 0 16384 1 11" >"$S/bd_stat"
DOC_DKMS="ghostswap/$ver, $(uname -r), x86_64: installed" DOC_ENABLED=enabled DOC_ACTIVE=active doctor
same "doctor: a backing directory on a frozen filesystem" "$(grep -o '([^;]*;' <<<"$out" | grep frozen)" "(its filesystem is frozen;"
echo none >"$S/backing_dev"
echo 0.0.9 >"$F/sys/module/ghostswap/version"
printf '%-40s%s\t%s\t%s\t%s\n' /dev/zram0 partition 1000 0 100 >>"$F/proc/swaps"
printf '%-40s%s\t%s\t%s\t%s\n' '/swap\040file' file 1000 0 150 >>"$F/proc/swaps"
echo Y >"$F/sys/module/zswap/parameters/enabled"
echo /dev/null >"$S/backing_dev"
rm "$D/lib/udev/rules.d/60-ghostswap.rules"
echo "quiet systemd.ghostswap=0" >"$F/proc/cmdline"
DOC_DKMS="" DOC_ENABLED=disabled DOC_ACTIVE=failed \
	DOC_LOG="ghostswapctl: /etc/ghostswap.conf:1: bad size" doctor
same "doctor: each fault found, named, with what to do; exit 1" "$rc
$out" "1
FAIL  dkms: no ghostswap build installed for kernel $(uname -r): 'dkms autoinstall -k $(uname -r)'
warn  module: version 0.0.9 loaded, tools $ver: reload the module ('ghostswapctl reset; rmmod ghostswap; modprobe ghostswap') or install matching tools
warn  swap: /dev/zram0 has priority 100, not below /dev/ghostswap's 100: the kernel uses it first ('priority =' above 100)
warn  swap: /swap file has priority 150, not below /dev/ghostswap's 100: the kernel uses it first ('priority =' above 150)
FAIL  backing device: /dev/null is gone or neither a block device, a file nor a directory
warn  udev: no 60-ghostswap.rules in /etc, /run, /usr/lib or /lib udev/rules.d: the device appearing does not start ghostswap.service ('make install' puts it there)
warn  systemd: ghostswap.service is disabled: 'systemctl enable ghostswap.service' to set the device up at boot (or the udev rule with modules-load.d)
FAIL  systemd: ghostswap.service failed: ghostswapctl: /etc/ghostswap.conf:1: bad size; fix it, then 'systemctl restart ghostswap.service'
ok    configuration: 1 file, valid ('ghostswapctl config' shows them)
warn  kernel command line: systemd.ghostswap=0: the boot setup is off for this boot
warn  zswap: enabled: it compresses pages before they reach /dev/ghostswap ('disable_zswap = yes'; and boot with zswap.enabled=0, see below)
warn  zswap: enabled in this boot: large-folio (mTHP) swap-in stays off until a boot with zswap.enabled=0 on the kernel command line
ok    hibernation: not available on this machine (no 'disk' in /sys/power/state)"
printf 'size = lots\n' >"$D/etc/ghostswap.conf"
echo N >"$F/sys/module/zswap/parameters/enabled"
echo "zswap.enabled=1" >"$F/proc/cmdline"
rm -rf "$S"
DOC_DKMS="x" DOC_ENABLED=enabled DOC_ACTIVE=active doctor
same "doctor: module not loaded, a bad file, zswap on at boot" "$rc
$(grep -v '^\(ok\|FAIL  dkms\)' <<<"$out")
$err" "1
FAIL  module: not loaded (no $F/sys/block/ghostswap): 'modprobe ghostswap', or 'systemctl start ghostswap.service'
warn  udev: no 60-ghostswap.rules in /etc, /run, /usr/lib or /lib udev/rules.d: the device appearing does not start ghostswap.service ('make install' puts it there)
FAIL  configuration: the error above stops the boot setup ('ghostswapctl config' lists the files)
warn  zswap: enabled in this boot: large-folio (mTHP) swap-in stays off until a boot with zswap.enabled=0 on the kernel command line
ghostswapctl: $D/etc/ghostswap.conf:1: bad size 'lots' for size: unknown name (want ram, min or max) at 'lots' (column 1) (want bytes with an optional suffix K M G T P, or an expression of ram in MiB)"
ctl doctor now
expect "doctor with an argument: usage error" 2 "unexpected argument 'now'"

# Hibernation: where the kernel would write its image, and whether a boot
# reads it back. The fake device is 252:0; /dev/sda2 a disk swap.
hib() {
	mkfake "$F"
	printf 'size = 8G\n' >"$D/etc/ghostswap.conf"
	mkdir -p "$F/sys/power" "$F/sys/module/ghostswap"
	echo "$ver" >"$F/sys/module/ghostswap/version"
	echo "freeze mem disk" >"$F/sys/power/state"
	echo "[platform] shutdown reboot suspend test_resume" >"$F/sys/power/disk"
	echo "${HIB_RESUME:-0:0}" >"$F/sys/power/resume"
	echo "quiet ${HIB_CMDLINE:-}" >"$F/proc/cmdline"
	for sw in $HIB_SWAPS; do
		if [ "$sw" = ours ]; then
			swapped_on "$F" 100
		else
			printf '%-40s%s\t%s\t%s\t%s\n' "$sw" partition 1000 0 -2 \
				>>"$F/proc/swaps"
		fi
	done
	DOC_DKMS="ghostswap/$ver, $(uname -r), x86_64: installed" \
		DOC_ENABLED=enabled DOC_ACTIVE=active doctor
	out=$(grep '^[a-zA-Z]* *hibernation:' <<<"$out")
}
HIB_SWAPS="ours /dev/sda2" hib
same "doctor: hibernation, no resume device, ghostswap first: warn, what to do" "$rc
$out" "0
warn  hibernation: no resume device set: the kernel would write the image to the first swap switched on, /dev/ghostswap, which keeps it in RAM (ghostswap refuses it, and hibernation fails); name the disk swap in resume= (or switch it on first)"
HIB_SWAPS="ours" hib
same "doctor: hibernation, only ghostswap: warn, add a disk swap" "$out" \
	"warn  hibernation: no resume device set: the kernel would write the image to the first swap switched on, /dev/ghostswap, which keeps it in RAM (ghostswap refuses it, and hibernation fails); add a disk swap partition or file and name it in resume="
HIB_SWAPS="/dev/zram0" hib
same "doctor: hibernation, zram first, ghostswap off: FAIL, the session would be lost" "$out" \
	"FAIL  hibernation: no resume device set: the kernel would write the image to the first swap switched on, /dev/zram0, which keeps it in RAM (the image is gone at power-off, and the session with it); add a disk swap partition or file and name it in resume="
HIB_SWAPS="/dev/sda2 ours" hib
same "doctor: hibernation, a disk swap first: ok, where the image goes" "$rc
$out" "0
ok    hibernation: no resume device set: the image goes to /dev/sda2, the first swap switched on; a boot reads it back if told where (resume=, or systemd's HibernateLocation)"
HIB_SWAPS="ours /dev/sda2" HIB_RESUME=8:2 hib
same "doctor: hibernation resumes from a disk: ok" "$out" \
	"ok    hibernation: resumes from 8:2 (/sys/power/resume)"
HIB_SWAPS="ours /dev/sda2" HIB_CMDLINE="resume=UUID=1234" hib
same "doctor: hibernation, resume= by UUID: ok" "$out" \
	"ok    hibernation: resumes from resume=UUID=1234"
HIB_SWAPS="" hib
same "doctor: hibernation, no swap at all: warn" "$rc
$out" "0
warn  hibernation: no swap a boot can resume from: /dev/ghostswap and zram keep their pages in RAM; hibernating needs a disk swap partition or file, named in resume="
for how in "resume=/dev/ghostswap|resume=/dev/ghostswap on the kernel command line" \
	"resume=252:0|resume=252:0 on the kernel command line" \
	"resume=8:2 resume=252:0|resume=252:0 on the kernel command line" \
	"@252:0|the kernel's resume device (/sys/power/resume) is 252:0"; do
	c=${how%%|*}
	if [ "${c#@}" != "$c" ]; then
		HIB_SWAPS="/dev/sda2 ours" HIB_RESUME=${c#@} hib
	else
		HIB_SWAPS="/dev/sda2 ours" HIB_CMDLINE=$c hib
	fi
	same "doctor: hibernation resuming from ghostswap ($c): FAIL, why" "$rc
$out" "1
FAIL  hibernation: ${how#*|} names /dev/ghostswap: its pages live in RAM, so an image written there is gone at power-off, and the hibernated session with it; name a disk swap partition or file in resume="
	: >"$F/proc/swaps"
	FAKE_DATA=0 ctl setup --size 1G
	expect "setup named in resume ($c): refused before any write, exit 2" 2 \
		"${how#*|} names /dev/ghostswap as the device hibernation resumes from, but its pages live in RAM: a hibernation image written there is gone at power-off. Name a disk swap partition or file in resume= (ghostswap(4), HIBERNATION)"
	same "setup named in resume ($c): nothing written" "$(grep -c '^write' "$F/trace")" 0
done
FAKE_DATA=0 HIB_SWAPS="" HIB_CMDLINE="resume=8:2" hib
ctl setup --size 1G --no-swapon
same "setup with resume= on a disk: goes on" "$rc" 0
mkdir -p "$F/sys/power"
echo "freeze mem disk" >"$F/sys/power/state"
echo "[disabled]" >"$F/sys/power/disk"
doctor
same "doctor: hibernation disabled by the kernel: ok, said" "$(grep hibernation <<<"$out")" \
	"ok    hibernation: disabled by the kernel (/sys/power/disk: [disabled])"

# status says in one line why swap is not on, when the boot setup knows.
mkfake "$F"
PATH=$dbin:$PATH DOC_ACTIVE=failed DOC_LOG="ghostswapctl: /etc/ghostswap.conf:3: unknown key 'sise'" ctl -n -o name
same "status, setup failed: what, why, what to do on stderr; the table still" "$rc|$out|$err" \
	"0|/dev/ghostswap|ghostswapctl: warning: the boot setup failed: ghostswap.service: ghostswapctl: /etc/ghostswap.conf:3: unknown key 'sise' (fix it, then 'systemctl restart ghostswap.service'; 'ghostswapctl doctor' checks the rest)"
rm -rf "$S"
PATH=$dbin:$PATH DOC_ACTIVE=failed DOC_LOG="modprobe: FATAL: Module ghostswap not found" ctl
same "status, module not loaded after a failed setup: the reason, then exit 3" "$rc|$err" \
	"3|ghostswapctl: warning: the boot setup failed: ghostswap.service: modprobe: FATAL: Module ghostswap not found (fix it, then 'systemctl restart ghostswap.service'; 'ghostswapctl doctor' checks the rest)
ghostswapctl: ghostswap module not loaded (no $F/sys/block/ghostswap)"
mkfake "$F"
echo "systemd.ghostswap=0" >"$F/proc/cmdline"
PATH=$dbin:$PATH DOC_ACTIVE=inactive ctl -n -o name
same "status, setup turned off on the kernel command line: said" "$rc|$err" \
	"0|ghostswapctl: warning: no swap on /dev/ghostswap: systemd.ghostswap=0 on the kernel command line: the boot setup is off"
swapped_on "$F"
PATH=$dbin:$PATH DOC_ACTIVE=failed ctl -n -o name
same "status, swapped on: no explanation" "$rc|$err" "0|"

# --------------------------------------------------------------- generator

# ghostswap-generator: a drop-in ordering ghostswap.service after the
# configured backing device (systemd.generator(7)).
G=$tmp/gen-root
gen_out=$tmp/gen-out
# gen CONFIG_TEXT [CMDLINE]: the generator on that configuration; $gen
# gets the drop-in ("none" when it wrote nothing).
gen() {
	rm -rf "$G" "$gen_out"
	mkdir -p "$G/etc" "$gen_out"
	[ -z "$1" ] || printf '%b' "$1" >"$G/etc/ghostswap.conf"
	echo "${2:-quiet}" >"$F/proc/cmdline"
	GHOSTSWAP_CONFROOT=$G ctl generator "$gen_out"
	gen=$(cat "$gen_out/ghostswap.service.d/50-ghostswap-backing.conf" 2>/dev/null || echo none)
}
mkfake "$F"
gen "backing_dev = /dev/disk/by-partlabel/ghostswap-backing\n"
same "generator: a backing device: Requires= and After= its device unit" "$rc
$gen" "0
# Written by ghostswap-generator from ghostswap.conf(5)'s backing_dev.
[Unit]
Requires=dev-disk-by\x2dpartlabel-ghostswap\x2dbacking.device
After=dev-disk-by\x2dpartlabel-ghostswap\x2dbacking.device"
gen "backing_dev = /dev/disk/by-label/SWAPBACK\n"
same "generator: a name from the device's content (by-label): warned, still ordered" "$rc|$(tail -n 1 <<<"$gen")|$err" \
	"0|After=dev-disk-by\x2dlabel-SWAPBACK.device|ghostswapctl: warning: backing_dev /dev/disk/by-label/SWAPBACK names the filesystem on the device, which writeback overwrites: the link will be gone at the next boot; use /dev/disk/by-partlabel/, by-partuuid/ or by-id/"
gen "backing_dev = /srv/swap/backing.img\n"
same "generator: a path outside /dev: RequiresMountsFor=" "$rc $(tail -n 1 <<<"$gen")" \
	"0 RequiresMountsFor=/srv/swap/backing.img"
gen "size = 1T\n"
same "generator: no backing device: nothing written" "$rc $gen" "0 none"
gen "backing_dev = none\n"
same "generator: backing_dev = none: nothing written" "$rc $gen" "0 none"
gen "backing_dev = /dev/vdb\n" "quiet systemd.ghostswap=0"
same "generator: systemd.ghostswap=0: nothing written" "$rc $gen" "0 none"
gen "backing_dev = /dev/vdb\nsize = lots\n"
same "generator: a broken configuration: nothing written, exit 0 (the service says why)" "$rc $gen" "0 none"
ln -sf "$CTL" "$tmp/ghostswap-generator"
rm -rf "$gen_out"
mkdir -p "$gen_out" "$G/etc"
printf 'backing_dev = /dev/vdb\n' >"$G/etc/ghostswap.conf"
GHOSTSWAP_CONFROOT=$G GHOSTSWAP_PROC=$F/proc "$tmp/ghostswap-generator" "$gen_out" "$tmp/early" "$tmp/late"
same "generator: run as ghostswap-generator NORMAL EARLY LATE, as systemd does" "$?
$(tail -n 1 "$gen_out/ghostswap.service.d/50-ghostswap-backing.conf")" "0
After=dev-vdb.device"
ctl generator
expect "generator without a directory: usage error" 2 "want the normal units' directory"
ctl generator --bogus
expect "generator with an option it does not take: usage error" 2 "unknown option '--bogus'"
ctl generator --help
same "generator --help: the usage, exit 0" "$rc $(grep -c '^Usage:' <<<"$out")" "0 1"
if command -v systemd-escape >/dev/null; then
	bad=
	for p in /dev/vdb "/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001-part2" \
		"/dev/disk/by-label/my swap" /dev//mapper/.vg-lv_1 "/dev/disk/by-uuid/a:b~c" \
		/dev/md/x+y%z; do
		gen "backing_dev = $p\n"
		[ "$(sed -n 's/^After=//p' <<<"$gen")" = "$(systemd-escape --path "$p").device" ] ||
			bad="$bad [$p: $(sed -n 's/^After=//p' <<<"$gen") vs $(systemd-escape --path "$p").device]"
	done
	same "generator: device unit names as systemd-escape --path makes them" "$bad" ""
else
	tap_skip "generator: unit names against systemd-escape" "no systemd-escape"
fi

# ------------------------------------------------------------------- reset

mkfake "$F"
ctl reset
same "reset, swap off: writes 1 to reset" "$rc
$tr" "0
write block/ghostswap/reset 1"
swapped_on "$F"
ctl reset
same "reset, swapped on: swapoff first" "$tr" \
"run swapoff /dev/ghostswap
write block/ghostswap/reset 1"
mkfake "$F"
ctl_fault reset=EBUSY reset
expect "reset: EBUSY: exit 4" 4 "device is in use: another process holds /dev/ghostswap open"
FAIL_swapoff=1 PATH=$bin:$PATH GHOSTSWAP_DRYRUN=0 ctl reset
same "reset: not swapped on: no swapoff run" "$rc $(grep -c swapoff "$tmp/cmds")" "0 0"
swapped_on "$F"
FAIL_swapoff=1 PATH=$bin:$PATH GHOSTSWAP_DRYRUN=0 ctl reset
expect "reset: swapoff fails: exit 1, no reset" 1 "swapoff /dev/ghostswap failed"
same "reset: swapoff fails: reset not written" "$(grep -c reset <<<"$tr")" 0
ctl reset now
expect "reset: stray argument" 2 "unexpected argument 'now'"
rm -rf "$S"
ctl reset
expect "reset: module not loaded: exit 3" 3 "ghostswap module not loaded"

# --------------------------------------------------------------- writeback

mkfake "$F"
bd_after="160 7 160 1 4896 0 0 3"
LD_PRELOAD=$SHIM GS_SIDE="writeback>bd_stat=$bd_after" ctl writeback huge
same "writeback huge: writes it, reports bd_count's change" "$rc
$tr
$out" \
"0
write block/ghostswap/writeback huge
writeback huge: +60 pages (240K); backing device holds 160 pages (640K)"
for a in "idle" "huge_idle 100" "incompressible 1" "all 5" "64"; do
	ctl writeback $a
	[ "$tr" = "write block/ghostswap/writeback $a" ] || break
done
same "writeback: idle, huge_idle N, incompressible N, all N, bare N" "$tr" \
	"write block/ghostswap/writeback 64"
bad=
for a in "" "bogus" "huge x" "huge 0" "0" "huge 1 2" "5 huge" "-3"; do
	ctl writeback $a
	[ $rc = 2 ] && [ -z "$tr" ] || bad="$bad [$a]: $rc"
done
same "writeback: bad modes and counts: usage errors, nothing written" "$bad" ""
ctl_fault writeback=ENODEV writeback huge
expect "writeback without a backing device (ENODEV)" 1 "no backing device"
ctl_fault writeback=ENOSPC writeback all
expect "writeback: backing device full (ENOSPC)" 1 "backing device full"
ctl_fault writeback=EIO writeback idle
expect "writeback: EIO (errors or limit)" 1 "writeback limit reached"
printf 'idle_writeback = 3600\n' >"$cfg"
ctl writeback --config "$cfg"
same "writeback --config: idle_writeback seconds, then writeback idle" "$tr" \
"write block/ghostswap/idle 3600
write block/ghostswap/writeback idle"
printf 'size = 1G\n' >"$cfg"
ctl writeback --config "$cfg"
expect "writeback --config without idle_writeback: usage error" 2 "no idle_writeback set"
mkfake "$F" old
ctl writeback huge
expect "writeback on an older module: exit 3" 3 "has no writeback"

# ------------------------------------------------------------ idle, compact

mkfake "$F"
ctl idle all
same "idle all" "$rc $tr" "0 write block/ghostswap/idle all"
ctl idle 86400
same "idle SECONDS" "$tr" "write block/ghostswap/idle 86400"
ctl idle 0
expect "idle 0: usage error" 2 "bad age '0'"
ctl idle
expect "idle without an argument: usage error" 2 "want 'all' or SECONDS"
LD_PRELOAD=$SHIM GS_SIDE="compact>mm_stat=419430400 120586240 100000000 0 130023424 12345 40 678 900" \
	ctl compact
same "compact: writes compact, reports pages freed" "$rc
$tr
$out" "0
write block/ghostswap/compact 1
compaction: 28 pages freed; pool now 95.4M"
LD_PRELOAD=$SHIM GS_SIDE="backing_compact>bd_stat=100 7 100 1 4896 0 0 13" \
	ctl compact --backing
same "compact --backing: writes backing_compact" "$rc
$tr
$out" "0
write block/ghostswap/backing_compact 1
backing compaction: 10 pages moved"
mkfake "$F" old
ctl compact --backing
expect "compact --backing on an older module: exit 3" 3 "no backing compaction"

# ------------------------------------------------------------------- check

mkfake "$F"
ctl check
same "check: 0 mismatches: exit 0" "$rc $out" \
	"0 check: ok, 0 mismatches between the table and the reverse map"
printf '2\nslot 12: table says backing 5, reverse map says 7\nbacking 9: owner 44 is empty\n' \
	>"$F/sys/kernel/debug/ghostswap/check"
ctl check
same "check: mismatches: exit 1, details printed" "$rc
$out" "1
check: 2 mismatches between the table and the reverse map
slot 12: table says backing 5, reverse map says 7
backing 9: owner 44 is empty"
echo garbage >"$F/sys/kernel/debug/ghostswap/check"
ctl check
expect "check: unexpected contents: exit 1" 1 "unexpected contents"
rm -rf "$F/sys/kernel/debug/ghostswap"
ctl check
same "check: debugfs not mounted: mounts it" "$(head -n 1 <<<"$tr")" \
	"run mount -t debugfs debugfs $F/sys/kernel/debug"
expect "check: no check file: exit 3" 3 "has no check"

# ------------------------------------------------------------- not root

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkfake "$F"
	chmod -R a+rX "$tmp"
	asnobody() {
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	}
	out=$(asnobody env GHOSTSWAP_SYSFS="$F/sys" GHOSTSWAP_PROC="$F/proc" \
		"$CTL" -n 2>&1)
	rc=$?
	same "not root: status works" "$rc $out" \
		"0 /dev/ghostswap lz4             1T 400M  115M 122.1M  3.48    400K      210"
	fake_no_data "$F"
	err=$(asnobody env GHOSTSWAP_SYSFS="$F/sys" GHOSTSWAP_PROC="$F/proc" \
		"$CTL" setup --size 1G 2>&1 >/dev/null)
	rc=$?
	out=
	expect "not root, fake tree: the real EACCES: permission denied" 1 \
		"permission denied writing $F/sys/block/ghostswap/disksize (run as root)"
	for c in setup reset "writeback huge" "idle all" compact check; do
		err=$(asnobody "$CTL" $c 2>&1 >/dev/null)
		rc=$?
		[ $rc = 1 ] && grep -q "must be run as root" <<<"$err" || break
	done
	expect "not root: setup, reset, writeback, idle, compact, check refused" 1 \
		"permission denied: 'ghostswapctl ${c% *}' must be run as root"
else
	tap_skip "not-root cases" "needs root and setpriv"
fi

# ------------------------------------------------- make install, clean

dest=$tmp/dest
make -C "$src" install DESTDIR="$dest" >"$tmp/install.log" 2>&1
rc=$?
missing=
for f in usr/sbin/ghostswapctl usr/share/man/man4/ghostswap.4 \
	usr/share/man/man5/ghostswap.conf.5 usr/share/man/man8/ghostswapctl.8 \
	lib/systemd/system/ghostswap.service \
	lib/systemd/system/ghostswap-writeback.service \
	lib/systemd/system/ghostswap-writeback.timer \
	lib/udev/rules.d/60-ghostswap.rules etc/ghostswap.conf \
	lib/systemd/system-generators/ghostswap-generator \
	usr/share/doc/ghostswap/examples/modules-load.d/ghostswap.conf \
	usr/share/doc/ghostswap/examples/modprobe.d/ghostswap.conf; do
	[ -f "$dest/$f" ] || [ -L "$dest/$f" ] || missing="$missing $f"
done
same "make install DESTDIR: tool, man pages, units, udev rule, config" "$rc$missing" 0
same "make install: the generator is a link to the tool" \
	"$(readlink "$dest/lib/systemd/system-generators/ghostswap-generator")" /usr/sbin/ghostswapctl
[ -x "$dest/usr/sbin/ghostswapctl" ] && tap_ok "make install: the tool is executable" ||
	tap_not_ok "make install: the tool is executable"
echo "# mine" >>"$dest/etc/ghostswap.conf"
make -C "$src" install DESTDIR="$dest" >>"$tmp/install.log" 2>&1
same "make install: an existing /etc/ghostswap.conf is kept" \
	"$(tail -n 1 "$dest/etc/ghostswap.conf")" "# mine"
make -C "$src" install DESTDIR="$tmp/dest2" PREFIX=/usr/local >>"$tmp/install.log" 2>&1
same "make install PREFIX=/usr/local: units run the tool from there" \
	"$(grep -h '^Exec' "$tmp/dest2/lib/systemd/system/"*.service)" \
"ExecStart=/usr/local/sbin/ghostswapctl metrics --system-config
ExecStart=/usr/local/sbin/ghostswapctl writeback --system-config
ExecStart=/usr/local/sbin/ghostswapctl setup --system-config
ExecStop=/usr/local/sbin/ghostswapctl reset"
make -C "$src" clean >"$tmp/clean.log" 2>&1
[ ! -e "$src/tools/ghostswapctl" ] && tap_ok "make clean removes tools/ghostswapctl" ||
	tap_not_ok "make clean removes tools/ghostswapctl" "$(cat "$tmp/clean.log")"

# ---------------------------------------------------------- systemd, udev

if command -v systemd-analyze >/dev/null; then
	u=$tmp/units
	make -C "$src" install DESTDIR= PREFIX="$u" SYSTEMDUNITDIR="$u/units" \
		UDEVRULESDIR="$u/rules" SYSCONFDIR="$u/etc" >/dev/null 2>&1
	o=$(cd "$u/units" && systemd-analyze verify --man=no ./ghostswap.service \
		./ghostswap-writeback.service ./ghostswap-writeback.timer 2>&1)
	rc=$?
	[ $rc = 0 ] && [ -z "$o" ] && tap_ok "systemd-analyze verify: the units" ||
		tap_not_ok "systemd-analyze verify: the units" "$o"
else
	tap_skip "systemd-analyze verify" "no systemd-analyze"
fi
unit=$top/systemd/ghostswap.service
grep -qx 'Type=oneshot' "$unit" && grep -qx 'RemainAfterExit=yes' "$unit" &&
	grep -qx 'ExecStart=/usr/sbin/ghostswapctl setup --system-config' "$unit" &&
	grep -qx 'ExecStop=/usr/sbin/ghostswapctl reset' "$unit" &&
	tap_ok "ghostswap.service: oneshot, RemainAfterExit, setup/reset" ||
	tap_not_ok "ghostswap.service: oneshot, RemainAfterExit, setup/reset"
rules=$(grep -v '^#' "$top/udev/60-ghostswap.rules" | grep .)
same "udev rule: tags the device for systemd, wants ghostswap.service on add only" "$rules" \
	'KERNEL=="ghostswap", SUBSYSTEM=="block", TAG+="systemd"
KERNEL=="ghostswap", SUBSYSTEM=="block", ACTION=="add", ENV{SYSTEMD_WANTS}+="ghostswap.service"'

# ---------------------------------------------------------------- man pages

for m in "$top"/man/*.[0-9]; do
	o=$(groff -man -ww -z "$m" 2>&1)
	o2=$(man --warnings -l "$m" 2>&1 >/dev/null)
	[ -z "$o$o2" ] && tap_ok "man ${m##*/}: no warnings (groff -man -ww -z, man --warnings -l)" ||
		tap_not_ok "man ${m##*/}: warnings" "$o" "$o2"
done
miss=
for c in $("$CTL" --help | sed -n '/^Columns/,/^$/p' | awk 'NR > 2 && NF { print $1 }'); do
	grep -q "^\.B.*${c//-/\\\\-}" "$top/man/ghostswapctl.8" || miss="$miss $c"
done
same "ghostswapctl(8) describes every column of --help" "$miss" ""

# What the tool's source accepts, for the checks of its man pages against
# it: c_body FN prints function FN of tools/*.c (its definition starts a
# line, its closing brace too); c_opts FN the options FN parses, "--LONG"
# from its struct option table and "-X" from its getopt string, with
# those of parse_help_only() when it calls that; roff FILE the man page
# with \- as - and no font changes.
c_body() {
	awk -v fn="$1" '$0 ~ "^[a-z].*[ *]" fn "\\(" { p = 1 } p { print } p && /^}/ { exit }' \
		"$top"/tools/*.c
}
c_opts() {
	local body
	body=$(c_body "$1")
	sed -n 's/.*{ "\([a-z-]*\)", [a-z_]*_argument,.*/--\1/p' <<<"$body"
	sed -n 's/.*next_opt(argc, argv, "\([^"]*\)".*/\1/p' <<<"$body" |
		tr -d ':' | grep -o . | sed 's/^/-/'
	if [ "$1" != parse_help_only ] && grep -q 'parse_help_only(' <<<"$body"; then
		c_opts parse_help_only
	fi
}
roff() { sed 's/\\-/-/g; s/\\f[BIRP]//g' "$1"; }

# ghostswap.conf(5): the keys set_setting() takes (tools/config.c) are
# those of config_keys, which "config" prints, N_CONFIG_KEYS of them; each
# has a paragraph in ghostswap.conf(5) and a line in the example, and
# the page has no paragraph for a key the tool does not take.
keys=$(c_body set_setting | sed -n 's/.*!strcmp(key, "\([a-z_]*\)").*/\1/p' | sort)
table=$(sed -n '/^const char \*const config_keys\[N_CONFIG_KEYS\] = {/,/^};/p' \
	"$top/tools/config.c" | grep -o '"[a-z_]*"' | tr -d '"' | sort)
n=$(sed -n 's/^#define N_CONFIG_KEYS[[:space:]]*\([0-9]*\)$/\1/p' "$top/tools/ghostswapctl.h")
miss=
[ -n "$keys" ] || miss=" no-keys-found-in-set_setting"
[ "$(grep -c . <<<"$table")" = "$n" ] ||
	miss="$miss N_CONFIG_KEYS=$n,config_keys-has-$(grep -c . <<<"$table")"
for k in $(comm -23 <(echo "$keys") <(echo "$table")); do
	miss="$miss not-in-config_keys:$k"
done
for k in $(comm -13 <(echo "$keys") <(echo "$table")); do
	miss="$miss not-in-set_setting:$k"
done
same "config_keys: N_CONFIG_KEYS ($n) keys, those set_setting() takes" "$miss" ""
miss=
all=$(sort -u <<<"$keys"$'\n'"$table")
for k in $all; do
	grep -q "^\.BI $k \" = " "$top/man/ghostswap.conf.5" || miss="$miss man:$k"
	grep -q "^#\?$k = " "$top/etc/ghostswap.conf" || miss="$miss example:$k"
done
man5=$(sed -n 's/^\.BI \([a-z_]*\) " = .*/\1/p' "$top/man/ghostswap.conf.5")
for k in $man5; do
	grep -qx "$k" <<<"$keys" || miss="$miss not-a-key:$k"
done
same "ghostswap.conf(5) and the example document every key the tool takes" "$miss" ""

# ghostswapctl(8): every command of main()'s table is in the SYNOPSIS and
# has a paragraph in COMMANDS; each of its options is in that paragraph,
# in a tag of its section "COMMAND OPTIONS" (status: also ZRAMCTL'S
# OPTIONS, the options without a command, which status parses) or of
# COMMON OPTIONS, where main()'s own (--help, --version) are too.
m8=$(roff "$top/man/ghostswapctl.8")
syn=$(awk '/^\.SH / { s = $2 == "SYNOPSIS"; next } s' <<<"$m8")
# SECTION<TAB>LINE: each tag line of a .TP paragraph; the lines of a
# paragraph of COMMANDS as CMD<TAB>LINE, CMD the first word of its tag.
paras=$(awk '
	/^\.SH / { sec = substr($0, 5); gsub(/"/, "", sec); cmd = ""; next }
	/^\.(TP|PP|SS)/ { tag = $0 ~ /^\.TP/; cmd = ""; next }
	tag && sec == "COMMANDS" { cmd = $0; sub(/^\.[A-Z]+ "?/, "", cmd); sub(/[ "].*/, "", cmd) }
	tag { print sec "\t" $0; tag = 0; if (!cmd) next }
	cmd { print cmd "\t" $0 }' <<<"$m8")
opt_in() {	# opt_in OPT TEXT: OPT, alone, in TEXT
	grep -qE -- "(^|[^[:alnum:]-])$1([^[:alnum:]-]|\$)" <<<"$2"
}
miss=
cmds=$(c_body main | sed -n 's/.*{ "\([a-z]*\)", \(cmd_[a-z_]*\) },.*/\1 \2/p')
[ -n "$cmds" ] || miss=" no-commands-found-in-main"
while read -r c fn; do
	grep -qE "(ghostswapctl|\[) $c( |\$)" <<<"$syn" || miss="$miss synopsis:$c"
	grep -q "^$c"$'\t' <<<"$paras" || miss="$miss commands:$c"
	places=$(awk -F'\t' -v c="$c" -v s="${c^^} OPTIONS" '
		$1 == c || $1 == s || $1 == "COMMON OPTIONS" ||
		(c == "status" && $1 == "ZRAMCTL'\''S OPTIONS")' <<<"$paras")
	for o in $(c_opts "$fn" | sort -u); do
		opt_in "$o" "$places" || miss="$miss $c:$o"
	done
done <<<"$cmds"
places=$(awk -F'\t' '$1 == "COMMON OPTIONS"' <<<"$paras")
for o in $(c_body main | grep -o 'strcmp(argv\[1\], "-[^"]*")' | sed 's/.*"\(.*\)")/\1/'); do
	opt_in "$o" "$places" || miss="$miss ghostswapctl:$o"
done
same "ghostswapctl(8) documents every command and every option it takes" "$miss" ""
# The sysfs files: every DEVICE_ATTR_RO/RW/WO(name) of the module.
miss=
attrs=$(grep -ho 'DEVICE_ATTR_[RWO]*([a-z_0-9]*)' "$top"/module/*.c |
	sed 's/.*(\(.*\))/\1/' | sort -u)
[ "$(wc -w <<<"$attrs")" -ge 30 ] || miss="only-$(wc -w <<<"$attrs")-attributes-found"
for a in $attrs; do
	grep -q "^\.BR $a \"" "$top/man/ghostswap.4" || miss="$miss $a"
done
same "ghostswap(4) documents every sysfs file" "$miss" ""
# zram's: every DEVICE_ATTR of the kernel tree's zram_drv.c has a row in
# ghostswap(4)'s ZRAM COMPATIBILITY table (the tree testbed/provision.sh
# unpacked; without one, the check says so and fails).
miss=
zdrv=$(bash -c ". '$top/testbed/lib.sh' && gs_ksrc" 2>/dev/null)/drivers/block/zram/zram_drv.c
if [ -f "$zdrv" ]; then
	table=$(sed -n '/^\.SH ZRAM COMPATIBILITY/,/^\.TE/p' "$top/man/ghostswap.4" |
		grep -v '^\.' | cut -f1 | tr ', ' '\n\n')
	for a in $(grep -o 'DEVICE_ATTR_[RWO]*([a-z_0-9]*)' "$zdrv" |
		sed 's/.*(\(.*\))/\1/' | sort -u); do
		grep -qx "$a" <<<"$table" || miss="$miss $a"
	done
else
	miss="no-kernel-tree-with-zram_drv.c"
fi
same "ghostswap(4)'s zram table lists every attribute of $(sed 's|.*/\(linux-source-[^/]*\)/.*|\1|' <<<"$zdrv")'s zram" "$miss" ""


# ------------------------------------------------ the test harness itself

# tests/run.sh's summary (testbed/tap.sh, tap_summary): what counts as
# passed, failed and skipped, and a skip failing the run unless allowed.
h=$tmp/harness
mkdir -p "$h"
cat >"$h/a.tap" <<'EOF'
ok 1 - a
not ok 2 - b
ok 3 - c # SKIP no zstd
# ok 4 - a diagnostic, not a test
    ok 1 - a nested line, not ours
ok 4 - skip lists parsed
ok - kunit: s.case # skip
1..4
EOF
printf 'ok 1 - x\nok 2 - y\n1..2\n' >"$h/b.tap"
printf '# a comment\n\n^ok [0-9]+ - c \tknown: c needs zstd\n' >"$h/allow"
out=$(tap_summary "" "$h/a.tap" "$h/b.tap")
same "summary: ok, not ok and SKIP lines counted apart; each skip a failure" \
	"$? $out" "1 not ok - not run: c (skipped: no zstd)
not ok - not run: kunit: s.case (skipped: no reason given)
4 passed, 3 failed, 2 skipped"
out=$(tap_summary "$h/allow" "$h/b.tap" "$h/a.tap")
same "summary: a skip the allow-list names is counted, not failed, with its reason" \
	"$? $out" "1 # skip allowed: ok 3 - c # SKIP no zstd (known: c needs zstd)
not ok - not run: kunit: s.case (skipped: no reason given)
4 passed, 2 failed, 2 skipped"
out=$(tap_summary "$h/missing" "$h/b.tap")
same "summary: only passes succeed" "$? $out" "0 2 passed, 0 failed, 0 skipped"
printf 'ok 1 - x # SKIP\n1..1\n' >"$h/c.tap"
out=$(tap_summary "" "$h/c.tap")
same "summary: nothing but skips fails" "$? $out" "1 not ok - not run: x (skipped: no reason given)
0 passed, 1 failed, 1 skipped"
: >"$h/d.tap"
out=$(tap_summary "" "$h/d.tap")
same "summary: no test line at all fails" "$? $out" "1 0 passed, 0 failed, 0 skipped"
# .ci/run's pattern for the summary line, and its own fallback line.
re=$(sed -n "s/^summary=\$(grep -E '\(.*\)' \"\$log\".*/\1/p" "$top/.ci/run")
fallback=$(sed -n 's/^[[:space:]]*echo "\([0-9]* passed.*\)"$/\1/p' "$top/.ci/run")
same ".ci/run reads the summary line (and its own fallback line) only" \
	"$(printf '%s\n' "4 passed, 3 failed, 2 skipped" "$fallback" \
		"1 passed, 0 failed" "1 passed, 0 failed, 0 skipped x" |
		grep -cE "${re:-no pattern found}")" 3
bad=$(grep -vE '^[[:space:]]*(#|$)' "$top/tests/skips-allowed" |
	grep -vE '^[^	]+	.*[^[:space:]]')
same "tests/skips-allowed: every entry has a pattern, a tab and a reason" "$bad" ""

# The page-table depth the test bed gives its guests (testbed/lib.sh,
# gs_qemu_env; tests/guest/core.sh t_testbed_paging checks it there).
paging() {
	env GHOSTSWAP_QEMU=/bin/true "$@" bash -c ". '$top/testbed/lib.sh' && gs_qemu_env && echo \"\$GS_GUEST_PAGING\""
}
hostl=4
grep -qw la57 /proc/cpuinfo && hostl=5
same "guest paging: 5 levels under TCG, 4 without LA57, the host CPU's under KVM" \
	"$(paging GHOSTSWAP_KVM=0) $(paging GHOSTSWAP_KVM=0 GS_GUEST_LA57=0) $(paging GHOSTSWAP_KVM=1 GS_GUEST_LA57=0) $(paging GHOSTSWAP_KVM=1)" \
	"5 4 4 $hostl"

# kunit/kcsan_check.sh: every KCSAN report fails but the kernel's own
# races listed in kunit/kcsan-kernel-races, which are named with why.
kcsan_log() {
	echo "[    0.1] kcsan: enabled early"
	for t in "$@"; do
		printf '%s\n' "[    9.9] ==================================================================" \
			"[    9.9] BUG: KCSAN: data-race in $t" "[    9.9] " \
			"[    9.9] write to 0xffff0000 of 4 bytes by task 1 on cpu 1:" \
			"[    9.9] ==================================================================" 
	done
}
kcsan_log "fix_fullness_group / zs_obj_read_begin" >"$h/kc1.log"
out=$("$top/kunit/kcsan_check.sh" k "$h/kc1.log" 2>&1)
same "kunit/kcsan_check.sh: a listed race in the kernel's own code is named, not failed" \
	"$? $(cut -c1-80 <<<"$out")" "0 ok - k: kernel log free of KCSAN data-race reports
# known race in the kernel's own code, fix_fullness_group / zs_obj_read_begin: m"
kcsan_log "zs_obj_read_begin / fix_fullness_group" "gs_slot_install / gs_store_read_nowait" >"$h/kc2.log"
out=$("$top/kunit/kcsan_check.sh" k "$h/kc2.log" 2>&1)
same "kunit/kcsan_check.sh: any other report fails, every report shown" \
	"$? $(grep -c 'BUG: KCSAN' <<<"$out") $(head -n 1 <<<"$out")" \
	"1 2 not ok - k: kernel log free of KCSAN data-race reports"
grep -v enabled "$h/kc1.log" >"$h/kc3.log"
out=$("$top/kunit/kcsan_check.sh" k "$h/kc3.log" 2>&1)
same "kunit/kcsan_check.sh: a log without KCSAN enabled fails" \
	"$? $out" "1 not ok - k: KCSAN never said it was enabled"

# kunit/json2tap.py: kunit.py's JSON as TAP; no skip hidden in a case
# that ran, each with the reason the console gave.
cat >"$h/k.json" <<'EOF'
{"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
 {"name": "s", "misc": {},
  "test_cases": [{"name": "plain", "status": "PASS"},
                 {"name": "whole", "status": "SKIP"}],
  "sub_groups": [
   {"name": "par", "misc": {"crashed": 0, "errors": 0}, "sub_groups": [],
    "test_cases": [{"name": "lz4", "status": "PASS"},
                   {"name": "zstd 3", "status": "SKIP"}]},
   {"name": "allpar", "misc": {"crashed": 0, "errors": 0}, "sub_groups": [],
    "test_cases": [{"name": "842", "status": "SKIP"}]},
   {"name": "bad", "misc": {"crashed": 0, "errors": 0}, "sub_groups": [],
    "test_cases": [{"name": "a", "status": "FAIL"},
                   {"name": "b", "status": "SKIP"}]}]}]}
EOF
cat >"$h/k.log" <<'EOF'
    KTAP version 1
    # Subtest: s
    1..5
    ok 1 plain
    ok 2 whole # SKIP needs one CPU
        KTAP version 1
        # Subtest: par
        ok 1 lz4
        ok 2 zstd 3 # SKIP zstd not in this kernel
    ok 3 par
        # Subtest: allpar
        ok 1 842 # SKIP 842 not in this kernel
    ok 4 allpar # SKIP
        # Subtest: bad
        not ok 1 a
        ok 2 b # SKIP why b
    not ok 5 bad
EOF
out=$(python3 "$top/kunit/json2tap.py" "$h/k.json" k "$h/k.log" 2>&1)
same "kunit/json2tap.py: skipped cases and each skipped parameter a skip line, with why" \
	"$? $out" "1 ok - k: s.plain
ok - k: s.whole # SKIP needs one CPU
ok - k: s.par
ok - k: s.par: zstd 3 # SKIP zstd not in this kernel
ok - k: s.allpar # SKIP 842 not in this kernel
not ok - k: s.bad
# failed parameter: a
ok - k: s.bad: b # SKIP why b"

# testbed/console-scan.py, the host's reading of every guest boot's
# console, on a console recorded from a real boot (tests/tools/
# console-warn.log: the module's debugfs warn written between the lines
# that say a report is expected there): it must pass as recorded, and fail
# once the report is not expected, once the expected one is missing, on a
# QEMU error, and not on a script's own words about reports.
rec=$top/tests/tools/console-warn.log
scan() { python3 "$top/testbed/console-scan.py" rec "$@" 2>&1; }
out=$(scan "$rec")
same "console scan: the recorded boot passes, its warning made on purpose seen" \
	"$? $(echo "$out" | grep -c '^ok - ') $(echo "$out" | grep -c '^not ok')" "0 2 0"
grep -v 'GS-EXPECT-REPORT' "$rec" >"$h/unexpected.log"
out=$(scan "$h/unexpected.log")
same "console scan: the same warning not expected fails, with its line and stack" \
	"$? $(echo "$out" | grep -c '^not ok - rec: kernel report at line [0-9]* of the console: WARNING: .*gs_warn_write') $(echo "$out" | grep -c '^# .*gs_warn_write')" \
	"1 1 1"
grep -vE 'WARNING|asked for through debugfs' "$rec" >"$h/missing.log"
out=$(scan "$h/missing.log")
same "console scan: a window whose report never came fails" \
	"$? $(echo "$out" | grep -c '^not ok - rec: the report made on purpose (debugfs-warn) is not in the console log')" "1 1"
{ cat "$rec"; echo "qemu-system-x86_64: Desc next is 65535"; } >"$h/qemu.log"
out=$(scan "$h/qemu.log")
same "console scan: an error of QEMU's fails" \
	"$? $(echo "$out" | grep -c '^not ok - rec: QEMU reported errors')" "1 1"
: >"$h/qemu.err"
echo "qemu-system-x86_64: warning: host doesn't support requested feature" >"$h/qemu.err"
out=$(scan "$rec" --qemu-err "$h/qemu.err")
same "console scan: a warning of QEMU's is shown, not failed" \
	"$? $(echo "$out" | grep -c "^# rec: qemu-system-x86_64: warning")" "0 1"
{
	cat "$rec"
	echo "BUG: the script's own words, no time stamp"
	echo '[  151.5] virtme-ng-init: WARNING: failed to run: "lvmconfig" (error: No such file)'
	echo '[  152.5] ok 7 - no BUG, WARNING or Oops in the kernel log'
} >"$h/user.log"
out=$(scan "$h/user.log")
same "console scan: a script's line, and another writer's to /dev/kmsg, are not reports" "$?" 0
for r in 'BUG: KFENCE: use-after-free read in gs_x' \
	'INFO: task kworker/0:1:12 blocked for more than 120 seconds.' \
	'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:' \
	'pagealloc: memory corruption' 'kworker/u8:3: page allocation failure: order:0' \
	'watchdog: BUG: soft lockup - CPU#1 stuck for 22s!' \
	'BUG kmalloc-64 (Tainted: G        W ): Poison overwritten' \
	'WARNING: possible circular locking dependency detected' \
	'ghostswap: bio watch: a bio ended with parts of it running (a read of 4096 bytes at sector 8)'; do
	{ cat "$rec"; echo "[  100.000001] $r"; } >"$h/r.log"
	scan "$h/r.log" >/dev/null || continue
	tap_not_ok "console scan: not seen as a report: $r"
	r=
	break
done
[ -z "$r" ] || tap_ok "console scan: KFENCE, a hung task, an RCU stall, page poisoning, an allocation failure, a soft lockup, slub_debug, lockdep, the bio watch: each a report"
out=$(python3 "$top/testbed/qmp-virtio.py" --self-test 2>&1)
same "testbed/qmp-virtio.py: queue state read without QEMU's descriptor query (fake QMP)" \
	"$? $out" "0 qmp-virtio.py self-test: ok"
# testbed/lib.sh's host CPU claims (gs_pin_cpu_take, testbed/guest.sh's
# GS_PIN_CPU=auto): a guest beside a running one gets another CPU, where
# the host has two; a claim whose process is gone does not count.
pc=$tmp/pin-cache
take() { GHOSTSWAP_CACHE=$pc bash -c '. "$0/testbed/lib.sh"; gs_pin_cpu_take' "$top"; }
read -r -a hcpus <<<"$(bash -c '. "$0/testbed/lib.sh"; gs_host_cpus' "$top")"
GHOSTSWAP_CACHE=$pc bash -c '. "$0/testbed/lib.sh"; gs_pin_cpu_take >"$1"; exec sleep 60' \
	"$top" "$tmp/pin-held" &
held=$!
for _ in $(seq 50); do [ -s "$tmp/pin-held" ] && break; sleep 0.1; done
c1=$(cat "$tmp/pin-held") c2=$(take)
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null
c3=$(take)
if [ "${#hcpus[@]}" -ge 2 ]; then
	same "testbed/lib.sh: CPU claims: a second guest on another CPU, a claim of a process gone not counted" \
		"$c1 $([ "$c2" != "$c1" ] && echo other) $c3 $(ls "$pc/.pin" | wc -l)" \
		"${hcpus[0]} other ${hcpus[0]} 1"
else
	same "testbed/lib.sh: CPU claims: on a one-CPU host, every guest on it" \
		"$c1 $c2 $c3" "${hcpus[0]} ${hcpus[0]} ${hcpus[0]}"
fi
out=$(python3 "$top/testbed/virtio-trace.py" --self-test 2>&1)
same "testbed/virtio-trace.py: QEMU's trace of a disk read as idle, stuck or not interrupted" \
	"$? $out" "0 virtio-trace.py self-test: ok"

# ----------------------------------------------------------------- metrics

# ghostswapctl metrics on a fake device whose every column holds a value
# of its own, read back by real Prometheus parsers: promtool's "check
# metrics" (Debian's prometheus package: its binary taken out of the
# package, the server not installed) and the Python client's parser
# (python3-prometheus-client). Both are installed here when missing, as
# root; the tests fail, not skip, when they cannot be had.
make -C "$src" tools >/dev/null 2>&1	# "make clean" above removed the tool
export DEBIAN_FRONTEND=noninteractive
: >"$tmp/apt.log"
# apt_get ARGS...: apt-get, with the package lists updated once if need be.
apt_get() {
	apt-get -y -qq "$@" >>"$tmp/apt.log" 2>&1 ||
		{ apt-get update -qq >>"$tmp/apt.log" 2>&1 && apt-get -y -qq "$@" >>"$tmp/apt.log" 2>&1; }
}
prom_py=
for p in /usr/bin/python3 python3; do
	"$p" -c 'import prometheus_client.parser' 2>/dev/null && prom_py=$p && break
done
if [ -z "$prom_py" ] && [ "$(id -u)" = 0 ] && apt_get install python3-prometheus-client &&
	/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null; then
	prom_py=/usr/bin/python3
fi
[ -n "$prom_py" ] && tap_ok "metrics: Prometheus' Python parser (python3-prometheus-client) is there" ||
	tap_not_ok "metrics: Prometheus' Python parser (python3-prometheus-client) cannot be installed" \
		"$(tail -n 5 "$tmp/apt.log")"
promtool=$(command -v promtool)
if [ -z "$promtool" ]; then
	deb=$(ls /var/cache/apt/archives/prometheus_*.deb 2>/dev/null | tail -n 1)
	if [ -z "$deb" ] && [ "$(id -u)" = 0 ] &&
		apt_get install --download-only --no-install-recommends prometheus; then
		deb=$(ls /var/cache/apt/archives/prometheus_*.deb 2>/dev/null | tail -n 1)
	fi
	[ -n "$deb" ] && dpkg-deb --fsys-tarfile "$deb" | tar -xC "$tmp" ./usr/bin/promtool &&
		promtool=$tmp/usr/bin/promtool
fi
[ -n "$promtool" ] && "$promtool" --version >/dev/null 2>&1 &&
	tap_ok "metrics: promtool (from Debian's prometheus package) is there" ||
	tap_not_ok "metrics: promtool (Debian's prometheus package) cannot be had" \
		"$(tail -n 5 "$tmp/apt.log")"
# parsed < TEXT: each sample as the Python parser reads it: TYPE NAME
# LABELS (JSON, sorted) VALUE.
parsed() {
	"${prom_py:-false}" -c '
import json, sys
from prometheus_client.parser import text_string_to_metric_families
for f in text_string_to_metric_families(sys.stdin.read()):
    for s in f.samples:
        v = int(s.value) if s.value == int(s.value) else s.value
        print(f.type, s.name, json.dumps(s.labels, sort_keys=True), v)' 2>&1
}
# promcheck < TEXT: promtool's verdict, exit status and what it said.
promcheck() {
	local o
	o=$("${promtool:-false}" check metrics 2>&1)
	echo "$? $o"
}
# Every column a value of its own, as the module prints them.
mkfake "$F"
printf '%8s ' 419430400 120586240 127000576 268435456 130023424 12345 12 678 900 >"$S/mm_stat"
printf '%8s ' 1 2 3 5000 77 >"$S/io_stat"
printf '%8s ' 210 250 102400 1028160 10.04 16384 20064 6336 >"$S/cluster_stat"
printf '%8s ' $(seq 101 116) >"$S/comp_stat"
printf '%8s ' 160 7 150 1 4896 2 3 13 14 15 1 40 4 32768 5 28 >"$S/bd_stat"
printf '#1: lzo lzo-rle lz4 lz4hc [zstd] deflate\n#2: lzo lzo-rle lz4 [lz4hc] zstd deflate\n' \
	>"$S/recomp_algorithm"
echo /dev/vdb >"$S/backing_dev"
echo 1 >"$S/writeback_limit_enable"
echo 4096 >"$S/writeback_limit"
mkdir -p "$F/sys/module/ghostswap"
echo "$ver" >"$F/sys/module/ghostswap/version"
ctl metrics
full=$out
same "metrics: exit 0, nothing on stderr" "$rc $err" "0 "
# m_want: NAME VALUE lines as TYPE NAME {"device": "ghostswap"} VALUE,
# counters the names ending in _total.
m_want() {
	awk '{ print ($1 ~ /_total$/ ? "counter" : "gauge"), $1, "{\"device\": \"ghostswap\"}", $2 }'
}
want=$(
	echo 'gauge ghostswap_up {"device": "ghostswap"} 1'
	echo 'gauge ghostswap_device_info {"algorithm": "lz4", "backing_dev": "/dev/vdb", "device": "ghostswap", "version": "'"$ver"'"} 1'
	echo 'gauge ghostswap_recompress_algorithm_info {"algorithm": "zstd", "device": "ghostswap", "priority": "1"} 1'
	echo 'gauge ghostswap_recompress_algorithm_info {"algorithm": "lz4hc", "device": "ghostswap", "priority": "2"} 1'
	m_want <<'EOF'
ghostswap_disksize_bytes 1099511627776
ghostswap_orig_data_size_bytes 419430400
ghostswap_compr_data_size_bytes 120586240
ghostswap_mem_used_total_bytes 127000576
ghostswap_mem_limit_bytes 268435456
ghostswap_mem_used_max_bytes 130023424
ghostswap_same_pages 12345
ghostswap_pages_compacted_total 12
ghostswap_huge_pages 678
ghostswap_huge_pages_since_total 900
ghostswap_failed_reads_total 1
ghostswap_failed_writes_total 2
ghostswap_invalid_io_total 3
ghostswap_notify_free_total 5000
ghostswap_discard_free_total 77
ghostswap_clusters 210
ghostswap_peak_clusters 250
ghostswap_slots_used 102400
ghostswap_meta_bytes 1028160
ghostswap_meta_per_slot_bytes 10.04
ghostswap_stream_bytes 16384
ghostswap_reserve_bytes 20064
ghostswap_index_reserve_bytes 6336
ghostswap_compressions_total 101
ghostswap_stored_pages_total 102
ghostswap_incompressible_pages_total 103
ghostswap_recompressed_pages_total 104
ghostswap_recompress_no_gain_total 105
ghostswap_recompress_auto_pages_total 106
ghostswap_units 107
ghostswap_unit_pages 108
ghostswap_units_stored_total 109
ghostswap_units_refused_total 110
ghostswap_unit_reads_total 111
ghostswap_unit_part_reads_total 112
ghostswap_unit_part_cached_total 113
ghostswap_unit_splits_total 114
ghostswap_units_backed 115
ghostswap_units_written_total 116
ghostswap_bd_count_pages 160
ghostswap_bd_reads_pages_total 7
ghostswap_bd_writes_pages_total 150
ghostswap_bd_clusters 1
ghostswap_bd_meta_bytes 4896
ghostswap_bd_write_errors_total 2
ghostswap_bd_read_errors_total 3
ghostswap_bd_relocated_pages_total 13
ghostswap_bd_compact_reads_pages_total 14
ghostswap_bd_compact_writes_pages_total 15
ghostswap_bd_checksum_errors_total 1
ghostswap_bd_discarded_pages_total 40
ghostswap_bd_discard_errors_total 4
ghostswap_bd_capacity_pages 32768
ghostswap_bd_grow_errors_total 5
ghostswap_bd_grow_error 28
ghostswap_writeback_limit_enabled 1
ghostswap_writeback_limit_pages 4096
EOF
)
same "metrics: every figure, its value and type, as Prometheus' Python parser reads them" \
	"$(parsed <<<"$full")" "$want"
same "metrics: promtool check metrics: valid, and no lint problem" "$(promcheck <<<"$full")" "0 "
same "metrics: one # HELP and one # TYPE line per family, just before its samples" \
	"$(awk '/^# HELP/ { h = $3; next } /^# TYPE/ { if ($3 != h || seen[$3]++) print "bad:", $3; f = $3; next }
		{ n = $1; sub(/\{.*/, "", n); if (n != f) print "stray:", n }' <<<"$full")" ""
same "metrics: 60 families, 61 samples" \
	"$(grep -c '^# TYPE' <<<"$full") $(grep -vc '^#' <<<"$full")" "60 61"
same "metrics: the value as the file has it: no conversion, no rounding" \
	"$(grep -E '^ghostswap_(meta_per_slot_bytes|disksize_bytes|bd_count_pages)\{' <<<"$full")" \
'ghostswap_disksize_bytes{device="ghostswap"} 1099511627776
ghostswap_meta_per_slot_bytes{device="ghostswap"} 10.04
ghostswap_bd_count_pages{device="ghostswap"} 160'

# Every name the tool can print (its source's) is the set a full device
# gives, and both lists of them name each, and nothing else: ghostswapctl(8)'s
# METRICS and the admin guide's Metrics section.
src_names=$(grep -o '"ghostswap_[a-z_]*"' "$top/tools/cmd_metrics.c" | tr -d '"' | sort -u)
out_names=$(awk '/^# TYPE/ { print $3 }' <<<"$full" | sort -u)
same "metrics: the names in tools/cmd_metrics.c are those a full device gives" "$src_names" "$out_names"
man_metrics=$(roff "$top/man/ghostswapctl.8" | awk '/^\.SH / { s = $0 == ".SH METRICS" ; next } s')
guide_metrics=$(awk '/^## / { s = $0 == "## Metrics"; next } s' "$top/Documentation/admin-guide.md")
miss=
[ -n "$man_metrics" ] || miss=" no-METRICS-section-in-ghostswapctl.8"
[ -n "$guide_metrics" ] || miss="$miss no-Metrics-section-in-admin-guide.md"
for n in $src_names; do
	grep -qE "(^|[^a-z_])$n([^a-z_]|\$)" <<<"$man_metrics" || miss="$miss man:$n"
	grep -qE "(^|[^a-z_])$n([^a-z_]|\$)" <<<"$guide_metrics" || miss="$miss guide:$n"
done
for n in $(grep -oE 'ghostswap_[a-z_]*[a-z]' <<<"$man_metrics" | sort -u); do
	grep -qx "$n" <<<"$src_names" || miss="$miss not-printed(man):$n"
done
for n in $(grep -oE 'ghostswap_[a-z_]*[a-z]' <<<"$guide_metrics" | sort -u); do
	grep -qx "$n" <<<"$src_names" || miss="$miss not-printed(guide):$n"
done
same "metrics: ghostswapctl(8) and the admin guide list every name the tool prints, and only those" "$miss" ""
# The admin guide's queries and alerting rules are valid PromQL and rules
# to promtool ("check rules"; each query as a recording rule).
awk '/^```yaml$/ { s = 1; next } /^```$/ { s = 0 } s' <<<"$guide_metrics" >"$tmp/alerts.yml"
{
	echo 'groups:'
	echo '  - name: guide'
	echo '    rules:'
	awk '/^```promql$/ { s = 1; next } /^```$/ { s = 0 } s && !/^#/ && NF' <<<"$guide_metrics" |
		awk '{ printf "      - record: guide:q%d\n        expr: |\n          %s\n", NR, $0 }'
} >"$tmp/queries.yml"
o=$("${promtool:-false}" check rules "$tmp/alerts.yml" "$tmp/queries.yml" 2>&1)
same "metrics: the admin guide's alerting rules and queries pass promtool check rules" \
	"$? $(grep -c 'SUCCESS: [1-9]' <<<"$o") $(grep -c 'alert:' "$tmp/alerts.yml") $(grep -c 'record:' "$tmp/queries.yml")" \
	"0 2 5 7"

# Label values escaped as the format wants; bytes that are not UTF-8
# replaced. promtool refuses a file with either wrong.
printf '/srv/a "b"\\c\nd\377\303\251\n' >"$S/backing_dev"
ctl metrics
same "metrics: a label value with \\ \" and a newline escaped, a byte not UTF-8 replaced" \
	"$(parsed <<<"$out" | grep device_info)" \
	'gauge ghostswap_device_info {"algorithm": "lz4", "backing_dev": "/srv/a \"b\"\\c\nd\ufffd\u00e9", "device": "ghostswap", "version": "'"$ver"'"} 1'
same "metrics: ... and promtool takes it" "$(promcheck <<<"$out")" "0 "

# An older module: what it does not print is left out, not invented.
mkfake "$F" old
ctl metrics
same "metrics, older module: no bd_stat, comp_stat, recompression, writeback limit, version; short io_stat and cluster_stat" \
	"$rc $(awk '/^# TYPE/ { printf " %s", $3 }' <<<"$out")
$(grep '^ghostswap_device_info' <<<"$out")" \
	"0  ghostswap_up ghostswap_device_info ghostswap_disksize_bytes ghostswap_orig_data_size_bytes ghostswap_compr_data_size_bytes ghostswap_mem_used_total_bytes ghostswap_mem_limit_bytes ghostswap_mem_used_max_bytes ghostswap_same_pages ghostswap_pages_compacted_total ghostswap_huge_pages ghostswap_huge_pages_since_total ghostswap_failed_reads_total ghostswap_failed_writes_total ghostswap_invalid_io_total ghostswap_notify_free_total ghostswap_clusters ghostswap_peak_clusters ghostswap_slots_used ghostswap_meta_bytes ghostswap_meta_per_slot_bytes ghostswap_stream_bytes
ghostswap_device_info{device=\"ghostswap\",algorithm=\"lz4\"} 1"
same "metrics, older module: promtool takes it" "$(promcheck <<<"$out")" "0 "
echo "1 2 x 4" >"$S/io_stat"
ctl metrics
expect "metrics: a stat file with something not a number: exit 1, nothing printed" 1 \
	"unexpected contents in $F/sys/block/ghostswap/io_stat"
same "metrics: ... and nothing on stdout" "$out" ""

# The module not loaded: ghostswap_up 0 alone, said, exit 3.
up0='# HELP ghostswap_up 1 when the module is loaded and its device there, 0 when not.
# TYPE ghostswap_up gauge
ghostswap_up{device="ghostswap"} 0'
rm -rf "$S"
ctl metrics
expect "metrics, module not loaded: exit 3, said" 3 "ghostswap module not loaded (no $F/sys/block/ghostswap)"
same "metrics, module not loaded: ghostswap_up 0 alone" "$out" "$up0"
same "metrics, module not loaded: promtool takes it" "$(promcheck <<<"$out")" "0 "
md=$tmp/textfile
mkdir -p "$md"
ctl metrics --textfile-dir "$md"
same "metrics --textfile-dir, module not loaded: the file says ghostswap_up 0, exit 3" \
	"$rc $(cat "$md/ghostswap.prom")" "3 $up0"

# --textfile-dir: the file written whole, by a rename: a new inode each
# time, no file left beside it, readable by all; a reader meanwhile
# always sees a whole file.
mkfake "$F"
ctl metrics
whole=$out
rm -rf "$md"
mkdir -p "$md"
ctl metrics -d "$md"
same "metrics --textfile-dir: exit 0, nothing on stdout" "$rc $out$err" "0 "
same "metrics --textfile-dir: DIR/ghostswap.prom, what stdout gets, mode 644, nothing else in DIR" \
	"$(ls -A "$md") $(stat -c %a "$md/ghostswap.prom") $(cmp "$md/ghostswap.prom" - <<<"$whole" && echo same)" \
	"ghostswap.prom 644 same"
i1=$(stat -c %i "$md/ghostswap.prom")
: >"$md/other.prom"
ctl metrics -d "$md"
i2=$(stat -c %i "$md/ghostswap.prom")
[ "$i1" != "$i2" ] && [ "$(ls -A "$md" | tr '\n' ' ')" = "ghostswap.prom other.prom " ] &&
	tap_ok "metrics --textfile-dir: replaced by a rename (a new inode), no temporary file left, other files kept" ||
	tap_not_ok "metrics --textfile-dir: replaced by a rename" "inode $i1 then $i2" "$(ls -A "$md")"
(
	for i in $(seq 100); do
		GHOSTSWAP_SYSFS=$F/sys "$CTL" metrics -d "$md" || exit 1
	done
) &
wpid=$!
reads=0 torn=0
while kill -0 "$wpid" 2>/dev/null; do
	[ "$(cat "$md/ghostswap.prom")" = "$whole" ] || torn=$((torn + 1))
	reads=$((reads + 1))
done
wait "$wpid"
same "metrics --textfile-dir: $reads reads during 100 writes, every one the whole file" \
	"$? $torn $(ls -A "$md" | tr '\n' ' ')" "0 0 ghostswap.prom other.prom "
ctl metrics -d "$tmp/no-such-dir"
expect "metrics --textfile-dir: no such directory: exit 1, said, not created" 1 \
	"cannot write metrics to $tmp/no-such-dir: no such directory"
[ ! -e "$tmp/no-such-dir" ] || tap_not_ok "metrics: a missing directory is not created"
ctl metrics -d "$md/ghostswap.prom"
expect "metrics --textfile-dir: a file, not a directory: exit 1" 1 "cannot write metrics to $md/ghostswap.prom"

# The directory from the configuration: metrics_dir, or the default.
rm -rf "$md" "$tmp/md2"
mkdir -p "$md" "$tmp/md2"
printf 'size = 1G\nmetrics_dir = %s\n' "$md" >"$cfg"
ctl metrics --config "$cfg"
same "metrics --config FILE: into FILE's metrics_dir" "$rc $(ls -A "$md")" "0 ghostswap.prom"
R=$tmp/metrics-root
rm -rf "$R"
mkdir -p "$R/etc/ghostswap.conf.d"
printf 'metrics_dir = %s\n' "$tmp/md2" >"$R/etc/ghostswap.conf.d/50-metrics.conf"
echo "quiet systemd.ghostswap=0" >"$F/proc/cmdline"
GHOSTSWAP_CONFROOT=$R ctl metrics -C
same "metrics --system-config: the system's metrics_dir (systemd.ghostswap=0 does not stop it)" \
	"$rc $(ls -A "$tmp/md2")" "0 ghostswap.prom"
rm -f "$md/ghostswap.prom"
GHOSTSWAP_CONFROOT=$R ctl metrics -C --textfile-dir "$md"
same "metrics: --textfile-dir wins over metrics_dir" "$rc $(ls -A "$md")" "0 ghostswap.prom"
GHOSTSWAP_CONFROOT=$R ctl config
same "config: metrics_dir with its origin" "$(grep '^metrics_dir' <<<"$out" | tr -s ' ')" \
	"metrics_dir = $tmp/md2 # $R/etc/ghostswap.conf.d/50-metrics.conf:1"
printf 'metrics_dir = prometheus\n' >"$cfg"
ctl metrics -c "$cfg"
expect "metrics_dir: a relative path is refused, FILE:LINE named" 2 \
	"$cfg:1: bad metrics_dir 'prometheus' (want an absolute path)"
printf 'size = 1G\nmetrics_dir = /x\n' >"$cfg"
fake_no_data "$F"
ctl setup -c "$cfg"
same "setup: metrics_dir is not its key" "$rc
$tr" "0
run udevadm settle
write block/ghostswap/disksize 1073741824
run mkswap /dev/ghostswap
run swapon -p 100 /dev/ghostswap"
ctl metrics -c "$cfg" -C
expect "metrics: --config and --system-config exclude each other" 2 "--config and --system-config exclude each other"
ctl metrics now
expect "metrics: a stray argument: usage error" 2 "metrics: unexpected argument 'now'"
ctl metrics --help
same "metrics --help: the usage, exit 0" "$rc $(grep -c ' metrics ' <<<"$out")" "0 2"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkfake "$F"
	chmod -R a+rX "$tmp"
	o=$(setpriv --reuid=65534 --regid=65534 --clear-groups env GHOSTSWAP_SYSFS="$F/sys" \
		"$CTL" metrics 2>&1)
	same "metrics: needs no root" "$? $(grep -c '^ghostswap_up{device="ghostswap"} 1$' <<<"$o")" "0 1"
else
	tap_skip "metrics as not root" "needs root and setpriv"
fi

# The units: installed, valid, the service what the timer runs, the timer
# off by default, every 15 s.
dest=$tmp/metrics-dest
make -C "$src" install DESTDIR="$dest" >"$tmp/install.log" 2>&1
same "make install: ghostswap-metrics.service and .timer in the unit directory, the timer not enabled" \
	"$(cd "$dest/lib/systemd/system" && ls ghostswap-metrics.* && find . -name '*.wants')" \
	"ghostswap-metrics.service
ghostswap-metrics.timer"
mu=$dest/lib/systemd/system
same "ghostswap-metrics.service: oneshot, metrics --system-config, exit 3 (not loaded) is no failure" \
	"$(grep -E '^(Type|ExecStart|SuccessExitStatus)=' "$mu/ghostswap-metrics.service")" \
	"Type=oneshot
ExecStart=/usr/sbin/ghostswapctl metrics --system-config
SuccessExitStatus=3"
same "ghostswap-metrics.timer: every 15 s to the second, wanted by timers.target when enabled" \
	"$(grep -E '^(OnBootSec|OnUnitActiveSec|AccuracySec|WantedBy)=' "$mu/ghostswap-metrics.timer")" \
	"OnBootSec=15s
OnUnitActiveSec=15s
AccuracySec=1s
WantedBy=timers.target"
if command -v systemd-analyze >/dev/null; then
	u=$tmp/metrics-units
	make -C "$src" install DESTDIR= PREFIX="$u" SYSTEMDUNITDIR="$u/units" \
		SYSTEMDGENERATORDIR="$u/generators" UDEVRULESDIR="$u/rules" \
		SYSCONFDIR="$u/etc" >/dev/null 2>&1
	o=$(cd "$u/units" && systemd-analyze verify --man=no ./ghostswap-metrics.service \
		./ghostswap-metrics.timer 2>&1)
	rc=$?
	[ $rc = 0 ] && [ -z "$o" ] && tap_ok "systemd-analyze verify: ghostswap-metrics.service and .timer" ||
		tap_not_ok "systemd-analyze verify: ghostswap-metrics.service and .timer" "$o"
else
	tap_skip "systemd-analyze verify: the metrics units" "no systemd-analyze"
fi

tap_plan
exit $tap_rc
