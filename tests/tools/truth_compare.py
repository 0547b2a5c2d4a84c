# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compare a profile's call counts with a program's own count of its calls.

    truth_compare.py PROFILE.prof TRUTH.json

TRUTH.json is a list of [filename, firstlineno, name, calls] written by the program itself
(tests/targets/code_reuse.py): for each, the profile must have that function with exactly
that many calls, and no other function of those names with a filename naming the same file.
Prints one line per difference; exits 1 if there is any, 0 if none, 2 on bad input."""
import json
import os
import pstats
import sys


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        stats = pstats.Stats(sys.argv[1]).stats
        with open(sys.argv[2]) as f:
            truth = {(fn, line, name): n for fn, line, name, n in json.load(f)}
    except Exception as e:  # noqa: BLE001 - any unreadable input is exit 2
        sys.stderr.write("truth_compare: %s: %s\n" % (type(e).__name__, e))
        return 2
    if not truth:
        sys.stderr.write("truth_compare: the truth is empty\n")
        return 2
    files = {os.path.realpath(k[0]) for k in truth}
    names = {k[2] for k in truth}
    diffs = []
    for key, n in sorted(truth.items()):
        got = stats.get(key, (0, 0))[1]
        if got != n:
            diffs.append("CALLS  %s:%d(%s): profile %d, the program's own count %d" % (key + (got, n)))
    for key, st in sorted(stats.items()):
        if key not in truth and key[2] in names and os.path.realpath(key[0]) in files:
            diffs.append("EXTRA  %s:%d(%s): %d calls the program never made" % (key + (st[1],)))
    for d in diffs:
        print(d)
    print("truth_compare: %d function(s) checked, %d difference(s)" % (len(truth), len(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
