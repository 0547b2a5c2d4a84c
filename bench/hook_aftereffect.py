# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What any PEP 523 hook leaves behind in CPython 3.12, shown without pyuprof.

    python3.12 bench/hook_aftereffect.py

Sets the interpreter's eval_frame hook to CPython's own evaluator for a while (the smallest hook
there is: it changes nothing but that inlining is off), runs a recursion of generators and one
of __getitem__ under it ten times, takes it away, and runs them again. Natively the generators'
FOR_ITER is specialised (FOR_ITER_GEN) and resumes them inline, taking none of 3.12's C
recursion budget; under a hook the specialisation fails and backs off, and after the hook is
gone the instruction stays generic until the back-off runs out: the same recursion now spends
the budget and stops where a recursion through C does. pyuprof's hook has the same effect; it is
CPython's, not pyuprof's (docs/limits.md). Prints the depths before and after.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "targets"))
kinds = {}
with open(sys.path[0] + "/recursion_kinds.py") as f:
    exec(compile(f.read(), "recursion_kinds.py", "exec"), kinds)
depth = kinds["depth"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from with_hook import eval_frame_slot  # noqa: E402

slot, default = eval_frame_slot()

print("Python %s" % sys.version.split()[0])
print("natively:         generators %d, __getitem__ %d" %
      (depth(kinds["k_genfor"]), depth(kinds["k_getitem"])))
slot.value = default
for _ in range(10):
    depth(kinds["k_genfor"])
    depth(kinds["k_getitem"])
slot.value = None
print("after a hook:     generators %d, __getitem__ %d" %
      (depth(kinds["k_genfor"]), depth(kinds["k_getitem"])))
