"""Forks children that run Python, and checks each one (a fork-then-run harm detector).

    python fork_children.py N        fork N children, one after the other
    python fork_children.py -T N     start N threads, one after the other, each of which forks
                                     a child as the first thing it does (a thread a profiler
                                     may not hold yet: tests/harm.bats)
    python fork_children.py -t SEC   fork children for SEC seconds (prints "ready" first)
    python fork_children.py -u FILE  fork children until FILE exists (prints "ready" first;
                                     gives up after 300 s: exit 1): a test that attaches
                                     ends the forking when its attaches are done, whatever
                                     they took

Each child computes fib(15) and (3.9+) checks that its interpreter's eval_frame hook is the
native one: a child a profiler does not follow must run as it would without the profiler.
It exits 0 if both hold, 3 if not (or dies of a signal). The parent prints "children N bad B
signalled S" and exits 0 only if every child exited 0.
"""
import ctypes
import os
import sys
import threading
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def native_hook():
    """Whether the eval_frame hook is what it is natively (the getter returns the default
    evaluator when no hook is set, on 3.9-3.13)."""
    if sys.version_info < (3, 9):
        return True
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    get = api._PyInterpreterState_GetEvalFrameFunc
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    return get(api.PyInterpreterState_Get()) == default


def child():
    ok = fib(15) == 610 and native_hook()
    os._exit(0 if ok else 3)


def spawn():
    """A child, forked in a Python call of the parent: the parent's probes are hit (and
    optimized by the kernel) all along, and the child's first step returns through them."""
    fib(3)
    pid = os.fork()
    if pid == 0:
        child()
    return pid


def thread_forks(count):
    """Each thread forks at once: its child is checked as the others are."""
    statuses = []

    def run():
        statuses.append(os.waitpid(spawn(), 0)[1])

    for _ in range(count):
        t = threading.Thread(target=run)
        t.start()
        t.join()
    return statuses


def main():
    until = None
    if sys.argv[1] == "-T":
        statuses = thread_forks(int(sys.argv[2]))
        bad = sum(status != 0 for status in statuses)
        signalled = sum(os.WIFSIGNALED(status) for status in statuses)
        print("children %d bad %d signalled %d" % (len(statuses), bad, signalled), flush=True)
        sys.exit(0 if statuses and not bad else 1)
    if sys.argv[1] == "-t":
        end, count = time.time() + float(sys.argv[2]), None
        print("ready", flush=True)
    elif sys.argv[1] == "-u":
        end, count, until = time.time() + 300, None, sys.argv[2]
        print("ready", flush=True)
    else:
        end, count = None, int(sys.argv[1])
    n = bad = signalled = 0
    while (count is not None and n < count) or (end is not None and time.time() < end):
        if until is not None and os.path.exists(until):
            break
        _, status = os.waitpid(spawn(), 0)
        n += 1
        bad += status != 0
        signalled += os.WIFSIGNALED(status)
    print("children %d bad %d signalled %d" % (n, bad, signalled), flush=True)
    if until is not None and not os.path.exists(until):
        print("%s never came" % until, file=sys.stderr, flush=True)
        sys.exit(1)
    sys.exit(0 if n and not bad else 1)


main()
