# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: work run while a Dynamo-like PEP 523 hook (ext/pep523hook.c, built by the test
into $PEP523_DIR) is installed, then after it is removed: every call must be recorded on both
sides of the change. Prints whether the hook chained to one it found."""
import os
import sys

sys.path.insert(0, os.environ["PEP523_DIR"])
import pep523hook  # noqa: E402


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def gen(n):
    for i in range(n):
        yield i


def hooked():
    return fib(12) + sum(gen(50))


def plain():
    return fib(10)


def deep(n):
    return 0 if n == 0 else deep(n - 1) + 1


def main():
    pep523hook.enable()
    print("hooked", hooked(), deep(100))
    pep523hook.disable()
    print("plain", plain())


if __name__ == "__main__":
    main()
