# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: what pyuprof takes to record C functions, and that it gives it back.

    cfunc_slots.py STOP     prints "ready", then calls Python and C functions in two threads;
                            when STOP.during appears, reads what holds the slots pyuprof
                            may take ("during": the control, recorded; each thread then
                            makes STOP.seen.NAME), and when STOP.after appears, after a few
                            more calls, what holds them then ("after": pyuprof has let go);
                            prints both, and sys.getprofile()

What pyuprof takes (include/cfuncs.h): on 3.8-3.11 each thread's profile slot
(PyThreadState.c_profilefunc, read here with ctypes at its offset in the layout table:
scripts/gen-py-offsets.py); on 3.12+ tool 7's CALL event, which the interpreter's table of
events shows (sys.monitoring._all_events() called through functools.partial: a call made
from C, with no CALL event, which the page does not see; called directly it shows the table
without the page's event, as get_events does: "seen"). Each thread's state is printed, and
sys.getprofile(), which must say None throughout.
"""
import functools
import ctypes
import os
import sys
import threading
import time

# PyThreadState.c_profilefunc (user/target/py_layouts.c)
PROFILEFUNC = {(3, 8): 56, (3, 9): 56, (3, 10): 56, (3, 11): 64}


def work(n):
    out = []
    for i in range(n):
        out.append(len(str(i)))
    return sum(out)


def profile_slot():
    """This thread's c_profilefunc: "empty" or "set" (3.8-3.11)."""
    get = ctypes.pythonapi.PyThreadState_Get
    get.restype = ctypes.c_void_p
    tstate = get()
    value = ctypes.c_void_p.from_address(tstate + PROFILEFUNC[sys.version_info[:2]]).value
    return "set" if value else "empty"


def state():
    if sys.version_info >= (3, 12):
        mon = sys.monitoring
        return "events %s seen %s %s tools %s" % (
            sorted(functools.partial(mon._all_events)().items()),
            sorted(mon._all_events().items()), [mon.get_events(i) for i in range(6)],
            [mon.get_tool(i) for i in range(6)])
    return "slot %s" % profile_slot()


def main():
    stop = sys.argv[1]
    seen = {}

    def run(name):
        for phase in ("during", "after"):
            while not os.path.exists("%s.%s" % (stop, phase)):
                work(50)
                time.sleep(0.001)
            for _ in range(3):
                work(10)
            seen[name, phase] = state()
            if phase == "during":
                open("%s.seen.%s" % (stop, name), "w").close()

    t = threading.Thread(target=run, args=("thread",))
    t.start()
    print("ready", os.getpid(), flush=True)
    run("main")
    t.join()
    for phase in ("during", "after"):
        print(phase, "main", seen["main", phase], "| thread", seen["thread", phase])
    print("getprofile", sys.getprofile())


if __name__ == "__main__":
    main()
