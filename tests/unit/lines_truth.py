# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CPython's own answer for every instruction's line, the oracle of test_py_lines.c.

For every code object of a few stdlib modules prints
    C MINOR FIRSTLINENO HEX_LINE_TABLE
    A ADDR LINE            (one per code unit; LINE -1 where there is none)
with the lines from co_lines() (3.10+) or dis.findlinestarts() (3.8, 3.9: the line of the
last line start at or before the instruction), the functions CPython builds on the same
tables as PyCode_Addr2Line.
"""
import argparse
import dis
import json.decoder
import sys
import threading


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)


def lines(co):
    n = len(co.co_code)
    out = [-1] * (n // 2)
    if sys.version_info >= (3, 10):
        for start, end, line in co.co_lines():
            for a in range(start, end, 2):
                if a // 2 < len(out):
                    out[a // 2] = -1 if line is None else line
    else:
        starts = sorted(dis.findlinestarts(co))
        line, i = co.co_firstlineno, 0
        for a in range(0, n, 2):
            while i < len(starts) and starts[i][0] <= a:
                line = starts[i][1]
                i += 1
            out[a // 2] = line
    return out


for mod in (threading, argparse, json.decoder):
    src = open(mod.__file__).read()
    top = compile(src, mod.__file__, "exec")
    for co in codes(top):
        table = co.co_linetable if sys.version_info >= (3, 10) else co.co_lnotab
        print("C %d %d %s" % (sys.version_info[1], co.co_firstlineno, table.hex() or "-"))
        for i, line in enumerate(lines(co)):
            print("A %d %d" % (i * 2, line))
