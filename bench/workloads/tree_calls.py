# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: what a call costs by its shape (bench/tree_calls.sh). N calls of an empty
function in a loop (the calibration's shape before 98d8511: bench/FIDELITY.md, History,
2026-11-27T00:22Z), then N calls in trees of calls of depth 2, 5 (the calibration's) and 11,
and fib's recursion. Each shape's
loop is timed by the thread's CPU time, median of 7 rounds; prints "shape ns-per-call"."""
import sys
import time

now = time.thread_time_ns


def empty():
    pass


def flat(n, f=empty):
    for _ in range(n):
        f()


def none(n):
    for _ in range(n):
        pass


def tree(d):
    if d:
        tree(d - 1)
        tree(d - 1)


def trees(n, d):
    for _ in range(n // (2 ** (d + 1) - 1)):
        tree(d)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


N = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
FIB = 18  # 8361 calls
shapes = [("none", lambda: none(N), N), ("flat", lambda: flat(N), N)]
shapes += [("tree%d" % d, lambda d=d: trees(N, d), N // (2 ** (d + 1) - 1) * (2 ** (d + 1) - 1))
           for d in (2, 5, 11)]
shapes.append(("fib", lambda: [fib(FIB) for _ in range(N // 8361)], N // 8361 * 8361))
times = {}
for _ in range(7):
    for name, run, _calls in shapes:
        t = now()
        run()
        times.setdefault(name, []).append(now() - t)
med = {name: sorted(v)[3] for name, v in times.items()}
for name, _run, calls in shapes[1:]:
    # the flat loop's own iterations are not its calls' cost
    base = med["none"] if name == "flat" else 0
    print("%s %.1f" % (name, (med[name] - base) / calls))
