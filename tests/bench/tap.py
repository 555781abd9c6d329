# SPDX-License-Identifier: GPL-2.0
"""TAP for the unit tests of the bench's Python tools (test_report.py,
test_funcs.py): check() prints one result, plan() the plan at the end
and gives the exit status."""

_n = 0
_failed = 0


def check(desc, cond, detail=""):
    """One "ok N - DESC" or "not ok N - DESC" with DETAIL's first lines."""
    global _n, _failed
    _n += 1
    if cond:
        print("ok %d - %s" % (_n, desc))
    else:
        _failed += 1
        print("not ok %d - %s" % (_n, desc))
        for line in str(detail).splitlines()[:30]:
            print("# " + line)


def plan():
    """Print "1..N"; return the exit status: 1 if any check failed."""
    print("1..%d" % _n)
    return 1 if _failed else 0
