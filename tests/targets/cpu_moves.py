# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--clock fixture: moved() is called on one CPU and returns on another, after a short sleep
(no CPU), each way in turn (tests/clock.bats). Under the CPU clock it is charged the few
system calls it makes, never its sleep, and its thread's times never go back."""
import os
import sys
import time

SLEEP_S = 0.02
MOVES = 10


def moved(to):
    os.sched_setaffinity(0, {to})
    time.sleep(SLEEP_S)


def main():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("one cpu")
        return
    for i in range(MOVES):
        os.sched_setaffinity(0, {cpus[i % 2]})
        moved(cpus[(i + 1) % 2])
    os.sched_setaffinity(0, set(cpus))
    print("done")


if __name__ == "__main__":
    main()
    sys.exit(0)
