# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: calls of code objects pyuprof has not seen, one after the other (in the batch mode
each call is a code flush, a kernel entry that sends the code object's identity).

    new_code_calls.py N   print "ready PID", then make N code objects (each with a first line
                          of its own, so that no identity matches an earlier one that lived at
                          the same address) and call each once; print "calls N"
"""
import os
import sys
import types


def template(x):
    return x


def main(n):
    code = template.__code__
    print("ready", os.getpid(), flush=True)
    for i in range(n):
        types.FunctionType(code.replace(co_firstlineno=1 + i % 50000), {})(i)
    print("calls", n, flush=True)


main(int(sys.argv[1]))
