# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compares where recursion stops recorded with where it stops natively (tests/harm.bats).

    recursion_compare.py NATIVE RECORDED [HOOKED]

Each argument is one JSON line of tests/targets/recursion_limits.py: run natively, run
recorded, and on 3.14+ run natively under a bare PEP 523 hook (HOOKED: tests/targets/ext/
pep523hook.c, --pep523), what any hook brings along of CPython's own. Every result recorded
must equal the native one, but where the hook alone moves it the same way: 3.14+ count a
recursion's depth differently when they run its calls inline, which any hook turns off
(docs/limits.md). Those are printed as inherent. Prints each difference; exits 0 if there is
none.
"""
import json
import sys


def differences(native, recorded, hooked=None):
    """([key: a harm], [key: inherent to any hook]) between the three results."""
    harm, inherent = [], []
    for key in sorted(set(native) | set(recorded)):
        n, r = native.get(key), recorded.get(key)
        if r == n:
            continue
        if hooked is not None and hooked.get(key) != n and hooked.get(key) == r:
            inherent.append("%s: natively %s, under a bare hook %s" % (key, n, r))
        else:
            under = "" if hooked is None else ", under a bare hook %s" % hooked.get(key)
            harm.append("%s: natively %s, recorded %s%s" % (key, n, r, under))
    return harm, inherent


def main():
    args = [json.loads(a) for a in sys.argv[1:4]]
    harm, inherent = differences(*args)
    for line in inherent:
        print("inherent: " + line)
    for line in harm:
        print("differs: " + line)
    sys.exit(1 if harm else 0)


if __name__ == "__main__":
    main()
