# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: the demo's compile-like work (parse, walk, compile) on N stdlib modules.
Prints the timed section's seconds and its number of Python calls, counted by a first,
untimed pass under sys.setprofile (the same work, so the same calls)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import compiler_workload  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
argv = ["compiler_workload", "--files", str(n)]
count = [0]


def counter(frame, event, arg):
    if event == "call":
        count[0] += 1


sys.argv = argv
devnull = open(os.devnull, "w")
stdout, sys.stdout = sys.stdout, devnull
sys.setprofile(counter)
compiler_workload.main()
sys.setprofile(None)
t = time.perf_counter()
compiler_workload.main()
elapsed = time.perf_counter() - t
sys.stdout = stdout
print("elapsed %.6f calls %d" % (elapsed, count[0]))
