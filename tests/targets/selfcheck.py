# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture for attach/detach stress: computes the same results over and over through plain
calls, recursion, generators, methods and exceptions, and exits 1 at the first wrong one.
Prints "ready"; stops with status 0 when the file named by its argument appears."""
import os
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def squares(n):
    for i in range(n):
        yield i * i


class Acc:
    def __init__(self):
        self.total = 0

    def add(self, x):
        self.total += x
        return self


def boom(n):
    if n == 0:
        raise ValueError(n)
    return boom(n - 1)


def one_round():
    acc = Acc()
    for v in squares(50):
        acc.add(v)
    try:
        boom(20)
    except ValueError:
        caught = True
    return fib(12), acc.total, caught


def main():
    stop = sys.argv[1]
    expected = (144, sum(i * i for i in range(50)), True)
    print("ready", flush=True)
    rounds = 0
    while not os.path.exists(stop):
        got = one_round()
        if got != expected:
            print("WRONG after %d rounds: %r" % (rounds, got), flush=True)
            sys.exit(1)
        rounds += 1
    print("rounds", rounds, flush=True)


main()
