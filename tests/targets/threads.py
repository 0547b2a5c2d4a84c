# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: four threads doing work at the same time.

The threads meet at a barrier and then each runs fib(16) (3193 calls, 1 primitive) and
crunch(). Each thread has its own stack, so per thread fib is one primitive call:
merged over the threads fib is 4 * 3193 calls, 4 primitive. The work is long enough for
the interpreter to switch threads in the middle of it.
"""
import threading


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def step(seed, i):
    return (seed * 31 + i) % 97


def crunch(seed):
    total = 0
    for i in range(500):
        total += step(seed, i)
    return total


def worker(idx, barrier, results):
    barrier.wait()
    results[idx] = fib(16) + crunch(idx)


def main():
    barrier = threading.Barrier(4)
    results = [None] * 4
    threads = [threading.Thread(target=worker, args=(i, barrier, results)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("results", results)


if __name__ == "__main__":
    main()
