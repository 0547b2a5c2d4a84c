# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Soak target: calls fib flat out until killed, so that a recording sees the same few call
edges billions of times (memory must stay flat). With an argument N it also defines and calls
N distinct functions, one new function and edge after each (smaller) round of fib, from 1 s
after "ready" (once attached): memory may grow with those, and only with those."""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def distinct(i):
    ns = {}
    exec("def f%d():\n    return %d\n" % (i, i), ns)
    ns["f%d" % i]()


n = int(sys.argv[1]) if len(sys.argv) > 1 else 0
print("ready", flush=True)
if n:
    time.sleep(1)
i = 0
while True:
    fib(10 if n else 20)
    if i < n:
        distinct(i)
    i += 1
