# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cProfile's profile of the tasks one process of a multi-process fixture ran.

    cprofile_tasks.py FIXTURE.py MANIFEST.json PID OUT.prof

MANIFEST.json (written by the fixture) maps each pid to the tasks it ran, [[kind, n], ...].
The fixture is imported as a module (its __main__ part does not run) and KIND_task(n) is
called for each of PID's tasks under cProfile.Profile(builtins=False), in this process: the
truth for that process's calls, callers and edges below the tasks (compare with
pstats_compare.py --below work). Exits 2 if PID ran no task. 3.12+: through the sys.monitoring
tool of cprofile_run.py, which asks for no C-call event: 3.14's Profile.enable() asks for
them with builtins off too, and then names a builtin such as sum() or sorted() as the caller
of what it calls back (its entry stays out), where 3.13's, and pyuprof, name the Python frame.
"""
import cProfile
import importlib.util
import json
import sys

from cprofile_run import MonitoringHooks


def main():
    fixture, manifest, pid, out = sys.argv[1:5]
    with open(manifest) as f:
        tasks = json.load(f).get(pid)
    if not tasks:
        sys.stderr.write("cprofile_tasks: pid %s ran no task in %s\n" % (pid, manifest))
        return 2
    spec = importlib.util.spec_from_file_location("fixture", fixture)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if sys.version_info >= (3, 12):
        hooks = MonitoringHooks()
        for kind, n in tasks:
            task = getattr(mod, kind + "_task")
            hooks.start()
            try:
                task(n)
            finally:
                hooks.stop()
        hooks.merged().dump_stats(out)
        return 0
    prof = cProfile.Profile(builtins=False)
    for kind, n in tasks:
        task = getattr(mod, kind + "_task")
        prof.enable()
        task(n)
        prof.disable()
    prof.dump_stats(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
