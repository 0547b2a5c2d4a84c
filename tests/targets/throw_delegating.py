# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: exceptions thrown into generators and coroutines that delegate.

gen.throw() into a generator suspended in `yield from` (and coro.throw() into a coroutine
suspended in `await` of an awaitable's generator) throws into the innermost generator: CPython
links the delegating frames into the frame chain without running them (_gen_throw), so the
innermost one seems called from them. cProfile counts no call of the delegating generator there
and names the thrower as the caller. Closing them (gen.close(), at their release) resumes each.
Also two levels of delegation. (A delegate that returns on the throw, resuming its delegator
from _gen_throw, is left out: cProfile's own stack goes wrong on it under 3.11's sys.setprofile,
so it cannot be the reference there.)
"""


def inner():
    try:
        yield 1
    except ValueError:
        yield 2


def middle():
    yield from inner()


def outer():
    yield from middle()


class Awaitable:
    def __await__(self):
        try:
            yield 1
        except ValueError:
            yield 2


async def waiting():
    await Awaitable()


def main():
    for _ in range(40):
        gen = middle()
        next(gen)
        gen.throw(ValueError)
        gen = outer()
        next(gen)
        gen.throw(ValueError)
        coro = waiting()
        coro.send(None)
        coro.throw(ValueError)
        coro.close()


main()
