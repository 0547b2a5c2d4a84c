# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: examples/compiler_workload.py (parse, walk, compile, disassemble N stdlib
modules): call-dense passes beside one that spends its time in C (compile()). section() is
the timed section."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import compiler_workload  # noqa: E402


def section():
    compiler_workload.main()


n = sys.argv[1] if len(sys.argv) > 1 else "2"
sys.argv = ["compiler_workload", "--files", n]
stdout, sys.stdout = sys.stdout, open(os.devnull, "w")
times = _fidelity.run(section)
sys.stdout = stdout
print("elapsed %.6f ref %.6f" % times)
