# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The eval loop's dispatch table (computed gotos) in a CPython executable without relocations.

    opcode_table.py FILE                 prints the table's address (hex)
    opcode_table.py FILE --point A B     makes opcode A dispatch to B's code, in FILE itself

Found independently of pyuprof: 256 addresses in a data section, each into the executable
code; one value (the unknown-opcode code) repeated at least 32 times, and at least 128 others
within 256 KiB of each other (one function's labels). Exit 1 if there is not exactly one such table.
"""
import argparse
import struct
import sys
from collections import Counter


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    for i in range(shnum):
        _, typ, flags, addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        yield typ, flags, addr, off, size


def find_table(data):
    secs = list(sections(data))
    code = [(a, s) for t, f, a, o, s in secs if f & 4]  # SHF_EXECINSTR
    found = []
    for typ, flags, addr, off, size in secs:
        if typ != 1 or not flags & 2 or flags & 4 or addr % 8:  # PROGBITS, ALLOC, not code
            continue
        vals = struct.unpack_from("<%dQ" % (size // 8), data, off)
        run = 0
        for i, v in enumerate(vals):
            run = run + 1 if any(a <= v < a + s for a, s in code) else 0
            if run >= 256:
                window = vals[i - 255:i + 1]
                common, times = Counter(window).most_common(1)[0]
                rest = sorted(set(window) - {common})
                near = max(sum(1 for w in rest[j:j + 256] if w - v0 < 256 << 10)
                           for j, v0 in enumerate(rest)) if times >= 32 and rest else 0
                if near >= 128:
                    found.append((addr + (i - 255) * 8, off + (i - 255) * 8))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--point", nargs=2, type=int, metavar=("A", "B"))
    args = ap.parse_args()
    with open(args.file, "rb") as f:
        data = bytearray(f.read())
    found = find_table(bytes(data))
    if len(found) != 1:
        print("opcode_table: %d candidate tables in %s" % (len(found), args.file), file=sys.stderr)
        return 1
    vaddr, off = found[0]
    if not args.point:
        print("%x" % vaddr)
        return 0
    a, b = args.point
    data[off + 8 * a:off + 8 * a + 8] = data[off + 8 * b:off + 8 * b + 8]
    with open(args.file, "r+b") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
