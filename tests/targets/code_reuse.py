# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Code objects made and dropped all along, as a compiler's are: each round compiles a
function, calls it and drops it, so the next one's code object is likely made where the last
one was freed. Their identities differ in one field at a time (name, first line, or the
filename's text, every filename naming this file), so a call named after the code object that
lived at the same address before shows up as a wrong count.

cProfile is no truth here: it keys its entries by the code object's address and names them
after the first object it met there. The truth is this program's own count of the calls of
each (filename, first line, name), written as JSON to argv[1] if given."""
import collections
import json
import os
import sys

HERE = os.path.abspath(__file__)
DIR, BASE = os.path.split(HERE)


def run_round(i):
    kind = i % 3
    if kind == 0:  # another name, same line, same file
        src, name, filename = "def gen_%d():\n    return %d\n" % (i % 7, i), "gen_%d" % (i % 7), HERE
    elif kind == 1:  # another first line
        src, name, filename = "\n" * (i % 5) + "def gen():\n    return %d\n" % i, "gen", HERE
    else:  # the same name and line, another filename for this file (another text)
        filename = DIR + "/" + "./" * (i % 4) + BASE
        src, name = "def gen():\n    return %d\n" % i, "gen"
    ns = {}
    exec(compile(src, filename, "exec"), ns)
    code = ns[name].__code__
    CALLS[code.co_filename, code.co_firstlineno, code.co_name] += 1
    return ns[name]()


CALLS = collections.Counter()


def main():
    total = 0
    for i in range(600):
        total += run_round(i)
    print(total)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump([[k[0], k[1], k[2], n] for k, n in sorted(CALLS.items())], f)


main()
