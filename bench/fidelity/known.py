# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload whose true self times are known by construction: each function's own work
is timed natively on its own (its calls to others left out), and its share of the section is
that time times its calls. A share error against this truth is the profiler's alone; one
against cProfile also holds cProfile's own distortion. Functions from 10 µs (leaf_a) down to a
fraction of a µs (tiny, called 40 times a round: where a per-call cost shows most).

    known.py ROUNDS            runs section(ROUNDS), prints "elapsed S ref R"
    known.py ROUNDS --truth F  also writes F: [filename, name, seconds] per function, natively
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402


def leaf_a():
    x = 0
    for i in range(400):
        x += i
    return x


def leaf_b():
    x = 0
    for i in range(100):
        x += i
    return x


def tiny():
    return 1


def mid():
    x = 0
    for i in range(100):
        x += i
    for _ in range(2):
        leaf_a()
    for _ in range(6):
        leaf_b()
    for _ in range(40):
        tiny()
    return x


def section(rounds):
    for _ in range(rounds):
        mid()


# Each function's own work alone: mid's loops with its calls left out, section's loop alone.
def mid_alone():
    x = 0
    for i in range(100):
        x += i
    for _ in range(2):
        pass
    for _ in range(6):
        pass
    for _ in range(40):
        pass
    return x


def section_alone(rounds):
    for _ in range(rounds):
        pass


def per_call(fn, n):
    """Seconds a call of fn takes natively (min of 5 runs of n calls, less the loop's own)."""
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        for _ in range(n):
            pass
        t2 = time.perf_counter()
        best = min(best, (t1 - t) - (t2 - t1))
    return max(best, 0.0) / n


def truth(rounds):
    n = 20000
    here = os.path.abspath(__file__)
    t0 = time.perf_counter()
    section_alone(rounds)
    own_section = time.perf_counter() - t0
    return [
        [here, "section", own_section],
        [here, "mid", per_call(mid_alone, n // 4) * rounds],
        [here, "leaf_a", per_call(leaf_a, n // 10) * 2 * rounds],
        [here, "leaf_b", per_call(leaf_b, n // 4) * 6 * rounds],
        [here, "tiny", per_call(tiny, n * 5) * 40 * rounds],
    ]


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
print("elapsed %.6f ref %.6f" % _fidelity.run(section, rounds))
if len(sys.argv) > 3 and sys.argv[2] == "--truth":
    with open(sys.argv[3], "w") as f:
        json.dump(truth(rounds), f)
