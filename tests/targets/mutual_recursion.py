# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: mutual recursion.

is_even/is_odd call each other (two-function cycle) and step_a -> step_b -> step_c ->
step_a form a three-function cycle, so every function in a cycle has the others as
callers and its primitive count is the number of outer entries into the cycle.
"""


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def step_a(n):
    if n <= 0:
        return 0
    return step_b(n - 1) + 1


def step_b(n):
    if n <= 0:
        return 0
    return step_c(n - 1) + 2


def step_c(n):
    if n <= 0:
        return 0
    return step_a(n - 1) + 3


def main():
    print("parity", [is_even(n) for n in (0, 7, 10, 25)])
    print("cycle", step_a(30), step_b(31))


if __name__ == "__main__":
    main()
