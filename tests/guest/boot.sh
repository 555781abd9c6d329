#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in a guest booted with systemd as init (tests/boot-lib.sh): the
# module installed by DKMS, the tools by "make install" (tests/boot.sh) or
# by the Debian packages (tests/package.sh, which says the version in
# GS_BOOT_VERSION), ghostswap.service enabled, the configuration written
# by tests/boot-lib.sh (the example
# /etc/ghostswap.conf with zswap off, drop-ins in /usr/lib and /etc: size
# ram * 3 / 2, zstd, mem_limit min(ram / 8, 200M), priority 77), zswap
# on at boot. Checks that the boot brought swap up per the configuration,
# that ghostswapctl status --json and config report it, that swap works,
# that stopping the service resets the device, the udev path: the device
# appearing again (module reloaded) starts the service again, and the
# kernel command line's systemd.ghostswap switch. TAP in
# /opt/gs-out/boot.tap.
set -u
# The guest's helpers and TAP: fail, run_cg, $PAGES, $SYS, $DEV, tap_*.
. /opt/gs-src/tests/guest/lib.sh
TAP_OUT=$GS_OUT/boot.tap
TAP_PLAN_FILE=$GS_OUT/boot.plan

# wait_active UNIT SECONDS
wait_active() {
	local i
	for i in $(seq "$2"); do
		[ "$(systemctl is-active "$1")" = active ] && return 0
		sleep 1
	done
	return 1
}

# size = ram * 3 / 2: MemTotal in bytes times 1.5, rounded up to 4 KiB.
want_size() {
	local kib
	kib=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
	echo $(((kib * 1536 + 4095) / 4096 * 4096))
}

# The configuration, applied: swap on with priority 77, ram * 1.5, zstd,
# 200M.
swap_per_config() {
	local prio
	grep -q "^$DEV " /proc/swaps || fail "$DEV is not swapped on: $(cat /proc/swaps)"
	prio=$(awk -v d=$DEV '$1 == d { print $5 }' /proc/swaps)
	[ "$prio" = 77 ] || fail "priority $prio, want 77"
	[ "$(cat $SYS/disksize)" = "$(want_size)" ] ||
		fail "disksize $(cat $SYS/disksize), want $(want_size) (ram * 3 / 2)"
	[ "$(cat $SYS/writeback_limit_enable)" = 0 ] ||
		fail "writeback_limit set: /usr/lib/ghostswap.conf was not hidden"
	grep -q '\[zstd\]' $SYS/comp_algorithm || fail "algorithm: $(cat $SYS/comp_algorithm)"
	[ "$(cat $SYS/mem_limit)" = $((200 << 20)) ] || fail "mem_limit $(cat $SYS/mem_limit)"
	cat /proc/swaps
}

t_boot() {
	[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] ||
		[ "$(readlink /proc/1/exe)" = /lib/systemd/systemd ] ||
		fail "PID 1 is $(readlink /proc/1/exe), not systemd"
	systemctl is-enabled ghostswap.service || fail "not enabled"
	wait_active ghostswap.service 120 || {
		systemctl status ghostswap.service --no-pager
		journalctl -b -u ghostswap.service --no-pager
		fail "ghostswap.service did not become active"
	}
	systemctl is-active systemd-udevd.service || fail "udevd not running"
	journalctl -b -u ghostswap.service --no-pager | tail -n 15
}

t_dkms_module() {
	local f v
	f=$(modinfo -n ghostswap) || fail "no module"
	echo "module: $f"
	case $f in
	*/updates/dkms/*) ;;
	*) fail "not the DKMS-installed module: $f" ;;
	esac
	[ -d /sys/module/ghostswap ] || fail "not loaded"
	# One version for the module and the tools (dkms.conf); the
	# package test says which (GS_BOOT_VERSION).
	v=$(cat /sys/module/ghostswap/version) || fail "no version in /sys/module"
	echo "module version $v, $(ghostswapctl --version)"
	[ "$(ghostswapctl --version)" = "ghostswapctl $v" ] ||
		fail "the module and ghostswapctl differ"
	[ -z "${GS_BOOT_VERSION:-}" ] || [ "$v" = "$GS_BOOT_VERSION" ] ||
		fail "module version $v, want $GS_BOOT_VERSION"
}

t_config_applied() {
	swap_per_config
	[ "$(cat /sys/module/zswap/parameters/enabled)" = N ] ||
		fail "zswap still enabled"
}

t_udev_tagged() {
	udevadm info $DEV | grep -E 'TAGS|SYSTEMD_WANTS'
	udevadm info $DEV | grep -q 'SYSTEMD_WANTS=.*ghostswap.service' ||
		fail "no SYSTEMD_WANTS"
	systemctl is-active dev-ghostswap.device || fail "no device unit"
}

t_status_json() {
	local j
	j=$(ghostswapctl status --json --output +PRIORITY,MEM-LIMIT) ||
		fail "status --json: exit $?"
	echo "$j"
	echo "$j" | $PAGES ctl-json - \
		name=/dev/ghostswap algorithm=zstd disksize=$(want_size) \
		mountpoint=[SWAP] priority=77 mem-limit=$((200 << 20)) ||
		fail "status --json does not report the configured device"
}

t_swap_works() {
	run_cg gs-boot 32 gsverify 96 1 5 zstr || fail "verified workload"
	cat $SYS/mm_stat
}

# Stopped, it stays stopped: the uevents of the swapoff and the reset
# must not start it again.
t_stop_resets() {
	systemctl stop ghostswap.service || fail "stop"
	sleep 3
	udevadm settle
	if systemctl is-active ghostswap.service; then
		journalctl -b --no-pager -o short-monotonic | grep ghostswap | tail -n 20
		fail "started again after the stop"
	fi
	grep -q "^$DEV " /proc/swaps && fail "still swapped on"
	[ "$(cat $SYS/disksize)" = "$(default_disksize)" ] || fail "not reset: $(cat $SYS/disksize)"
	grep -q '\[lz4\]' $SYS/comp_algorithm || fail "algorithm not reset"
	echo "stopped: swap off, device reset"
}

# The udev path: the module loaded again, the device appears, udev's
# SYSTEMD_WANTS starts the service, which sets it up again.
t_udev_starts_service() {
	local i
	# udev probes the device after the reset (blkid holds it open, and
	# so the module, for a moment): try again while it does.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		udevadm settle
		rmmod ghostswap 2>/dev/null && break
		sleep 1
	done
	if [ -d /sys/module/ghostswap ]; then
		lsmod | grep ghostswap
		for i in /proc/[0-9]*; do
			ls -l $i/fd 2>/dev/null | grep -q ghostswap &&
				echo "open by $(cat $i/comm) ($i): $(tr '\0' ' ' <$i/cmdline)"
		done
		ls /sys/block/ghostswap/holders /sys/module/ghostswap/holders
		systemctl list-units --all --no-pager | grep -i ghost
		fail "rmmod"
	fi
	systemctl is-active ghostswap.service && fail "service still active"
	modprobe ghostswap || fail "modprobe"
	wait_active ghostswap.service 120 || {
		journalctl -b -u ghostswap.service --no-pager | tail -n 20
		fail "the device appeared, the service did not start"
	}
	swap_per_config
}

# ghostswapctl config: the files in order, the key that won and where.
t_config_origins() {
	local o
	o=$(ghostswapctl config) || fail "ghostswapctl config: exit $?"
	echo "$o"
	[ "$(grep '^#   ' <<<"$o" | awk '{ print $2 }')" = "/etc/ghostswap.conf
/usr/lib/ghostswap.conf.d/40-vendor.conf
/etc/ghostswap.conf.d/50-test.conf" ] || fail "files, or their order"
	grep -q "^size = ram \* 3 / 2 .*# /etc/ghostswap.conf.d/50-test.conf:2; here .* ($(want_size) bytes)$" <<<"$o" ||
		fail "size's origin or value"
	grep -q "^priority = 77 .*# /usr/lib/ghostswap.conf.d/40-vendor.conf:2$" <<<"$o" ||
		fail "priority's origin"
}

# ghostswapctl doctor on a machine set up as an admin would: every check
# ok but zswap's, which the boot turned on (zswap.enabled=1): the
# large-folio swap-in trap is named; and hibernation's: ghostswap is the
# only swap.
t_doctor() {
	local o rc
	o=$(ghostswapctl doctor)
	rc=$?
	echo "$o"
	[ $rc = 0 ] || fail "doctor: exit $rc"
	for c in "dkms: ghostswap/" "module: version" "swap: $DEV on, priority 77, used first" \
		"backing device: none" "udev: /.*/udev/rules.d/60-ghostswap.rules" \
		"systemd: ghostswap.service enabled" "configuration: 3 files, valid"; do
		grep -q "^ok    $c" <<<"$o" || fail "no 'ok $c'"
	done
	grep -q "^warn  zswap: enabled in this boot: large-folio" <<<"$o" ||
		fail "the zswap trap is not named"
	# The only swap, no resume device: hibernation would be refused.
	grep -q "^warn  hibernation: no resume device set: the kernel would write the image to the first swap switched on, $DEV, which keeps it in RAM (ghostswap refuses it" <<<"$o" ||
		fail "hibernation: $(grep hibernation <<<"$o")"
	[ "$(grep -c '^FAIL' <<<"$o")" = 0 ] || fail "a check failed"
}

# A backing device that appears after the service was started:
# ghostswap-generator makes the service require the device's unit, so the
# setup waits for it instead of failing, and goes on once udev has it.
# (Once the device is written the label's link may go; Requires=, unlike
# BindsTo=, does not stop the service then.) The
# device: a loop device that gets a filesystem label (and so its
# /dev/disk/by-label link) only after the start. systemd gives up on a
# device after DefaultDeviceTimeoutSec (90 s). Making the label takes
# 8-9 s in a full make test; so that an emulator slowed by far more
# cannot fail the test on that timeout, the device's job gets 10
# minutes (a drop-in, as fstab's x-systemd.device-timeout= writes), and
# the test says how long each step took.
late_cleanup() {
	systemctl stop ghostswap.service 2>/dev/null
	rm -f /etc/ghostswap.conf.d/60-late.conf
	rm -rf "/run/systemd/system/$unit.d"
	systemctl daemon-reload
	[ -z "${loop:-}" ] || losetup -d "$loop" 2>/dev/null
	rm -f /tmp/late.img
}

t_backing_late() {
	local unit='dev-disk-by\x2dlabel-GSLATE.device' i rc=0 t0 t1
	systemctl stop ghostswap.service
	echo "backing_dev = /dev/disk/by-label/GSLATE" >/etc/ghostswap.conf.d/60-late.conf
	mkdir -p "/run/systemd/system/$unit.d"
	printf '[Unit]\nJobTimeoutSec=600\nJobRunningTimeoutSec=600\n' >"/run/systemd/system/$unit.d/timeout.conf"
	systemctl daemon-reload		# runs the generators again
	cat /run/systemd/generator/ghostswap.service.d/50-ghostswap-backing.conf ||
		{ late_cleanup; fail "no drop-in from ghostswap-generator"; }
	systemctl show -p DropInPaths -p Requires -p After ghostswap.service
	systemctl show -p DropInPaths ghostswap.service | grep -q 50-ghostswap-backing.conf ||
		{ late_cleanup; fail "the drop-in is not loaded"; }
	systemctl show -p Requires ghostswap.service | grep -q GSLATE ||
		{ late_cleanup; fail "ghostswap.service does not require $unit"; }
	systemctl start --no-block ghostswap.service
	t0=$SECONDS
	sleep 5
	systemctl list-jobs --no-pager
	if grep -q "^$DEV " /proc/swaps; then
		late_cleanup
		fail "swapped on before the backing device appeared"
	fi
	truncate -s 64M /tmp/late.img
	loop=$(losetup -f --show /tmp/late.img) || { late_cleanup; fail losetup; }
	# udev reads the label on the change event that closing the device
	# after writing makes, through a watch it sets while it handles the
	# device's add event: a mkfs done before that is never seen. Wait
	# for the add to be handled, and ask for the change as well.
	udevadm settle
	mkfs.ext4 -q -L GSLATE "$loop" || { late_cleanup; fail mkfs; }
	udevadm trigger --action=change "$loop"
	udevadm settle
	t1=$SECONDS
	ls -l /dev/disk/by-label/
	echo "the label made $((t1 - t0)) s after the start"
	if wait_active ghostswap.service 120 && grep -q "^$DEV " /proc/swaps; then
		echo "the service active $((SECONDS - t1)) s after that"
		[ "$(cat $SYS/backing_dev)" = /dev/disk/by-label/GSLATE ] || {
			echo "backing_dev: $(cat $SYS/backing_dev)"
			rc=1
		}
	else
		systemctl list-jobs --no-pager
		systemctl status --no-pager "$unit" ghostswap.service 2>&1 | tail -n 20
		journalctl -b -u ghostswap.service --no-pager | tail -n 10
		echo "the service did not go on once the device appeared ($((SECONDS - t0)) s after the start)"
		rc=1
	fi
	late_cleanup
	return $rc
}

# A file as the backing device, set up by the service: created at
# backing_size, on a loop device; the generator makes the service wait
# for the file's filesystem; stopping the service detaches the loop.
t_backing_file() {
	local f=/var/lib/ghostswap/backing.img loop rc=0
	systemctl stop ghostswap.service
	mkdir -p /var/lib/ghostswap && rm -f $f
	printf 'backing_dev = %s\nbacking_size = 16M\n' $f >/etc/ghostswap.conf.d/60-file.conf
	systemctl daemon-reload
	systemctl show -p RequiresMountsFor ghostswap.service
	systemctl show -p RequiresMountsFor ghostswap.service | grep -q "$f" || {
		echo "no RequiresMountsFor= on the file"
		rc=1
	}
	systemctl start ghostswap.service
	loop=$(cat $SYS/backing_dev)
	echo "backing_dev: $loop, file: $(cat /sys/block/${loop#/dev/}/loop/backing_file 2>&1)"
	if ! systemctl is-active ghostswap.service || ! grep -q "^$DEV " /proc/swaps; then
		journalctl -b -u ghostswap.service --no-pager | tail -n 10
		echo "the service did not set up with a backing file"
		rc=1
	elif [ "$(cat /sys/block/${loop#/dev/}/loop/backing_file)" != $f ] ||
		[ "$(stat -c %s $f)" != $((16 << 20)) ]; then
		echo "backing: $loop, $(ls -l $f)"
		rc=1
	fi
	systemctl stop ghostswap.service
	udevadm settle
	if [ -e /sys/block/${loop#/dev/}/loop/backing_file ]; then
		echo "$loop still attached after the stop: $(losetup -a)"
		rc=1
	fi
	rm -f /etc/ghostswap.conf.d/60-file.conf $f
	systemctl daemon-reload
	return $rc
}

# ghostswap-writeback.timer, as installed, firing in this boot: its hourly
# schedule replaced by a drop-in with one 3 s after it starts, the
# configuration's idle_writeback 1 s and a backing file. Pages a tmpfs
# file pushed out to swap, idle by then, reach the backing device through
# the timer's service alone, and the file reads back the same.
t_writeback_timer() {
	local f=/var/lib/ghostswap/wbtimer.img cg=/sys/fs/cgroup/gs-wbtimer
	local d=/run/systemd/system/ghostswap-writeback.timer.d rc=0 sum n=0 i
	systemctl stop ghostswap.service
	mkdir -p /var/lib/ghostswap && rm -f $f
	printf 'backing_dev = %s\nbacking_size = 64M\nidle_writeback = 1\n' $f \
		>/etc/ghostswap.conf.d/60-wbtimer.conf
	mkdir -p $d
	printf '[Timer]\nOnBootSec=\nOnUnitActiveSec=\nRandomizedDelaySec=0\nOnActiveSec=3s\nAccuracySec=1s\n' \
		>$d/test.conf
	systemctl daemon-reload
	systemctl start ghostswap.service || rc=1
	# 48 MiB of text into tmpfs from a cgroup that keeps 16 MiB in RAM.
	mkdir -p $cg && echo 16M >$cg/memory.max
	sh -c "echo \$\$ >$cg/cgroup.procs; seq 100000000 | head -c 48M >/dev/shm/wbtimer" || rc=1
	sum=$(sha256sum </dev/shm/wbtimer)
	echo "stored before the timer: $(cat $SYS/mm_stat); bd_stat $(cat $SYS/bd_stat)"
	[ "$(bdstat count)" = 0 ] || { echo "pages on the backing device before the timer ran"; rc=1; }
	sleep 1
	systemctl restart ghostswap-writeback.timer || rc=1
	systemctl list-timers --all --no-pager ghostswap-writeback.timer
	# Until the service the timer started has run to its end.
	for i in $(seq 90); do
		[ "$(systemctl show -p ExecMainExitTimestampMonotonic --value ghostswap-writeback.service)" -gt 0 ] &&
			[ "$(systemctl show -p ActiveState --value ghostswap-writeback.service)" = inactive ] &&
			break
		sleep 1
	done
	n=$(bdstat count)
	systemctl status --no-pager ghostswap-writeback.service 2>&1 | tail -n 5
	echo "after the timer: $n pages on the backing device ($i s); bd_stat $(cat $SYS/bd_stat)"
	[ "$n" -gt 1000 ] || { echo "the timer's service moved $n pages"; rc=1; }
	[ "$(systemctl show -p Result --value ghostswap-writeback.service)" = success ] ||
		{ echo "the service's result: $(systemctl show -p Result --value ghostswap-writeback.service)"; rc=1; }
	[ "$(sha256sum </dev/shm/wbtimer)" = "$sum" ] || { echo "the file reads back different"; rc=1; }
	rm -f /dev/shm/wbtimer
	rmdir $cg
	systemctl stop ghostswap-writeback.timer
	rm -rf $d /etc/ghostswap.conf.d/60-wbtimer.conf
	systemctl stop ghostswap.service
	rm -f $f
	systemctl daemon-reload
	return $rc
}

# Debian's prometheus-node-exporter, as installed (its textfile collector
# reads /var/lib/prometheus/node-exporter), serves what
# ghostswap-metrics.service wrote there: every series of the file, with
# the values sysfs shows, and no textfile scrape error.
t_node_exporter() {
	local f=/var/lib/prometheus/node-exporter/ghostswap.prom m i n s v
	systemctl start ghostswap.service || fail "ghostswap.service"
	wait_active prometheus-node-exporter.service 60 ||
		fail "node_exporter does not run: $(systemctl status --no-pager prometheus-node-exporter 2>&1 | tail -n 5)"
	systemctl start ghostswap-metrics.service ||
		fail "ghostswap-metrics.service: $(journalctl -b -u ghostswap-metrics --no-pager | tail -n 5)"
	[ -s $f ] || fail "no $f"
	for i in $(seq 30); do
		m=$(python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=10).read().decode())') &&
			grep -q '^ghostswap_up' <<<"$m" && break
		sleep 1
	done
	grep -E '^(ghostswap_up|ghostswap_disksize_bytes|ghostswap_orig_data_size_bytes|node_textfile_scrape_error)' <<<"$m"
	grep -Eq '^node_textfile_scrape_error 0$' <<<"$m" ||
		fail "textfile collector: $(grep -E '^node_textfile' <<<"$m")"
	grep -Eq '^ghostswap_up(\{[^}]*\})? 1$' <<<"$m" || fail "ghostswap_up is not 1"
	# Every series of the file, served with its value: node_exporter
	# sorts the labels and writes numbers its own way (1.2e+09).
	echo "$m" >/tmp/served.prom
	n=$(python3 - $f /tmp/served.prom <<-'EOP'
	import re, sys
	def series(path):
	    out = {}
	    for line in open(path):
	        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line.strip())
	        if not m or line.startswith('#'):
	            continue
	        labels = tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or '')))
	        out[(m.group(1), labels)] = float(m.group(3))
	    return out
	wrote, served = series(sys.argv[1]), series(sys.argv[2])
	bad = [k for k in wrote if served.get(k) != wrote[k]]
	for k in bad[:5]:
	    print('%s %s: served %s' % (k, wrote[k], served.get(k)), file=sys.stderr)
	print(len(wrote) if not bad else -len(bad))
	EOP
	)
	echo "$n series of $f served with the same values"
	[ "${n:-0}" -gt 50 ] || fail "series served differently or missing: $n"
	v=$(awk '$1 ~ /^ghostswap_disksize_bytes/ { print $2 + 0 }' <<<"$m")
	[ "$v" = "$(awk '{ print $1 + 0 }' $SYS/disksize)" ] || fail "disksize served $v, sysfs $(cat $SYS/disksize)"
	grep -Eq "^ghostswap_device_info\{.*algorithm=\"$(sed 's/.*\[\(.*\)\].*/\1/' $SYS/comp_algorithm)\"" <<<"$m" ||
		fail "the algorithm label: $(grep '^ghostswap_device_info' <<<"$m")"
	systemctl stop ghostswap.service
}

# wait_stopped PID SECONDS: until the process PID has stopped itself
# (gsverify with GSVERIFY_STOP=1, once its pages are written); fails
# after SECONDS.
wait_stopped() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ "$(awk '{ print $3 }' /proc/$1/stat 2>/dev/null)" = T ] && return 0
		sleep 0.1
	done
	return 1
}

# Teardown, GS_TEARDOWN_ROUNDS rounds (20; 600 asked of a release) with
# udev running, each refusal counted: the
# service's stop with a workload's pages swapped out and the workload
# still running (its pages verified after), the stop with a backing file
# holding pages, and ghostswapctl reset right after mkswap and after mkfs
# (what makes udev probe the device). Refused: 0.
# teardown_stop SEED [backing]: the service set up (with a backing file
# whose pages were all written back), a workload's pages swapped out, the
# workload continued, and the service stopped while it sweeps them in.
teardown_stop() {
	local cg=/sys/fs/cgroup/gs-td pid rc=0
	if [ "${2:-}" = backing ]; then
		printf 'backing_dev = /var/lib/ghostswap/td.img\nbacking_size = 32M\n' \
			>/etc/ghostswap.conf.d/60-td.conf
		systemctl daemon-reload
	fi
	systemctl start ghostswap.service || return 1
	mkdir -p $cg && echo 16M >$cg/memory.max
	sh -c "echo \$\$ >$cg/cgroup.procs && GSVERIFY_STOP=1 exec gsverify 32 1 $1 zstr" >/tmp/td.out 2>&1 &
	pid=$!
	wait_stopped $pid 30	# the stop below runs either way
	if [ "${2:-}" = backing ]; then
		ghostswapctl writeback all >/dev/null
		[ "$(bdstat count)" -gt 0 ] || { echo "nothing on the backing file"; rc=1; }
	fi
	# Room for its pages once the device is gone: swapoff brings them all
	# back into memory, charged to the workload's cgroup.
	echo max >$cg/memory.max
	kill -CONT $pid
	systemctl stop ghostswap.service || echo "stop refused"
	systemctl is-failed -q ghostswap.service &&
		{ echo "stop refused: $(journalctl -b -u ghostswap.service --no-pager | tail -n 2)"; systemctl reset-failed ghostswap.service; }
	wait $pid || { echo "workload: $(cat /tmp/td.out)"; rc=1; }
	rmdir $cg
	rm -f /etc/ghostswap.conf.d/60-td.conf /var/lib/ghostswap/td.img
	return $rc
}
teardown_after() {
	ghostswapctl -s 16M $DEV >/dev/null || return 1
	"$@" >/dev/null 2>&1 || return 1
	ghostswapctl reset || echo "reset refused"
}
t_teardown_rounds() {
	local r out refused=0 failed=0 t0=$SECONDS rounds=${GS_TEARDOWN_ROUNDS:-20} bad=
	systemctl stop ghostswap.service
	mkdir -p /var/lib/ghostswap
	for r in $(seq "$rounds"); do
		case $((r % 20)) in
		0) out=$(teardown_stop $r 2>&1) ;;
		10) out=$(teardown_stop $r backing 2>&1) ;;
		[1-4]) out=$(teardown_after mkfs.ext4 -q -F $DEV 2>&1) ;;
		*) out=$(teardown_after mkswap $DEV 2>&1) ;;
		esac || { failed=$((failed + 1)); echo "round $r: $out" | tail -n 3; }
		grep -q "refused" <<<"$out" && { refused=$((refused + 1)); echo "round $r: $out" | tail -n 3; }
		grep -q "^$DEV " /proc/swaps && bad="round $r: still swapped on"
		[ "$(mstat orig)" = 0 ] && [ "$(cat $SYS/disksize)" = "$(default_disksize)" ] ||
			bad="round $r: not reset: disksize $(cat $SYS/disksize), mm_stat $(cat $SYS/mm_stat)"
		[ -z "$bad" ] || break
	done
	# The next tests start from a stopped service and a reset device.
	systemctl stop ghostswap.service
	systemctl reset-failed ghostswap.service 2>/dev/null
	swapoff $DEV 2>/dev/null
	ghostswapctl reset >/dev/null 2>&1
	rm -f /etc/ghostswap.conf.d/60-td.conf /var/lib/ghostswap/td.img
	systemctl daemon-reload
	[ -z "$bad" ] || fail "$bad"
	echo "$rounds rounds in $((SECONDS - t0)) s: $refused refused, $failed failed"
	[ $refused = 0 ] && [ $failed = 0 ] || fail "$refused refused, $failed failed"
}

# The kernel command line's switch, through the unit and the tool as the
# boot runs them: /proc/cmdline is what both read, so a file bound over
# it stands in for another boot's command line.
# with_cmdline TEXT CMD...: run CMD with /proc/cmdline reading TEXT.
with_cmdline() {
	local text=$1 rc
	shift
	echo "$text" >/tmp/cmdline
	mount --bind /tmp/cmdline /proc/cmdline || fail "bind /proc/cmdline"
	"$@"
	rc=$?
	umount /proc/cmdline
	return $rc
}

switch_off() {
	systemctl start ghostswap.service || return 1
	systemctl is-active ghostswap.service || return 1
	journalctl -b -u ghostswap.service --no-pager | tail -n 3
	journalctl -b -u ghostswap.service --no-pager |
		grep -q 'systemd.ghostswap=0 on the kernel command line: the boot setup is off' ||
		{ echo "the tool did not say why"; return 1; }
	grep -q "^$DEV " /proc/swaps && { echo "swapped on"; return 1; }
	[ "$(cat $SYS/disksize)" = "$(default_disksize)" ] ||
		{ echo "disksize $(cat $SYS/disksize): configured"; return 1; }
	systemctl stop ghostswap.service
}

t_cmdline_off() {
	systemctl is-active ghostswap.service && systemctl stop ghostswap.service
	with_cmdline "$(cat /proc/cmdline) systemd.ghostswap=0" switch_off ||
		fail "systemd.ghostswap=0: the service set the device up"
}

# No configuration file at all: the service's conditions stop it, unless
# systemd.ghostswap is given; then it sets up the module's defaults.
switch_on() {
	systemctl start ghostswap.service || return 1
	wait_active ghostswap.service 60 || return 1
	grep -q "^$DEV " /proc/swaps || { echo "not swapped on"; return 1; }
	[ "$(cat $SYS/disksize)" = "$(default_disksize)" ] ||
		{ echo "disksize $(cat $SYS/disksize)"; return 1; }
	systemctl stop ghostswap.service
}

t_cmdline_on_no_files() {
	local d rc=0
	mkdir -p /tmp/aside/etc /tmp/aside/usr/lib
	for d in /etc /usr/lib; do
		mv $d/ghostswap.conf $d/ghostswap.conf.d /tmp/aside$d/ ||
			fail "move the files aside"
	done
	systemctl start ghostswap.service
	if systemctl is-active ghostswap.service; then
		rc=1
		echo "no configuration and no switch: the service ran"
	fi
	with_cmdline "$(cat /proc/cmdline) systemd.ghostswap" switch_on || {
		rc=1
		echo "systemd.ghostswap without files: no setup with the defaults"
	}
	for d in /etc /usr/lib; do
		mv /tmp/aside$d/* $d/
	done
	return $rc
}

# systemctl soft-reboot with ghostswap swapped on, holding a workload's
# pages, part of them written back: systemd stops every service (the
# workload's, then ghostswap's: swapoff and reset) and starts user space
# again on the same kernel, the module still loaded. The device must come
# back configured and clean, the old one torn down in full. Two rounds:
# a chunk directory on a disk of its own, mounted by a mount unit (the
# old device's unnamed chunk files gone: the filesystem's blocks given
# back, the filesystem unmounted and mounted again), and a file on a
# loop device of the device's own (detached: one loop device, the new
# device's). Module references as before. This script dies with the
# soft-reboot: the checks after it run from a unit the round installs,
# which mounts the shared folders again and runs this script once more.
# State in $SR, on the root (the soft-reboot keeps it).
SR=/var/lib/gs-soft-reboot
SR_CASES=(chunks loop)
SR_CHUNKS=/var/lib/ghostswap/chunks
SR_FILE=/var/lib/ghostswap/sr.img
SR_MOUNT=$(systemd-escape -p --suffix=mount $SR_CHUNKS)

sr_desc() {
	case $1 in
	chunks) echo "a chunk directory on a disk of its own" ;;
	loop) echo "a file on a loop device" ;;
	esac
}
# The two tests of a round, by name: its preparation, the checks after.
sr_test_before() { echo "soft-reboot, $(sr_desc $1): ghostswap swapped on, pages held and written back"; }
sr_test_after() { echo "after the soft-reboot, $(sr_desc $1): configured again, the old device torn down"; }
sr_used() { df -B1 --output=used $SR_CHUNKS | tail -n 1; }
sr_mount_id() { awk -v m=$SR_CHUNKS '$5 == m { print $1 }' /proc/self/mountinfo; }
sr_loops() { losetup -n -O NAME -j $SR_FILE; }

# sr_prepare CASE: the device set up with CASE as its backing store, a
# workload's pages swapped out and written back, the figures the checks
# after the soft-reboot compare with in $SR/before.
sr_prepare() {
	local case=$1 disk chunk base=0 used=0
	systemctl stop ghostswap.service
	# Chunks of 4 MiB: the workload's pages fill several.
	echo 4 >/sys/module/ghostswap/parameters/chunk_mib
	chunk=$((4 << 20))
	if [ $case = chunks ]; then
		disk=$(vdisk gssr) || fail "no disk gssr"
		mkfs.ext4 -q -F -L GSSR "$disk" || fail "mkfs.ext4 $disk"
		mkdir -p $SR_CHUNKS
		# A mount unit, as an admin writes one (the guest's /etc/fstab
		# is the test bed's /dev/null).
		cat >/etc/systemd/system/$SR_MOUNT <<-EOU
		[Mount]
		What=/dev/disk/by-label/GSSR
		Where=$SR_CHUNKS
		Type=ext4
		[Install]
		WantedBy=local-fs.target
		EOU
		systemctl daemon-reload
		systemctl enable -q --now "$SR_MOUNT" || fail "mount $SR_CHUNKS"
		base=$(sr_used)
		echo "backing_dev = $SR_CHUNKS" >/etc/ghostswap.conf.d/60-sr.conf
	else
		printf 'backing_dev = %s\nbacking_size = 64M\n' $SR_FILE \
			>/etc/ghostswap.conf.d/60-sr.conf
	fi
	# What the service prints while the soft-reboot stops it (journald
	# is gone by then) on the console too.
	mkdir -p /etc/systemd/system/ghostswap.service.d
	printf '[Service]\nStandardOutput=journal+console\nStandardError=journal+console\n' \
		>/etc/systemd/system/ghostswap.service.d/90-sr-console.conf
	systemctl daemon-reload
	systemctl start ghostswap.service || fail "ghostswap.service did not start"
	systemd-run -q --unit=gs-sr-load -p MemoryMax=16M -E GSVERIFY_STOP=1 \
		gsverify 32 1 5 zstr || fail "systemd-run"
	wait_stopped "$(systemctl show -p MainPID --value gs-sr-load)" 60 ||
		fail "the workload did not finish writing: $(systemctl status gs-sr-load --no-pager 2>&1 | tail -n 5)"
	echo "backing_dev $(cat $SYS/backing_dev); mm_stat: $(cat $SYS/mm_stat); bd_stat: $(cat $SYS/bd_stat)"
	ghostswapctl writeback all || {
		echo "bd_stat: $(cat $SYS/bd_stat)"
		dmesg | grep ghostswap | tail -n 5
		fail "writeback"
	}
	echo "held: $(mstat orig) bytes, $(bdstat count) pages written back"
	[ "$(bdstat count)" -gt 0 ] || fail "nothing written back"
	[ $case = loop ] || used=$(sr_used)
	cat >$SR/before <<-EOS
	b_refcnt=$(cat /sys/module/ghostswap/refcnt)
	b_loops=$(losetup -n -O NAME | wc -l)
	b_base=$base
	b_used=$used
	b_chunk=$chunk
	b_mount=$(sr_mount_id)
	EOS
	cat $SR/before
	# The check after the soft-reboot must be able to tell: the old
	# chunks take more than the one a new directory gets at once.
	[ $case = loop ] || [ $((used - base)) -ge $((2 * chunk)) ] ||
		fail "the chunks take $((used - base)) bytes: fewer than two of $chunk"
	[ $case = chunks ] || [ "$(sr_loops)" = "$(cat $SYS/backing_dev)" ] ||
		fail "backing_dev $(cat $SYS/backing_dev), loop devices of $SR_FILE: $(sr_loops)"
	return 0
}

# sr_check CASE: after the soft-reboot.
sr_check() {
	local case=$1 rc=0 used
	. $SR/before
	wait_active ghostswap.service 180 || {
		journalctl -b -u ghostswap.service --no-pager | tail -n 15
		fail "ghostswap.service not active after the soft-reboot"
	}
	swap_per_config
	echo "refcnt $(cat /sys/module/ghostswap/refcnt) (before $b_refcnt), backing_dev $(cat $SYS/backing_dev)"
	echo "bd_stat: $(cat $SYS/bd_stat)"
	[ "$(bdstat count)" = 0 ] || { echo "pages on the backing store of a new device"; rc=1; }
	[ "$(cat /sys/module/ghostswap/refcnt)" = "$b_refcnt" ] ||
		{ echo "module references: $(cat /sys/module/ghostswap/refcnt), before $b_refcnt"; rc=1; }
	if [ $case = chunks ]; then
		used=$(sr_used)
		echo "$SR_CHUNKS: $((b_used - b_base)) bytes before, $((used - b_base)) after (a chunk: $b_chunk)"
		[ "$(cat $SYS/backing_dev)" = $SR_CHUNKS ] || { echo "not the directory"; rc=1; }
		[ -n "$(sr_mount_id)" ] && [ "$(sr_mount_id)" != "$b_mount" ] ||
			{ echo "$SR_CHUNKS not mounted again (mount $(sr_mount_id), before $b_mount)"; rc=1; }
		[ $((used - b_base)) -le $((b_chunk + (4 << 20))) ] ||
			{ echo "the old device's chunks are still there"; rc=1; }
	else
		echo "loop devices of $SR_FILE: $(sr_loops); all: $(losetup -n -O NAME | wc -l), before $b_loops"
		[ "$(sr_loops)" = "$(cat $SYS/backing_dev)" ] ||
			{ echo "not one loop device, the new device's"; rc=1; }
		[ "$(losetup -n -O NAME | wc -l)" = "$b_loops" ] ||
			{ echo "a loop device left over: $(losetup -a)"; rc=1; }
	fi
	# The configuration of the boot again; the next round, if any,
	# starts the service.
	systemctl stop ghostswap.service
	echo 64 >/sys/module/ghostswap/parameters/chunk_mib
	rm -f /etc/ghostswap.conf.d/60-sr.conf $SR_FILE \
		/etc/systemd/system/ghostswap.service.d/90-sr-console.conf
	if [ $case = chunks ]; then
		systemctl disable -q --now "$SR_MOUNT"
		rm -f /etc/systemd/system/$SR_MOUNT
	fi
	systemctl daemon-reload
	return $rc
}

# The script again after a soft-reboot: the shared folders mounted as
# the boot had them, the environment it had.
sr_install_resume() {
	local m src fs opts v
	{
		echo '#!/bin/bash'
		for m in /opt/gs-src /opt/gs-out; do
			read -r src fs opts < <(findmnt -n -o SOURCE,FSTYPE,OPTIONS --mountpoint $m)
			echo "mkdir -p $m && mount -t $fs -o $opts $src $m || exit 1"
		done
		for v in GS_GUEST_PAGING GS_BOOT_VERSION GS_TEARDOWN_ROUNDS; do
			[ -z "${!v:-}" ] || echo "export $v=${!v}"
		done
		echo 'exec bash /opt/gs-src/tests/guest/boot.sh'
	} >$SR/resume.sh
	cat >/etc/systemd/system/gs-soft-reboot-test.service <<-EOU
	[Unit]
	Description=ghostswap boot test: the checks after a soft-reboot
	After=multi-user.target
	[Service]
	Type=simple
	ExecStart=/bin/bash $SR/resume.sh
	StandardOutput=journal+console
	[Install]
	WantedBy=multi-user.target
	EOU
	systemctl enable -q gs-soft-reboot-test.service
}

# sr_next N: the soft-reboot round N, or the end of the boot test.
sr_next() {
	local n=$1 case=${SR_CASES[$1]:-} t0
	if [ -z "$case" ]; then
		tap_plan
		echo done >"$GS_OUT/boot.done"
		# After a soft-reboot no virtme-init waits to power off.
		if [ -e $SR/resumed ]; then
			sync
			poweroff -f
		fi
		return 0
	fi
	if ! tap_run "$(sr_test_before $case)" /tmp/boot-test.log sr_prepare $case; then
		systemctl stop gs-sr-load 2>/dev/null
		tap_not_ok "$(sr_test_after $case): not run"
		sr_next $((n + 1))
		return
	fi
	echo $n >$SR/case
	sr_install_resume
	sync
	t0=$SECONDS
	systemctl soft-reboot
	sleep 300
	rm -f $SR/case
	tap_not_ok "$(sr_test_after $case): no soft-reboot $((SECONDS - t0)) s after it was asked for"
	sr_next $((n + 1))
}

# After a soft-reboot: the TAP stream goes on where it was.
sr_resume() {
	local n
	n=$(cat $SR/case)
	rm -f $SR/case
	touch $SR/resumed
	tap_n=$(grep -cE '^(ok|not ok) ' "$TAP_OUT")
	tap_nfail=$(grep -cE '^not ok ' "$TAP_OUT")
	[ "$tap_nfail" = 0 ] || tap_rc=1
	tap_run "$(sr_test_after ${SR_CASES[$n]})" /tmp/boot-test.log \
		sr_check ${SR_CASES[$n]}
	sr_next $((n + 1))
}

TESTS=(
	"systemd boot: ghostswap.service enabled and active" t_boot
	"the module is the one DKMS installed, of the tools' version" t_dkms_module
	"swap on /dev/ghostswap per the main file and drop-ins, sizes of ram, zswap turned off" t_config_applied
	"ghostswapctl config: the files in order, each key's origin and value" t_config_origins
	"ghostswapctl doctor: every check ok, the zswap trap named" t_doctor
	"udev tagged the device for systemd" t_udev_tagged
	"ghostswapctl status --json reports it" t_status_json
	"a verified workload swaps through it" t_swap_works
	"systemctl stop: swapoff and reset" t_stop_resets
	"udev: the device appearing starts the service" t_udev_starts_service
	"a backing device appearing late: the service waits for it, then sets up" t_backing_late
	"a file as backing device: created, on a loop device, detached at stop" t_backing_file
	"ghostswap-writeback.timer fires and its service writes idle pages back" t_writeback_timer
	"systemd.ghostswap=0: the service runs, sets nothing up, says why" t_cmdline_off
	"systemd.ghostswap with no configuration file: the defaults" t_cmdline_on_no_files
	"node_exporter serves the metrics ghostswap-metrics.service wrote, as sysfs shows them" t_node_exporter
	"teardowns with udev running (stop under a workload, with a backing file, reset after mkswap and mkfs): 0 refused" t_teardown_rounds
)
if [ -s $SR/case ]; then
	sr_resume
	exit
fi
mkdir -p $SR
: >"$TAP_OUT"
# The plan: TESTS, then each soft-reboot round's two.
{
	for ((i = 0; i < ${#TESTS[@]}; i += 2)); do
		echo "${TESTS[$i]}"
	done
	for c in "${SR_CASES[@]}"; do
		sr_test_before $c
		sr_test_after $c
	done
} >"$TAP_PLAN_FILE"
TAP_PLAN_FILE= tap_tests /tmp/boot-test.log "${TESTS[@]}"
sr_next 0
