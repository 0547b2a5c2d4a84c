# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What any PEP 523 hook costs CPython 3.11-3.13 per kind of activation, shown without pyuprof.

    python3.X bench/hook_kinds.py [N]

Times loops of one kind of activation each (ns an iteration over an empty loop, the best of 15
rounds of N), first natively, then with the interpreter's eval_frame hook set to CPython's own
evaluator (the smallest hook there is: nothing changes but that CPython no longer runs frames
inline). pyuprof's compensation subtracts what its calibration measures for a plain call;
a kind whose hook cost differs from a call's is compensated by that difference too little or
too much (bench/FIDELITY.md). On 3.12 and 3.13 an await of a coroutine that returns, or a yield
from a generator that returns a value, costs ~170 ns more under any hook: SEND is no longer
specialised (SEND_GEN), and the generic SEND gets the value through StopIteration.
"""
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from with_hook import eval_frame_slot  # noqa: E402

now = time.perf_counter_ns


def f():
    pass


def calls(n, f=f):  # a call of a Python function
    for _ in range(n):
        f()


def gen(n):
    for i in range(n):
        yield i


def gen_resume(n):  # a generator resumed by for
    for _ in gen(n):
        pass


def one():
    yield 1


def gen_create(n, one=one):  # a generator made, never run
    for _ in range(n):
        one()


def g_return():
    return 1
    yield


def inner(n):
    s = 0
    for _ in range(n):
        s += yield from g_return()
    yield s


def yield_from_done(n):  # yield from a generator that returns a value
    for _ in inner(n):
        pass


async def leaf():
    return 1


async def mid(n):
    s = 0
    for _ in range(n):
        s += await leaf()
    return s


def await_done(n):  # a coroutine made and awaited, returning at once
    c = mid(n)
    try:
        c.send(None)
    except StopIteration:
        pass


class Step:
    def __await__(self):
        yield


async def sleeper(n):
    s = Step()
    for _ in range(n):
        await s


def await_suspend(n):  # a coroutine resumed by send() that awaits one yield each time
    c = sleeper(n)
    try:
        while True:
            c.send(None)
    except StopIteration:
        pass


def empty(n):
    for _ in range(n):
        pass


KINDS = (calls, gen_resume, gen_create, yield_from_done, await_done, await_suspend)


def timings(n):
    best = {}
    for fn in (empty,) + KINDS:
        best[fn.__name__] = min(timed(fn, n) for _ in range(15)) / n
    return {k: v - best["empty"] for k, v in best.items() if k != "empty"}


def timed(fn, n):
    t = now()
    fn(n)
    return now() - t


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    native = timings(n)
    slot, default = eval_frame_slot()
    slot.value = default
    hooked = timings(n)
    slot.value = None
    print("Python %s, ns an iteration (N=%d, best of 15)" % (sys.version.split()[0], n))
    print("%-16s %8s %8s %8s" % ("kind", "native", "hooked", "hook"))
    for k in native:
        print("%-16s %8.0f %8.0f %8.0f" % (k, native[k], hooked[k], hooked[k] - native[k]))


main()
