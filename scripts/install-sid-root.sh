#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Completes the Debian unstable root the tests run CPython 3.14 and 3.15 in (making it first if
# it is not there: make-root.sh). Their Debian builds run only there: they need that root's C
# library (glibc 2.38 or later). It gets the static executables python3.14 and python3.15,
# libpython3.14.so and libpython3.15.so, their internal headers (gen-py-offsets.py reads the
# layout table's 3.14 and 3.15 entries from them) and their regression tests (tests/peer.bats,
# bench/regrtest.sh); and, built here, a program that runs each libpython as an embedder does
# (/usr/local/bin/python3.X-shared: Debian ships no executable linked with it). Quiet and quick
# when all of it is there, so install-deps.sh test runs it every time.
#
#   install-sid-root.sh [DIR]   default: $PYUPROF_SID_ROOT, else $PYUPROF_ROOTS/sid
#                               (/var/lib/pyuprof/roots/sid)
set -euo pipefail

dir=${1:-${PYUPROF_SID_ROOT:-${PYUPROF_ROOTS:-/var/lib/pyuprof/roots}/sid}}
versions=(3.14 3.15)
pkgs=()
for v in "${versions[@]}"; do
	pkgs+=("python$v" "libpython$v" "libpython$v-dev" "libpython$v-testsuite")
done
"$(dirname "$0")/make-root.sh" "$dir" sid "${pkgs[@]}"

# python3.X-shared: Py_BytesMain of libpython3.X.so, which is what python3.X's own main() is,
# built with this machine's compiler. The root's libraries are newer than this machine's: the
# link leaves libpython's own needs to the root's loader, where the program runs.
exec 9>"$dir.lock"
flock 9
lib="$dir/usr/lib/x86_64-linux-gnu"
for v in "${versions[@]}"; do
	out="$dir/usr/local/bin/python$v-shared"
	[ "$out" -nt "$lib/libpython$v.so.1.0" ] && continue
	mkdir -p "$dir/usr/local/bin"
	printf '%s\n' '#include <Python.h>' \
		'int main(int argc, char **argv) { return Py_BytesMain(argc, argv); }' |
		gcc -O2 -x c - -o "$out.new" -I "$dir/usr/include/python$v" \
			-idirafter "$dir/usr/include" -L "$lib" -lpython"$v" -Wl,--allow-shlib-undefined
	mv "$out.new" "$out"
done
exit 0
