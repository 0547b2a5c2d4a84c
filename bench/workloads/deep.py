# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: a recursion 700 deep, N times (past the kernel's 64 pending uretprobes
per thread, within 3.12's C recursion budget under pyuprof). Prints the timed section's
seconds and its exact number of Python calls."""
import sys
import time

DEPTH = 700


def down(n):
    return 0 if n == 0 else down(n - 1) + 1


n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
t = time.perf_counter()
for _ in range(n):
    down(DEPTH)
elapsed = time.perf_counter() - t
print("elapsed %.6f calls %d" % (elapsed, n * (DEPTH + 1)))
