# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: C calls, densely (bench/workloads/cdense.py's loop: appends, len,
dict.get and isinstance), four C calls a round in one Python call: the shape the tracing path's
compensation (3.8-3.11) must not over-compensate. section() is the timed section."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402


def work(n):
    out = []
    seen = {}
    for i in range(n):
        out.append(i)
        len(out)
        seen.get(i)
        isinstance(i, int)
    return out


def section(n):
    work(n)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
print("elapsed %.6f ref %.6f" % _fidelity.run(section, n))
