# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: new threads whose first act asks a profiler to write into the process
(tests/harm.bats).

    thread_requests.py N   N threads, started one after the other; each first sets its
                           interpreter's eval_frame hook to the default evaluator, as a PEP 523
                           user turning itself off does (3.11+ stores NULL there, which pyuprof
                           asks to switch back), then calls fib(12)

The main thread counts the SIGURG it is sent (a handler of its own: none natively; pyuprof stops
a thread that asks with SIGURG, which must never reach the program). Prints "threads N fib F
sigurg S" and exits 0 if every fib was right and no SIGURG came.
"""
import ctypes
import signal
import sys
import threading

got = []


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def reset_hook():
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    setter = api._PyInterpreterState_SetEvalFrameFunc
    setter.restype, setter.argtypes = None, [ctypes.c_void_p, ctypes.c_void_p]
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    setter(api.PyInterpreterState_Get(), default)


def main():
    n = int(sys.argv[1])
    signal.signal(signal.SIGURG, lambda *_: got.append(1))
    results = []

    def run():
        reset_hook()
        results.append(fib(12))

    for _ in range(n):
        t = threading.Thread(target=run)
        t.start()
        t.join()
    fibs = sum(r == 144 for r in results)
    print("threads %d fib %d sigurg %d" % (n, fibs, len(got)), flush=True)
    sys.exit(0 if fibs == n and not got else 1)


main()
