"""Threads asleep in system calls that a stop would end with EINTR (a no-harm detector).

    python sleep_syscalls.py [--busy | --nap SECONDS] FILE

Two threads sleep, each in one call made through ctypes, so that an EINTR is seen as it is
(Python's own select.epoll and signal.sigtimedwait retry one: PEP 475, which hides the stop
but not a timeout that ran out meanwhile):
  - epoll_wait on a pipe, timeout 120 s;
  - rt_sigtimedwait for SIGUSR1 (blocked in that thread), timeout 120 s.
The main thread waits until FILE exists (300 s at most: exit 1): asleep in time.sleep()
between its looks (0.01 s, or --nap SECONDS), or with --busy running Python calls. It then wakes both threads (a byte into
the pipe, SIGUSR1 to the second thread) and prints "epoll_wait R" and "sigtimedwait R", R the
call's result or "EINTR", then "calls N". Natively both calls return what woke them (1 and
10), never EINTR. Prints "ready" once both threads sleep.
"""
import ctypes
import os
import signal
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)
results = {}


def epoll_thread(epfd, ready):
    buf = ctypes.create_string_buffer(12)  # one struct epoll_event
    ready.set()
    n = libc.epoll_wait(epfd, buf, 1, 120000)
    results["epoll_wait"] = "EINTR" if n < 0 and ctypes.get_errno() == 4 else n


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def sigwait_thread(ready, tid):
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    mask = ctypes.c_uint64(1 << (signal.SIGUSR1 - 1))
    timeout = Timespec(120, 0)
    tid.append(threading.get_native_id() if hasattr(threading, "get_native_id") else 0)
    ready.set()
    # rt_sigtimedwait(set, info, timeout, sigsetsize): 128 on x86-64
    n = libc.syscall(128, ctypes.byref(mask), None, ctypes.byref(timeout), 8)
    results["sigtimedwait"] = "EINTR" if n < 0 and ctypes.get_errno() == 4 else n


def work(n):
    return n if n < 2 else work(n - 1) + work(n - 2)


def main():
    busy = sys.argv[1] == "--busy"
    nap = float(sys.argv[2]) if sys.argv[1] == "--nap" else 0.01
    go = sys.argv[-1]
    rfd, wfd = os.pipe()
    ep = select_epoll(rfd)
    ready = [threading.Event(), threading.Event()]
    tid = []
    threads = [
        threading.Thread(target=epoll_thread, args=(ep.fileno(), ready[0])),
        threading.Thread(target=sigwait_thread, args=(ready[1], tid)),
    ]
    for t in threads:
        t.start()
    for r in ready:
        r.wait()
    time.sleep(0.2)  # (from the Event's set to the call itself)
    print("ready", flush=True)
    calls = 0
    end = time.monotonic() + 300
    while not os.path.exists(go):
        if time.monotonic() > end:
            print("gave up waiting for", go, flush=True)
            os._exit(1)
        if busy:
            work(12)
            calls += 465
        else:
            time.sleep(nap)
    os.write(wfd, b"x")
    signal.pthread_kill(threads[1].ident, signal.SIGUSR1)
    for t in threads:
        t.join()
    print("epoll_wait", results["epoll_wait"])
    print("sigtimedwait", results["sigtimedwait"])
    print("calls", calls, flush=True)


def select_epoll(fd):
    import select

    ep = select.epoll()
    ep.register(fd, select.EPOLLIN)
    return ep


if __name__ == "__main__":
    main()
