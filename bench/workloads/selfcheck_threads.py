# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Soak target (bench/soak-attach.sh): THREADS long-lived threads, and short-lived ones started
and ended all the time, compute the same results over and over through plain calls,
recursion, generators, methods and exceptions; the first wrong result ends the process with
status 1 (os._exit, from any thread). Prints "ready"; when the file named by its argument
appears, prints "rounds N" and exits 0.

    selfcheck_threads.py STOPFILE [THREADS]
"""
import os
import sys
import threading
import time


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


EXPECTED = (144, sum(i * i for i in range(50)), True)
rounds = [0]
lock = threading.Lock()


def check(n):
    for _ in range(n):
        got = one_round()
        if got != EXPECTED:
            print("WRONG in %s: %r" % (threading.current_thread().name, got), flush=True)
            os._exit(1)
        with lock:
            rounds[0] += 1


def worker(stop):
    while not stop.is_set():
        check(5)


def main():
    stopfile = sys.argv[1]
    nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(stop,), name="worker-%d" % i)
               for i in range(nthreads)]
    for t in threads:
        t.start()
    print("ready", flush=True)
    while not os.path.exists(stopfile):
        short = threading.Thread(target=check, args=(3,))  # threads come and go
        short.start()
        short.join()
        check(1)
        time.sleep(0.005)
    stop.set()
    for t in threads:
        t.join()
    print("rounds", rounds[0], flush=True)


main()
