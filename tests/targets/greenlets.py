# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: a driver and a worker greenlet (Debian's python3-greenlet) switching back and forth.

    greenlets.py [N]

The driver calls leaf_a before each switch to the worker; the worker calls leaf_b before each
switch back, N times, and then returns, which ends the driver's loop: leaf_a N + 1 calls from
driver, leaf_b N from worker, worker 1 (no Python caller: greenlet runs it), driver 1 from
main(). The worker lives inside the driver's call (started by its first switch, ended by its
last), so its cumtime is within the driver's. Prints the two sums.
"""
import sys

import greenlet


def leaf_a(i):
    return i * 2


def leaf_b(i):
    return i + 1


def worker(n, back):
    s = 0
    for i in range(n):
        s += leaf_b(i)
        back.switch()
    return s


def driver(n):
    w = greenlet.greenlet(worker)
    s, i, got = 0, 0, w.switch(n, greenlet.getcurrent())
    s += leaf_a(i)
    while not w.dead:
        i += 1
        s += leaf_a(i)
        got = w.switch()
    return s, got


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print("sums", *driver(n))


if __name__ == "__main__":
    main()
