# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--clock fixture: sleeper() blocks for SLEEP_S seconds and computes nothing; computer()
computes and never blocks. Under the wall clock sleeper's cumtime is the sleep; under the CPU
clock it is about nothing (tests/clock.bats)."""
import sys
import time

SLEEP_S = 0.3


def sleeper():
    time.sleep(SLEEP_S)


def computer():
    x = 0
    for i in range(200000):
        x += i * i
    return x


def main():
    sleeper()
    computer()
    print("done")


if __name__ == "__main__":
    main()
    sys.exit(0)
