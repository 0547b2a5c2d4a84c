# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs a fidelity workload's timed section and returns its seconds. With FIDELITY_CPROFILE=OUT
in the environment, cProfile (builtins off) records the section alone, in the calling thread,
into OUT: the reference without the interpreter's start-up around it."""
import os
import time


def run(section, *args):
    out = os.environ.get("FIDELITY_CPROFILE")
    prof = None
    if out:
        import cProfile
        prof = cProfile.Profile(builtins=False)
    t = time.perf_counter()
    if prof:
        prof.enable()
    section(*args)
    if prof:
        prof.disable()
    elapsed = time.perf_counter() - t
    if prof:
        prof.dump_stats(out)
    return elapsed
