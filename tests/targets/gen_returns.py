# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Generators and coroutines that return and that yield, in counts known by construction
(tests/batch.bats: the batch mode tells a generator's return from its yield on 3.12+).

Per round: an await of a coroutine that returns a value (value), one that returns None
(nothing), and one that suspends once (suspends: it yields through Step.__await__, and both
return None when resumed); a yield from a generator that returns a value (g_value), and a for
loop over a generator of two values (two: two yields, then a return of None). After N rounds
inner() returns None and main() a value, once each. Prints main's result (6 N) and how often
it suspended (N).
"""
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 50


async def value():
    return 1


async def nothing():
    return None


def g_value():
    return 2
    yield


def two():
    yield 1
    yield 2


class Step:
    def __await__(self):
        yield


async def suspends():
    await Step()


def inner():
    s = 0
    for _ in range(N):
        s += yield from g_value()
        for x in two():
            s += x
    yield s


async def main():
    s = 0
    for _ in range(N):
        s += await value()
        await nothing()
        await suspends()
    for x in inner():
        s += x
    return s


coro = main()
sent = 0
try:
    while True:
        coro.send(None)
        sent += 1
except StopIteration as stop:
    print("result %d, %d suspensions" % (stop.value, sent))
