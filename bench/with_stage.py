# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs a script with the staging anchor as the interpreter's eval_frame hook, without pyuprof
(bench/run.sh's stage mode: the floor of the batch design, ../shared/anchors/stage).

    python3.X bench/with_stage.py SCRIPT ARGS...    (3.8-3.15; STAGE_SO: the anchor's .so)

The anchor's `tramp` stages a TSC-stamped record per entry and per exit in a 4 KiB buffer and
calls its `tramp_flush` every 256 records; bench/bare's stage mode puts a counting probe there.
"""
import ctypes
import os
import runpy
import sys

# PyInterpreterState.eval_frame (user/target/py_layouts.c)
SLOT = {(3, 11): 1424, (3, 12): 1744, (3, 13): 8472, (3, 14): 8520, (3, 15): 8472}


def main():
    api = ctypes.pythonapi
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    api.PyThreadState_Get.restype = ctypes.c_void_p
    interp = ctypes.c_void_p.from_address(api.PyThreadState_Get() + 16).value  # ->interp
    off = SLOT.get(sys.version_info[:2])
    if off is None:  # 3.8-3.10: the slot holds _PyEval_EvalFrameDefault already
        off = next(o for o in range(0, 8192, 8)
                   if ctypes.c_void_p.from_address(interp + o).value == default)
    lib = ctypes.CDLL(os.environ["STAGE_SO"])
    ctypes.c_void_p.in_dll(lib, "tramp_slot").value = default
    ctypes.c_void_p.from_address(interp + off).value = ctypes.cast(lib.tramp, ctypes.c_void_p).value
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")


main()
