#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Writes the fuzz_elf seed corpus (tests/fuzz/corpus/fuzz_elf/): mini_python.c built as a
# shared library, an executable that needs it, a static-like executable and stripped copies
# (.dynsym only); and, from each interpreter present, its first 192 KiB (ELF header, program
# headers, .dynsym, .dynstr, notes) with its section-name table and section headers appended
# (e_shoff moved), so libelf opens it and symbol lookups run over real tables. Small: the
# committed corpus stays under a few MB.
set -euo pipefail
cd "$(dirname "$0")"
out=../corpus/fuzz_elf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
clang -O2 -g0 -fPIC -shared -Wl,-soname,libpython3.12.so.1.0 mini_python.c -o "$tmp/libpython3.12.so.1.0"
printf 'int Py_BytesMain(int, char **);\nint main(int c, char **v) { return Py_BytesMain(c, v); }\n' >"$tmp/main.c"
clang -O2 -g0 "$tmp/main.c" -L"$tmp" -l:libpython3.12.so.1.0 -o "$tmp/python3.12"
clang -O2 -g0 -no-pie -Dmain_=main "$tmp/main.c" mini_python.c -o "$tmp/python3.11"
cp "$tmp/libpython3.12.so.1.0" "$out/mini-libpython.so"
cp "$tmp/python3.12" "$out/mini-python-dyn"
cp "$tmp/python3.11" "$out/mini-python-static"
strip -o "$out/mini-libpython-stripped.so" "$tmp/libpython3.12.so.1.0"
strip -o "$out/mini-python-static-stripped" "$tmp/python3.11"
root=${PYENV_ROOT:-$HOME/.pyenv}
for f in "$root"/versions/3.8*/lib/libpython3.8.so.1.0 "$root"/versions/3.12*/lib/libpython3.12.so.1.0 \
	"$root"/versions/3.13*/lib/libpython3.13.so.1.0 /usr/bin/python3.11; do
	[[ -f $f ]] || continue
	python3 - "$f" "$out/head-$(basename "$f")" <<'PYEOF'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
keep = 192 * 1024
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
shdrs = bytearray(data[shoff:shoff + shentsize * shnum])
# the section-name table, appended after the kept head
o = shstrndx * shentsize
str_off, str_size = struct.unpack_from("<QQ", shdrs, o + 0x18)
out = bytearray(data[:keep])
struct.pack_into("<Q", shdrs, o + 0x18, len(out))
out += data[str_off:str_off + str_size]
out += b"\0" * (-len(out) % 8)
struct.pack_into("<Q", out, 0x28, len(out))
out += shdrs
open(dst, "wb").write(out)
PYEOF
done
ls -la "$out"
