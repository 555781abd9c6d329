#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Provision the ghostswap test bed: host tools, a Debian trixie guest root
# carrying the newest Debian 7.x kernel with headers and DKMS, and virtme-ng.
# Everything lands under $GHOSTSWAP_CACHE (default ~/.cache/ghostswap).
# Idempotent and safe to interrupt: each step is redone until its stamp
# file exists, and the guest root is only published once complete.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || gs_die "the test bed needs root (debootstrap, chroot)"
mkdir -p "$GS_CACHE"
exec 9>"$GS_CACHE/.provision.lock"
flock 9

# flex, bison, bc and a compiler build the UML kernel for KUnit (kunit/run.sh);
# with libelf-dev (objtool) also the debug-kernel lane's x86 guest kernel.
# qemu-system-arm: the arm64 lane's emulator (testbed/arm64.sh).
# python3-ply: checkpatch's SPDX check (tests/static-checks.sh); zstd: the
# dictionaries ghostswapctl dict trains (tests/tools/run.sh).
host_pkgs="debootstrap qemu-system-x86 qemu-system-arm qemu-utils python3-venv kmod busybox-static
flex bison bc build-essential libelf-dev python3-ply zstd"
missing=
for p in $host_pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	gs_log "installing host packages:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null
fi

# The emulator: without usable KVM, the guest runs under TCG. The test
# bed is verified with QEMU GS_QEMU_MIN or newer (testbed/lib.sh): a host
# whose QEMU is older gets Debian's newer build from its release's
# backports, unpacked under GS_QEMU_DIR (the host's packages stay as they
# are); it runs on the libraries that the host's own QEMU pulled in.
# Should that fail, the host's own QEMU runs the guests.
qemu_fetch() {
	local d=$GS_CACHE/qemu-tmp codename o p v
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || return 1
	rm -rf "$d"
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/root/bin"
	echo "deb $GS_MIRROR $codename-backports main" >"$d/sources.list"
	o=(-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=-
	   -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d"
	   -o Acquire::Check-Valid-Until=false)
	apt-get "${o[@]}" update -qq || return 1
	(cd "$d" && apt-get "${o[@]}" download -qq qemu-system-x86 \
		qemu-system-arm qemu-system-common qemu-system-data) || return 1
	# Newer QEMU wants a newer SeaBIOS when there is one.
	(cd "$d" && apt-get "${o[@]}" download -qq seabios) || true
	for p in "$d"/*.deb; do
		dpkg-deb -x "$p" "$d/root" || return 1
	done
	for p in qemu-system-x86_64 qemu-system-aarch64; do
		! ldd "$d/root/usr/bin/$p" | grep 'not found' || return 1
		v=$(gs_qemu_version "$d/root/usr/bin/$p")
		[ -n "$v" ] && gs_version_ge "$v" "$GS_QEMU_MIN" || return 1
		cat >"$d/root/bin/$p" <<-EOF
		#!/bin/sh
		# Debian's QEMU $v, unpacked by testbed/provision.sh: its firmware first.
		r=$GS_QEMU_DIR
		exec "\$r/usr/bin/$p" -L "\$r/usr/share/qemu" \\
			-L "\$r/usr/share/seabios" -L /usr/share/qemu "\$@"
		EOF
		chmod 755 "$d/root/bin/$p"
	done
	rm -rf "$GS_QEMU_DIR"
	mv "$d/root" "$GS_QEMU_DIR"
	rm -rf "$d"
}
v=$(gs_qemu_version "$(command -v qemu-system-x86_64)")
# (A directory unpacked before it held qemu-system-aarch64 too: again.)
if ! gs_use_kvm && ! gs_version_ge "${v:-0}" "$GS_QEMU_MIN" &&
	{ [ ! -x "$GS_QEMU_DIR/bin/qemu-system-x86_64" ] ||
	  [ ! -x "$GS_QEMU_DIR/bin/qemu-system-aarch64" ]; }; then
	gs_log "QEMU ${v:-?} is older than $GS_QEMU_MIN: fetching a newer one"
	if qemu_fetch >"$GS_CACHE/qemu.log" 2>&1; then
		gs_log "using Debian's QEMU" \
			"$(gs_qemu_version "$GS_QEMU_DIR/bin/qemu-system-x86_64") from backports"
	else
		gs_log "no newer QEMU (see $GS_CACHE/qemu.log): using QEMU ${v:-?}"
	fi
fi

# dmsetup (dm-flakey/dm-error fault injection) and e2fsprogs (a mounted
# filesystem) serve the reliability tests, xfsprogs and btrfs-progs the
# backing files on those filesystems; systemd-sysv (/sbin/init) the
# boot test (tests/boot.sh), which boots the root with systemd as init;
# zstd the dictionaries ghostswapctl dict trains; debhelper, dh-dkms and
# lintian build and check the Debian packages (tests/package.sh, in an
# overlay of the root); prometheus-node-exporter serves the metrics in
# the systemd boot (tests/guest/boot.sh, t_node_exporter).
guest_pkgs="initramfs-tools linux-image-amd64 linux-headers-amd64 dkms build-essential kmod
fio stress-ng util-linux udev procps iproute2 python3 busybox cpio sparse dmsetup
e2fsprogs xfsprogs btrfs-progs systemd-sysv zstd debhelper dh-dkms lintian
prometheus-node-exporter"
guest_pkgs=$(echo $guest_pkgs)

if [ ! -f "$GS_ROOT/.gs-provisioned" ]; then
	tmp=$GS_CACHE/root-tmp
	if [ ! -f "$tmp/.gs-debootstrap" ]; then
		gs_rm_root "$tmp"
		gs_log "debootstrap $GS_SUITE into $tmp"
		debootstrap --variant=minbase "$GS_SUITE" "$tmp" "$GS_MIRROR" \
			>"$GS_CACHE/debootstrap.log" 2>&1 ||
			gs_die "debootstrap failed, see $GS_CACHE/debootstrap.log"
		touch "$tmp/.gs-debootstrap"
	fi
	cat >"$tmp/etc/apt/sources.list" <<EOF
deb $GS_MIRROR $GS_SUITE main
deb $GS_MIRROR $GS_SUITE-updates main
deb $GS_MIRROR $GS_SUITE-backports main
EOF
	echo ghostswap-guest >"$tmp/etc/hostname"
	# The guest boots without an initramfs of its own (virtme-ng makes one).
	mkdir -p "$tmp/etc/initramfs-tools"
	echo update_initramfs=no >"$tmp/etc/initramfs-tools/update-initramfs.conf"
	gs_log "installing the 7.x kernel, headers and tools in the guest root"
	GS_ROOT=$tmp gs_chroot sh -c "export INITRD=No
		dpkg --configure -a --force-confold; apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends \
			-o Dpkg::Options::=--force-confold \
			-t $GS_KSUITE $guest_pkgs" >"$GS_CACHE/guest-apt.log" 2>&1 ||
		gs_die "guest package install failed, see $GS_CACHE/guest-apt.log"
	GS_ROOT=$tmp gs_chroot apt-get clean
	touch "$tmp/.gs-provisioned"
	gs_rm_root "$GS_ROOT"
	mv "$tmp" "$GS_ROOT"
fi

# A root provisioned before the package list grew: add what is missing.
# shellcheck disable=SC2016
missing=$(gs_chroot sh -c 'for p in "$@"; do
	dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "ok installed" ||
		printf "%s " "$p"; done' sh $guest_pkgs)
if [ -n "$missing" ]; then
	gs_log "adding guest packages: $missing"
	gs_chroot sh -c "apt-get update -qq && apt-get install -y -qq \
		--no-install-recommends -o Dpkg::Options::=--force-confold \
		-t $GS_KSUITE $missing && apt-get clean" >>"$GS_CACHE/guest-apt.log" 2>&1 ||
		gs_die "guest package install failed, see $GS_CACHE/guest-apt.log"
fi

kver=$(gs_kver)
case "$kver" in
[7-9].*|[1-9][0-9].*) ;;
*) gs_die "guest kernel $kver is older than 7.x" ;;
esac

# The other kernels the guest boots: Debian stable's (6.12 LTS, from
# trixie) and the PREEMPT_RT flavour of the 7.x one, each the newest the
# archive has, with its headers for DKMS. A kernel the archive no longer
# serves is left out with a message; its guest lane then says so.
kre=$(printf '%s' "${kver%-amd64}" | sed 's/[.+]/\\&/g')	# as a regex
extra=$(gs_chroot sh -c "apt-cache search --names-only \
	'^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64\$' | cut -d' ' -f1 |
	sort -V | tail -n 1
	apt-cache search --names-only '^linux-image-$kre-rt-amd64\$' |
	cut -d' ' -f1")
want=
for img in $extra; do
	k=${img#linux-image-}
	[ -d "$GS_ROOT/lib/modules/$k" ] && [ -e "$GS_ROOT/lib/modules/$k/build" ] &&
		continue
	want="$want $img linux-headers-$k"
done
if [ -n "$want" ]; then
	gs_log "adding the kernels the guest also boots:$want"
	# A module DKMS has registered is built for them as they install;
	# testbed/build.sh builds it again for each.
	gs_chroot sh -c "export INITRD=No; apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confold \
		$want && apt-get clean" >>"$GS_CACHE/guest-apt.log" 2>&1 ||
		gs_log "could not add$want (see $GS_CACHE/guest-apt.log): their guest lanes are skipped"
fi

# The matching kernel source tree: checkpatch.pl, the sparse check script
# that Debian's headers package lacks, and (for KUnit) a full tree.
ksrc=$GS_CACHE/linux-source-${kver%%-*}
if [ ! -f "$ksrc/.gs-unpacked" ]; then
	kmm=$(echo "$kver" | cut -d. -f1-2)
	gs_log "fetching linux-source-$kmm"
	rm -rf "$GS_ROOT/tmp/ksrc" "$ksrc"
	mkdir -p "$GS_ROOT/tmp/ksrc"
	gs_chroot sh -c "cd /tmp/ksrc && apt-get download -qq \
		-t $GS_KSUITE linux-source-$kmm" >"$GS_CACHE/ksrc.log" 2>&1 ||
		gs_die "could not fetch linux-source-$kmm, see $GS_CACHE/ksrc.log"
	dpkg-deb --fsys-tarfile "$GS_ROOT"/tmp/ksrc/linux-source-*.deb |
		tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
		tar -xJ -C "$GS_CACHE"
	rm -rf "$GS_ROOT/tmp/ksrc"
	[ -d "$GS_CACHE/linux-source-$kmm" ] ||
		gs_die "linux-source-$kmm did not unpack"
	[ "$GS_CACHE/linux-source-$kmm" = "$ksrc" ] ||
		mv "$GS_CACHE/linux-source-$kmm" "$ksrc"
	touch "$ksrc/.gs-unpacked"
fi
hdr=$GS_ROOT/usr/src/linux-headers-${kver%-*}-common/scripts
[ -d "$hdr" ] && [ ! -e "$hdr/checker-valid.sh" ] &&
	install -m 755 "$ksrc/scripts/checker-valid.sh" "$hdr/"
mkdir -p "$GS_ROOT/opt/gs-src" "$GS_ROOT/opt/gs-out"

# Kernel 7.x headers use __typeof_unqual__, which trixie's sparse 0.6.4 does
# not parse; sid's 0.6.5 does and runs on trixie. Kept out of the guest's
# package database, under /opt/gs-sparse.
if [ ! -x "$GS_ROOT/opt/gs-sparse/usr/bin/sparse" ]; then
	gs_log "fetching sparse from sid"
	gs_chroot sh -c 'set -e; d=/tmp/gs-sid; rm -rf $d; mkdir -p $d/lists/partial
		echo "deb '"$GS_MIRROR"' sid main" >$d/sources.list
		o="-o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=-
		   -o Dir::State::Lists=$d/lists -o Dir::Cache=$d
		   -o Acquire::Check-Valid-Until=false"
		apt-get $o update -qq
		cd $d && apt-get $o download -qq sparse
		dpkg-deb -x $d/sparse_*.deb /opt/gs-sparse
		rm -rf $d' >"$GS_CACHE/sparse.log" 2>&1 ||
		gs_die "could not fetch sparse, see $GS_CACHE/sparse.log"
fi

if [ ! -x "$GS_VENV/bin/vng" ]; then
	gs_log "installing virtme-ng $GS_VNG_VERSION"
	rm -rf "$GS_VENV"
	python3 -m venv "$GS_VENV"
	"$GS_VENV/bin/pip" install -q "virtme-ng==$GS_VNG_VERSION" ||
		"$GS_VENV/bin/pip" install -q virtme-ng
fi
gs_log "test bed ready: kernel $kver, root $GS_ROOT"
