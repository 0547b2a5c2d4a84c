# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: lambdas, closures and comprehensions.

Lambdas called from Python and from C (sorted's key, map), closures (an inner function
made ten times is one code object, one entry; a nonlocal counter), and list, set and
dict comprehensions plus generator expressions. On 3.8-3.11 a comprehension runs in
its own <listcomp>/<setcomp>/<dictcomp> frame (one call each time it is evaluated);
3.12 inlines them (PEP 709), so the entries exist only on some versions: both
profilers see the same interpreter, so they must agree either way. Never two
comprehensions or lambdas on one line: cProfile keys by (file, line, name).
"""


def make_adder(n):
    def add(x):
        return x + n
    return add


def make_counter():
    count = 0

    def incr():
        nonlocal count
        count += 1
        return count
    return incr


def apply(fn, v):
    return fn(v)


def main():
    adders = [make_adder(i) for i in range(10)]
    print("adders", sum(a(1) for a in adders))
    squares = {i: i * i for i in range(5)}
    evens = {i for i in range(10) if i % 2 == 0}
    print("comps", squares, sorted(evens))
    negate = lambda v: -v  # noqa: E731
    print("sorted", sorted(range(20), key=negate)[:3])
    print("map", list(map(lambda v: v + 1, range(10))))
    print("apply", apply(lambda v: v * 3, 7))
    curried = (lambda a:
               lambda b: a + b)(1)
    print("curried", curried(2))
    counter = make_counter()
    for _ in range(7):
        counter()
    print("counter", counter())


if __name__ == "__main__":
    main()
