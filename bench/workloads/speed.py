# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The machine's speed next to a timed section, for bench/run.sh.

The test VM's host moves it between a fast state and one about 1.3x slower, for seconds at a
time (measured with a fixed loop timed over and over: stretches of 4-11 s slow, then ms-scale
flicker), so that half of any cell's runs land in the slow state and medians compare states, not
modes. A workload times this loop just before and just after its section; the loop makes no
Python call, so that no mode's probes or hooks run in it, and run.sh scales each run's section
by the cell's fastest loop over this run's. Not under cProfile: on 3.11 a profile function set
sends every instruction down the interpreter's slower path, this loop's too.
"""
import time


def loop_seconds(n=200000):
    """The median of three timings of a loop of n additions, in seconds."""
    times = []
    for _ in range(3):
        t = time.perf_counter()
        s = 0
        for i in range(n):
            s += i
        times.append(time.perf_counter() - t)
    return sorted(times)[1]
