# SPDX-License-Identifier: GPL-2.0
# Shared settings for the ghostswap test bed scripts (sourced, not run).

GS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GS_CACHE=${GHOSTSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ghostswap}
GS_ROOT=$GS_CACHE/root-trixie		# guest root filesystem (a Debian chroot)
# tests/guest.sh can boot another root (an overlay of GS_ROOT, tests/boot.sh).
GS_BOOT_ROOT=${GS_BOOT_ROOT:-$GS_ROOT}
GS_VENV=$GS_CACHE/venv			# virtme-ng
GS_MIRROR=${GHOSTSWAP_MIRROR:-http://deb.debian.org/debian}
GS_SUITE=trixie
GS_KSUITE=${GHOSTSWAP_KSUITE:-trixie-backports}	# where the 7.x kernel comes from
GS_VNG_VERSION=1.42

gs_log() { printf '[ghostswap] %s\n' "$*" >&2; }
gs_die() { gs_log "error: $*"; exit 1; }

# Newest kernel version installed in the guest root, e.g. 7.3.4+deb13-amd64.
gs_kver() {
	local v
	v=$(ls "$GS_ROOT/lib/modules" 2>/dev/null | sort -V | tail -n 1)
	[ -n "$v" ] || gs_die "no kernel in $GS_ROOT (run tests/provision.sh)"
	echo "$v"
}

gs_version() {
	sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$GS_TOP/dkms.conf"
}

gs_umount_root() {
	local m
	for m in dev sys proc; do
		mountpoint -q "$1/$m" && umount -l "$1/$m"
	done
	return 0
}

# Remove a guest root tree; never follows the host's /dev, /sys or /proc.
gs_rm_root() {
	gs_umount_root "$1"
	rm -rf --one-file-system "$1"
}

# Run a command inside the guest root with /proc, /sys and /dev mounted;
# the mounts go away again even when the command fails or is interrupted.
gs_chroot() {
	local m rc=0
	trap 'gs_umount_root "$GS_ROOT"; exit 130' INT TERM
	for m in proc sys dev; do
		mountpoint -q "$GS_ROOT/$m" || mount --bind "/$m" "$GS_ROOT/$m"
	done
	chroot "$GS_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" || rc=$?
	gs_umount_root "$GS_ROOT"
	trap - INT TERM
	return $rc
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

# gs_step DESC NAME CMD...: one TAP line for CMD, numbered by gs_n; its
# output goes to $GS_STEP_LOGS/NAME.log, whose tail follows a failure.
# A failure also sets gs_rc=1.
gs_n=0
gs_rc=0
gs_step() {
	local desc=$1 log=${GS_STEP_LOGS:-.}/$2.log
	shift 2
	gs_n=$((gs_n + 1))
	if "$@" >"$log" 2>&1; then
		echo "ok $gs_n - $desc"
	else
		echo "not ok $gs_n - $desc"
		tail -n 30 "$log" | sed 's/^/# /'
		gs_rc=1
		return 1
	fi
}

# gs_tap_append FILE: the test lines of another TAP stream, renumbered
# after ours (gs_n); its plan line is dropped, a failure sets gs_rc=1.
gs_tap_append() {
	local line
	while read -r line; do
		case $line in
		"ok "*|"not ok "*)
			gs_n=$((gs_n + 1))
			[[ $line == not* ]] && gs_rc=1
			echo "$line" | sed -E "s/^(ok|not ok) [0-9]+/\\1 $gs_n/" ;;
		1..*) ;;
		*) echo "$line" ;;
		esac
	done <"$1"
}
