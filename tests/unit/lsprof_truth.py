# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Truth for tests/unit/test_profile.c: runs a small workload twice.

First under sys.setprofile, printing each Python call/return as the profile builder would see
it ("call CODEID FRAMEID CALLER CALLER_CODE CALLER2 CALLER2_CODE BACK NAME" / "ret"), and with
--builtins each C call and its return or exception ("ccall KEY FRAMEID NAME" / "cret", NAME
cProfile's for it); then under cProfile.Profile(builtins=False), or builtins=True with
--builtins, with a timer that counts its own calls, so the i-th event happens at time i on both
sides. Prints cProfile's stats as "stat NAME cc nc tt ct" and "edge CALLEE CALLER nc cc tt ct"
(times in timer ticks; a C function's NAME is cProfile's, its blanks as "_").
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


def keyf(x):
    return -x


def cwork():
    out = []
    for i in range(3):
        out.append(i)
        len(out)
    out = sorted(out, key=keyf)
    total = sum(gen(2)) + max(map(keyf, out))
    try:
        int("x")
    except ValueError:
        pass
    return total


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
    "cfuncs": lambda: cwork(),
}


def c_name(func):
    """cProfile's name for a C function of the workloads (_lsprof's normalizeUserObj)."""
    self = getattr(func, "__self__", None)
    if self is None or type(self).__name__ == "module":
        return "<built-in method %s.%s>" % (func.__module__, func.__name__)
    return "<method '%s' of '%s' objects>" % (func.__name__, type(self).__name__)


def record_events(work, builtins):
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
        elif builtins and event == "c_call":
            events.append("ccall %d %d %s" % (ids.setdefault(("c", c_name(arg)), len(ids) + 1),
                                              oid(frame), c_name(arg).replace(" ", "_")))
        elif builtins and event in ("c_return", "c_exception"):
            events.append("cret")

    sys.setprofile(hook)
    work()
    sys.setprofile(None)
    # the harness's own frames (this function's callee chain) are not part of the workload:
    # its lambda's call and return, and the c_call of setprofile(None) after it
    events = events[1:]
    while events.pop() != "ret":
        pass
    return events


def main():
    work = WORKLOADS[sys.argv[1]]
    builtins = "--builtins" in sys.argv
    for line in record_events(work, builtins):
        print(line)
    ticks = [0]

    def timer():
        ticks[0] += 1
        return ticks[0]

    prof = cProfile.Profile(timer, builtins=builtins)
    prof.enable()
    work()
    prof.disable()
    prof.create_stats()

    def ours(filename, name):
        """The workload's functions, the C functions it calls; not the harness's."""
        if filename == "~":
            return "disable" not in name
        return filename == __file__ and name != "<lambda>"

    for (filename, line, name), (cc, nc, tt, ct, callers) in prof.stats.items():
        if not ours(filename, name):
            continue
        print("stat %s %d %d %g %g" % (name.replace(" ", "_"), cc, nc, tt, ct))
        for (cf, cl, cn), (enc, ecc, ett, ect) in callers.items():
            if ours(cf, cn):
                print("edge %s %s %d %d %g %g" % (name.replace(" ", "_"), cn.replace(" ", "_"),
                                                  enc, ecc, ett, ect))


main()
