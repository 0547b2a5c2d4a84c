"""Threads whose kernel tid is given again: a threading thread "first" runs work_first and
ends; then the kernel is made to give its tid (ns_last_pid, root only) to a thread "second"
running work_second or, with "fork", to a forked child running work_child. A profile that files
work by tid puts the second's calls under the first. Prints "reused TID" on stderr once the tid
came again (tries until it does: another process may take the number first)."""
import os
import sys
import threading


def work_first():
    return sum(range(100))


def work_second():
    return sum(range(200))


def work_child():
    return sum(range(300))


def run(name, fn):
    t = threading.Thread(target=fn, name=name)
    t.start()
    t.join()
    return t.native_id


def give_next(tid):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(tid - 1))


def main():
    fork = sys.argv[1:] == ["fork"]
    first = run("first", work_first)
    for _ in range(100):
        give_next(first)
        if fork:
            pid = os.fork()
            if pid == 0:
                if os.getpid() == first:
                    work_child()
                    os._exit(0)
                os._exit(3)
            _, status = os.waitpid(pid, 0)
            got = pid if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 0
        else:
            got = run("second", work_second)
        if got == first:
            print("reused %d" % first, file=sys.stderr)
            return 0
    return "tid %d was not given again in 100 tries" % first


sys.exit(main())
