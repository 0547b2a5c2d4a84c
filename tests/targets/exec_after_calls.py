# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Makes N calls, then execs another Python that makes none: the calls staged before the exec
must be in the profile (the batch mode copies them out as the exec starts)."""
import os
import sys


def step(i):
    return i + 1


def main(n):
    total = 0
    for i in range(n):
        total += step(i)
    assert total == n * (n + 1) // 2
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-c", "pass"])


main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
