# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Work spread over processes: a fork pool, a spawn pool, a subprocess of the same
interpreter, a forked child that does not exec, and the parent itself.

    subprocesses.py MANIFEST.json [--wait FILE]   (the parent; waits for FILE first)
    subprocesses.py --child N         (the subprocess it starts)

Every process runs KIND_task(n) for the tasks it is given; each calls work(n). The subprocess
runs $SUBPROCESS_PYTHON if set (another interpreter). The parent writes MANIFEST.json: {pid: [[kind, n], ...]}, the tasks each process ran, so that the
same tasks can be run under cProfile (tests/tools/cprofile_tasks.py) for each process.
"""
import json
import multiprocessing
import os
import subprocess
import sys
import time


def leaf(i):
    return i * 2


def fact(k):
    return 1 if k <= 1 else k * fact(k - 1)


def squares(n):
    for i in range(n):
        yield leaf(i)


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


def work(n):
    total = 0
    for i in range(10 * n):
        total += leaf(i)
    total += fact(n + 3)
    total += sum(squares(n))
    total += Box(n).get()
    return total


def main_task(n):
    return work(n)


def fork_task(n):
    return os.getpid(), ["fork", n], work(n)


def spawn_task(n):
    return os.getpid(), ["spawn", n], work(n)


def forkchild_task(n):
    return work(n)


def sub_task(n):
    return work(n)


# what work(n) gives, known before any process starts (a wrong result exits non-zero)
EXPECTED = {1: 115, 2: 504, 3: 1599, 4: 6616, 5: 42795, 6: 366456, 7: 3633679}


def pool_tasks(method, task, ns, ran):
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        results = pool.map(task, ns, chunksize=1)
    for pid, t, result in results:
        if result != EXPECTED[t[1]]:
            sys.exit("pid %d computed work(%d) = %d, not %d" % (pid, t[1], result,
                                                                 EXPECTED[t[1]]))
        ran.setdefault(pid, []).append(t)
    # a Pool replaces a worker that died, and the work it had is redone by another: a third
    # pid is a worker lost
    if len({pid for pid, _, _ in results}) > 2:
        sys.exit("a %s pool worker was replaced (one died): pids %s" %
                 (method, sorted({pid for pid, _, _ in results})))


def main(manifest, wait=None):
    if wait:
        print("waiting", flush=True)
        while not os.path.exists(wait):
            time.sleep(0.05)
    ran = {os.getpid(): [["main", 2]]}
    if main_task(2) != EXPECTED[2]:
        sys.exit("work(2) is wrong in the parent")
    pool_tasks("fork", fork_task, [1, 2, 3, 4], ran)
    pool_tasks("spawn", spawn_task, [5, 6, 7], ran)
    python = os.environ.get("SUBPROCESS_PYTHON", sys.executable)  # another interpreter
    child = subprocess.Popen([python, os.path.abspath(__file__), "--child", "4"])
    if child.wait() != 0:
        sys.exit("the subprocess failed")
    ran[child.pid] = [["sub", 4]]
    pid = os.fork()
    if pid == 0:
        os._exit(0 if forkchild_task(3) == EXPECTED[3] else 1)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit("the forked child failed")
    ran[pid] = [["forkchild", 3]]
    with open(manifest, "w") as f:
        json.dump({str(k): v for k, v in ran.items()}, f)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        n = int(sys.argv[2])
        sys.exit(0 if sub_task(n) == EXPECTED[n] else "work(%d) is wrong in the subprocess" % n)
    else:
        main(sys.argv[1], sys.argv[3] if sys.argv[2:3] == ["--wait"] else None)
