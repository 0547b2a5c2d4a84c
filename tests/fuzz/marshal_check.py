# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python's marshal as the oracle of fuzz_marshal: reads "HEX DESCRIPTION" lines (the
harness run with FUZZ_MARSHAL_PRINT=1 on a corpus), has marshal.loads decode HEX and
describes the value as the harness does; every description must match.

    FUZZ_MARSHAL_PRINT=1 build-fuzz/fuzz_marshal FILES... | python3 marshal_check.py
Exit 0 and "N values, 0 mismatches" if all match; 1 otherwise, with the first few shown."""
import marshal
import struct
import sys


def describe(v):
    if isinstance(v, int):
        return "i%d;" % v
    if isinstance(v, float):
        return "f%016x;" % struct.unpack("<Q", struct.pack("<d", v))[0]
    if isinstance(v, str):
        return "s%s;" % v.encode("utf-8", "surrogatepass").hex()
    if isinstance(v, tuple):
        return "(" + "".join(describe(x) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + "".join(describe(k) + ":" + describe(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def main():
    n = bad = 0
    for line in sys.stdin:
        if not line.strip() or " " not in line:
            continue  # libFuzzer's own lines go to stderr; anything else is not ours
        hexdata, want = line.rstrip("\n").split(" ", 1)
        try:
            got = describe(marshal.loads(bytes.fromhex(hexdata)))
        except Exception as e:  # a value Python cannot read is a mismatch too
            got = "%s: %s" % (type(e).__name__, e)
        n += 1
        if got != want:
            bad += 1
            if bad <= 5:
                print("mismatch:\n  bytes %s\n  want  %s\n  got   %s" % (hexdata, want, got))
    print("%d values, %d mismatches (Python %d.%d)" % (n, bad, *sys.version_info[:2]))
    sys.exit(1 if bad or not n else 0)


main()
