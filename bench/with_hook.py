# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs a module with the smallest PEP 523 hook there is, without pyuprof (bench/regrtest.sh).

    python3.X bench/with_hook.py MODULE ARGS...    (3.11-3.15)

Sets the interpreter's eval_frame hook to CPython's own evaluator (it changes nothing but that
CPython no longer runs Python-to-Python calls inline) and runs MODULE as `python -m` would. A
test that fails recorded and fails here too fails because some hook is set, whoever sets it:
CPython's behaviour, not pyuprof's (docs/limits.md).
"""
import ctypes
import runpy
import sys

# PyInterpreterState.eval_frame (user/target/py_layouts.c)
SLOT = {(3, 11): 1424, (3, 12): 1744, (3, 13): 8472, (3, 14): 8520, (3, 15): 8472}


def eval_frame_slot():
    """This interpreter's eval_frame field, and the value of the smallest hook for it: CPython's
    own evaluator (hook_aftereffect.py uses them too)."""
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    addr = api.PyInterpreterState_Get() + SLOT[sys.version_info[:2]]
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    return ctypes.c_void_p.from_address(addr), default


if __name__ == "__main__":
    slot, default = eval_frame_slot()
    slot.value = default
    del sys.argv[0]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
