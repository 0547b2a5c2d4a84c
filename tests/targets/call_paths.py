# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: every way a Python function is reached that CPython specialises, each run 200
times from one call site, so that the site is specialised natively (and, 3.11+, would run the
callee inline without a hook: cpython-internals.md 6.4 lists 3.11-3.13's, 3.14 and 3.15 add
their own): plain, default, keyword, *args/**kwargs and bound-method calls, a property's getter
and setter, a __getattribute__ override, obj[i] to a Python __getitem__, a class call to its
__init__ (and super().__init__), __call__, a staticmethod and a classmethod, with's __enter__ and
__exit__, a class iterator's __next__, a generator driven by for and by yield from, an await, a
descriptor's __get__, __eq__ and __add__, a functools.partial, a lambda and a closure. Each
callee is counted by cProfile and must be counted alike.
"""
import functools

N = 200


def plain(a, b):
    return a + b


def defaults(a, b=2, c=3):
    return a + b + c


def star(*args, **kwargs):
    return len(args) + len(kwargs)


class Thing:
    def __init__(self, v=0):
        self._v = v

    def method(self, x):
        return self._v + x

    @property
    def value(self):
        return self._v

    @value.setter
    def value(self, v):
        self._v = v

    @staticmethod
    def static(x):
        return x

    @classmethod
    def klass(cls, x):
        return x

    def __getitem__(self, i):
        return i

    def __call__(self, x):
        return x

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__

    def __add__(self, other):
        return self


class Derived(Thing):
    def __init__(self, v):
        super().__init__(v)


class Attrs:
    def __getattribute__(self, name):
        return 1


class Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        return self.n


class Desc:
    def __get__(self, obj, owner):
        return 7


class HasDesc:
    d = Desc()


def gen(n):
    for i in range(n):
        yield i


def delegate(n):
    yield from gen(n)


async def leaf_coro(x):
    return x


async def mid_coro(n):
    t = 0
    for i in range(n):
        t += await leaf_coro(i)
    return t


def make_closure(k):
    def closure(x):
        return x + k
    return closure


def run():
    t = Thing(1)
    a = Attrs()
    h = HasDesc()
    part = functools.partial(plain, 1)
    lam = lambda x: x + 1  # noqa: E731
    clo = make_closure(2)
    total = 0
    for i in range(N):
        total += plain(i, 1)
        total += defaults(i)
        total += defaults(i, c=1)
        total += star(i, 2, k=3)
        total += t.method(i)
        total += t.value
        t.value = 1
        total += Thing.static(i)
        total += Thing.klass(i)
        total += a.anything
        total += t[i]
        total += Thing(i).method(0)
        total += Derived(i).value
        total += t(i)
        with Ctx():
            total += 1
        for v in Countdown(2):
            total += v
        total += h.d
        total += t == t
        total = total + 0 if (t + t) else total
        total += part(i)
        total += lam(i)
        total += clo(i)
    for v in gen(N):
        total += v
    for v in delegate(N):
        total += v
    coro = mid_coro(N)
    try:
        coro.send(None)
    except StopIteration as e:
        total += e.value
    return total


def main():
    print("total", run())


if __name__ == "__main__":
    main()
