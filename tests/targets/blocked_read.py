"""Blocks in a read nobody answers until signals come (an injection-under-signals detector).

    python blocked_read.py [STOPFILE]

Handlers count SIGUSR1 and SIGUSR2; SIGALRM's handler raises, which must interrupt the read
(PEP 475: a handler that raises ends the retried call), as an alarm() timeout does. Prints
"ready", then, once interrupted, "usr1 N usr2 N timeout" and fib(20), and exits 0. A signal
lost, merged or held back until the read returns (it never does) shows in that line, or as a
hang. With STOPFILE it then waits for that file before it exits (a recording attached meanwhile
ends as usual rather than with the target).
"""
import os
import signal
import sys
import time


class Timeout(Exception):
    pass


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


counts = {signal.SIGUSR1: 0, signal.SIGUSR2: 0}


def count(signum, frame):
    counts[signum] += 1


def timeout(signum, frame):
    raise Timeout()


def main():
    signal.signal(signal.SIGUSR1, count)
    signal.signal(signal.SIGUSR2, count)
    signal.signal(signal.SIGALRM, timeout)
    r, _w = os.pipe()
    print("ready", flush=True)
    try:
        os.read(r, 1)
        print("read returned")
    except Timeout:
        print("usr1 %d usr2 %d timeout %d" % (counts[signal.SIGUSR1], counts[signal.SIGUSR2],
                                              fib(20)), flush=True)
    while len(sys.argv) > 1 and not os.path.exists(sys.argv[1]):
        time.sleep(0.01)


main()
