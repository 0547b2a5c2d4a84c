# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Run a script as __main__ under cProfile, every thread profiled.

    cprofile_run.py [--no-builtins] -o OUT.prof SCRIPT [ARGS...]

This is the reference pyuprof is compared with (tests/record.bats). The script runs
through runpy exactly as `python SCRIPT ARGS` would run it (sys.argv, sys.path[0],
__main__, exit status), and its stdout/stderr are left alone. Each thread gets its own
cProfile.Profile() (builtins=True, cProfile's default, as pyuprof's; with --no-builtins
builtins=False, as pyuprof's --no-builtins), because one profiler's call stack shared by several
threads attributes callers and recursion wrongly; the per-thread results are merged with
pstats.Stats.add, which sums counts and caller edges.

  * 3.8-3.11: the profile hook is per thread, so threading.Thread.run is wrapped to
    enable a profiler of its own in every thread started by the script (threads that
    override run() themselves are not covered: the fixtures do not do that).
  * 3.12+: cProfile is built on sys.monitoring, whose events are process-wide and whose
    PROFILER tool id admits one profiler. We register that tool ourselves and hand each
    event to the current thread's profiler through the same callbacks
    (_pystart_callback, _pyreturn_callback) cProfile.Profile.enable() would register, so
    the bookkeeping is still _lsprof's own; with builtins, CALL, C_RETURN and C_RAISE
    too (_ccall_callback, _creturn_callback), as enable() registers them.
"""
import _thread
import cProfile
import os
import pstats
import runpy
import sys
import threading


class PerThreadProfiles:
    """One cProfile.Profile per thread, merged at the end."""

    def __init__(self, builtins):
        self.builtins = builtins
        self.profiles = []
        self.lock = threading.Lock()

    def new_profile(self):
        prof = cProfile.Profile(builtins=self.builtins)
        with self.lock:
            self.profiles.append(prof)
        return prof

    def merged(self):
        """Returns a pstats.Stats of every profile that saw a call, or None."""
        stats = None
        for prof in self.profiles:
            prof.create_stats()
            if not prof.stats:
                continue
            if stats is None:
                stats = pstats.Stats(prof)
            else:
                stats.add(prof)
        return stats


class LegacyHooks(PerThreadProfiles):
    """3.8-3.11: Profile.enable() installs a per-thread hook; wrap Thread.run."""

    def start(self):
        self.main = self.new_profile()
        self.orig_run = threading.Thread.run
        hooks = self

        def run(thread):
            prof = hooks.new_profile()
            prof.enable()
            try:
                hooks.orig_run(thread)
            finally:
                prof.disable()

        threading.Thread.run = run
        self.main.enable()

    def stop(self):
        self.main.disable()
        threading.Thread.run = self.orig_run


class MonitoringHooks(PerThreadProfiles):
    """3.12+: one sys.monitoring tool, events routed to the thread's own profiler."""

    def start(self):
        mon = sys.monitoring
        self.tool = mon.PROFILER_ID
        by_thread = {}
        get_ident = _thread.get_ident

        def here():
            prof = by_thread.get(get_ident())
            if prof is None:
                prof = by_thread[get_ident()] = self.new_profile()
            return prof

        # Callbacks run with monitoring off for their thread, so these calls are unseen.
        def on_start(code, offset, *rest):
            here()._pystart_callback(code, offset)

        def on_return(code, offset, *rest):
            here()._pyreturn_callback(code, offset, None)

        def on_ccall(code, offset, callable, arg0):
            here()._ccall_callback(code, offset, callable, arg0)

        def on_creturn(code, offset, callable, arg0):
            here()._creturn_callback(code, offset, callable, arg0)

        mon.use_tool_id(self.tool, "cprofile_run")
        ev = mon.events
        starts = ev.PY_START | ev.PY_RESUME | ev.PY_THROW
        returns = ev.PY_RETURN | ev.PY_YIELD | ev.PY_UNWIND
        for event in (ev.PY_START, ev.PY_RESUME, ev.PY_THROW):
            mon.register_callback(self.tool, event, on_start)
        for event in (ev.PY_RETURN, ev.PY_YIELD, ev.PY_UNWIND):
            mon.register_callback(self.tool, event, on_return)
        self.events = starts | returns
        if self.builtins:
            mon.register_callback(self.tool, ev.CALL, on_ccall)
            mon.register_callback(self.tool, ev.C_RETURN, on_creturn)
            mon.register_callback(self.tool, ev.C_RAISE, on_creturn)
            self.events |= ev.CALL | ev.C_RETURN | ev.C_RAISE
        mon.set_events(self.tool, self.events)

    def stop(self):
        mon = sys.monitoring
        mon.set_events(self.tool, 0)
        for event in (mon.events.PY_START, mon.events.PY_RESUME, mon.events.PY_THROW,
                      mon.events.PY_RETURN, mon.events.PY_YIELD, mon.events.PY_UNWIND,
                      mon.events.CALL, mon.events.C_RETURN, mon.events.C_RAISE):
            mon.register_callback(self.tool, event, None)
        mon.free_tool_id(self.tool)


def usage():
    sys.stderr.write("usage: cprofile_run.py [--no-builtins] -o OUT.prof SCRIPT [ARGS...]\n")
    sys.exit(2)


def main():
    args = sys.argv[1:]
    builtins = True
    if args and args[0] == "--no-builtins":
        builtins, args = False, args[1:]
    if len(args) < 3 or args[0] != "-o":
        usage()
    out, script, script_args = args[1], args[2], args[3:]

    # what `python SCRIPT ARGS` sets up
    sys.argv = [script] + script_args
    sys.path[0] = os.path.dirname(script)

    hooks = (MonitoringHooks if sys.version_info >= (3, 12) else LegacyHooks)(builtins)
    status = 0
    hooks.start()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        status = e.code
    finally:
        hooks.stop()
        stats = hooks.merged()
        if stats is None:
            sys.stderr.write("cprofile_run: no Python call was recorded\n")
            sys.exit(2)
        stats.dump_stats(out)
    sys.exit(status)


if __name__ == "__main__":
    main()
