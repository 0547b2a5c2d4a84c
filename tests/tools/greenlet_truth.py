# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The truth for a program that switches greenlets: its calls as cProfile would count them if
each greenlet had a call stack of its own, written as a pstats file.

    greenlet_truth.py [--no-builtins] -o OUT.prof SCRIPT [ARGS...]

cProfile keeps one stack per profiler: a greenlet switch changes the running frames without
a return, so it files the calls made after a switch under whatever was on top before it, and
pops the wrong entries at the returns (the 'work' of 50 gevent greenlets comes out as 1 call).
This profile function (sys.setprofile, and threading.setprofile for threads) asks greenlet
which greenlet runs at each call and return (greenlet.getcurrent(): the profile function
itself is not profiled) and keeps a stack for each, with _lsprof's rules on each stack:
ncalls, primitive calls (a call nested in a running call of the same function, or over the
same caller edge, on the same stack is not primitive), caller edges, and times, wall time from
a call to its return, a suspended greenlet's frames included (as a blocked thread's are).
Frames still running at the end are closed there, as cProfile closes them at disable. C
functions are in, as cProfile's builtins=True has them (named as _lsprof names them: a
greenlet's switch is one, on the stack of the greenlet that called it, and returns there);
--no-builtins leaves them out, as builtins=False: their time is their caller's.

The script runs as __main__ through runpy, as `python SCRIPT ARGS` would run it. Its times
include this tool's own cost; its counts and callers are exact.
"""
import marshal
import runpy
import sys
import threading
import time

import greenlet


def key_of(code):
    return (code.co_filename, code.co_firstlineno, code.co_name)


def c_key(fn):
    """A C function's key as _lsprof makes it (normalizeUserObj): bound to an object whose type
    defines it, that definition's repr; else its module's name and its own."""
    name = fn.__name__
    self = getattr(fn, "__self__", None)
    if self is not None:
        for klass in type(self).__mro__:
            if name in klass.__dict__:
                return ("~", 0, repr(klass.__dict__[name]))
        mod = fn.__module__
        if isinstance(mod, str):
            return ("~", 0, "<built-in method %s.%s>" % (mod, name))
        return ("~", 0, "<built-in method %s>" % name)
    mod = fn.__module__
    if isinstance(mod, str) and mod != "builtins":
        return ("~", 0, "<%s.%s>" % (mod, name))
    return ("~", 0, "<%s>" % name)


class Stack:
    """One greenlet's: its frames, and recursion levels by function and by edge."""

    def __init__(self):
        self.frames = []  # [key, caller key or None, t0, time of the calls it made]
        self.level = {}
        self.edge_level = {}


class Truth:
    def __init__(self, builtins=True):
        self.builtins = builtins
        self.stacks = {}  # greenlet -> Stack (kept alive: a dead one's id is not reused)
        self.stats = {}  # key -> [cc, nc, tt, ct, {caller: [cc, nc, tt, ct]}]
        self.clock = time.perf_counter

    def stack(self):
        g = greenlet.getcurrent()
        st = self.stacks.get(g)
        if st is None:
            st = self.stacks[g] = Stack()
        return st

    def call(self, k, now):
        st = self.stack()
        caller = st.frames[-1][0] if st.frames else None
        st.level[k] = st.level.get(k, 0) + 1
        if caller is not None:
            e = (caller, k)
            st.edge_level[e] = st.edge_level.get(e, 0) + 1
        st.frames.append([k, caller, now, 0.0])

    def ret(self, st, now):
        if not st.frames:
            return  # a return of a frame entered before profiling began
        k, caller, t0, sub = st.frames.pop()
        total = now - t0
        own = total - sub
        if st.frames:
            st.frames[-1][3] += total
        s = self.stats.setdefault(k, [0, 0, 0.0, 0.0, {}])
        st.level[k] -= 1
        s[1] += 1
        s[2] += own
        if st.level[k] == 0:
            s[0] += 1
            s[3] += total
        if caller is not None:
            e = (caller, k)
            st.edge_level[e] -= 1
            es = s[4].setdefault(caller, [0, 0, 0.0, 0.0])
            es[1] += 1
            es[2] += own
            if st.edge_level[e] == 0:
                es[0] += 1
                es[3] += total

    def profile(self, frame, event, arg):
        now = self.clock()
        if event == "call":
            self.call(key_of(frame.f_code), now)
        elif event == "return":
            self.ret(self.stack(), now)
        elif self.builtins and event == "c_call":
            self.call(c_key(arg), now)
        elif self.builtins and event in ("c_return", "c_exception"):
            self.ret(self.stack(), now)

    def finish(self):
        now = self.clock()
        for st in self.stacks.values():
            while st.frames:
                self.ret(st, now)

    def dump(self, path):
        out = {}
        for k, (cc, nc, tt, ct, callers) in self.stats.items():
            # pstats' edges: (nc, cc, tt, ct), nc first (unlike the entry itself)
            out[k] = (cc, nc, tt, ct, {c: (v[1], v[0], v[2], v[3]) for c, v in callers.items()})
        with open(path, "wb") as f:
            marshal.dump(out, f)


def main():
    builtins = True
    if len(sys.argv) > 1 and sys.argv[1] == "--no-builtins":
        builtins = False
        del sys.argv[1]
    if len(sys.argv) < 4 or sys.argv[1] != "-o":
        sys.exit("usage: greenlet_truth.py [--no-builtins] -o OUT.prof SCRIPT [ARGS...]")
    out, script = sys.argv[2], sys.argv[3]
    sys.argv = sys.argv[3:]
    sys.path[0] = __import__("os").path.dirname(script)
    truth = Truth(builtins)
    threading.setprofile(truth.profile)
    sys.setprofile(truth.profile)
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        truth.finish()
        truth.dump(out)


if __name__ == "__main__":
    main()
