# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CPython's own test_timerfd_ns_select over and over (bench/timerfd_attach.sh).

    timerfd_select.py SECONDS   prints "ready", runs test.test_os's TimerfdTests.
                                test_timerfd_ns_select until SECONDS have passed, then
                                "runs N failed M" (natively: failed 0)

The test arms a 125 ms periodic timerfd and expects select() then read() to find exactly one
expiration each time: a stop of the whole process for more than ~125 ms makes it find 2.
"""
import sys
import time
import unittest

from test import test_os

print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
runs = failed = 0
while time.monotonic() < end:
    result = unittest.TestResult()
    test_os.TimerfdTests("test_timerfd_ns_select").run(result)
    runs += 1
    if result.failures or result.errors:
        failed += 1
        print((result.failures + result.errors)[0][1].splitlines()[-1], flush=True)
print("runs %d failed %d" % (runs, failed), flush=True)
