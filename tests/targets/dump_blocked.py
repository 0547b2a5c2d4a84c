# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture for `pyuprof dump` (tests/dump.bats): three threads blocked in known functions.

    dump_blocked.py OUT.json

Two named threads ("waiter-a", "waiter-b") block in blocked_here() and the main thread in
main_blocked(), each waiting on an Event that is never set (the main thread for at most
120 s). Before blocking, each records its own stack with traceback.extract_stack() on the
same line as the wait, so the line it records is the line the thread waits on. Once all
three are blocked, OUT.json gets {"pid": PID, "threads": {TID: {"name": NAME, "stack":
[[name, file, line], ...outermost first]}}}, written whole (renamed into place).
"""
import json
import os
import sys
import threading
import traceback

out = sys.argv[1]
never = threading.Event()
stacks = {}
lock = threading.Lock()
ready = threading.Barrier(3)


def record(stack):
    with lock:
        stacks[threading.get_native_id()] = {
            "name": threading.current_thread().name,
            "stack": [[f.name, f.filename, f.lineno] for f in stack],
        }


def blocked_here():
    ready.wait()
    record(traceback.extract_stack()); never.wait()  # noqa: E702 (one line: see above)


def main_blocked():
    ready.wait()
    with lock:
        pass
    record(traceback.extract_stack()); write_when_all(); never.wait(120)  # noqa: E702


def write_when_all():
    # the other two record before or right after the barrier: wait for their entries
    while True:
        with lock:
            if len(stacks) == 3:
                data = {"pid": os.getpid(), "threads": stacks}
                break
        threading.Event().wait(0.01)
    with open(out + ".tmp", "w") as f:
        json.dump(data, f)
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    for name in ("waiter-a", "waiter-b"):
        threading.Thread(target=blocked_here, name=name, daemon=True).start()
    main_blocked()
