# SPDX-License-Identifier: GPL-2.0
# The test bed that tests/ and bench/ share: where things are, the guest
# root, the emulator, the kernel source tree (sourced, not run).

GS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GS_CACHE=${GHOSTSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ghostswap}
GS_ROOT=$GS_CACHE/root-trixie		# guest root filesystem (a Debian chroot)
# testbed/guest.sh can boot another root (an overlay of GS_ROOT, tests/boot.sh).
GS_BOOT_ROOT=${GS_BOOT_ROOT:-$GS_ROOT}
GS_VENV=$GS_CACHE/venv			# virtme-ng
GS_MIRROR=${GHOSTSWAP_MIRROR:-http://deb.debian.org/debian}
GS_SUITE=trixie
GS_KSUITE=${GHOSTSWAP_KSUITE:-trixie-backports}	# where the 7.x kernel comes from
GS_VNG_VERSION=1.42

# TAP, for the host's stages as for the guest's tests.
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

gs_log() { printf '[ghostswap] %s\n' "$*" >&2; }
gs_die() { gs_log "error: $*"; exit 1; }

# Newest Debian kernel installed in the guest root, e.g. 7.3.4+deb13-amd64
# (not the debug-kernel lane's own build, tests/debug-kernel.sh).
gs_kver() {
	local v
	v=$(ls "$GS_ROOT/lib/modules" 2>/dev/null | grep -- '-amd64$' |
		grep -v -- '-rt-amd64$' | sort -V | tail -n 1)
	[ -n "$v" ] || gs_die "no kernel in $GS_ROOT (run testbed/provision.sh)"
	echo "$v"
}

# The other kernels the guest boots (testbed/provision.sh installs them):
# Debian stable's 6.12 LTS, and the PREEMPT_RT flavour of the 7.x kernel.
# Empty if the root has none.
gs_kver_lts() {
	ls "$GS_ROOT/lib/modules" 2>/dev/null | grep -E -- '^6\.12\.[0-9]+\+deb[0-9]+-amd64$' |
		sort -V | tail -n 1
}
gs_kver_rt() {
	local k
	k=$(gs_kver)
	[ -d "$GS_ROOT/lib/modules/${k%-amd64}-rt-amd64" ] && echo "${k%-amd64}-rt-amd64"
}

# The arm64 lane's root (testbed/arm64.sh makes it) and its kernel, e.g.
# 7.3.4+deb13-arm64 (empty if it has none).
GS_ARM64_ROOT=$GS_CACHE/root-arm64
gs_kver_arm64() {
	ls "$GS_ARM64_ROOT/lib/modules" 2>/dev/null | grep -- '-arm64$' |
		sort -V | tail -n 1
}

# Every Debian kernel of the guest root with its headers, for DKMS.
gs_kvers() {
	local k
	for k in $(ls "$GS_ROOT/lib/modules" 2>/dev/null | grep -- '-amd64$'); do
		[ -e "$GS_ROOT/lib/modules/$k/build" ] && echo "$k"
	done
}

gs_version() {
	sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$GS_TOP/dkms.conf"
}

# A root's dev, sys or proc that is a symlink (debootstrap's first stage
# makes proc one, to the host's /proc) is never a mount of ours: leave it.
gs_umount_root() {
	local m
	[ -n "$1" ] || return 0
	for m in dev sys proc; do
		[ ! -L "$1/$m" ] && mountpoint -q "$1/$m" && umount -l "$1/$m"
	done
	return 0
}

# Remove a guest root tree; never follows the host's /dev, /sys or /proc.
gs_rm_root() {
	gs_umount_root "$1"
	rm -rf --one-file-system "$1"
}

# gs_ns_run ROOT ro|rw BUILDDIR CMD...: CMD chrooted in ROOT, in a mount
# namespace of its own with /proc, /dev and a tmpfs /tmp (BUILDDIR, if
# not empty, at /tmp/gs). The mounts die with the namespace: nothing is
# left mounted after an interrupt, and nobody else sees them.
gs_ns_run() {
	mkdir -p "$GS_CACHE/.ns-mnt"
	unshare --mount --propagation private -- /bin/bash -ec '
		root=$1 mode=$2 build=$3 m=$4
		shift 4
		mount --bind "$root" "$m"
		[ "$mode" = rw ] || mount -o remount,bind,ro "$m"
		mount -t proc proc "$m/proc"
		mount --rbind /dev "$m/dev"
		mount -t tmpfs tmpfs "$m/tmp"
		if [ -n "$build" ]; then
			mkdir "$m/tmp/gs"
			mount --bind "$build" "$m/tmp/gs"
		fi
		exec chroot "$m" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' ns-run "$1" "$2" "$3" "$GS_CACHE/.ns-mnt" "${@:4}"
}

# Run a command inside the guest root with /proc, /sys and /dev mounted;
# the mounts go away again even when the command fails or is interrupted,
# once the last chroot of that root has ended: stages that run side by
# side (the static checks beside a lane's) may both be in it. Each holds
# a shared lock on ROOT.chroot-lock while inside; the one that leaves
# and gets it exclusive unmounts.
gs_chroot() {
	local m rc=0 lk
	exec {lk}>"${GS_ROOT%/}.chroot-lock"
	flock -s "$lk"
	# shellcheck disable=SC2064
	trap "gs_chroot_leave $lk; exit 130" INT TERM
	for m in proc sys dev; do
		mountpoint -q "$GS_ROOT/$m" || mount --bind "/$m" "$GS_ROOT/$m"
	done
	chroot "$GS_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" || rc=$?
	gs_chroot_leave "$lk"
	trap - INT TERM
	return $rc
}
gs_chroot_leave() {
	! flock -x -n "$1" || gs_umount_root "$GS_ROOT"
	eval "exec $1>&-"
}

# The emulator for software emulation (TCG). TCG runs single-threaded:
# all vCPUs take turns on one host thread. With one thread per vCPU
# (thread=multi) QEMU can keep a stale translation of kernel text that
# the guest has just live-patched, and the guest dies with "Oops: int3" at
# a site whose bytes in memory are already the new ones. The cause is in
# QEMU's store path (accel/tcg/cputlb.c, notdirty_write()): a store to a
# page holding translated code first invalidates the page's translations,
# under the page lock, and only then writes the bytes. A vCPU that
# translates that code in between reads the old bytes and installs a
# translation of them that nothing invalidates again. Linux patches a
# static key site with int3, then the tail, then the first byte
# (text_poke_bp); a translation made just before that last store keeps
# the int3 after the patch has finished, and every vCPU that runs the
# block dies on it. With one thread no vCPU runs between the
# invalidation and the store. Seen with QEMU 7.2 and 10.0 alike (a memcg
# key flipped by the first memory cgroup; tracepoint and schedstats keys
# in tests/guest/core.sh t_testbed_text_patching). Each guest then
# keeps one host CPU busy, so tests/run.sh runs its two long guests side
# by side. GHOSTSWAP_TCG=multi brings the fault back (to reproduce it);
# the debug lane runs it with a kernel that patches no text
# (tests/debug-kernel.sh).
#
# GS_GUEST_LA57=0 takes LA57 (5-level paging) from the emulated CPU; the
# debug-kernel lane sets it. Linux re-reads the boot CPU's features in
# identify_cpu() with interrupts already on (start_kernel() enables them
# before arch_cpu_finalize_init()): it clears boot_cpu_data.x86_capability
# and fills it again. A timer interrupt in that window that runs a
# static_cpu_has() site not yet patched by alternative_instructions()
# reads the cleared bits, and with 5-level paging pgtable_l5_enabled()
# turns false under it. Under KASAN that moves the shadow bounds
# (__VIRTUAL_MASK_SHIFT): every direct-map address became a
# "wild-memory-access" (do_raw_spin_lock from handle_edge_irq) and the
# debug kernel hung before userspace, once, on a CI machine under TCG.
# The other guests keep LA57 where the CPU has it (TCG's "max" does):
# the module's handle encoding must hold on the 5-level layout too.
# tests/guest/core.sh t_testbed_paging checks that each guest runs with
# the depth GS_GUEST_PAGING says.
# GS_QEMU_MIN: testbed/provision.sh unpacks Debian's newer build (the host
# release's backports) into GS_QEMU_DIR on a host with an older QEMU.
GS_QEMU_MIN=10.0
GS_QEMU_DIR=$GS_CACHE/qemu

# gs_qemu_version BIN: "10.0.2" (nothing if BIN does not run).
gs_qemu_version() {
	"$1" --version 2>/dev/null |
		sed -n '1s/^QEMU emulator version \([0-9][0-9.]*\).*/\1/p'
}

# gs_qemu_cpu_ok QEMU MODEL: the emulator takes "-cpu MODEL" (its
# properties too: a machine is made, stopped before it runs, and quit).
gs_qemu_cpu_ok() {
	echo quit | timeout 30 "$1" -M pc,accel=tcg -cpu "$2" -S -display none \
		-nodefaults -no-user-config -monitor stdio >/dev/null 2>&1
}

# gs_version_ge A B: version A is B or newer.
gs_version_ge() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]
}

# gs_qemu_env: choose the emulator: GS_QEMU_BIN (the binary), GS_QEMU_OPTS
# (extra QEMU options), GS_QEMU_DESC (for logs and reports),
# GS_GUEST_PAGING (4 or 5: the guest's page-table levels) and
# GS_QEMU_MULTI (1: a TCG thread per vCPU; gs_qemu_multi_run).
# GHOSTSWAP_QEMU=BIN forces a binary, GHOSTSWAP_TCG=multi one TCG thread
# per vCPU (unsafe: see above). GHOSTSWAP_ICOUNT=N (single-threaded TCG
# only) runs the guest on QEMU's instruction counter: its clock advances
# 2^N ns per instruction executed, by any vCPU, and jumps over idle time
# (sleep=off). Guest time then counts instructions, whatever else the
# host is doing: bench/run.sh's icount section. GHOSTSWAP_QEMU_PLUGIN=
# FILE.so[,ARG=VALUE...] loads a TCG plugin (bench/funcs.sh).
gs_qemu_env() {
	local v tcg cpu
	if [ "${GS_ARCH:-x86_64}" = arm64 ]; then
		gs_qemu_env_arm64
		return
	fi
	gs_qemu_find qemu-system-x86_64 "${GHOSTSWAP_QEMU:-}"
	GS_QEMU_MULTI=0
	v=$(gs_qemu_version "$GS_QEMU_BIN")
	GS_QEMU_DESC="QEMU ${v:-?}"
	GS_QEMU_OPTS=
	if gs_use_kvm; then
		GS_QEMU_DESC="$GS_QEMU_DESC, KVM"
		cpu=host
	else
		tcg=${GHOSTSWAP_TCG:-single}
		case $tcg in
		single|multi) ;;
		*) gs_die "GHOSTSWAP_TCG=$tcg: single or multi" ;;
		esac
		GS_QEMU_OPTS="-accel tcg,thread=$tcg"
		GS_QEMU_DESC="$GS_QEMU_DESC, TCG $tcg-threaded"
		[ "$tcg" = single ] || GS_QEMU_MULTI=1
		cpu=max
	fi
	if [ -n "${GHOSTSWAP_ICOUNT:-}" ]; then
		[[ $GHOSTSWAP_ICOUNT =~ ^[0-9]$ ]] ||
			gs_die "GHOSTSWAP_ICOUNT=$GHOSTSWAP_ICOUNT: a shift from 0 to 9"
		[ "${cpu:-}" = max ] && [ "${tcg:-}" = single ] ||
			gs_die "GHOSTSWAP_ICOUNT needs single-threaded TCG (GHOSTSWAP_KVM=0, GHOSTSWAP_TCG=single)"
		GS_QEMU_OPTS="$GS_QEMU_OPTS -icount shift=$GHOSTSWAP_ICOUNT,sleep=off"
		GS_QEMU_DESC="$GS_QEMU_DESC, icount shift=$GHOSTSWAP_ICOUNT"
		# One CPU model for every count: without the fast short
		# string operations (FSRS, FSRM), which QEMU's "max" has
		# from 8.x on and counts byte by byte (a 16 KiB memset as
		# 16 Ki instructions): the kernel then runs memset and
		# memcpy as the loops it uses on CPUs without them.
		if gs_qemu_cpu_ok "$GS_QEMU_BIN" max,fsrs=off,fsrm=off; then
			cpu=max,fsrs=off,fsrm=off
		fi
		GS_QEMU_DESC="$GS_QEMU_DESC, -cpu $cpu"
	fi
	# GS_GUEST_PAGING: the page-table levels the guest gets (guest.sh
	# passes it on; tests/guest/core.sh t_testbed_paging checks it). The
	# host's la57 flag stands for its CPU's: KVM gives the guest the
	# host's LA57 under "-cpu host".
	if [ "${GS_GUEST_LA57:-1}" = 0 ]; then
		GS_QEMU_OPTS="${GS_QEMU_OPTS:+$GS_QEMU_OPTS }-cpu $cpu,la57=off"
		GS_QEMU_DESC="$GS_QEMU_DESC, no LA57"
		GS_GUEST_PAGING=4
	elif [ "${cpu%%,*}" = max ] || grep -qw la57 /proc/cpuinfo; then
		[ "$cpu" = "${cpu%%,*}" ] ||
			GS_QEMU_OPTS="${GS_QEMU_OPTS:+$GS_QEMU_OPTS }-cpu $cpu"
		GS_GUEST_PAGING=5
	else
		GS_GUEST_PAGING=4
		GS_QEMU_DESC="$GS_QEMU_DESC, no LA57 on this CPU"
	fi
	if [ -n "${GHOSTSWAP_QEMU_PLUGIN:-}" ]; then
		[ "${cpu%%,*}" = max ] ||
			gs_die "GHOSTSWAP_QEMU_PLUGIN needs software emulation (GHOSTSWAP_KVM=0)"
		GS_QEMU_OPTS="$GS_QEMU_OPTS -plugin file=$GHOSTSWAP_QEMU_PLUGIN"
		GS_QEMU_DESC="$GS_QEMU_DESC, plugin ${GHOSTSWAP_QEMU_PLUGIN%%,*}"
	fi
}

# gs_qemu_find NAME [FORCED]: GS_QEMU_BIN, the emulator NAME: FORCED if
# given, else the one testbed/provision.sh unpacked, else the host's.
gs_qemu_find() {
	GS_QEMU_BIN=${2:-}
	[ -n "$GS_QEMU_BIN" ] || [ ! -x "$GS_QEMU_DIR/bin/$1" ] ||
		GS_QEMU_BIN=$GS_QEMU_DIR/bin/$1
	[ -n "$GS_QEMU_BIN" ] ||
		GS_QEMU_BIN=$(PATH=$PATH:/usr/sbin:/sbin command -v "$1") ||
		gs_die "no $1 (run testbed/provision.sh)"
}

# GS_ARCH=arm64 (the arm64 lane): qemu-system-aarch64's "virt" machine,
# always emulated (these hosts are x86-64), single-threaded like the
# others, with the "max" CPU: it has LPA2, so Debian's arm64 kernel
# (52-bit VA, 4 KiB pages) runs on 5-level page tables. pauth-impdef:
# pointer authentication with QEMU's own cheap hash (emulating the
# architected one costs TCG dearly); the kernel uses it all the same.
# GHOSTSWAP_QEMU_ARM64=BIN forces a binary.
gs_qemu_env_arm64() {
	local v
	gs_qemu_find qemu-system-aarch64 "${GHOSTSWAP_QEMU_ARM64:-}"
	v=$(gs_qemu_version "$GS_QEMU_BIN")
	GS_QEMU_OPTS="-accel tcg,thread=single -cpu max,pauth-impdef=on"
	GS_QEMU_DESC="QEMU ${v:-?} arm64 virt, TCG single-threaded"
	GS_QEMU_MULTI=0
	GS_GUEST_PAGING=5
}

# gs_times_cpu FILE: the CPU seconds (user + system, one decimal) of the
# children in FILE, the output of the shell builtin times (its second
# line, "1m2.500s 0m3.250s"). Run times in the shell that waited for
# them, into a file: a subshell's children are not its parent's.
gs_times_cpu() {
	awk 'NR == 2 {
		for (i = 1; i <= 2; i++) {
			split($i, f, /[ms]/)
			cpu += f[1] * 60 + f[2]
		}
		printf "%.1f\n", cpu
	}' "$1"
}

# A guest whose vCPUs each have a TCG thread (GS_QEMU_MULTI=1) wastes its
# host CPUs when they are shared: a vCPU spins on a lock, or waits for an
# IPI's answer, while the vCPU it waits for is not running at all.
# Measured on the 2-core test bed: the debug lane alone used 1.4 CPUs;
# beside four other guests it burned 2.5 times the CPU for the same
# progress. So one such guest runs at a time: gs_qemu_multi_lock takes
# $GS_QEMU_MULTI_LOCK on file descriptor 6 of the calling shell (held
# until it exits); kunit/run.sh's QEMU wrapper takes it the same way.
GS_QEMU_MULTI_LOCK=$GS_CACHE/.multi-tcg.lock
gs_qemu_multi_lock() {
	exec 6>"$GS_QEMU_MULTI_LOCK"
	flock 6
}

# gs_host_cpus: the host CPUs this shell may use, one line ("0 1").
gs_host_cpus() {
	local r a b i cpus=()

	for r in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr , ' '); do
		a=${r%-*} b=${r#*-}
		for ((i = a; i <= b; i++)); do
			cpus+=("$i")
		done
	done
	echo "${cpus[*]}"
}

# gs_pin_cpu_take: the host CPU that the fewest other pinned guests hold
# now, on stdout, and a claim on it ($GS_CACHE/.pin/CPU.PID, for this
# shell's PID) until gs_pin_cpu_drop. Claims of processes that are gone
# do not count.
GS_PIN_DIR=$GS_CACHE/.pin
gs_pin_cpu_take() {
	local cpus=() c f n best= bestn= lk

	read -r -a cpus <<<"$(gs_host_cpus)"
	mkdir -p "$GS_PIN_DIR"
	exec {lk}>"$GS_PIN_DIR/.lock"
	flock "$lk"
	for f in "$GS_PIN_DIR"/*.*; do
		[ -e "$f" ] || continue
		kill -0 "${f##*.}" 2>/dev/null || rm -f "$f"
	done
	for c in "${cpus[@]}"; do
		n=0
		for f in "$GS_PIN_DIR/$c".*; do
			[ -e "$f" ] && n=$((n + 1))
		done
		if [ -z "$bestn" ] || [ "$n" -lt "$bestn" ]; then
			best=$c bestn=$n
		fi
	done
	: >"$GS_PIN_DIR/$best.$$"
	eval "exec $lk>&-"
	echo "$best"
}
gs_pin_cpu_drop() {
	rm -f "$GS_PIN_DIR"/*."$$"
}

# gs_qemu_pin_vcpus PIDFILE N: give each of the N vCPU threads of the
# multi-threaded guest whose QEMU writes PIDFILE a host CPU of its own
# (vCPU i on the i-th CPU this shell may use, round robin), and say so on
# stdout. Run in the background as the guest boots. Unpinned, a host
# whose CPUs are busy with other guests may keep both vCPU threads on one
# CPU's run queue, where they only take turns (a CI run: 279 token passes
# a second in t_testbed_parallel, against millions). The threads are found
# by the names QEMU gives them under "-name debug-threads=on"
# ("CPU 0/TCG"). A guest too short-lived to be pinned says so.
gs_qemu_pin_vcpus() {
	local pidf=$1 n=$2 pid= cpus=() i t comm v tries=0 found

	read -r -a cpus <<<"$(gs_host_cpus)"
	if [ "${#cpus[@]}" -lt 2 ]; then
		echo "not pinned: this host gives ${#cpus[@]} CPU"
		return 0
	fi
	while [ $((tries += 1)) -le 600 ]; do
		[ -z "$pid" ] && [ -s "$pidf" ] && pid=$(cat "$pidf")
		if [ -n "$pid" ]; then
			found=0
			for t in /proc/"$pid"/task/*; do
				comm=$(cat "$t/comm" 2>/dev/null) || continue
				[[ $comm =~ ^CPU\ [0-9]+/TCG$ ]] && found=$((found + 1))
			done
			[ "$found" -ge "$n" ] && break
		fi
		sleep 0.2
	done
	if [ -z "$pid" ] || [ "${found:-0}" -lt "$n" ]; then
		echo "not pinned: ${found:-0} of $n vCPU threads seen in QEMU ${pid:-(no pid file)}"
		return 0
	fi
	for t in /proc/"$pid"/task/*; do
		comm=$(cat "$t/comm" 2>/dev/null) || continue
		[[ $comm =~ ^CPU\ ([0-9]+)/TCG$ ]] || continue
		v=${BASH_REMATCH[1]}
		i=${cpus[v % ${#cpus[@]}]}
		if taskset -pc "$i" "${t##*/}" >/dev/null; then
			echo "vCPU $v (thread ${t##*/}) on host CPU $i"
		else
			echo "vCPU $v (thread ${t##*/}): taskset failed"
		fi
	done
}

# An overlay of the guest root, its upper layer thrown away afterwards:
# for a test that boots or installs into the root without changing it
# (tests/boot.sh, tests/package.sh). The root is the lower layer: nothing
# may install into it while the overlay is mounted, so gs_overlay_lock
# takes $GS_CACHE/.build.lock shared on file descriptor 8 of the calling
# shell (testbed/build.sh and tests/debug-kernel.sh take it alone).
gs_overlay_lock() {
	exec 8>"$GS_CACHE/.build.lock"
	flock -s 8
}

# gs_overlay_remove DIR: unmount DIR/root and remove DIR. A process of the
# last chroot command may still hold the overlay for a moment: a few
# tries, then a lazy unmount.
gs_overlay_remove() {
	local merged=$1/root tries=5
	gs_umount_root "$merged"
	while mountpoint -q "$merged" && [ $((tries -= 1)) -ge 0 ]; do
		umount "$merged" 2>/dev/null || sleep 1
	done
	mountpoint -q "$merged" && umount -l "$merged"
	rm -rf --one-file-system "$1"
}

# gs_overlay_mount DIR [LOWER]: a fresh overlay at DIR/root of the guest
# root, or of LOWER (which may be such an overlay itself: a throwaway
# layer over a throwaway layer).
gs_overlay_mount() {
	gs_overlay_remove "$1"
	mkdir -p "$1/upper" "$1/work" "$1/root"
	mount -t overlay overlay \
		-o "lowerdir=${2:-$GS_ROOT},upperdir=$1/upper,workdir=$1/work" "$1/root"
}

# Use real KVM only where it can boot a stock kernel: /dev/kvm present and
# the CPU advertises hardware virtualisation. GHOSTSWAP_KVM=0/1 overrides.
gs_use_kvm() {
	case "${GHOSTSWAP_KVM:-auto}" in
	1|yes) return 0 ;;
	0|no) return 1 ;;
	esac
	[ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo
}

# gs_ksrc: the kernel source tree to build in: GHOSTSWAP_KSRC, or the
# newest tree testbed/provision.sh unpacked in the cache (empty if none).
gs_ksrc() {
	local t=${GHOSTSWAP_KSRC:-}
	if [ -z "$t" ]; then
		t=$(ls -d "$GS_CACHE"/linux-source-*/.gs-unpacked 2>/dev/null |
			sort -V | tail -n 1 || true)
		t=${t%/.gs-unpacked}
	fi
	echo "$t"
}

# gs_link_tree KSRC [LINK BUILD]: link this checkout into the kernel tree
# KSRC as drivers/block/ghostswap (KUnit builds it there), through the
# directory LINK (default $GS_CACHE/kunit-link). Objects a build made from
# another clone's sources are removed (in BUILD, else in every
# $GS_CACHE/kunit-build*). The caller holds the tree's lock
# ($GS_CACHE/kunit.lock for the unpacked tree).
gs_link_tree() {
	local link=${2:-$GS_CACHE/kunit-link}
	mkdir -p "$link"
	if [ "$(readlink "$link/module" || true)" != "$GS_TOP/module" ]; then
		if [ -n "${3:-}" ]; then
			rm -rf "$3/drivers/block/ghostswap"
		else
			rm -rf "$GS_CACHE"/kunit-build*/drivers/block/ghostswap
		fi
	fi
	ln -sfn "$GS_TOP/kunit/tree/Kconfig" "$link/Kconfig"
	ln -sfn "$GS_TOP/kunit/tree/Makefile" "$link/Makefile"
	ln -sfn "$GS_TOP/module" "$link/module"
	ln -sfn "$GS_TOP/kunit" "$link/kunit"
	ln -sfn "$link" "$1/drivers/block/ghostswap"
}

# gs_console_tap NAME OUTDIR: TAP lines for the kernel log of the boot
# testbed/guest.sh ran in OUTDIR: its whole console read on the host
# from the start, every kernel report (or QEMU error) a failing line with
# its context, the reports a test made on purpose checked to be seen
# (testbed/console-scan.py). Returns 1 on a failure.
gs_console_tap() {
	python3 "$GS_TOP/testbed/console-scan.py" "$1" "$2/console.log" \
		--qemu-err "$2/qemu.err"
}

# gs_console_report CONSOLE: the kernel's first report in a guest console
# log (Oops, BUG, panic, KASAN, lockdep, a sleeping call in atomic
# context, WARNING), 40 lines of it, as TAP diagnostics.
GS_REPORT_RE='Oops|BUG:|kernel BUG|Kernel panic|KASAN|KFENCE|WARNING:|general protection|possible circular|possible recursive|inconsistent lock|sleeping function called|suspicious RCU|unreferenced object|work func gs_[a-z0-9_]+ .*deprecated workqueue'
gs_console_report() {
	grep -m1 -A39 -E "$GS_REPORT_RE" "$1" 2>/dev/null | sed 's/^/# /'
}

# gs_guest_died OUTDIR PLAN TAP: the TAP lines for a guest that did not
# finish its script. PLAN lists the script's tests in order, one a line;
# TAP holds the lines of those that finished; OUTDIR/running names the one
# that was running. That one and every test that never ran fail; the
# kernel's report follows as diagnostics.
gs_guest_died() {
	local out=$1 plan=$2 tap=$3 ran running t i=0
	ran=$(grep -cE '^(ok|not ok) ' "$tap" 2>/dev/null)
	running=$(cat "$out/running" 2>/dev/null)
	if [ ! -s "$plan" ]; then
		echo "not ok - the guest died before its tests started ($(gs_guest_end "$out"))"
	else
		while read -r t; do
			i=$((i + 1))
			[ "$i" -gt "${ran:-0}" ] || continue
			if [ "$t" = "$running" ]; then
				echo "not ok - $t: the guest died while it ran ($(gs_guest_end "$out"))"
			else
				echo "not ok - $t: not run, the guest died${running:+ in $running}"
			fi
		done <"$plan"
	fi
	gs_console_report "$out/console.log"
	echo "# console: $out/console.log"
}

# gs_guest_end OUTDIR: how the guest ended, from testbed/guest.sh's record.
gs_guest_end() {
	local rc report
	rc=$(cat "$1/exit" 2>/dev/null)
	report=$(grep -m1 -oE "($GS_REPORT_RE).*" "$1/console.log" 2>/dev/null |
		cut -c1-80)
	case $rc in
	124) echo "killed at its time limit" ;;
	"") echo "no exit status" ;;
	*) echo "${report:+kernel report: }${report:-exit $rc}" ;;
	esac
}
