# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture for attach: sits 30 calls deep (level0 -> level1 -> ... -> level29 -> wait_loop),
calling tick() in a loop until SECONDS have passed. Prints "ready" once it is there."""
import sys
import time

DEPTH = 30
SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0


def tick(x):
    return x + 1


def wait_loop():
    print("ready", flush=True)
    end = time.monotonic() + SECONDS
    n = 0
    while time.monotonic() < end:
        n = tick(n)
        time.sleep(0.001)
    return n


def level(i):
    if i == DEPTH - 1:
        return wait_loop()
    return level(i + 1)


level(0)
