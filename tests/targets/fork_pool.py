"""A multiprocessing pool of forked workers (Linux's default start method before 3.14, and
what PyTorch's DataLoader workers are), checked.

    python fork_pool.py WORKERS TASKS PIDFILE

Maps fib over TASKS tasks in WORKERS fork workers, each worker writing its pid to PIDFILE once.
A worker that dies is replaced by the pool without a word, so the parent counts the workers
that ever ran: more than WORKERS means some died. The pool is closed and joined before it is
left, so that each worker, however late it starts, runs its initializer (fewer than WORKERS
would mean one never ran Python at all). Prints "result R workers W" and exits 0 if
the result is right and W == WORKERS.
"""
import multiprocessing
import os
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def started(path):
    with open(path, "a") as f:
        f.write("%d\n" % os.getpid())


def task(i):
    return fib(10 + i % 6)


if __name__ == "__main__":
    workers, tasks, pidfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    open(pidfile, "w").close()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers, initializer=started, initargs=(pidfile,)) as pool:
        result = sum(pool.map(task, range(tasks), chunksize=1))
        # Every worker ends by itself, so every one has run its initializer: leaving the block
        # terminates the pool, which kills a worker that has not yet (one started late finds
        # no task left) - natively too, under load.
        pool.close()
        pool.join()
    ran = len(set(open(pidfile).read().split()))
    print("result %d workers %d" % (result, ran), flush=True)
    sys.exit(0 if result == sum(task(i) for i in range(tasks)) and ran == workers else 1)
