# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: the calls CPython runs inline whatever the eval_frame hook says, which
pyuprof sees through a probe of their own (3.13's specialised class call runs __init__ inline;
Debian's 3.11.2 runs a Python __getitem__ inline), beside a plain call. Prints ns an operation
of each, timed after a warm-up (the specialisation needs it): "init X getitem Y call Z"."""
import sys
import time


class Point:
    def __init__(self, x):
        self.x = x


class Table:
    def __getitem__(self, i):
        return i


def plain(i):
    return i


def inits(n):
    for i in range(n):
        Point(i)


def getitems(n):
    t = Table()
    for i in range(n):
        t[i]


def calls(n):
    for i in range(n):
        plain(i)


def per_op(fn, n):
    fn(1000)
    t = time.perf_counter()
    fn(n)
    return (time.perf_counter() - t) / n * 1e9


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
print("init %.0f getitem %.0f call %.0f" % (per_op(inits, n), per_op(getitems, n),
                                            per_op(calls, n)))
