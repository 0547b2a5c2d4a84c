# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: a plain recursion in a thread with a small C stack, or on the main thread.

    small_stack.py thread KIB DEPTH [WAITFILE]   a thread started with threading.stack_size(KIB
                                                 KiB) recurses DEPTH deep under the default
                                                 recursion limit
    small_stack.py main DEPTH [WAITFILE]         the main thread, with the limit raised past
                                                 DEPTH

With $PEP523_DIR set, under a bare PEP 523 hook (tests/targets/ext/pep523hook.c built there):
what any hook changes. With WAITFILE, prints "ready" and waits for the file first (an attach
comes meanwhile). Prints
"depth DEPTH" if the recursion returned, "RecursionError: ..." if it raised that (caught at
the recursion's start): natively on 3.11+ calls run inline and need no C stack, before 3.11
each is a C activation and a stack that runs out crashes the process. Exits 0 either way.
"""
import os
import sys
import threading
import time


def r(n):
    return 0 if n == 0 else 1 + r(n - 1)


def attempt(depth, out):
    try:
        out.append("depth %d" % r(depth))
    except RecursionError as e:
        out.append("RecursionError: %s" % e)


def main():
    if os.environ.get("PEP523_DIR"):
        sys.path.insert(0, os.environ["PEP523_DIR"])
        import pep523hook

        pep523hook.enable()
    how = sys.argv[1]
    args = sys.argv[2:]
    kib = int(args.pop(0)) if how == "thread" else 0
    depth = int(args.pop(0))
    if args:
        print("ready", flush=True)
        while not os.path.exists(args[0]):
            time.sleep(0.01)
    out = []
    if how == "thread":
        threading.stack_size(kib << 10)
        t = threading.Thread(target=attempt, args=(depth, out))
        t.start()
        t.join()
    else:
        sys.setrecursionlimit(depth + 1000)
        attempt(depth, out)
    print(out[0], flush=True)


if __name__ == "__main__":
    main()
