# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: deep recursion (800 frames) with some work at every level, repeated.
section() is the timed section."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402

sys.setrecursionlimit(5000)


def down(n):
    if n == 0:
        return 0
    x = 0
    for i in range(20):
        x += i
    return x + down(n - 1)


def section(rounds):
    s = 0
    for _ in range(rounds):
        s += down(800)
    return s


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 60
print("elapsed %.6f ref %.6f" % _fidelity.run(section, rounds))
