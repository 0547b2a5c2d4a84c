# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Load a profile with pstats the way its users do, and print it.

    pstats_load.py FILE.prof [--name NAME]...

Runs pstats.Stats(FILE), sort_stats("cumulative"), print_stats() and print_callers(),
so every entry and caller edge goes through pstats' own formatting, and checks the
shape pstats relies on: keys (str, int, str), values (cc, nc, tt, ct, callers) with
int counts, float times, callers {key: (nc, cc, tt, ct)}, and every caller being an
entry of its own. Each --name must be the function name of some entry (used for the
non-ASCII names, compared as decoded str, so bytes that are not UTF-8 cannot pass).
Exit 0 if all holds, 1 otherwise (with the reason on stderr).
"""
import argparse
import pstats
import sys


def check_shape(stats):
    """Returns a list of problems with the raw stats dict."""
    problems = []
    for key, value in stats.items():
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)
                and isinstance(key[1], int) and isinstance(key[2], str)):
            problems.append("bad key %r" % (key,))
            continue
        if not (isinstance(value, tuple) and len(value) == 5):
            problems.append("bad value for %r: %r" % (key, value))
            continue
        cc, nc, tt, ct, callers = value
        if not (isinstance(cc, int) and isinstance(nc, int) and 0 <= cc <= nc):
            problems.append("bad counts for %r: cc=%r nc=%r" % (key, cc, nc))
        if not (isinstance(tt, float) and isinstance(ct, float)):
            problems.append("bad times for %r: tt=%r ct=%r" % (key, tt, ct))
        if not isinstance(callers, dict):
            problems.append("bad callers for %r: %r" % (key, callers))
            continue
        for caller, edge in callers.items():
            if caller not in stats:
                problems.append("caller %r of %r is not an entry" % (caller, key))
            if not (isinstance(edge, tuple) and len(edge) == 4
                    and isinstance(edge[0], int) and isinstance(edge[1], int)
                    and 0 <= edge[1] <= edge[0]):
                problems.append("bad edge %r -> %r: %r" % (caller, key, edge))
    return problems


def main():
    ap = argparse.ArgumentParser(description="Load a .prof with pstats and print it.")
    ap.add_argument("prof")
    ap.add_argument("--name", action="append", default=[],
                    help="a function name that must be present")
    args = ap.parse_args()

    try:
        st = pstats.Stats(args.prof)
        st.sort_stats("cumulative").print_stats()
        st.print_callers()
    except Exception as e:
        sys.stderr.write("pstats_load: %s: %s: %s\n" % (args.prof, type(e).__name__, e))
        return 1
    problems = check_shape(st.stats)
    names = {key[2] for key in st.stats}
    problems += ["no function named %r" % n for n in args.name if n not in names]
    for p in problems:
        sys.stderr.write("pstats_load: %s: %s\n" % (args.prof, p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
