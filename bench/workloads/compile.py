# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: the demo's compile-like work (parse, walk, compile) on N stdlib modules.
Prints the timed section's seconds and its number of Python calls. The work runs twice, the
second time timed (the first fills the caches). The calls are counted in a child process of
the same interpreter doing the same (compile.py --count N: the second run under
sys.setprofile): a profile function set here would replace the one a profiler of this
process has (cProfile's, on 3.8-3.11), and the timed run would no longer be profiled.

With BENCH_COMPILE_ROUNDS=R the timed run is repeated R times, each between its own two
timings of the call-free loop, and the one whose time over its loop's is the median is printed,
with its loop: a section of 200-400 ms changes speed inside itself on the test VM, which one
loop before and one after cannot see, and the median of R such sections in each process is
steadier than one (bench/RESULTS.md, Findings: compile, the median of 7 rounds a run,
2026-11-28). The calls counted are one round's."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compiler_workload  # noqa: E402
import speed  # noqa: E402

counting = sys.argv[1:2] == ["--count"]
n = int(sys.argv[-1]) if len(sys.argv) > 1 else 2
count = [0]


def counter(frame, event, arg):
    if event == "call":
        count[0] += 1


sys.argv = ["compiler_workload", "--files", str(n)]
devnull = open(os.devnull, "w")
stdout, sys.stdout = sys.stdout, devnull
compiler_workload.main()
if counting:
    sys.setprofile(counter)
    compiler_workload.main()
    sys.setprofile(None)
    sys.stdout = stdout
    print(count[0])
    sys.exit(0)
rounds = []
for _ in range(max(1, int(os.environ.get("BENCH_COMPILE_ROUNDS", "1")))):
    ref = speed.loop_seconds()
    t = time.perf_counter()
    compiler_workload.main()
    elapsed = time.perf_counter() - t
    ref = (ref + speed.loop_seconds()) / 2
    rounds.append((elapsed / ref, elapsed, ref))
_, elapsed, ref = sorted(rounds)[len(rounds) // 2]
sys.stdout = stdout
calls = subprocess.run([sys.executable, os.path.abspath(__file__), "--count", str(n)],
                       check=True, capture_output=True, text=True).stdout
print("elapsed %.6f calls %d ref %.6f" % (elapsed, int(calls), ref))
