# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: plain calls.

Python functions calling each other with positional, keyword, default, *args and
**kwargs arguments, from a loop. Expected under cProfile (builtins off): main 1/1,
middle 100/100, add 200/200, leaf 400/400, star 100/100, kw_only 100/100.
"""


def leaf(x):
    return x + 1


def add(a, b=2):
    return leaf(a) + leaf(b)


def star(*args, **kwargs):
    # sum() and len() are C functions: not traced, their time counts here
    return sum(args) + len(kwargs)


def kw_only(*, scale):
    return scale * 3


def middle(i):
    return add(i) + add(b=i, a=1) + star(i, i, k=i) + kw_only(scale=i)


def main():
    total = 0
    for i in range(100):
        total += middle(i)
    print("plain_calls", total)


if __name__ == "__main__":
    main()
