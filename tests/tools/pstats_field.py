# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Print one statistic of a profile, read by pstats.

    pstats_field.py FILE.prof FUNCNAME FIELD     FIELD: ncalls, tottime or cumtime
    pstats_field.py FILE.prof --total-tottime     the sum of every entry's tottime

A FUNCNAME matching no entry (or several) is an error (exit 1)."""
import pstats
import sys


def main():
    stats = pstats.Stats(sys.argv[1]).stats
    if sys.argv[2] == "--total-tottime":
        print("%.9f" % sum(v[2] for v in stats.values()))
        return 0
    found = [v for k, v in stats.items() if k[2] == sys.argv[2]]
    if len(found) != 1:
        print("%d entries named %s" % (len(found), sys.argv[2]), file=sys.stderr)
        return 1
    cc, nc, tt, ct, _ = found[0]
    print({"ncalls": nc, "tottime": "%.9f" % tt, "cumtime": "%.9f" % ct}[sys.argv[3]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
