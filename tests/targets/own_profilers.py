# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A program that profiles itself, as it would natively while pyuprof records C functions.

    own_profilers.py [setprofile|cprofile|threads|settrace|monitoring|all]

Prints what its own profilers saw: a sys.setprofile function's events (their kinds and the
functions' names, C functions included), cProfile's calls and callers (builtins on, times left
out), a sys.settrace function's events with their lines (3.12+ runs it on the sys.monitoring
tool whose C-call events pyuprof's page takes), and on 3.12+ the events of every tool a
program can name (CPython's test_monitoring expects none), then a sys.monitoring tool of its
own on the ids the page lends itself a name on for an instant (4, then 3) and on COVERAGE_ID,
and what sys.getprofile(), sys.gettrace() and sys.monitoring.get_tool() say before and after.
tests/harm.bats compares the output with a native run's: the same, line for line.
"""
import cProfile
import pstats
import sys
import threading
import types


def leaf(x):
    return len(str(x))


def work(n):
    out = []
    for i in range(n):
        out.append(leaf(i))
    out.sort(key=abs)
    return sum(sorted(out, key=lambda v: -v))


def name_of(frame, event, arg):
    if event.startswith("c_"):
        return getattr(arg, "__qualname__", getattr(arg, "__name__", repr(arg)))
    return frame.f_code.co_name


def with_setprofile():
    seen = []

    def prof(frame, event, arg):
        seen.append("%s %s" % (event, name_of(frame, event, arg)))

    print("getprofile before", sys.getprofile())
    sys.setprofile(prof)
    work(5)
    sys.setprofile(None)
    print("getprofile after", sys.getprofile())
    for line in seen:
        print("  ", line)


def with_cprofile():
    prof = cProfile.Profile()
    prof.enable()
    work(20)
    prof.disable()
    stats = pstats.Stats(prof).stats
    for key in sorted(stats, key=lambda k: (k[0] != "~", k[2], k[1])):
        cc, nc, _, _, callers = stats[key]
        name = key[2] if key[0] == "~" else "%s:%d" % (key[2], key[1])
        print("   %d/%d %s <- %s" % (nc, cc, name, sorted(
            (c[2], e[0]) for c, e in callers.items())))


def with_threads():
    seen = []
    lock = threading.Lock()

    def prof(frame, event, arg):
        with_lock = event + " " + name_of(frame, event, arg)
        with lock:
            seen.append(with_lock)

    threading.setprofile(prof)
    t = threading.Thread(target=work, args=(3,))
    t.start()
    t.join()
    threading.setprofile(None)
    for line in sorted(set(seen)):
        print("  ", line)


def with_settrace():
    seen = []

    def trace(frame, event, arg):
        seen.append("%s %s %d" % (event, frame.f_code.co_name, frame.f_lineno))
        return trace

    print("gettrace before", sys.gettrace())
    sys.settrace(trace)
    work(3)
    sys.settrace(None)
    print("gettrace after", sys.gettrace())
    for line in seen:
        print("  ", line)


def with_monitoring():
    mon = sys.monitoring
    ev = mon.events
    print("events before", [mon.get_events(i) for i in range(6)], mon._all_events())
    print("tools before", [mon.get_tool(i) for i in range(6)])
    for tool in (4, 3, mon.COVERAGE_ID):
        mon.use_tool_id(tool, "own%d" % tool)
        seen = []

        def on_call(code, offset, callable, arg0, seen=seen):
            seen.append("call %s" % getattr(callable, "__name__", type(callable).__name__))

        def on_return(code, offset, callable, arg0, seen=seen):
            # (C functions only, as cProfile's: under any PEP 523 hook 3.12+ calls Python
            # functions as it calls C ones, with a C_RETURN after them)
            if not isinstance(callable, types.FunctionType):
                seen.append("c_return %s" % getattr(callable, "__name__",
                                                     type(callable).__name__))

        def on_start(code, offset, seen=seen):
            seen.append("start %s" % code.co_name)

        print("tool", tool, "callbacks before", mon.register_callback(tool, ev.CALL, on_call),
              mon.register_callback(tool, ev.C_RETURN, on_return),
              mon.register_callback(tool, ev.PY_START, on_start))
        mon.set_events(tool, ev.CALL | ev.C_RETURN | ev.C_RAISE | ev.PY_START)
        work(3)
        mon.set_events(tool, 0)
        print("tool", tool, "events", mon.get_events(tool), "saw", len(seen))
        for line in seen:
            print("  ", line)
        for e in (ev.CALL, ev.C_RETURN, ev.PY_START):
            mon.register_callback(tool, e, None)
        mon.free_tool_id(tool)
    print("tools after", [mon.get_tool(i) for i in range(6)])


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    for name, run in (("setprofile", with_setprofile), ("cprofile", with_cprofile),
                      ("threads", with_threads), ("settrace", with_settrace),
                      ("monitoring", with_monitoring)):
        if what not in ("all", name):
            continue
        if name == "monitoring" and sys.version_info < (3, 12):
            continue
        work(10)  # C calls of pyuprof's own before and after each
        print("==", name)
        run()
        work(10)


if __name__ == "__main__":
    main()
