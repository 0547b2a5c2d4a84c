# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: non-ASCII function names.

CPython stores a str in one of three widths, and each needs reading right: `größe` is
non-ASCII but Latin-1 (1 byte per character), `関数` is UCS-2, `𠀋𠀋` (U+2000B) is
UCS-4. A method `Straße.länge` too. The profile must carry them as UTF-8.
"""


def größe(s):
    return len(s)


def 関数(n):
    total = 0
    for i in range(n):
        total += größe("ab" * i)
    return total


def 𠀋𠀋(n):
    return 関数(n) + 1


class Straße:
    def länge(self, n):
        return 𠀋𠀋(n)


def main():
    print("names", Straße().länge(5), 関数(3), größe("xyz"))


if __name__ == "__main__":
    main()
