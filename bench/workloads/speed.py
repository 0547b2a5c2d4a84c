# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The machine's speed next to a timed section, for bench/run.sh.

The test VM's host moves it between a fast state and one about 1.3x slower, for seconds at a
time (measured with a fixed loop timed over and over: stretches of 4-11 s slow, then ms-scale
flicker), so that half of any cell's runs land in the slow state and medians compare states, not
modes. A workload times this loop just before and just after its section, and run.sh scales
each run's section by the cell's fastest loop over this run's. The loop runs in C (sum over a
range: one C call, no bytecode per step), so that no mode's probes, hooks or profile function
run in it: a profile function set on 3.8-3.11 (cProfile's, pyuprof's for C functions) sends
every instruction down the interpreter's slower path, and a bytecode loop read 1.6x slow under
it on 3.11 (before 2026-11-28 this loop was bytecode and cProfile's runs were not scaled).
"""
import time


def loop_seconds(n=300000):
    """The median of three timings of a C loop of n additions, in seconds of the thread's CPU
    time: the machine's speed, not how much of the CPU the process got (on a loaded machine a
    wall-clock timing counted another process's turn as slowness, 2.5x at load 3, and scaled
    the run's section by it)."""
    times = []
    for _ in range(3):
        t = time.thread_time()
        sum(range(n))
        times.append(time.thread_time() - t)
    return sorted(times)[1]
