# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: methods, classmethods, staticmethods and properties.

No class here defines __init__ (that is init.py's subject). Counter.bump and
Scaled.bump share a name and differ only by first line, which is how cProfile keys
them. The property getter and setter are two functions both named `value` (getter 52 calls).
Each call site runs 50 times, enough for 3.11+ to specialise it.
"""


class Counter:
    def bump(self, n):
        self._value = self._value + n
        return self

    @classmethod
    def create(cls, start):
        obj = cls()
        obj._value = start
        return obj

    @staticmethod
    def double(x):
        return x * 2

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, v):
        self._value = v


class Scaled(Counter):
    def bump(self, n):
        return super().bump(self.double(n))


def main():
    plain = Counter.create(0)
    scaled = Scaled.create(1)
    for i in range(50):
        plain.bump(i)
        scaled.bump(i)
        plain.value = plain.value + Counter.double(1)
    print("values", plain.value, scaled.value)


if __name__ == "__main__":
    main()
