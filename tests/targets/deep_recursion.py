# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: a recursion 950 deep under the default recursion limit (1000).

down(950) makes 951 nested calls (951/1). Natively it runs on every supported version;
a profiler that makes each Python call recurse in C (pyuprof's eval_frame hook on
3.11+) must not make it fail (3.12 counts C recursion separately).
"""
import sys


def down(n):
    if n == 0:
        return 0
    return down(n - 1) + 1


def main():
    print("limit", sys.getrecursionlimit())
    print("depth", down(950))


if __name__ == "__main__":
    main()
