# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: short threads whose Thread objects nobody keeps (tests/thread_names.bats).

    threads_dropped.py N OUT  N threads of threading.Thread, then N of a subclass, started one
                              after the other, each dropped by the program as soon as it has
                              started; each calls fib(10) and ends

The main thread waits for each thread's end through an Event the thread sets last, never
through its Thread: when the thread ends, its Thread is gone. At the end every thread that ran
is written to the file OUT as "thread TID NAME" (its kernel tid and its name, as the thread
itself saw them), the main thread included (a file of its own: a recorder's log on stderr
would cut into the lines); stdout only gets lines that are the same in every run.
"""
import sys
import threading


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


class Worker(threading.Thread):
    pass


seen = []


def work(done):
    fib(10)
    me = threading.current_thread()
    seen.append((threading.get_native_id(), me.name))
    done.set()


def main():
    n = int(sys.argv[1])
    for cls in (threading.Thread, Worker):
        for i in range(n):
            done = threading.Event()
            cls(target=work, args=(done,), name="%s-dropped-%d" % (cls.__name__, i)).start()
            done.wait()
    print("done %d" % len(seen), flush=True)
    me = threading.main_thread()
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for tid, name in [(threading.get_native_id(), me.name)] + seen:
            out.write("thread %d %s\n" % (tid, name))


if __name__ == "__main__":
    main()
