# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: recursion deeper than any C stack holds, before and after pyuprof is SIGKILLed.

    after_kill.py GOFILE

Natively (3.11+) Python-to-Python calls run inline, on the heap: with the limit raised,
r(60000) returns. Prints "first 60000", then "ready", then calls small functions until GOFILE
exists (pyuprof attaches meanwhile, and is killed), then for a while more (the page finds
itself unprobed at its next flush, at most 50 ms later), and recurses again: "again 60000",
or "again RecursionError: ...". A crash (SIGSEGV) ends it instead.
"""
import os
import sys
import time

DEPTH = 60000


def r(n):
    return 0 if n == 0 else 1 + r(n - 1)


def busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r(10)


def main():
    sys.setrecursionlimit(DEPTH + 1000)
    print("first", r(DEPTH), flush=True)
    print("ready", flush=True)
    while not os.path.exists(sys.argv[1]):
        busy(0.01)
    busy(0.2)
    try:
        print("again", r(DEPTH), flush=True)
    except RecursionError as e:
        print("again RecursionError:", e, flush=True)


if __name__ == "__main__":
    main()
