# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: threads with threading names, for the names in the outputs (tests/thread_names.bats).

    thread_names.py                 three named threads and a short-lived one, each fib(12)
    thread_names.py --attach DIR    the three loop until DIR/stop exists; once DIR/go exists,
                                    a short-lived thread starts and finishes ("late done")

The names: one given ("loader-1"), threading's default ("Thread-1 (work)"; "Thread-1"
before 3.10), a non-ASCII one, and the short-lived thread's. At the end every thread that
ran is printed to stderr as "thread TID NAME" (its kernel tid, for the checks), the main
thread included; stdout only gets lines that are the same in every run.
"""
import os
import sys
import threading
import time


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def work(stop):
    fib(12)
    while stop is not None and not stop.is_set():
        fib(8)
        time.sleep(0.005)


def wait_file(path):
    while not os.path.exists(path):
        time.sleep(0.02)


def main():
    attach_dir = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--attach" else None
    stop = threading.Event() if attach_dir else None
    threads = [
        threading.Thread(name="loader-1", target=work, args=(stop,)),
        threading.Thread(target=work, args=(stop,)),
        threading.Thread(name="donn\u00e9es-\u540d\u524d", target=work, args=(stop,)),
    ]
    for t in threads:
        t.start()
    short = threading.Thread(name="short-lived", target=work, args=(None,))
    if attach_dir:
        print("ready", flush=True)
        wait_file(os.path.join(attach_dir, "go"))
    short.start()
    short.join()
    print("late done", flush=True)
    if attach_dir:
        wait_file(os.path.join(attach_dir, "stop"))
        stop.set()
    for t in threads:
        t.join()
    for t in [threading.main_thread()] + threads + [short]:
        sys.stderr.buffer.write(("thread %d %s\n" % (t.native_id, t.name)).encode("utf-8"))


if __name__ == "__main__":
    main()
