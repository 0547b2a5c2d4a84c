# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: __getitem__ reached by obj[i].

The subscript site in total() runs 200 times, so 3.11+ specialises it
(BINARY_SUBSCR_GETITEM, which runs the Python __getitem__ without a C call). Also the
old iteration protocol (a for loop over an object with only __getitem__, which calls it
until IndexError: 11 calls for 10 items), __setitem__, and __len__ through len().
"""


class Table:
    def __init__(self, n):
        self.rows = list(range(n))

    def __getitem__(self, i):
        return self.rows[i]

    def __setitem__(self, i, v):
        self.rows[i] = v

    def __len__(self):
        return len(self.rows)


class Seq:
    def __getitem__(self, i):
        if i >= 10:
            raise IndexError(i)
        return i * i


def total(table, rounds):
    s = 0
    for _ in range(rounds):
        for i in range(len(table)):
            s += table[i]
    return s


def main():
    table = Table(20)
    print("total", total(table, 10))
    table[3] = 100
    print("iter", [v for v in Seq()])


if __name__ == "__main__":
    main()
