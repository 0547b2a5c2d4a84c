# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture for the call graph's --root: main's calls, and the same functions called outside it
first (setup), so that main's share of them differs from their whole count. main sorts with a
Python key (sorted, a C function, calls back into leaf: leaf's caller), recurses (fib) and calls
C functions (len, str, list.append). Run with `truth FILE` it writes cProfile's profile of main
alone (after setup, as recorded) to FILE.
"""
import sys


def leaf(n):
    return len(str(n))


def work(xs):
    return sorted(xs, key=leaf)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main():
    out = []
    for i in range(50):
        out.append(work(list(range(i, i + 20))))
    out.append(fib(12))
    return out


def setup():
    for i in range(30):
        leaf(i)
        work([3, 1, 2])
    fib(5)


if __name__ == "__main__":
    setup()
    if sys.argv[1:2] == ["truth"]:
        import cProfile

        pr = cProfile.Profile()
        pr.runcall(main)
        pr.dump_stats(sys.argv[2])
    else:
        main()
