# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Bench workload: T threads (default 4) calling a small function under the GIL, N calls in
all, the main thread waiting in join(); then T threads started and joined one after the other,
each calling nothing. Prints "calls C section_s S starts K start_us U": the section's time (the
calls, threads started once), and the median time a start and join of a thread took.

    threads4.py [T [N]]
"""
import sys
import threading
import time


def step(x):
    return (x * 7 + 3) % 1000003


def worker(n):
    x = 1
    for _ in range(n):
        x = step(x)
    return x


def nothing():
    pass


def main():
    t = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000000
    threads = [threading.Thread(target=worker, args=(n // t,)) for _ in range(t)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    section = time.perf_counter() - t0
    starts = []
    for _ in range(100):
        t1 = time.perf_counter()
        th = threading.Thread(target=nothing)
        th.start()
        th.join()
        starts.append(time.perf_counter() - t1)
    starts.sort()
    print("calls %d section_s %.6f starts %d start_us %.1f"
          % (n // t * t, section, len(starts), starts[len(starts) // 2] * 1e6))


main()
