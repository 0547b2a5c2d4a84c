# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: direct recursion.

fib(15) makes 1973 calls of which 1 is primitive (pstats shows 1973/1); countdown(50)
called three times makes 153 calls, 3 primitive (153/3).
"""


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def countdown(n):
    if n == 0:
        return 0
    return countdown(n - 1) + 1


def main():
    print("fib", fib(15))
    for _ in range(3):
        print("countdown", countdown(50))


if __name__ == "__main__":
    main()
