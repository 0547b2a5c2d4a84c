# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""How long pyuprof's stops freeze a target (bench/attach_freeze.sh).

    attach_freeze.py SECONDS    sleeps 1 ms at a time for SECONDS; prints "ready" first, then
                                "gaps over 50 ms: [...]", each a time in ms between two
                                wake-ups that took more than 50 ms (natively: none);
                                FREEZE_MIN_MS=N in the environment: over N ms instead
"""
import os
import sys
import time

print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
last = time.monotonic()
gaps = []
least = int(os.environ.get("FREEZE_MIN_MS", "50"))
while time.monotonic() < end:
    time.sleep(0.001)
    now = time.monotonic()
    if now - last > least / 1000:
        gaps.append(round((now - last) * 1000))
    last = now
print("gaps over %d ms:" % least, gaps, flush=True)
