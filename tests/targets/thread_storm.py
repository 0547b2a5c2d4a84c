# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: threads started and ended without a pause, from two starter threads, for
SECONDS (argv[1], default 120); prints "ready PID" first. An attach lands while threads are
being born: the kernel attaches a new thread of a seized one by itself (TRACECLONE)."""
import os
import sys
import threading
import time


def work(n):
    return sum(i * i for i in range(n))


def starter():
    while True:
        ts = [threading.Thread(target=work, args=(50,)) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()


for _ in range(2):
    threading.Thread(target=starter, daemon=True).start()
print("ready", os.getpid(), flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 120)
