"""A process one of whose threads runs under a seccomp filter that kills the process at
memfd_create (a thread-chooser detector: seccomp filters are per thread).

    python seccomp_thread.py SEC

The thread installs its filter (no_new_privs first, as an unprivileged sandbox would), then
blocks in a read; the main thread prints "ready", sleeps SEC seconds, ends the thread and
prints "done fib(20)". x86-64 only. A thread of it made to call memfd_create kills it (SIGSYS).
"""
import ctypes
import os
import struct
import sys
import threading
import time

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
NR_MEMFD_CREATE = 319
RET_KILL_PROCESS, RET_ALLOW = 0x80000000, 0x7FFF0000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def sandbox(armed, r):
    insns = [(BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
             (BPF_JEQ_K, 0, 1, NR_MEMFD_CREATE),
             (BPF_RET_K, 0, 0, RET_KILL_PROCESS),
             (BPF_RET_K, 0, 0, RET_ALLOW)]
    code = b"".join(struct.pack("HBBI", *i) for i in insns)
    buf = ctypes.create_string_buffer(code)
    prog = struct.pack("HxxxxxxQ", len(insns), ctypes.addressof(buf))
    pbuf = ctypes.create_string_buffer(prog)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) or \
       libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(pbuf), 0, 0):
        print("seccomp failed", ctypes.get_errno(), flush=True)
        os._exit(2)
    armed.set()
    os.read(r, 1)


def main():
    r, w = os.pipe()
    armed = threading.Event()
    t = threading.Thread(target=sandbox, args=(armed, r))
    t.start()
    armed.wait()
    print("ready", flush=True)
    time.sleep(float(sys.argv[1]))
    os.write(w, b"x")
    t.join()
    print("done", fib(20), flush=True)


main()
