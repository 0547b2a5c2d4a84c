# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: C calls, densely (issue 39's): appends, len, dict.get and isinstance in a
loop, the calls cProfile counts with builtins=True. Prints the timed section's seconds and its
calls as cProfile counts them with its default builtins=True: the Python calls (work, one) and
the C calls (4 a round, and range's one)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speed  # noqa: E402


def work(n):
    out = []
    seen = {}
    for i in range(n):
        out.append(i)
        len(out)
        seen.get(i)
        isinstance(i, int)
    return out


if __name__ == "__main__":  # (bench/fidelity/cdense.py imports work)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    ref = speed.loop_seconds()
    t = time.perf_counter()
    work(n)
    elapsed = time.perf_counter() - t
    ref = (ref + speed.loop_seconds()) / 2
    print("elapsed %.6f calls %d ref %.6f" % (elapsed, 1 + 4 * n + 1, ref))
