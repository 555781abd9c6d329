#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks: checkpatch.pl --strict on module/ (its feature probes too)
# and kunit/ from the matching kernel source tree, and a W=1 build with
# sparse (C=2) against the guest kernel's headers. Prints TAP. Needs the
# test bed (testbed/provision.sh).
set -uo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

kver=$(gs_kver)
ksrc=$GS_CACHE/linux-source-${kver%%-*}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# In the kernel tree, as the kernel's own files are checked: it knows the
# kernel's identifiers (LZ4_loadDict is the library's name, not our
# CamelCase) and runs its SPDX check.
for f in "$GS_TOP"/module/*.[ch] "$GS_TOP"/module/probe/*.c "$GS_TOP"/kunit/*.[ch] "$GS_TOP"/kunit/bench/*.c; do
	(cd "$ksrc" && perl scripts/checkpatch.pl --strict --root=. --terse \
		--show-types -f "$f") >"$tmp/cp" 2>&1
	s=$?
	grep -qE '(WARNING|ERROR|CHECK)' "$tmp/cp" && s=1
	[ $s = 0 ] && : >"$tmp/cp"
	tap_result $s "checkpatch --strict ${f#"$GS_TOP"/}"
	tap_diag <"$tmp/cp"
done

# sparse and W=1 in one build, in the guest root (its headers, its gcc);
# with the files only a debugging kernel builds (GS_CHECK_ALL=1, Kbuild).
b=$GS_ROOT/tmp/gs-static
rm -rf "$b"
mkdir -p "$b"
cp -r "$GS_TOP/Kbuild" "$GS_TOP/Makefile" "$GS_TOP/dkms.conf" "$GS_TOP/module" "$b/"
gs_chroot make -C /tmp/gs-static KVER="$kver" W=1 C=2 GS_CHECK_ALL=1 \
	CHECK=/opt/gs-sparse/usr/bin/sparse >"$tmp/build" 2>&1
s=$?
grep -E ' CHECK ' "$tmp/build" >/dev/null || s=1	# sparse must have run
grep -E 'warning|error|sparse' "$tmp/build" >"$tmp/findings" && s=1
[ $s = 0 ] || cat "$tmp/build" >"$tmp/findings"
tap_result $s "build with W=1 and sparse (C=2): no findings"
tap_diag <"$tmp/findings"
# The rooms: who calls whom among the built objects, against the table
# in design.md (tests/rooms.py). And the check itself: a table that
# takes one allowed call away must fail it.
rooms() {
	python3 "$GS_TOP/tests/rooms.py" "$1" "$GS_TOP/module" "$b"/module/gs_*.o
}
rooms "$GS_TOP/Documentation/design.md" >"$tmp/rooms" 2>&1
tap_result $? "rooms: every call between the module's files is one design.md allows, no circle"
tap_diag <"$tmp/rooms"
sed 's/| `gs_index.c`, `gs_unit.c`, /| `gs_index.c`, /' \
	"$GS_TOP/Documentation/design.md" >"$tmp/design.md"
rooms "$tmp/design.md" >"$tmp/rooms-bad" 2>&1
s=$?
grep -q 'gs_core.c calls gs_unit.c' "$tmp/rooms-bad" && [ $s = 1 ]
tap_result $? "rooms: a table without gs_core.c -> gs_unit.c fails the check"
tap_diag <"$tmp/rooms-bad"
rm -rf "$b"
tap_plan
exit $tap_rc
