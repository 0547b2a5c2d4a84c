# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: __init__.

Many instantiations from one call site each (so 3.11+ specialises the class call), a
subclass chain using super().__init__, a class without __init__ (object.__init__,
not traced), and __new__ + __init__. Expected: Point.__init__ 300 (100 direct + 200
through super().__init__), Point3.__init__ 200, Tagged.__init__ 100, Interned.__new__
and Interned.__init__ 100 each.
"""


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


class Point3(Point):
    def __init__(self, x, y, z):
        super().__init__(x, y)
        self.z = z


class Tagged(Point3):
    def __init__(self, tag):
        super().__init__(tag, tag, tag)
        self.tag = tag


class Bare:
    pass


class Interned:
    _cache = {}

    def __new__(cls, key):
        obj = cls._cache.get(key)
        if obj is None:
            obj = super().__new__(cls)
            cls._cache[key] = obj
        return obj

    def __init__(self, key):
        self.key = key


def build(n):
    points = []
    for i in range(n):
        points.append(Point(i, i))
    for i in range(n):
        points.append(Point3(i, i, i))
    for i in range(n):
        points.append(Tagged(i))
    for i in range(n):
        points.append(Bare())
    for i in range(n):
        points.append(Interned(i % 7))
    return points


def main():
    print("built", len(build(100)))


if __name__ == "__main__":
    main()
