# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Rewrites 8-byte words at the start of a CPython build's _PyRuntime, in its file.

    patch_pyruntime.py FILE POS=VALUE... [--version HEX]

_PyRuntime starts with _Py_DebugOffsets (3.13+): "xdebugpy", PY_VERSION_HEX at 8, the
free-threaded flag at 16, then the offsets the interpreter publishes. Each POS=VALUE (decimal
or 0x..) sets the word at that byte position; a value of +N adds N to it. --version HEX sets
the version there and in the exported Py_Version too: a build as a later patch release would
be. The interpreter itself reads none of these, so the build still runs (tests/layouts.bats).
"""
import struct
import sys


def dynsym(data, name):
    """File offset of the defined .dynsym symbol name (ELF64 little-endian)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for s in secs:
        if s[1] != 11:  # SHT_DYNSYM
            continue
        strtab = secs[s[6]]
        for off in range(s[4], s[4] + s[5], 24):
            st_name, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", data, off)
            end = data.index(b"\0", strtab[4] + st_name)
            if shndx and data[strtab[4] + st_name:end] == name.encode():
                sec = secs[shndx]
                return sec[4] + value - sec[3]  # file offset: section's plus the distance
    sys.exit("patch_pyruntime: no %s in the file" % name)


def main():
    path, args = sys.argv[1], sys.argv[2:]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    rt = dynsym(data, "_PyRuntime")
    if data[rt:rt + 8] != b"xdebugpy":
        sys.exit("patch_pyruntime: %s has no _Py_DebugOffsets" % path)
    while args:
        arg = args.pop(0)
        if arg == "--version":
            v = int(args.pop(0), 0)
            struct.pack_into("<Q", data, rt + 8, v)
            struct.pack_into("<Q", data, dynsym(data, "Py_Version"), v)
            continue
        pos, val = arg.split("=")
        old, = struct.unpack_from("<Q", data, rt + int(pos, 0))
        new = old + int(val[1:], 0) if val.startswith("+") else int(val, 0)
        struct.pack_into("<Q", data, rt + int(pos, 0), new)
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
