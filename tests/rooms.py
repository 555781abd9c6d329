#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The module's rooms, checked against the built objects.

Documentation/design.md's table "Rooms" says, for each file of module/,
which files it may call ("may call": the files named there, the files
that implement the headers named there; "kernel only", "nothing": none
of ours). The built objects say which file calls which: a symbol one
object needs (undefined in it) and another defines. Every such call
must be one the table allows, every object must have a row, and no
calls may go round in a circle (two files calling each other, or a
longer loop): calls go one way down.

usage: tests/rooms.py DESIGN_MD HEADER_DIR OBJECT...
Prints what it found, and each finding; exits 1 on a finding.
"""
import fnmatch
import os
import re
import subprocess
import sys


def rows(design):
    """[(file patterns, set of names they may call)] from the Rooms
    table: one row a room (gs_backend.c and its backends share one)."""
    text = open(design, encoding="utf-8").read()
    start = text.index("## Rooms")
    table = []
    for line in text[start:].splitlines()[2:]:
        if line.startswith("## "):
            break
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 3:
            continue
        files = re.findall(r"`([\w*]+\.c)`", cells[0])
        allowed = set(re.findall(r"`(gs_[\w*]+\.[ch])`", cells[-1]))
        table.append((files, allowed))
    return table


def room_of(table, f):
    """The index of @f's row, or None."""
    for i, (pats, _) in enumerate(table):
        if any(fnmatch.fnmatch(f, p) for p in pats):
            return i
    return None


def header_impl(hdir, defined_in):
    """{header: the objects that define something it declares}."""
    impl = {}
    for h in sorted(os.listdir(hdir)):
        if not (h.startswith("gs_") and h.endswith(".h")):
            continue
        text = open(os.path.join(hdir, h), encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        names = set(re.findall(r"\b(gs_\w+)\s*\(", text))
        impl[h] = {defined_in[n] for n in names if n in defined_in}
    return impl


def symbols(obj):
    out = subprocess.run(["nm", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def circles(edges):
    """The strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    design, hdir, objs = sys.argv[1], sys.argv[2], sys.argv[3:]
    table = rows(design)
    defined_in, needs = {}, {}
    for o in objs:
        name = os.path.basename(o)[:-2] + ".c"
        defined, undefined = symbols(o)
        for s in defined:
            defined_in[s] = name
        needs[name] = undefined
    impl = header_impl(hdir, defined_in)
    bad = []
    room = {}
    for f in sorted(needs):
        room[f] = room_of(table, f)
        if room[f] is None:
            bad.append(f"{f}: no row in the Rooms table")
    # Calls between rooms: within a room (a row) they are its own.
    edges = {}
    for f, undefined in needs.items():
        edges[f] = {defined_in[s] for s in undefined
                    if s in defined_in and room[defined_in[s]] != room[f]}
    for f in sorted(edges):
        if room[f] is None:
            continue
        allowed = set()
        for name in table[room[f]][1]:
            allowed |= impl.get(name, set()) if name.endswith(".h") \
                else {name}
        for to in sorted(edges[f] - allowed):
            what = sorted(s for s in needs[f] if defined_in.get(s) == to)
            bad.append(f"{f} calls {to} ({', '.join(what[:4])}), "
                       "which its row does not allow")
    rooms = {}
    for f, tos in edges.items():
        if room[f] is not None:
            rooms.setdefault(room[f], set()).update(
                room[t] for t in tos if room[t] is not None)
    names = {i: ", ".join(sorted(f for f in needs if room[f] == i))
             for i in set(room.values())}
    for comp in circles(rooms):
        bad.append("a circle: " + " <-> ".join(names[i] for i in comp))
    n = sum(len(e) for e in edges.values())
    print(f"{len(edges)} objects, {n} calls between them, "
          f"{len(table)} rooms in the table")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
