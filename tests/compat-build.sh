#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The build matrix: ghostswap built (not booted) with W=1 and sparse
# against each series of Debian kernel headers below that the archive
# still serves, the newest package of each, with the compiler Debian built
# that kernel with:
#
#   series  suite                 compiler  built in
#   7.3     trixie-backports      gcc 14    the guest root if it has those
#                                           headers, else the trixie chroot
#   newest  experimental (rc)     gcc 16    the sid chroot
#   newest  sid                   gcc 16    the sid chroot
#   6.12    trixie (+ security)   gcc 14    the trixie chroot
#   6.12    bookworm-backports    gcc 12    the bookworm chroot
#
# and for arm64, cross-compiled with the cross compiler Debian built
# those kernels with (aarch64-linux-gnu-gcc-N), its headers unpacked in
# the same chroots beside the amd64 ones (Debian's header packages are
# made to be used across architectures; the kbuild tools are the host's):
#
#   7.3     trixie-backports      gcc 14    the trixie chroot
#   newest  sid                   gcc 16    the sid chroot
#   6.12    trixie (+ security)   gcc 14    the trixie chroot
#
# "newest" is the newest series the suite serves, whatever its number
# (7.3 in experimental and 7.2 in sid on 2026-11-27): the kernels our
# users get next are built before they get them. Package versions are
# looked up in the archive at run time; a series the
# archive no longer serves is a TAP skip with the reason (tests/run.sh
# fails on it unless tests/skips-allowed lists it). The chroots are
# minimal (debootstrap --variant=minbase, no recommends), one per
# compiler, under $GS_CACHE/compat; header packages are unpacked into
# them (not installed: Debian's 6.12 headers would pull in the kernel
# image), their tools and compiler installed by apt. Every step is redone
# until its stamp file exists, so a run may be interrupted at any point.
# Everything runs in a mount namespace of its own: /proc, /dev and the
# build directory are mounted for the build only, and the guest root
# (testbed/provision.sh) is only ever mounted read-only.
#
# Prints TAP on stdout, one line per header set; exits non-zero on any
# failure. Logs: $GS_LOGDIR (default $GS_CACHE/compat/logs).
#
# usage: tests/compat-build.sh [SERIES/SUITE ...]  e.g. 6.12/trixie
#        GHOSTSWAP_COMPAT_OFFLINE=1: use the package lists as they are
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

[ "$(id -u)" = 0 ] || gs_die "the build matrix needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v debootstrap >/dev/null ||
	gs_die "no debootstrap (apt-get install debootstrap, or run testbed/provision.sh)"

GS_COMPAT=$GS_CACHE/compat
# Where a root may have sparse: its package, the chroots' copy of their
# suite's binary, sid's newer one (the guest root's is there too).
sparse_paths="/usr/bin/sparse /opt/gs-sparse/usr/bin/sparse /opt/gs-sparse-sid/usr/bin/sparse"
GS_SECURITY_MIRROR=${GHOSTSWAP_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
logs=${GS_LOGDIR:-$GS_COMPAT/logs}
mkdir -p "$GS_COMPAT" "$logs"
exec 9>"$GS_COMPAT/.lock"
flock 9

# The header sets: series/name, the suites that may serve it, the chroot
# that builds it.
sets="7.3/trixie-backports	trixie-backports	trixie
newest/experimental	experimental	sid
newest/sid	sid	sid
6.12/trixie	trixie,trixie-security,trixie-updates	trixie
6.12/bookworm-backports	bookworm-backports	bookworm
7.3/trixie-backports/arm64	trixie-backports	trixie
newest/sid/arm64	sid	sid
6.12/trixie/arm64	trixie,trixie-security,trixie-updates	trixie"

# set_arch SET: the architecture a set builds for, its third part
# (amd64 when it has none).
set_arch() {
	case $1 in
	*/*/*) echo "${1##*/}" ;;
	*) echo amd64 ;;
	esac
}

# The apt sources of each chroot.
sources() {
	case $1 in
	trixie)
		echo "deb $GS_MIRROR trixie main"
		echo "deb $GS_MIRROR trixie-updates main"
		echo "deb $GS_MIRROR trixie-backports main"
		echo "deb $GS_SECURITY_MIRROR trixie-security main" ;;
	bookworm)
		echo "deb $GS_MIRROR bookworm main"
		echo "deb $GS_MIRROR bookworm-updates main"
		echo "deb $GS_MIRROR bookworm-backports main" ;;
	sid)
		echo "deb $GS_MIRROR sid main"
		echo "deb $GS_MIRROR experimental main" ;;
	esac
}

# What runs inside a chroot to look up and unpack header packages.
inside=$(cat <<'EOF'
set -eu
# resolve SERIES SUITES ARCH: "PACKAGE VERSION SUITE" of the newest
# header package of SERIES (e.g. 6.12; "newest": any) for ARCH that one
# of SUITES (a,b,c) serves.
resolve() {
	local re n hit suites=$2 series=${1//./\\.}
	[ "$1" != newest ] || series='[0-9]+\.[0-9]+'
	re="^linux-headers-$series(\.[0-9]+)?(\+deb[0-9.]+)?-$3\$"
	for n in $(apt-cache search --names-only "$re" | cut -d' ' -f1 | sort -rV); do
		hit=$(apt-cache madison "$n" | while IFS='|' read -r _ v src; do
			set -- $src
			case ",$suites," in
			*",${2%%/*},"*) echo "$n $(echo $v) ${2%%/*}"; break ;;
			esac
		done)
		[ -z "$hit" ] || { echo "$hit"; return 0; }
	done
}

# unpack PACKAGE VERSION ARCH: install what the header package needs to
# build modules (its kbuild tools, the compiler: for another ARCH the
# cross compiler its .config names) by apt; unpack the headers
# themselves, listing their files in /var/lib/gs-compat/PACKAGE.files.
unpack() {
	local pkg=$1 ver=$2 dep name common= want= d=/var/cache/gs-compat cc
	[ "$3" = amd64 ] || pkg=$pkg:$3
	for dep in $(apt-cache show "$pkg=$ver" | sed -n 's/^Depends: //p' |
		     head -n 1 | tr -d ' ' | tr ',' '\n' | cut -d'|' -f1); do
		name=${dep%%(*}
		case $name in
		linux-image-*|linux-base*) ;;
		gcc-*-for-host) [ "$3" = amd64 ] && want="$want $name" ;;
		linux-headers-*-common) common=$name ;;
		linux-kbuild-*) want="$want $name=$ver" ;;
		*) want="$want $name" ;;
		esac
	done
	[ -n "$common" ] || { echo "$pkg: no -common package in its Depends"; exit 1; }
	dpkg --configure -a
	apt-get install -y -q $want
	rm -rf $d
	mkdir -p $d /var/lib/gs-compat
	(cd $d && apt-get download -q "$pkg=$ver" "$common=$ver")
	# bookworm's packages have /lib/modules: keep the /lib -> usr/lib link.
	for dep in $d/*.deb; do
		dpkg-deb --fsys-tarfile "$dep" | tar -x --keep-directory-symlink -C /
		dpkg-deb --fsys-tarfile "$dep" | tar -t
	done >/var/lib/gs-compat/${pkg%:*}.files
	rm -rf $d
	# The cross compiler: "aarch64-linux-gnu-gcc-14 (Debian ...)" is
	# gcc-14-aarch64-linux-gnu.
	if [ "$3" != amd64 ]; then
		cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' \
			/usr/src/${pkg%:*}/.config)
		case $cc in
		*-gcc-[0-9]*) apt-get install -y -q "gcc-${cc##*-gcc-}-${cc%-gcc-*}" ;;
		*) echo "$pkg: no cross compiler in its .config: $cc"; exit 1 ;;
		esac
	fi
	apt-get clean
}

# drop PACKAGE: remove headers unpack() unpacked, but files another set
# unpacked too (the -common package of one release is the amd64 and the
# arm64 headers' both), and their kbuild package unless another set's
# headers need it.
drop() {
	local f kb l others=/tmp/gs-others
	[ -f /var/lib/gs-compat/$1.files ] || return 0
	for l in /var/lib/gs-compat/*.files; do
		[ "$l" = /var/lib/gs-compat/$1.files ] || cat "$l"
	done | sed 's|^\./|/|' | sort -u >$others
	sed 's|^\./|/|' /var/lib/gs-compat/$1.files | sort -u |
		comm -23 - $others | sort -r | while read -r f; do
		if [ -d "$f" ] && [ ! -L "$f" ]; then
			rmdir "$f" 2>/dev/null || true
		else
			rm -f "$f"
		fi
	done
	rm -f /var/lib/gs-compat/$1.files $others
	kb=${1#linux-headers-}
	kb=${kb%-*}
	ls /var/lib/gs-compat/linux-headers-"$kb"-*.files >/dev/null 2>&1 && return 0
	kb=linux-kbuild-$kb
	# What sparse_setup() added, through the headers' scripts link.
	rm -f /usr/lib/$kb/scripts/checker-valid.sh
	dpkg-query -W "$kb" >/dev/null 2>&1 && apt-get purge -y -q "$kb"
	rm -rf /usr/lib/$kb
	return 0
}

# sparse_ok SPARSE: it parses what 7.x headers use (the test of the
# kernel's scripts/checker-valid.sh).
sparse_ok() {
	[ -x "$1" ] || return 1
	printf 'static inline int u(const int *q)\n{\n\t__typeof_unqual__(*q) v = *q;\n\treturn v;\n}\n' >/tmp/cv.c
	! "$1" /tmp/cv.c 2>&1 | grep -q error
}

"$@"
EOF
)

# chroot_provision NAME: debootstrap NAME (a suite) with make and perl
# (6.12's W=1 runs scripts/kernel-doc), and that suite's sparse under
# /opt/gs-sparse (the binary needs only libc; the package would pull in
# LLVM); published once complete. Then refresh its package lists.
chroot_provision() {
	local name=$1 r=$GS_COMPAT/$1 tmp=$GS_COMPAT/$1.tmp
	if [ ! -f "$r/.gs-ready" ]; then
		if [ ! -f "$tmp/.gs-debootstrap" ]; then
			gs_rm_root "$tmp"
			echo "$(date +%T) debootstrap $name"
			# Two stages, to install without an fsync per file.
			unshare --mount --propagation private -- sh -c '
				debootstrap --foreign --variant=minbase \
					--include=make,perl "$1" "$2" "$3" &&
				mkdir -p "$2/etc/dpkg/dpkg.cfg.d" &&
				echo force-unsafe-io >"$2/etc/dpkg/dpkg.cfg.d/90ghostswap" &&
				chroot "$2" /debootstrap/debootstrap --second-stage
			' debootstrap "$name" "$tmp" "$GS_MIRROR" || return 1
			touch "$tmp/.gs-debootstrap"
		fi
		sources "$name" >"$tmp/etc/apt/sources.list"
		cat >"$tmp/etc/apt/apt.conf.d/90ghostswap" <<-EOF
		APT::Install-Recommends "false";
		APT::Install-Suggests "false";
		Acquire::Check-Valid-Until "false";
		Acquire::Languages "none";
		APT::Sandbox::User "root";
		Dpkg::Options { "--force-confold"; };
		EOF
		# A build chroot: no fsync per file, no documentation.
		cat >"$tmp/etc/dpkg/dpkg.cfg.d/90ghostswap" <<-EOF
		force-unsafe-io
		path-exclude /usr/share/doc/*
		path-exclude /usr/share/man/*
		path-exclude /usr/share/locale/*
		path-exclude /usr/share/info/*
		EOF
		echo "$(date +%T) apt-get update, sparse"
		# shellcheck disable=SC2016
		gs_ns_run "$tmp" rw "" sh -c 'set -e; dpkg --configure -a
			apt-get update -q
			d=/var/cache/gs-sparse; rm -rf $d; mkdir -p $d; cd $d
			apt-get download -q sparse
			rm -rf /opt/gs-sparse
			dpkg-deb -x sparse_*.deb /opt/gs-sparse
			cd /; rm -rf $d; apt-get clean
			/opt/gs-sparse/usr/bin/sparse --version' || return 1
		touch "$tmp/.gs-ready"
		mv "$tmp" "$r"
	elif [ "${GHOSTSWAP_COMPAT_OFFLINE:-0}" != 1 ]; then
		# Fresh lists each run: a new point release replaces the old one.
		gs_ns_run "$r" rw "" apt-get update -q ||
			echo "apt-get update failed in $name: using the lists as they are"
	fi
}

# guest_has PACKAGE VERSION: the guest root has it installed.
guest_has() {
	[ -d "$GS_ROOT/var/lib/dpkg" ] &&
		[ "$(dpkg-query --admindir="$GS_ROOT/var/lib/dpkg" -W \
			-f='${Version} ${db:Status-Abbrev}' "$1" 2>/dev/null)" = "$2 ii " ]
}

# chroot_sets NAME: provision chroot NAME, then look up and unpack each
# of its header sets. Writes $GS_COMPAT/NAME.sets: one line per set,
# "SET ROOT PACKAGE VERSION SUITE", or "SET - why skipped".
chroot_sets() {
	local name=$1 r=$GS_COMPAT/$1 set suites ch pkg ver suite root stamp arch
	local out=$GS_COMPAT/$name.sets
	rm -f "$out"
	: >"$out.new"
	chroot_provision "$name" || return 1
	# The architectures of its sets, for apt.
	for a in $(while IFS=$'\t' read -r set _ ch; do
			[ "$ch" = "$name" ] && wanted "$set" && set_arch "$set"
		done <<<"$sets" | sort -u | grep -vx amd64); do
		gs_ns_run "$r" ro "" dpkg --print-foreign-architectures | grep -qx "$a" &&
			continue
		echo "$(date +%T) adding $a to $name's architectures"
		gs_ns_run "$r" rw "" sh -c "dpkg --add-architecture $a && apt-get update -q" ||
			return 1
	done
	# Headers of a set no longer in the list (renamed, or dropped),
	# first: a set of the list may have unpacked the same package.
	for stamp in "$r"/var/lib/gs-compat/*.stamp; do
		[ -f "$stamp" ] || continue
		set=${stamp##*/}
		set=${set%.stamp}
		cut -f1 <<<"$sets" | tr / - | grep -qxF "$set" && continue
		echo "$(date +%T) dropping $(cat "$stamp") (set $set) from $name"
		gs_ns_run "$r" rw "" bash -c "$inside" inside drop \
			"$(cut -d' ' -f1 "$stamp")" || return 1
		rm -f "$stamp"
	done
	while IFS=$'\t' read -r set suites ch; do
		[ "$ch" = "$name" ] || continue
		wanted "$set" || continue
		arch=$(set_arch "$set")
		read -r pkg ver suite < <(gs_ns_run "$r" ro "" bash -c "$inside" inside \
			resolve "${set%%/*}" "$suites" "$arch")
		if [ -z "${pkg:-}" ]; then
			echo "$set - the archive serves no linux-headers-${set%%/*}* in $suites" >>"$out.new"
			continue
		fi
		stamp=$r/var/lib/gs-compat/${set//\//-}.stamp
		# Headers of an older release, or ones the guest root has now.
		if [ -f "$stamp" ] && { [ "$(cat "$stamp")" != "$pkg $ver" ] ||
			guest_has "$pkg" "$ver"; }; then
			echo "$(date +%T) dropping $(cat "$stamp") from $name"
			gs_ns_run "$r" rw "" bash -c "$inside" inside drop \
				"$(cut -d' ' -f1 "$stamp")" || return 1
			rm -f "$stamp"
		fi
		if guest_has "$pkg" "$ver"; then
			echo "$set $GS_ROOT $pkg $ver $suite" >>"$out.new"
			continue
		fi
		root=$r
		if [ ! -f "$stamp" ]; then
			echo "$(date +%T) unpacking $pkg $ver into $name"
			gs_ns_run "$r" rw "" bash -c "$inside" inside unpack "$pkg" "$ver" \
				"$arch" || return 1
			mkdir -p "${stamp%/*}"
			echo "$pkg $ver" >"$stamp"
		fi
		sparse_setup "$r" "$pkg" || return 1
		echo "$set $root $pkg $ver $suite" >>"$out.new"
	done <<<"$sets"
	mv "$out.new" "$out"
}

# sparse_setup ROOT PACKAGE: headers whose Makefile checks sparse with
# scripts/checker-valid.sh (7.x) get that script (Debian's headers lack
# it; it comes from the kernel source tree testbed/provision.sh unpacked)
# and, if the chroot's sparse is too old for them (trixie's 0.6.4),
# sid's under /opt/gs-sparse-sid.
sparse_setup() {
	local r=$1 kv=${2#linux-headers-} ksrc hdr s
	hdr=$r/usr/src/linux-headers-${kv%-*}-common
	grep -qs checker-valid.sh "$hdr/Makefile" || return 0
	ksrc=$(gs_ksrc)
	if [ ! -e "$hdr/scripts/checker-valid.sh" ] && [ -n "$ksrc" ]; then
		install -m 755 "$ksrc/scripts/checker-valid.sh" "$hdr/scripts/"
	fi
	for s in $sparse_paths; do
		gs_ns_run "$r" ro "" bash -c "$inside" inside sparse_ok "$s" && return 0
	done
	echo "fetching sparse from sid into $r/opt/gs-sparse-sid"
	# shellcheck disable=SC2016
	gs_ns_run "$r" rw "" sh -c 'set -e; d=/tmp/gs-sid; mkdir -p $d/lists/partial
		echo "deb '"$GS_MIRROR"' sid main" >$d/sources.list
		o="-o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=-
		   -o Dir::State::Lists=$d/lists -o Dir::Cache=$d"
		apt-get $o update -q
		cd $d && apt-get $o download -q sparse
		rm -rf /opt/gs-sparse-sid
		dpkg-deb -x $d/sparse_*.deb /opt/gs-sparse-sid'
}

# wanted SET: on the command line, or no sets given.
wanted() {
	[ ${#only[@]} = 0 ] && return 0
	local s
	for s in "${only[@]}"; do
		[ "$s" = "$1" ] && return 0
	done
	return 1
}

# build SET ROOT PACKAGE VERSION SUITE: the module against those headers,
# the way DKMS builds it (make KDIR=... modules), with W=1 and, where the
# root has a sparse that parses the headers, sparse (C=2).
build() {
	local set=$1 root=$2 pkg=$3 ver=$4 suite=$5 kv b log rc=0 check=()
	local gcc sparse= kdir common s arch cross=() cc
	kv=${pkg#linux-headers-}
	b=$GS_COMPAT/build/${set//\//-}
	log=$logs/compat-${set//\//-}.log
	rm -rf "$b"
	mkdir -p "$b/src"
	(cd "$GS_TOP" && cp -r Kbuild Makefile dkms.conf module "$b/src/") || return 1
	kdir=/lib/modules/$kv/build
	[ -e "$root$kdir" ] || kdir=/usr/src/linux-headers-$kv
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$root$kdir/.config")
	gcc=$(sed 's/.*) //' <<<"$cc")
	# arm64: cross-compiled with the compiler .config names,
	# aarch64-linux-gnu-gcc-N (unpack() installed it).
	arch=$(set_arch "$set")
	if [ "$arch" != amd64 ]; then
		cc=${cc%% *}
		cross=(ARCH="$arch" CROSS_COMPILE="${cc%gcc-*}")
	fi
	# 7.x headers check sparse with scripts/checker-valid.sh: it must be
	# there (sparse_setup()), and sparse must parse __typeof_unqual__.
	# Older headers take any sparse.
	common=$root/usr/src/linux-headers-${kv%-*}-common
	for s in $sparse_paths; do
		if grep -qs checker-valid.sh "$common/Makefile"; then
			[ -e "$common/scripts/checker-valid.sh" ] || break
			gs_ns_run "$root" ro "" bash -c "$inside" inside sparse_ok "$s" ||
				continue
		elif [ ! -x "$root$s" ]; then
			continue
		fi
		sparse=$s
		break
	done
	[ -z "$sparse" ] || check=(C=2 "CHECK=$sparse")
	{
		echo "# $pkg $ver ($suite) in $root, gcc $gcc, sparse ${sparse:-none}"
		gs_ns_run "$root" ro "$b" nice -n 10 make -C /tmp/gs/src -j"$(nproc)" \
			KVER="$kv" KDIR="$kdir" ${cross[@]+"${cross[@]}"} W=1 \
			"${check[@]}" modules
	} >"$log" 2>&1 || rc=1
	[ -f "$b/src/ghostswap.ko" ] || rc=1
	grep -qiE 'warning|error' "$log" && rc=1
	if [ -n "$sparse" ] && ! grep -q ' CHECK ' "$log"; then
		echo "# sparse did not run" >>"$log"
		rc=1
	fi
	desc="module builds against $pkg $ver ($suite, gcc $gcc), no warnings"
	[ "$arch" = amd64 ] || desc="module builds against $pkg $ver ($suite, $arch, cross gcc $gcc), no warnings"
	[ -z "$sparse" ] || desc="$desc, sparse clean"
	if [ $rc = 0 ]; then
		tap_ok "$desc"
		[ -n "$sparse" ] ||
			tap_diag "sparse not run: none in $root parses these headers, or no scripts/checker-valid.sh"
	else
		tap_not_ok "$desc"
		grep -iE 'warning|error' "$log" | head -n 30 | tap_diag
		tap_diag "log: $log"
	fi
}

only=("$@")
t0=$SECONDS

# Provision the chroots side by side (mostly downloads and unpacking),
# each in a process group of its own (set -m): an interrupt of the script
# stops them all. Without job control, background jobs ignore SIGINT.
pids=()
stop_jobs() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM -- "-${p#*:}" 2>/dev/null
	done
}
trap 'stop_jobs; exit 130' INT TERM
set -m
for ch in trixie sid bookworm; do
	need=0
	while IFS=$'\t' read -r set _ c; do
		[ "$c" = "$ch" ] && wanted "$set" && need=1
	done <<<"$sets"
	[ $need = 1 ] || continue
	chroot_sets "$ch" >"$logs/compat-provision-$ch.log" 2>&1 &
	pids+=("$ch:$!")
done
set +m
for p in "${pids[@]}"; do
	if ! wait "${p#*:}"; then
		tap_not_ok "provision the ${p%%:*} chroot for the build matrix"
		tail -n 20 "$logs/compat-provision-${p%%:*}.log" | tap_diag
	fi
done
tap_diag "provisioned in $((SECONDS - t0)) s"

while IFS=$'\t' read -r set _ ch; do
	wanted "$set" || continue
	line=$(grep -m1 "^$set " "$GS_COMPAT/$ch.sets" 2>/dev/null) || continue
	read -r _ root pkg ver suite <<<"$line"
	if [ "$root" = - ]; then
		tap_skip "module builds against the $set headers" "${line#* - }"
		continue
	fi
	build "$set" "$root" "$pkg" "$ver" "$suite"
done <<<"$sets"
tap_diag "build matrix: $((SECONDS - t0)) s"
tap_plan
exit $tap_rc
