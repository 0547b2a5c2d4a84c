"""A child forked from C (libc.fork through ctypes) that makes no Python call until released.

    python fork_held_child.py

Prints "ready" and waits for a line on stdin; then forks the child inside a function (so that
the child's first step, once released, is that function's return: through whatever a profiler
left in the child's memory), prints "child PID" and waits for a second line; then releases the
child, which checks its own state (the returned object's reference count against the same
sequence run before, a Python function's result, fib) and exits 0 if all is right, else 3 (or
dies of a signal). Prints "child status N" (N: the child's wait status) and exits 0 if the child
exited 0, else 1. Between the two lines pyuprof can follow the child (--subprocesses) and be
ended: whatever it left in the child's memory shows when it runs.
"""
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
SENTINEL = object()


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def split(fork, r):
    """fork(), then in the child wait on r (C calls only), and return SENTINEL either way."""
    pid = fork()
    if pid == 0:
        split.before = sys.getrefcount(SENTINEL)
        if r >= 0:
            os.read(r, 1)
        return SENTINEL
    split.pid = pid
    return SENTINEL


# the reference the return adds, measured on the same path without a fork
res = split(lambda: 0, -1)
expected = sys.getrefcount(SENTINEL) - split.before
del res

print("ready", flush=True)
sys.stdin.readline()
r, w = os.pipe()
split.pid = 0
res = split(libc.fork, r)
if not split.pid:
    ok = sys.getrefcount(SENTINEL) - split.before == expected and res is SENTINEL
    ok = ok and fib(15) == 610
    os._exit(0 if ok else 3)
os.close(r)
print("child", split.pid, flush=True)
sys.stdin.readline()
os.write(w, b"x")
_, status = os.waitpid(split.pid, 0)
print("child status", status, flush=True)
sys.exit(0 if status == 0 else 1)
