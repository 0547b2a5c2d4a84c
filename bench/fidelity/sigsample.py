# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A low-overhead in-process sampler, the fidelity bench's reference where austin cannot run.

    sigsample.py -o OUT SCRIPT [ARGS...]

Runs SCRIPT as __main__ with SIGPROF every millisecond of the process's CPU time
(setitimer(ITIMER_PROF)). The handler runs in the main thread at the interpreter's next check
and counts the Python frame it interrupted (the leaf: time in a C function is its Python
caller's, as with cProfile's builtins folded) when section() is on the stack. OUT gets one
"count<TAB>filename<TAB>name" line per leaf. Main thread only: not for thread workloads."""
import collections
import runpy
import signal
import sys

ROOTS = ("section", "worker")


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "-o":
        sys.stderr.write("usage: sigsample.py -o OUT SCRIPT [ARGS...]\n")
        return 2
    out, script = sys.argv[2], sys.argv[3]
    counts = collections.Counter()

    def handler(sig, frame):
        leaf = (frame.f_code.co_filename, frame.f_code.co_name)
        f = frame
        while f is not None:
            if f.f_code.co_name in ROOTS:
                counts[leaf] += 1
                return
            f = f.f_back

    sys.argv = sys.argv[3:]
    signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    with open(out, "w") as f:
        for (filename, name), n in counts.items():
            f.write("%d\t%s\t%s\n" % (n, filename, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
