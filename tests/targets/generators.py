# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: generators and `yield from`.

Every resume of a generator is a call (cProfile's rule); creating one is not.
count_up(n) fully consumed by a for loop = n + 1 calls. `yield from` resumes the
delegating generator and the inner one for every value. Also: a generator driven with
send() and then close() (GeneratorExit thrown into it), one consumed by the C
function sum(), one returning a value through `yield from`, and one abandoned after a
break and closed explicitly. Nothing is left suspended for interpreter shutdown.

The abandoned one yields inside a try: closing it throws GeneratorExit into its frame on
every version. 3.14+ close a generator suspended outside any try block without running its
frame, unless a tool watches unwinding, as cProfile does: there cProfile counts a call that
does not happen in a program run without it (docs/limits.md).
"""


def count_up(n):
    for i in range(n):
        yield i


def squares(n):
    for i in count_up(n):
        yield i * i


def delegate(n):
    yield from count_up(n)
    yield from squares(n)


def inner_with_result(n):
    for i in range(n):
        yield i
    return n * 10


def outer_with_result(n):
    result = yield from inner_with_result(n)
    yield result


def averager():
    total = 0.0
    count = 0
    average = None
    try:
        while True:
            value = yield average
            total += value
            count += 1
            average = total / count
    except GeneratorExit:
        pass


def count_until_closed(n):
    try:
        for i in range(n):
            yield i
    finally:
        pass


def take_first(n):
    gen = count_until_closed(100)
    got = []
    for v in gen:
        if len(got) == n:
            break
        got.append(v)
    gen.close()
    return got


def main():
    print("for", [v for v in count_up(10)])
    print("delegate", list(delegate(5)))
    print("sum", sum(squares(8)))
    print("result", list(outer_with_result(3)))
    avg = averager()
    next(avg)
    for v in (10, 20, 30, 40):
        print("avg", avg.send(v))
    avg.close()
    print("take", take_first(4))


if __name__ == "__main__":
    main()
