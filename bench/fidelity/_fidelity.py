# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs a fidelity workload's timed section and returns its seconds and the machine's speed next
to it. With FIDELITY_CPROFILE=OUT in the environment, cProfile (builtins off) records the section
alone, in the calling thread, into OUT: the reference without the interpreter's start-up around
it."""
import os
import sys
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads"))
import speed  # noqa: E402


def run(section, *args):
    """(seconds of section(*args), seconds of bench/workloads/speed.py's call-free loop around
    it): bench/fidelity.sh scales each run by the row's fastest loop over the run's own, since
    the test VM's host moves it between two speeds ~1.3x apart for seconds at a time. The loop
    runs outside cProfile's enable(), so a cProfile run's loop is timed at native speed too.
    Prints "offcpu S" first (to the process's own stdout, whatever sys.stdout is then): of the
    section's seconds, those its thread did not run (another process had the CPU, or it slept),
    which every profiler's wall-clock time of it holds too."""
    ref = speed.loop_seconds()
    out = os.environ.get("FIDELITY_CPROFILE")
    prof = None
    if out:
        import cProfile
        prof = cProfile.Profile(builtins=False)
    t = time.perf_counter()
    c = time.thread_time()
    if prof:
        prof.enable()
    section(*args)
    if prof:
        prof.disable()
    elapsed = time.perf_counter() - t
    cpu = time.thread_time() - c
    print("offcpu %.6f" % max(0.0, elapsed - cpu), file=sys.__stdout__, flush=True)
    ref = (ref + speed.loop_seconds()) / 2
    if prof:
        prof.dump_stats(out)
    return elapsed, ref
