# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark workload: the shapes of call the fidelity workloads are made of, each a function
of its own (s_*): empty calls, generator resumes by a for loop and by send() (a C method), a
coroutine chain driven by send(), and the same through asyncio. With --native, prints each
shape's mean seconds over 3 runs; without, runs each 3 times (for a recording, whose
cumtime of s_* over 3 is the same mean). bench/call_shapes.sh compares the two."""
import asyncio
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
def f(): pass
def gen(n):
    for i in range(n):
        yield i
class Y:
    def __await__(self):
        yield
async def leaf():
    await Y()
    return 1
async def worker(n):
    s = 0
    for i in range(n):
        s += await leaf()
    return s
async def aleaf(x):
    await asyncio.sleep(0)
    return x + 1
async def aworker(n):
    s = 0
    for i in range(n):
        s += await aleaf(i)
    return s
async def amain(n):
    return sum(await asyncio.gather(*(aworker(n // 8) for k in range(8))))

def s_calls():
    for i in range(N): f()
def s_for():
    for x in gen(N): pass
def s_send():
    g = gen(N + 1); next(g)
    for i in range(N): g.send(None)
def s_chain():
    c = worker(N // 4)
    try:
        while True: c.send(None)
    except StopIteration: pass
def s_asyncio():
    asyncio.run(amain(N // 4))
loop = asyncio.new_event_loop(); loop.close()
shapes = [s_calls, s_for, s_send, s_chain, s_asyncio]
if "--native" in sys.argv:
    for fn in shapes:
        ts = []
        for r in range(3):
            t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
        print(fn.__name__, "%.6f" % (sum(ts) / 3))
else:
    for fn in shapes:
        for r in range(3):
            fn()
