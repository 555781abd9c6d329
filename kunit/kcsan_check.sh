#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kcsan_check.sh NAME LOG: the TAP line of a KCSAN run's kernel log. Every
# data race report fails it, shown whole (its title, the two accesses and
# their stacks), except races inside the kernel's own code listed in
# kcsan-kernel-races, which are named with why. A log in which KCSAN
# never said it was enabled fails too. Exit status 1 on failure.
set -u
name=$1 log=$2
list=${KCSAN_KERNEL_RACES:-$(dirname "$0")/kcsan-kernel-races}

# The reason of a listed race with the title's two functions, or nothing.
known() {
	awk -F'\t' -v a="$1" -v b="$2" '
		/^#/ || NF < 2 { next }
		{ split($1, f, " ") }
		(f[1] == a && f[2] == b) || (f[1] == b && f[2] == a) { print $2; exit }
	' "$list"
}

if ! grep -q 'kcsan: enabled early' "$log"; then
	echo "not ok - $name: KCSAN never said it was enabled"
	exit 1
fi
bad=0 notes=()
while read -r title; do
	# "BUG: KCSAN: data-race in f1 / f2", offsets possibly after each.
	read -r a b < <(sed -nE 's/.*race in ([^ +]+)[^ ]* \/ ([^ +]+).*/\1 \2/p' <<<"$title")
	why=$([ -n "${b:-}" ] && known "$a" "$b")
	if [ -n "$why" ]; then
		notes+=("# known race in the kernel's own code, $a / $b: $why")
	else
		bad=$((bad + 1))
	fi
done < <(grep -o 'BUG: KCSAN: .*' "$log" | sort -u)
if [ $bad -gt 0 ]; then
	echo "not ok - $name: kernel log free of KCSAN data-race reports"
	sed -En '/BUG: KCSAN:/,/={40}/p' "$log" | head -n 400 | sed 's/^/# /'
	exit 1
fi
echo "ok - $name: kernel log free of KCSAN data-race reports"
for n in "${notes[@]}"; do
	echo "$n"
done
exit 0
