# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: fib-style recursion, the densest calls there are. section() is the timed
section (bench/fidelity.sh); prints its seconds."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def section(n):
    return fib(n)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
print("elapsed %.6f ref %.6f" % _fidelity.run(section, n))
