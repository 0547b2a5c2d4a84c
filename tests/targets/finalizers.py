# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: Python code run by the clearing of a frame that returns.

Each holder() call keeps the only reference to a Resource, a half-consumed generator and an
object with a weakref callback in its locals, so their __del__, the generator's finally:
and the callback run while CPython clears holder's frame after it returned. cProfile counts
holder as returned by then: the calls made by that clearing (released, closing, notified) have
holder's caller as theirs. On 3.12+ the clearing happens inside the eval function's activation,
after the frame was unlinked; a profiler must not take the returned frame for their caller.
"""
import weakref


def released(n):
    return n + 1


def closing(n):
    return n * 2


def notified(n):
    return n - 1


class Resource:
    def __init__(self, n):
        self.n = n

    def __del__(self):
        released(self.n)


class Watched:
    pass


def numbers(n):
    try:
        yield n
        yield n + 1
    finally:
        closing(n)


def holder(i):
    res = Resource(i)
    gen = numbers(i)
    next(gen)
    obj = Watched()
    ref = weakref.ref(obj, lambda r: notified(i))
    return res.n + (ref() is obj)


def driver(rounds):
    total = 0
    for i in range(rounds):
        total += holder(i)
    return total


if __name__ == "__main__":
    print(driver(300))
