#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (debian/), end to end, on a Debian machine that has
# never had ghostswap: an overlay of the guest root without what
# testbed/build.sh put there (the DKMS build, ghostswapctl in /usr/local),
# and no "make install".
#
#  - dpkg-buildpackage -us -uc -b builds ghostswap-dkms and ghostswap-tools
#    from a clean copy of this tree (its files known to git, as they are
#    in the work tree: no results/, no build output);
#  - lintian on them and on the source package: no error, no warning;
#  - apt installs both: DKMS must build and install the module for every
#    kernel of the root that has headers, ghostswapctl --version must say
#    the version, the units, generator, udev rule, configuration (a
#    conffile) and man pages must be in place, the units not enabled;
#  - a kernel the module does not support (too old, without zsmalloc, or
#    with pages larger than 4 KiB: arm64's 16K and 64K flavours)
#    is skipped by DKMS without an error, as an apt run that installs it
#    would see it (the kernel's postinst hook);
#  - an upgrade to the same tree built as a higher version rebuilds the
#    module for every kernel and keeps an /etc/ghostswap.conf the admin
#    edited;
#  - the upgraded machine, configured and with ghostswap.service enabled
#    (tests/boot-lib.sh), boots with systemd and comes up as configured,
#    with the module and ghostswapctl of the upgrade's version;
#  - a second 7.x kernel installed after ours gets the module from DKMS's
#    kernel hooks, and loses it when it is purged;
#  - apt purge removes both, and the root's files must be those it had
#    before the install (as piuparts compares them): nothing of ours left,
#    no module under any /lib/modules.
#
# The guest root is not changed: everything runs on an overlay of it whose
# upper layer is thrown away afterwards.
#
# usage: tests/package.sh OUTDIR   (prints TAP on stdout; each step's log,
# the packages and lintian's report go to OUTDIR)
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"
. "$(dirname "$0")/boot-lib.sh"

[ $# = 1 ] || gs_die "usage: $0 OUTDIR"
out=$(mkdir -p "$1" && cd "$1" && pwd)
gs_overlay_lock
ov=$GS_CACHE/package-overlay
merged=$ov/root
TAP_LOGS=$out
ver=$(gs_version)
[ -n "$ver" ] || gs_die "no PACKAGE_VERSION in dkms.conf"
# The upgrade's version: the same tree, one step higher.
ver2=$ver+up1
pkgs="ghostswap-dkms ghostswap-tools"
# In the root: the build directories, and the edit an admin makes.
work=/tmp/gs-package
edit="# edited by the admin (tests/package.sh)"

# The boot's layer over that overlay (the boot writes into its root),
# and the second kernel's packages, kept between runs.
bootov=$GS_CACHE/package-boot-overlay
kcache=$GS_CACHE/package-kernel

# shellcheck disable=SC2064
trap "gs_overlay_remove '$bootov'; gs_overlay_remove '$ov'" EXIT

# in_root CMD...: CMD in the overlay, as gs_chroot runs it in the root.
in_root() { GS_ROOT=$merged gs_chroot "$@"; }

# The kernels DKMS builds for: those of the root whose headers are there.
kernels() {
	# shellcheck disable=SC2016
	in_root sh -c 'for d in /lib/modules/*; do
		[ -e "$d/build/include" ] && echo "${d##*/}"; done'
}

# Every ghostswap module under /lib/modules, as KERNEL PATH VERSION.
modules() {
	# shellcheck disable=SC2016
	in_root sh -c 'find /usr/lib/modules -name "ghostswap.ko*" | sort |
		while read -r f; do
			k=${f#/usr/lib/modules/}
			echo "${k%%/*} $f $(modinfo -F version "$f")"
		done'
}

# The root's files, as piuparts lists them: type and path, without what
# changes by itself (the apt and man-db caches, logs, scratch space) and
# the init scripts virtme-ng writes into the shared guest root while the
# other lanes' guests run from it (/virtme-init-*, seen through the
# overlay's lower layer).
files() {
	(cd "$merged" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev \
		-o -path ./run -o -path ./tmp -o -path ./var/tmp -o -path ./var/cache \
		-o -path ./var/log -o -path ./var/lib/apt -o -path './virtme-init-*' \) \
		-prune -o -printf '%y %p\n') |
		LC_ALL=C sort
}

# copy DIR: a clean copy of this tree in the overlay, $work/DIR/ghostswap:
# the files git knows (tracked, or new and not ignored), as in the work
# tree.
copy() {
	local d=$merged$work/$1/ghostswap
	rm -rf "${merged:?}$work/$1"
	mkdir -p "$d"
	(cd "$GS_TOP" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$d"
	[ -f "$d/debian/control" ] && [ -f "$d/dkms.conf" ]
}

# build DIR: dpkg-buildpackage -us -uc -b in $work/DIR/ghostswap.
build() {
	in_root sh -c "cd $work/$1/ghostswap && dpkg-buildpackage -us -uc -b" || return 1
	ls -l "$merged$work/$1"/*.deb
}

# ------------------------------------------------------------- the steps

# What testbed/build.sh (and the debug lane) left in the root goes from the
# overlay: a machine that never had ghostswap.
pristine() {
	local m
	# shellcheck disable=SC2016
	in_root sh -c 'set -e
		for v in $(dkms status ghostswap 2>/dev/null |
			sed -n "s|^ghostswap/\([^,:]*\).*|\1|p" | sort -u); do
			dkms remove -m ghostswap -v "$v" --all
		done
		rm -rf /usr/src/ghostswap-* /usr/local/sbin/ghostswapctl
		for f in $(find /usr/lib/modules -name "ghostswap.ko*"); do
			k=${f#/usr/lib/modules/}
			rm -f "$f"
			depmod "${k%%/*}"
		done' || return 1
	m=$(modules)
	[ -z "$m" ] || { echo "modules left: $m"; return 1; }
	! in_root dpkg-query -W 'ghostswap*' 2>/dev/null
}

package() {
	copy bin && build bin || return 1
	(cd "$merged$work/bin" &&
		ls "ghostswap-dkms_${ver}_all.deb" "ghostswap-tools_${ver}_"*.deb) || return 1
	cp "$merged$work/bin"/*.deb "$merged$work/bin"/*.changes \
		"$merged$work/bin"/*.buildinfo "$out/"
}

# lintian on the binary packages (the .changes) and on the source package
# (dpkg-source -b of another clean copy), as a user: errors and warnings
# fail, the rest is reported. Overrides must say why (debian/*lintian-
# overrides); they are shown.
lintian_run() {
	copy src && in_root sh -c "cd $work/src && dpkg-source -b ghostswap" || return 1
	in_root sh -c "cd $work && runuser -u nobody -- env HOME=/tmp \
		lintian --fail-on error,warning --display-info --display-experimental \
		--pedantic --show-overrides bin/ghostswap_${ver}_*.changes \
		src/ghostswap_${ver}.dsc"
}

# install_pkgs DIR VERSION: apt install the two packages of VERSION built
# in $work/DIR, as an admin does. Its stdin is not a terminal: a conffile
# question fails the run rather than waiting.
install_pkgs() {
	in_root sh -c "cd $work/$1 && apt-get install -y \
		./ghostswap-dkms_$2_all.deb ./ghostswap-tools_$2_*.deb </dev/null"
}

# DKMS built and installed the module, of version $1, for every kernel
# with headers.
dkms_all() {
	local k ks m rc=0
	ks=$(kernels)
	[ -n "$ks" ] || { echo "no kernel with headers in the root"; return 1; }
	in_root dkms status ghostswap
	m=$(modules)
	echo "$m"
	for k in $ks; do
		if ! grep -q "^$k /usr/lib/modules/$k/updates/dkms/ghostswap.ko[^ ]* $1\$" <<<"$m"; then
			echo "no ghostswap $1 for $k in /usr/lib/modules/$k/updates/dkms"
			rc=1
		fi
		in_root dkms status -m ghostswap -v "$1" -k "$k" | grep -q ': installed' || {
			echo "dkms status: ghostswap/$1 not installed for $k"
			rc=1
		}
	done
	return $rc
}

version() {
	local v
	v=$(in_root ghostswapctl --version) || return 1
	echo "$v ($(in_root sh -c 'command -v ghostswapctl'))"
	[ "$v" = "ghostswapctl $1" ]
}

# The boot integration as dh_installsystemd and make install left it.
in_place() {
	local f rc=0
	for f in /usr/sbin/ghostswapctl /usr/lib/systemd/system/ghostswap.service \
		/usr/lib/systemd/system/ghostswap-writeback.service \
		/usr/lib/systemd/system/ghostswap-writeback.timer \
		/usr/lib/systemd/system/ghostswap-metrics.service \
		/usr/lib/systemd/system/ghostswap-metrics.timer \
		/usr/lib/udev/rules.d/60-ghostswap.rules /etc/ghostswap.conf \
		/usr/share/doc/ghostswap-tools/examples/modules-load.d/ghostswap.conf; do
		[ -f "$merged$f" ] || { echo "missing: $f"; rc=1; }
	done
	f=$(in_root readlink -f /usr/lib/systemd/system-generators/ghostswap-generator)
	[ "$f" = /usr/sbin/ghostswapctl ] ||
		{ echo "the generator is not ghostswapctl: $f"; rc=1; }
	in_root dpkg-query -W -f='${Conffiles}\n' ghostswap-tools | grep -q '^ /etc/ghostswap.conf ' ||
		{ echo "/etc/ghostswap.conf is not a conffile"; rc=1; }
	for f in ghostswap.4 ghostswap.conf.5 ghostswapctl.8; do
		in_root man -w "${f##*.}" "${f%.*}" || { echo "no man page $f"; rc=1; }
	done
	# Installing sets nothing up (debian/rules): neither unit is enabled.
	for f in ghostswap.service ghostswap-writeback.timer ghostswap-metrics.timer; do
		echo "$f: $(in_root systemctl is-enabled "$f")"
		[ "$(in_root systemctl is-enabled "$f")" = disabled ] || rc=1
	done
	return $rc
}

# A kernel DKMS must leave out, as its headers appear in an apt run: $1 the
# release, $2 the headers' .config to start from, $3 options to take out of
# it. dkms build must say 77 (BUILD_EXCLUSIVE), the kernel's postinst
# hook succeed, and nothing be built.
unsupported() {
	local k=$1 b=$merged/usr/lib/modules/$1 rc=0 st=0 o
	mkdir -p "$b/build/include"
	grep -v -E "^(${3:-NONE})=" "$merged$2" >"$b/build/.config"
	in_root dkms build -m ghostswap -v "$ver" -k "$k" || st=$?
	[ $st = 77 ] || { echo "dkms build for $k: exit $st, not 77"; rc=1; }
	o=$(in_root /etc/kernel/postinst.d/dkms "$k" 2>&1) || {
		echo "$o"
		echo "the kernel postinst hook failed for $k"
		rc=1
	}
	echo "$o"
	grep -q "skipped for module(s) ghostswap" <<<"$o" || rc=1
	! modules | grep -q "^$k " || { echo "a module for $k"; rc=1; }
	rm -rf "$b"
	return $rc
}

refused() {
	local h=/usr/src/linux-headers
	unsupported 6.1.0-99-gstest-amd64 "$h-$(gs_kver_lts)/.config" &&
		unsupported 7.3.99-gstest-amd64 "$h-$(gs_kver)/.config" CONFIG_ZSMALLOC &&
		unsupported 7.3.98-gstest-16k "$h-$(gs_kver)/.config" CONFIG_PAGE_SIZE_4KB
}

# The same tree as version $ver2, over the installed packages, after the
# admin edited /etc/ghostswap.conf.
upgrade() {
	local d=$merged$work/up/ghostswap who
	sed -i 's/^priority = 100$/priority = 42/' "$merged/etc/ghostswap.conf" &&
		echo "$edit" >>"$merged/etc/ghostswap.conf" &&
		grep -q '^priority = 42$' "$merged/etc/ghostswap.conf" ||
		{ echo "no 'priority = 100' in /etc/ghostswap.conf to edit"; return 1; }
	copy up || return 1
	sed -i "s/^PACKAGE_VERSION=\".*\"/PACKAGE_VERSION=\"$ver2\"/" "$d/dkms.conf"
	who=$(sed -n 's/^Maintainer: //p' "$d/debian/control")
	{
		printf 'ghostswap (%s) unstable; urgency=medium\n\n' "$ver2"
		printf '  * The upgrade of tests/package.sh.\n\n'
		printf ' -- %s  %s\n\n' "$who" "$(date -R)"
		cat "$d/debian/changelog"
	} >"$d/debian/changelog.new" && mv "$d/debian/changelog.new" "$d/debian/changelog"
	build up && install_pkgs up "$ver2"
}

# DKMS removed the old version and built the new one for every kernel
# (Debian's dkms sets autoinstall_all_kernels); the admin's file is as
# the admin left it.
upgraded() {
	local m
	dkms_all "$ver2" || return 1
	m=$(modules)
	! grep -v " $ver2\$" <<<"$m" || { echo "modules of another version"; return 1; }
	! in_root dkms status ghostswap | grep -F "ghostswap/$ver," ||
		{ echo "dkms still has $ver"; return 1; }
	version "$ver2" || return 1
	grep -qxF "$edit" "$merged/etc/ghostswap.conf" &&
		grep -q '^priority = 42$' "$merged/etc/ghostswap.conf" ||
		{ echo "the admin's /etc/ghostswap.conf was not kept"; return 1; }
	# shellcheck disable=SC2086
	! ls "$merged"/etc/ghostswap.conf.dpkg-* 2>/dev/null
	echo "/etc/ghostswap.conf: $(grep -c . "$merged/etc/ghostswap.conf") lines, the edits kept"
}

# The upgraded machine, configured and booted (tests/boot-lib.sh): the
# boot's own writes go to a layer of their own, so that the purge's file
# list is compared with a root that was never booted.
boot_root() {
	gs_overlay_mount "$bootov" "$merged" && gs_boot_config "$bootov/root"
}

# The newest 7.x kernel of Debian's cloud flavour (the smallest download:
# 38 MB of modules against 159, with every option dkms.conf asks for) of
# another series than the root's 7.x kernel.
second_kver() {
	local series
	series=$(gs_kver | cut -d. -f1-2)
	# shellcheck disable=SC2016
	in_root sh -c "apt-cache search --names-only '^linux-image-7\.[0-9.]+\+deb[0-9]+-cloud-amd64\$'" |
		sed -n 's/^linux-image-\([^ ]*\) .*/\1/p' | grep -v "^${series//./\\.}\." |
		sort -V | tail -n 1
}

# apt_kernel ARGS...: apt-get ARGS in the overlay, the second kernel's
# packages cached in $kcache (bound over the overlay's apt archive).
apt_kernel() {
	local rc=0
	mkdir -p "$kcache/partial" "$merged/var/cache/apt/archives"
	mount --bind "$kcache" "$merged/var/cache/apt/archives" || return 1
	in_root sh -c "export INITRD=No; apt-get $* </dev/null" || rc=$?
	umount "$merged/var/cache/apt/archives"
	return $rc
}

# A second 7.x kernel installed after ours, as an admin's apt upgrade
# brings one: DKMS's kernel hooks (/etc/kernel/postinst.d/dkms and
# header_postinst.d) must build and install ghostswap $ver2 for it. $k2:
# its release (second_kver).
kernel2() {
	local o m rc=0
	[ -n "$k2" ] || { echo "the archive has no other 7.x cloud kernel"; return 1; }
	[ "$(cat "$kcache/kernel" 2>/dev/null)" = "$k2" ] || {
		rm -rf "$kcache"
		mkdir -p "$kcache"
		echo "$k2" >"$kcache/kernel"
	}
	in_root dpkg-query -W -f='${Package}\n' | LC_ALL=C sort >"$out/packages-before-kernel"
	o="install -y --no-install-recommends linux-image-$k2 linux-headers-$k2"
	# The root's package lists may be older than the archive.
	apt_kernel "$o" >"$out/kernel2-apt.log" 2>&1 ||
		{ apt_kernel update -qq && apt_kernel "$o"; } >>"$out/kernel2-apt.log" 2>&1 ||
		rc=$?
	grep -i -E 'dkms|ghostswap' "$out/kernel2-apt.log"
	[ $rc = 0 ] || { tail -n 20 "$out/kernel2-apt.log"; return 1; }
	in_root dkms status ghostswap
	m=$(modules)
	grep "^$k2 " <<<"$m"
	grep -q "^$k2 /usr/lib/modules/$k2/updates/dkms/ghostswap.ko[^ ]* $ver2\$" <<<"$m" ||
		{ echo "no ghostswap $ver2 for $k2"; return 1; }
}

# The second kernel purged again (every package its install brought):
# DKMS's prerm hook takes our module with it.
kernel2_gone() {
	local p
	[ -n "$k2" ] || return 1
	p=$(in_root dpkg-query -W -f='${Package}\n' | LC_ALL=C sort |
		LC_ALL=C comm -13 "$out/packages-before-kernel" -)
	echo "purging:" $p
	# shellcheck disable=SC2086
	in_root apt-get purge -y $p </dev/null >"$out/kernel2-purge.log" 2>&1 ||
		{ tail -n 20 "$out/kernel2-purge.log"; return 1; }
	! modules | grep "^$k2 " || { echo "a module for $k2 is left"; return 1; }
	[ ! -e "$merged/usr/lib/modules/$k2" ] ||
		{ find "$merged/usr/lib/modules/$k2" | head; echo "/usr/lib/modules/$k2 is left"; return 1; }
}

purge() {
	# shellcheck disable=SC2086
	in_root apt-get purge -y $pkgs </dev/null
}

# After the purge: no package, no module, and the files of before.
nothing_left() {
	local rc=0 m
	files >"$out/files-after"
	# DKMS makes its module signing key at its first build and keeps it
	# for good (its own purge does not remove it): DKMS's, not ours.
	m=$(LC_ALL=C comm -13 "$out/files-before" "$out/files-after" |
		grep -E '^f \./var/lib/dkms/mok\.(key|pub)$')
	[ -z "$m" ] ||
		echo "made by DKMS at its first build, not counted: $(sed 's/^f \.//' <<<"$m" | paste -sd ' ')"
	diff "$out/files-before" <(grep -vxF "$m" "$out/files-after") >"$out/files.diff"
	if [ -s "$out/files.diff" ]; then
		echo "the root's files differ (< before the install, > after the purge):"
		cat "$out/files.diff"
		rc=1
	else
		echo "the root's files: $(wc -l <"$out/files-before") before the install, the same after the purge"
	fi
	m=$(modules)
	[ -z "$m" ] || { echo "modules left: $m"; rc=1; }
	for m in $pkgs; do
		case $(in_root dpkg-query -W -f='${db:Status-Abbrev}' "$m" 2>/dev/null) in
		""|"un "|"pn ") ;;
		*) echo "dpkg still has $m"; rc=1 ;;
		esac
	done
	return $rc
}

fail_out() {
	tap_plan
	exit 1
}

tap_step "overlay of the guest root" overlay gs_overlay_mount "$ov" || fail_out
tap_step "without the test bed's ghostswap (DKMS build, /usr/local/sbin/ghostswapctl)" \
	pristine pristine || fail_out
tap_step "dpkg-buildpackage -us -uc -b from a clean copy: $pkgs $ver" build package ||
	fail_out
# Its whole report follows, whatever the result.
TAP_LOG_LINES=0 tap_step "lintian, binary and source packages: no error, no warning" \
	lintian lintian_run
tap_diag <"$out/lintian.log"
files >"$out/files-before"
tap_step "apt install ./ghostswap-dkms_${ver}_all.deb ./ghostswap-tools_${ver}_*.deb" \
	install install_pkgs bin "$ver" || fail_out
TAP_LOG_ALWAYS=1 tap_step "DKMS built and installed ghostswap $ver for every kernel with headers" \
	dkms dkms_all "$ver"
TAP_LOG_ALWAYS=1 tap_step "ghostswapctl --version: $ver" version version "$ver"
tap_step "units, generator, udev rule, conffile and man pages in place; units not enabled" \
	in-place in_place
tap_step "DKMS skips a 6.1 kernel, one without CONFIG_ZSMALLOC and one without 4 KiB pages; the kernel hook succeeds" \
	unsupported refused
if tap_step "upgrade: the same tree as $ver2, apt install over $ver, /etc/ghostswap.conf edited" \
	upgrade upgrade; then
	TAP_LOG_ALWAYS=1 tap_step "after the upgrade: ghostswap $ver2 for every kernel, ghostswapctl $ver2, the admin's /etc/ghostswap.conf kept" \
		upgraded upgraded
else
	tap_not_ok "after the upgrade: not checked, the upgrade failed"
fi
if tap_step "the upgraded machine configured, ghostswap.service enabled" boot-root boot_root; then
	gs_boot_guest "$bootov/root" "$out/boot" "$ver2"
else
	tap_not_ok "the boot: not made, no root to boot"
fi
gs_overlay_remove "$bootov"
k2=$(second_kver)
if TAP_LOG_ALWAYS=1 tap_step "a second 7.x kernel installed after ours: DKMS's kernel hook builds ghostswap $ver2 for it" \
	kernel2 kernel2; then
	tap_step "the second kernel purged: its ghostswap module goes with it" kernel2-gone kernel2_gone
else
	tap_not_ok "the second kernel purged: not installed"
fi
tap_step "apt purge $pkgs" purge purge
TAP_LOG_ALWAYS=1 tap_step "after the purge: no package, no module, the root's files as before" \
	nothing-left nothing_left
# What the run took: the wall clock, and the CPU time of the script and of
# every process it waited for (times: user and system time, the shell's
# line, then its children's).
times >"$out/times"
tap_diag "$(awk -v wall="$SECONDS" '{
	for (i = 1; i <= 2; i++) {
		split($i, t, /[ms]/)
		cpu += t[1] * 60 + t[2]
	}
} END { printf "time: %d s, CPU %.0f s", wall, cpu }' "$out/times")"
tap_plan
exit $tap_rc
