# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cProfile's profile of the tasks one process of a multi-process fixture ran.

    cprofile_tasks.py FIXTURE.py MANIFEST.json PID OUT.prof

MANIFEST.json (written by the fixture) maps each pid to the tasks it ran, [[kind, n], ...].
The fixture is imported as a module (its __main__ part does not run) and KIND_task(n) is
called for each of PID's tasks under cProfile.Profile() (builtins=True, cProfile's default,
as pyuprof's), in this process: the truth for that process's calls, callers and edges below
the tasks (compare with pstats_compare.py --below work). Exits 2 if PID ran no task.
"""
import cProfile
import importlib.util
import json
import sys


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
    prof = cProfile.Profile()
    for kind, n in tasks:
        task = getattr(mod, kind + "_task")
        prof.enable()
        task(n)
        prof.disable()
    prof.dump_stats(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
