# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Truth for tests/unit/test_profile.c: runs a small workload twice.

First under sys.setprofile, printing each Python call/return as the profile builder would see
it ("call CODEID FRAMEID CALLER CALLER_CODE CALLER2 CALLER2_CODE BACK NAME" / "ret"); then under
cProfile.Profile(builtins=False) with a timer that counts its own calls, so the i-th Python
event happens at time i on both sides. Prints cProfile's stats as "stat NAME cc nc tt ct" and
"edge CALLEE CALLER nc cc tt ct" (times in timer ticks).
"""
import cProfile
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def ping(n):
    return 0 if n == 0 else pong(n - 1) + 1


def pong(n):
    return 0 if n == 0 else ping(n - 1) + 1


def gen(n):
    for i in range(n):
        yield helper(i)


def helper(x):
    return x * 2


def boom(n):
    if n == 0:
        raise ValueError("boom")
    return boom(n - 1)


def catcher():
    for _ in range(3):
        try:
            boom(4)
        except ValueError:
            pass


def a(n):
    return b(n) if n else 0


def b(n):
    return a(n - 1) + helper(n)


WORKLOADS = {
    "fib": lambda: fib(7),
    "mutual": lambda: ping(9),
    "generator": lambda: [x for x in gen(5)],
    "exceptions": lambda: catcher(),
    "indirect": lambda: a(5),
}


def record_events(work):
    events = []
    ids = {}

    def oid(obj):
        return 0 if obj is None else ids.setdefault(id(obj), len(ids) + 1)

    def hook(frame, event, arg):
        if event == "call":
            c1 = frame.f_back
            c2 = c1.f_back if c1 else None
            back = c2.f_back if c2 else None
            events.append("call %d %d %d %d %d %d %d %s" % (
                oid(frame.f_code), oid(frame), oid(c1), oid(c1.f_code if c1 else None),
                oid(c2), oid(c2.f_code if c2 else None), oid(back), frame.f_code.co_name))
        elif event == "return":
            events.append("ret")

    sys.setprofile(hook)
    work()
    sys.setprofile(None)
    # the harness's own frames (this function's callee chain) are not part of the workload
    return events[1:-1]


def main():
    work = WORKLOADS[sys.argv[1]]
    for line in record_events(work):
        print(line)
    ticks = [0]

    def timer():
        ticks[0] += 1
        return ticks[0]

    prof = cProfile.Profile(timer, builtins=False)
    prof.enable()
    work()
    prof.disable()
    prof.create_stats()
    for (filename, line, name), (cc, nc, tt, ct, callers) in prof.stats.items():
        if filename != __file__ or name == "<lambda>":
            continue
        print("stat %s %d %d %g %g" % (name, cc, nc, tt, ct))
        for (cf, cl, cn), (enc, ecc, ett, ect) in callers.items():
            if cf == __file__ and cn != "<lambda>":
                print("edge %s %s %d %d %g %g" % (name, cn, enc, ecc, ett, ect))


main()
