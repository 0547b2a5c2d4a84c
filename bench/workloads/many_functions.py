# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: many distinct functions called in turn, as a large program's are (a
compiler's passes, a framework's layers): N code objects, each called once a round. The batch
mode keeps the code objects whose identity it sent in a table in the target; one it does not
find there costs a kernel entry. Prints the timed section's seconds and its exact number of
Python calls."""
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ROUNDS = 100
namespace = {}
exec(compile("".join("def f%d(x):\n    return x\n" % i for i in range(n)), "generated.py", "exec"),
     namespace)
functions = [namespace["f%d" % i] for i in range(n)]


def rounds(k):
    for _ in range(k):
        for f in functions:
            f(1)


rounds(2)  # every identity sent before the timed section
t = time.perf_counter()
rounds(ROUNDS)
print("elapsed %.6f calls %d" % (time.perf_counter() - t, ROUNDS * n + 1))
