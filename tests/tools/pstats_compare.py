# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compare pyuprof's profile of a fixture with cProfile's, function by function.

    pstats_compare.py OURS.prof CPROFILE.prof --file FIXTURE.py [--below NAME]... [--show]

Both files are loaded with pstats. For every function defined in FIXTURE.py (key
filename is that file) it checks that both profiles have it, with the same total calls
(nc), primitive calls (cc), the same set of callers, and for each caller edge the same
nc and cc. Every C function a function of FIXTURE.py calls (cProfile's builtins=True:
key ('~', 0, "<built-in method builtins.len>")) is compared by those calls: the same
callers among the fixture's functions, with the same nc and cc each. Prints one line per
difference and exits 1 if there is any, 0 if none, 2 on bad input (unreadable file, or no
function of FIXTURE.py in CPROFILE.prof).

What is deliberately outside the comparison, and why:
  * Functions defined in other files. pyuprof in launch mode also records the
    interpreter's start-up (site, encodings, importlib) and cProfile records its
    harness (runpy, cprofile_run.py); the standard library's own internals also vary
    with what ran before recording started and with timing (asyncio's selector,
    threading's waits). Such functions still count as *callers* of fixture functions:
    an edge from threading.Thread.run or asyncio's Handle._run to a fixture function
    is compared like any other.
  * The callers of the fixture's own `<module>` code (the one whose first line is
    the smallest among the file's `<module>` entries, normally the only one). The
    script is started by the harness in cProfile (runpy's _run_code) and by the
    interpreter itself under pyuprof (no Python caller). Its call counts are compared.
  * Times (tottime, cumtime): they are measurements, not facts to compare.
  * A C function's calls from elsewhere (its totals): the interpreter's start-up calls
    len and str.join as much as anything. Its calls from the fixture are compared.
  * An address in a C function's name (cProfile names type.__new__ "<built-in method
    __new__ of type object at 0x7f...>"): it is the process's; it reads "0x?" here.
With --below NAME (repeatable) only the functions named NAME and the fixture functions
reachable from them through caller edges (in either profile) are compared: for attach
mode, where only what ran inside the rounds is exact (the loop around them was entered
before attaching).
--show prints the selected entries of both profiles.
"""
import argparse
import os
import pstats
import re
import sys


ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def norm_key(key):
    """A C function's key with the address in its name taken out."""
    if key[0] == "~":
        return (key[0], key[1], ADDRESS.sub(" at 0x?", key[2]))
    return key


def load(path):
    try:
        stats = pstats.Stats(path).stats
        return {norm_key(k): (v[0], v[1], v[2], v[3], {norm_key(c): e for c, e in v[4].items()})
                for k, v in stats.items()}
    except Exception as e:  # pstats raises TypeError, EOFError, ValueError, OSError...
        sys.stderr.write("pstats_compare: cannot load %s: %s: %s\n" % (path, type(e).__name__, e))
        sys.exit(2)


def same_file(filename, fixture_real):
    if not filename or filename.startswith(("<", "~")):
        return False
    return os.path.realpath(filename) == fixture_real


def edge_counts(value):
    """(nc, cc) of a caller edge; the old `profile` format stores a bare count."""
    if isinstance(value, int):
        return value, value
    return value[0], value[1]  # (nc, cc, tt, ct): nc first, unlike the entry itself


def fmt_key(key):
    return pstats.func_std_string(key)


def fmt_counts(nc, cc):
    return "%d/%d" % (nc, cc) if nc != cc else "%d" % nc


def is_cfunc(key):
    return key[0] == "~" and key[1] == 0 and key[2].startswith("<")


def fixture_entries(stats, fixture_real):
    """The fixture's functions, and the C functions they call with only those calls."""
    ours = {k: v for k, v in stats.items() if same_file(k[0], fixture_real)}
    for k, v in stats.items():
        if not is_cfunc(k):
            continue
        callers = {c: e for c, e in v[4].items() if c in ours}
        if callers:
            nc = sum(edge_counts(e)[0] for e in callers.values())
            cc = sum(edge_counts(e)[1] for e in callers.values())
            ours[k] = (cc, nc, 0, 0, callers)
    return ours


def module_key(entries):
    mods = sorted(k for k in entries if k[2] == "<module>")
    return mods[0] if mods else None


def below(stats, entries, roots):
    """Fixture functions named in roots, and those reachable from them via caller edges."""
    children = {}
    for callee, value in stats.items():
        for caller in value[4]:
            children.setdefault(caller, set()).add(callee)
    todo = [k for k in entries if k[2] in roots]
    seen = set(todo)
    while todo:
        for callee in children.get(todo.pop(), ()):
            if callee in entries and callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return seen


def show(title, entries, keys):
    print("%s:" % title)
    for key in sorted(keys, key=lambda k: (k[1], k[2])):
        if key not in entries:
            continue
        cc, nc, _, _, callers = entries[key]
        print("  %-9s %s" % (fmt_counts(nc, cc), fmt_key(key)))
        for caller, edge in sorted(callers.items()):
            print("      <- %-9s %s" % (fmt_counts(*edge_counts(edge)), fmt_key(caller)))


def compare(ours, theirs, keys, mod_key):
    problems = []
    for key in sorted(keys, key=lambda k: (k[1], k[2])):
        name = fmt_key(key)
        if key not in theirs:
            cc, nc = ours[key][0], ours[key][1]
            problems.append("EXTRA    %s: ours %s, not in cProfile" % (name, fmt_counts(nc, cc)))
            continue
        if key not in ours:
            cc, nc = theirs[key][0], theirs[key][1]
            problems.append("MISSING  %s: cProfile %s, not in ours" % (name, fmt_counts(nc, cc)))
            continue
        o_cc, o_nc, _, _, o_callers = ours[key]
        t_cc, t_nc, _, _, t_callers = theirs[key]
        if (o_nc, o_cc) != (t_nc, t_cc) and not is_cfunc(key):  # (a C function's: its edges)
            problems.append("CALLS    %s: ours %s, cProfile %s (total/primitive)"
                            % (name, fmt_counts(o_nc, o_cc), fmt_counts(t_nc, t_cc)))
        if key == mod_key:
            continue  # started by the harness in cProfile, by the interpreter in ours
        for caller in sorted(set(o_callers) - set(t_callers)):
            problems.append("CALLER   %s: caller %s (%s) only in ours"
                            % (name, fmt_key(caller), fmt_counts(*edge_counts(o_callers[caller]))))
        for caller in sorted(set(t_callers) - set(o_callers)):
            problems.append("CALLER   %s: caller %s (%s) only in cProfile"
                            % (name, fmt_key(caller), fmt_counts(*edge_counts(t_callers[caller]))))
        for caller in sorted(set(o_callers) & set(t_callers)):
            o_edge, t_edge = edge_counts(o_callers[caller]), edge_counts(t_callers[caller])
            if o_edge != t_edge:
                problems.append("EDGE     %s <- %s: ours %s, cProfile %s"
                                % (name, fmt_key(caller), fmt_counts(*o_edge),
                                   fmt_counts(*t_edge)))
    return problems


def main():
    ap = argparse.ArgumentParser(description="Compare a pyuprof profile with cProfile's.")
    ap.add_argument("ours")
    ap.add_argument("cprofile")
    ap.add_argument("--file", required=True, help="the fixture script")
    ap.add_argument("--below", metavar="NAME", action="append",
                    help="only NAME and what it calls (repeatable)")
    ap.add_argument("--show", action="store_true", help="print the compared entries")
    args = ap.parse_args()

    fixture_real = os.path.realpath(args.file)
    ours_all, theirs_all = load(args.ours), load(args.cprofile)
    ours = fixture_entries(ours_all, fixture_real)
    theirs = fixture_entries(theirs_all, fixture_real)
    if not theirs:
        sys.stderr.write("pstats_compare: no function of %s in %s\n" % (args.file, args.cprofile))
        return 2
    keys = set(ours) | set(theirs)
    if args.below:
        keys = below(ours_all, ours, args.below) | below(theirs_all, theirs, args.below)
        missing = [n for n in args.below if not any(k[2] == n for k in theirs)]
        if missing:
            sys.stderr.write("pstats_compare: no function %s of %s in %s\n"
                             % (", ".join(missing), args.file, args.cprofile))
            return 2
    mod_key = module_key(theirs)
    if args.show:
        show("ours (%s)" % args.ours, ours, keys)
        show("cProfile (%s)" % args.cprofile, theirs, keys)

    # a C function is compared by its calls from the functions compared (--below: only those)
    for entries in (ours, theirs):
        for k in list(entries):
            if is_cfunc(k) and k in keys:
                callers = {c: e for c, e in entries[k][4].items() if c in keys}
                if not callers:
                    del entries[k]
                    continue
                entries[k] = (sum(edge_counts(e)[1] for e in callers.values()),
                              sum(edge_counts(e)[0] for e in callers.values()), 0, 0, callers)
    keys = {k for k in keys if not is_cfunc(k) or k in ours or k in theirs}
    problems = compare(ours, theirs, keys, mod_key)
    if problems:
        print("pstats_compare: %d difference(s) between %s (ours) and %s (cProfile), "
              "fixture %s:" % (len(problems), args.ours, args.cprofile, args.file))
        for p in problems:
            print("  " + p)
        return 1
    print("pstats_compare: %d functions of %s agree (calls, primitive calls, callers)"
          % (len(keys), os.path.basename(args.file)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
