# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: 4 threads computing under the GIL (small calls) while the main thread
waits in join(). section() is the timed section; the threads' work is under worker()."""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402


def step(x):
    return (x * 7 + 3) % 1000003


def worker(n):
    x = 1
    for _ in range(n):
        x = step(x)
    return x


def section(n):
    threads = [threading.Thread(target=worker, args=(n,)) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
print("elapsed %.6f ref %.6f" % _fidelity.run(section, n))
