# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: gevent greenlets taking turns (Debian's python3-gevent).

    gevent_pool.py [GREENLETS] [CALLS]

Each of GREENLETS greenlets runs work(), which calls leaf() CALLS times and yields to the hub
(gevent.sleep(0)) after every 10th call, so the greenlets interleave: work GREENLETS calls
from run_all, leaf GREENLETS * CALLS calls, all from work. Prints the total.
"""
import sys

import gevent


def leaf(i):
    return i % 7


def work(calls):
    s = 0
    for i in range(calls):
        s += leaf(i)
        if i % 10 == 9:
            gevent.sleep(0)
    return s


def run_all(greenlets, calls):
    jobs = [gevent.spawn(work, calls) for _ in range(greenlets)]
    gevent.joinall(jobs)
    return sum(j.value for j in jobs)


def main():
    greenlets = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    print("total", run_all(greenlets, calls))


if __name__ == "__main__":
    main()
