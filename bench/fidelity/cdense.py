# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: C calls, densely (bench/workloads/cdense.py's loop: appends, len,
dict.get and isinstance), four C calls a round in one Python call: what the C-call figure must
take out. section() is the timed section."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads"))
from cdense import work  # noqa: E402


def section(n):
    work(n)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
print("elapsed %.6f ref %.6f" % _fidelity.run(section, n))
