# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: fib-style recursion. Prints the timed section's seconds and its exact
number of Python calls (fib(n) makes 2*F(n+1)-1 calls)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speed  # noqa: E402


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def calls(n):
    a, b = 1, 1  # F(1), F(2)
    for _ in range(n):
        a, b = b, a + b
    return 2 * a - 1


n = int(sys.argv[1]) if len(sys.argv) > 1 else 25
ref = speed.loop_seconds()
t = time.perf_counter()
fib(n)
elapsed = time.perf_counter() - t
ref = (ref + speed.loop_seconds()) / 2
print("elapsed %.6f calls %d ref %.6f" % (elapsed, calls(n), ref))
