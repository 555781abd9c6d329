# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The TAP writer of every script that reports tests, on the host (sourced
# by testbed/lib.sh) and in the guest (by tests/guest/lib.sh). One stream
# per script: "ok N - DESC" or "not ok N - DESC", diagnostics as "# "
# lines after their test, the plan "1..N" last (tap_plan).
#
# Settings (variables, all optional):
#   TAP_OUT          the file the stream is appended to (default: stdout)
#   TAP_KMSG=1       each test line goes to the kernel log too (the guest:
#                    the console survives a guest whose shared folder did not)
#   TAP_LOGS         where tap_step keeps each step's output (default: .)
#   TAP_LOG_LINES    lines of a test's output shown after it (default 30)
#   TAP_LOG_ALWAYS=1 shown after every test, not only after a failure (the
#                    guest's tests print what they measured)
#   TAP_RUNNING      a file that names the test while it runs (the guest:
#                    the host names it should the guest die, gs_guest_died)
#   TAP_PLAN_FILE    tap_tests writes the names of its tests there first
#                    (the host fails those that never ran, gs_guest_died)

tap_n=0		# tests so far
tap_nfail=0	# of them failed
tap_rc=0	# 1 once a test failed: the script's exit status

# tap_line LINE: one line of the stream.
tap_line() {
	if [ -n "${TAP_OUT:-}" ]; then
		printf '%s\n' "$*" >>"$TAP_OUT"
	else
		printf '%s\n' "$*"
	fi
	case ${TAP_KMSG:-0}:$1 in
	1:"ok "*|1:"not ok "*|1:1..*)
		printf '%s\n' "$*" >/dev/kmsg 2>/dev/null || true ;;
	esac
}

# tap_diag [TEXT...]: TEXT (or stdin) as diagnostics, a "# " line each.
tap_diag() {
	local l
	if [ $# -gt 0 ]; then
		printf '%s\n' "$@" | tap_diag
		return
	fi
	while IFS= read -r l || [ -n "$l" ]; do
		tap_line "# $l"
	done
}

# tap_ok DESC [DIAG...], tap_not_ok DESC [DIAG...]: a test line, then
# each DIAG as diagnostics.
tap_ok() {
	tap_n=$((tap_n + 1))
	tap_line "ok $tap_n - $1"
	shift
	[ $# = 0 ] || tap_diag "$@"
}
tap_not_ok() {
	tap_n=$((tap_n + 1))
	tap_nfail=$((tap_nfail + 1))
	tap_rc=1
	tap_line "not ok $tap_n - $1"
	shift
	[ $# = 0 ] || tap_diag "$@"
}

# tap_skip DESC WHY: a test that could not run here.
tap_skip() {
	tap_n=$((tap_n + 1))
	tap_line "ok $tap_n - $1 # SKIP $2"
}

# tap_result STATUS DESC [DIAG...]: ok if STATUS is 0, else not ok.
tap_result() {
	local st=$1
	shift
	if [ "$st" = 0 ]; then tap_ok "$@"; else tap_not_ok "$@"; fi
}

# tap_run DESC LOG CMD...: one test: CMD in a subshell (an exit in it ends
# the test, not the script), its output in LOG; a failure is
# "not ok N - DESC (exit STATUS)". LOG's last lines follow as
# diagnostics (TAP_LOG_LINES, TAP_LOG_ALWAYS). With TAP_TIMES set, the
# seconds it took and DESC go on a line of that file. Returns CMD's status.
tap_run() {
	local desc=$1 log=$2 rc=0 t0=$SECONDS
	shift 2
	[ -z "${TAP_RUNNING:-}" ] || echo "$desc" >"$TAP_RUNNING"
	("$@") >"$log" 2>&1 || rc=$?
	[ -z "${TAP_RUNNING:-}" ] || rm -f "$TAP_RUNNING"
	[ -z "${TAP_TIMES:-}" ] || echo "$((SECONDS - t0)) $desc" >>"$TAP_TIMES"
	if [ $rc = 0 ]; then
		tap_ok "$desc"
	else
		tap_not_ok "$desc (exit $rc)"
	fi
	if [ $rc != 0 ] || [ "${TAP_LOG_ALWAYS:-0}" = 1 ]; then
		tail -n "${TAP_LOG_LINES:-30}" "$log" | tap_diag
	fi
	return $rc
}

# tap_step DESC NAME CMD...: tap_run with the output kept in
# $TAP_LOGS/NAME.log (a build or setup step of a host script).
tap_step() {
	local desc=$1 log=${TAP_LOGS:-.}/$2.log
	shift 2
	tap_run "$desc" "$log" "$@"
}

# tap_tests LOG NAME CMD [NAME CMD ...]: tests in order, each a tap_run
# with its output in LOG; their names go to TAP_PLAN_FILE first. After a
# test that failed, TAP_RECOVER (a command, if set) puts things back the
# way the next test expects them.
tap_tests() {
	local log=$1 i
	shift
	if [ -n "${TAP_PLAN_FILE:-}" ]; then
		for ((i = 1; i <= $#; i += 2)); do
			echo "${!i}"
		done >"$TAP_PLAN_FILE"
	fi
	while [ $# -ge 2 ]; do
		tap_run "$1" "$log" "$2" ||
			[ -z "${TAP_RECOVER:-}" ] || $TAP_RECOVER >/dev/null 2>&1
		shift 2
	done
}

# tap_append FILE: the test lines of another TAP stream, renumbered after
# ours; its plan line is dropped, its diagnostics kept.
tap_append() {
	local line
	while read -r line; do
		case $line in
		"ok "*|"not ok "*)
			tap_n=$((tap_n + 1))
			if [[ $line == not* ]]; then
				tap_nfail=$((tap_nfail + 1))
				tap_rc=1
			fi
			tap_line "$(echo "$line" | sed -E "s/^(ok|not ok)( [0-9]+)?/\\1 $tap_n/")" ;;
		1..*) ;;
		*) tap_line "$line" ;;
		esac
	done <"$1"
}

# tap_plan: the plan line, "1..N".
tap_plan() {
	tap_line "1..$tap_n"
}

# tap_summary ALLOW FILE...: the test lines of the TAP streams in FILE...
# counted, on stdout "N passed, N failed, N skipped" as the last line. A
# "not ok" line failed (a TODO directive does not excuse it), an "ok"
# line with a SKIP directive skipped, any other "ok" line passed. A skip
# is not a pass: unless a line of ALLOW matches it, it also fails, with a
# "not ok - not run: DESC (skipped: WHY)" line before the summary. ALLOW
# (a file, may be empty or absent) holds "ERE<TAB>reason" lines matched
# against the whole "ok ..." line; "#" lines are comments. A skip it
# allows is named in a "# skip allowed:" line with the reason. Returns 1
# on any failure, or if nothing passed.
tap_summary() {
	local allow=$1
	shift
	awk -v allow="$allow" '
	BEGIN {
		while (allow != "" && (getline l < allow) > 0) {
			if (l ~ /^[ \t]*(#|$)/)
				continue
			i = index(l, "\t")
			na++
			pat[na] = i ? substr(l, 1, i - 1) : l
			why[na] = i ? substr(l, i + 1) : ""
		}
	}
	/^not ok( |$)/ { failed++; next }
	/^ok( |$)/ {
		if ($0 !~ /[ \t]#[ \t]*[Ss][Kk][Ii][Pp]/) {
			passed++
			next
		}
		skipped++
		for (i = 1; i <= na; i++)
			if ($0 ~ pat[i]) {
				out[++no] = "# skip allowed: " $0 " (" why[i] ")"
				next
			}
		d = $0
		sub(/^ok[ \t]+([0-9]+[ \t]*)?(-[ \t]*)?/, "", d)
		w = d
		sub(/[ \t]#[ \t]*[Ss][Kk][Ii][Pp].*$/, "", d)
		sub(/^.*[ \t]#[ \t]*[Ss][Kk][Ii][Pp][A-Za-z]*[ \t]*/, "", w)
		out[++no] = "not ok - not run: " d " (skipped: " (w == "" ? "no reason given" : w) ")"
		failed++
	}
	END {
		for (i = 1; i <= no; i++)
			print out[i]
		printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
		exit !(failed == 0 && passed > 0)
	}' "$@"
}
