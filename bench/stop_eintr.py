# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What a stop of pyuprof's does to a thread waiting in epoll_wait (bench/stop_eintr.sh).

    stop_eintr.py SECONDS    select() on a timerfd that fires every 20 ms, with a 30 ms
                             timeout, for SECONDS; prints "ready" first, then "selects N
                             empty E": the selects that came back with nothing ready

Natively E is 0: the timer fires within every timeout. A thread stopped inside epoll_wait
(job control, a tracer's interrupt) gets EINTR, not a restart (signal(7)); Python retries
(PEP 475) with what is left of the timeout, and if that ran out while the thread stood, it
returns nothing, though the timer fired meanwhile.
"""
import os
import selectors
import sys
import time

fd = os.timerfd_create(time.CLOCK_MONOTONIC, flags=os.TFD_NONBLOCK)
sel = selectors.DefaultSelector()
sel.register(fd, selectors.EVENT_READ)
os.timerfd_settime(fd, initial=0.02, interval=0.02)
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
n = empty = 0
while time.monotonic() < end:
    ready = sel.select(0.03)
    n += 1
    if not ready:
        empty += 1
    try:
        os.read(fd, 8)
    except BlockingIOError:
        pass
print("selects", n, "empty", empty, flush=True)
