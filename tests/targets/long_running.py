# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture for attach mode: known work in discrete rounds.

    long_running.py --serve SECONDS   print "ready PID", then run one round per SIGUSR1
                                      received, printing "round N" after each; exit
                                      (printing "rounds N") on SIGUSR2 or after SECONDS
    long_running.py --rounds K        run K rounds at once and exit: the reference run
                                      for cProfile, same call paths as --serve
    long_running.py --loop SECONDS    print "ready PID", run rounds back to back for
                                      SECONDS, idle for a second, then print "rounds N"
    long_running.py --loop-masked SECONDS
                                      the same with every signal it can block blocked
                                      (pthread_sigmask), as a program that keeps its
                                      signals to one thread does in the others; then it
                                      handles SIGURG, unblocks them, and prints "SIGURG N":
                                      the SIGURGs that were pending (natively 0)

In --serve mode the process does nothing between rounds (it waits in sigtimedwait, a
C call), so a profiler attached before the first SIGUSR1 and stopped after the last
"round N" line saw exactly N rounds: everything below do_round() is exact. serve() and
wait_signal() are already running at attach (their callers come from the frame chain).
"""
import os
import signal
import sys
import time


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def values(n):
    for i in range(n):
        yield i


class Accumulator:
    def add(self, v):
        self.total += v


class Squares:
    def __getitem__(self, i):
        return i * i


SQUARES = Squares()


def do_round(n):
    # per round: values 21 calls (20 items + the final resume), add 21, fib 177/1,
    # __getitem__ 10 (through obj[i]: run inline by 3.11's BINARY_SUBSCR_GETITEM once warm)
    acc = Accumulator()
    acc.total = n
    for v in values(20):
        acc.add(v)
    acc.add(fib(10))
    for i in range(10):
        acc.total += SQUARES[i]
    return acc.total


def report(n):
    print("round", n, flush=True)


def serve(wait):
    n = 0
    while wait(n):
        do_round(n)
        n += 1
        report(n)
    return n


def wait_signal(deadline):
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    info = signal.sigtimedwait([signal.SIGUSR1, signal.SIGUSR2], remaining)
    return info is not None and info.si_signo == signal.SIGUSR1


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--serve", "--rounds", "--loop", "--loop-masked"):
        sys.exit("usage: long_running.py --serve SECONDS | --rounds K | --loop SECONDS | "
                 "--loop-masked SECONDS")
    mode, arg = argv[1], float(argv[2])
    if mode == "--rounds":
        rounds = serve(lambda n: n < arg)
    elif mode == "--serve":
        # block the signals first so that they wait for sigtimedwait instead of killing us
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1, signal.SIGUSR2])
        deadline = time.monotonic() + arg
        print("ready", os.getpid(), flush=True)
        rounds = serve(lambda n: wait_signal(deadline))
    else:
        if mode == "--loop-masked":
            signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        deadline = time.monotonic() + arg
        print("ready", os.getpid(), flush=True)
        rounds = serve(lambda n: time.monotonic() < deadline)
        # idle a moment: a profiler behind (a full ring) catches up before the calls of the
        # end (and of the interpreter's exit), which then find room
        time.sleep(1)
    print("rounds", rounds, flush=True)
    if mode == "--loop-masked":
        got = []
        signal.signal(signal.SIGURG, lambda signum, frame: got.append(signum))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signal.valid_signals())
        print("SIGURG", len(got), flush=True)


if __name__ == "__main__":
    main(sys.argv)
