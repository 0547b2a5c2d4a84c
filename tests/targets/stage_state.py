# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture for the batch mode's staging area (include/stage.h): reads, from inside the
process, the switch word of the area pyuprof mapped here (1: calls are staged, 0: the page
only passes them through). The area is the one private anonymous mapping of its exact size.

    stage_state.py fork        prints "parent ON child ON": a forked child's area must be
                               wiped (staging off) while its parent's is on
    stage_state.py size        prints the area's size (include/stage.h's STAGE_SIZE)
    stage_state.py wait FILE   prints "ready", computes a known result until FILE appears,
                               then "on ON result ok|bad" (pyuprof killed meanwhile: the page
                               must have switched staging off by itself)
"""
import ctypes
import os
import re
import sys
import time


def stage_size():
    """STAGE_SIZE, from the one declaration (include/stage.h)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "stage.h")) as f:
        text = f.read()

    def value(name):  # "#define NAME 4096" or "#define NAME (64 << 10)"
        m = re.search(r"^#define %s \(?(\d+)(?: << (\d+))?\)?\s" % name, text, re.M)
        return int(m.group(1)) << int(m.group(2) or 0)

    table = value("STAGE_SLOTS") * value("STAGE_SLOT")
    ctable = value("STAGE_CSLOTS") * 8  # the C functions' (include/cfuncs.h)
    return (value("STAGE_BUF") + value("STAGE_BUF_BYTES") + table + value("STAGE_VERSIONS") // 8
            + ctable)


STAGE_SIZE = stage_size()


def stage_on():
    found = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            start, end = (int(x, 16) for x in parts[0].split("-"))
            if end - start == STAGE_SIZE and parts[1] == "rw-p" and parts[4] == "0" and len(parts) == 5:
                found.append(start)
    if len(found) != 1:
        return "none" if not found else "several"
    return str(ctypes.c_uint32.from_address(found[0]).value)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main():
    if sys.argv[1] == "size":
        print(STAGE_SIZE)
        return
    if sys.argv[1] == "fork":
        for _ in range(20):
            fib(10)
        parent = stage_on()
        pid = os.fork()
        if pid == 0:
            for _ in range(20):
                fib(10)
            os.write(1, ("child %s\n" % stage_on()).encode())
            os._exit(0 if fib(10) == 55 else 1)
        _, status = os.waitpid(pid, 0)
        print("parent %s child-status %d" % (parent, status))
        return
    stop, ok = sys.argv[2], True
    print("ready", flush=True)
    while not os.path.exists(stop):
        ok &= fib(12) == 144
        time.sleep(0.001)
    for _ in range(200):  # a time bound's worth of calls after pyuprof's end
        ok &= fib(12) == 144
        time.sleep(0.001)
    print("on %s result %s" % (stage_on(), "ok" if ok else "bad"), flush=True)


main()
