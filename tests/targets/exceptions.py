# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: exceptions unwinding through several frames.

level4 raises for one i in three; the exception unwinds level3, level2 and level1
(whose finally: calls cleanup) and is caught in catcher. A frame left by an exception
is an ordinary call/return for cProfile. Also an exception chained and re-raised, and a
Python-defined exception class whose __str__ runs.
"""


class AppError(Exception):
    def __str__(self):
        return "AppError(%s)" % (self.args[0],)


def level4(i):
    if i % 3 == 0:
        raise AppError(i)
    return i


def level3(i):
    return level4(i) + 1


def level2(i):
    return level3(i) * 2


def cleanup():
    return None


def level1(i):
    try:
        return level2(i)
    finally:
        cleanup()


def handle(err):
    return len(str(err))


def catcher(i):
    try:
        return level1(i)
    except AppError as err:
        return -handle(err)


def reraise(i):
    try:
        level1(i)
    except AppError as err:
        raise ValueError("wrapped") from err


def main():
    print("caught", [catcher(i) for i in range(30)])
    failures = 0
    for i in range(0, 12, 3):
        try:
            reraise(i)
        except ValueError:
            failures += 1
    print("reraised", failures)


if __name__ == "__main__":
    main()
