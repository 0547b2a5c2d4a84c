# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: generator and coroutine resumes (each resume is a call, as cProfile
counts). Prints the timed section's seconds and its exact number of Python calls."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speed  # noqa: E402


def numbers(n):
    for i in range(n):
        yield i


def squares(n):
    for i in numbers(n):
        yield i * i


async def leaf(x):
    return x + 1


async def chain(n):
    s = 0
    for i in range(n):
        s += await leaf(i)
    return s


def drive(coro):
    try:
        coro.send(None)
    except StopIteration as e:
        return e.value


def work(n):
    total = sum(squares(n))
    total += drive(chain(n))
    return total


n = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
ref = speed.loop_seconds()
t = time.perf_counter()
work(n)
elapsed = time.perf_counter() - t
ref = (ref + speed.loop_seconds()) / 2
# work 1; squares and numbers n+1 resumes each; drive 1; chain 1 resume; leaf n
print("elapsed %.6f calls %d ref %.6f" % (elapsed, 1 + 2 * (n + 1) + 2 + n, ref))
