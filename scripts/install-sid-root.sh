#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Makes (or completes) the Debian unstable root the tests run CPython 3.14 and 3.15 in. Their
# Debian builds run only there: they need that root's C library (glibc 2.38 or later). It holds
# the static executables python3.14 and python3.15, libpython3.14.so and libpython3.15.so, their
# internal headers (gen-py-offsets.py reads the layout table's 3.14 and 3.15 entries from them)
# and their regression tests (tests/peer.bats, bench/regrtest.sh); and, built here, a program
# that runs each libpython as an embedder does (/usr/local/bin/python3.X-shared: Debian ships
# no executable linked with it). Quiet and quick when all of it is there, so install-deps.sh
# test runs it every time.
#
#   install-sid-root.sh [DIR]   default: $PYUPROF_SID_ROOT, else /var/lib/pyuprof/roots/sid
#
# A new root is made with `debootstrap --variant=minbase sid` beside DIR and moved into place
# whole, so that one cut short is never taken for a made one. The archive's Release file can be
# past its Valid-Until date, which apt-get refuses: the root's apt-get reads it anyway. Two runs
# at once (or one with another script that makes roots there) take turns on DIR.lock.
set -euo pipefail

dir=${1:-${PYUPROF_SID_ROOT:-/var/lib/pyuprof/roots/sid}}
versions=(3.14 3.15)
pkgs=()
for v in "${versions[@]}"; do
	pkgs+=("python$v" "libpython$v" "libpython$v-dev" "libpython$v-testsuite")
done

if [ "$(id -u)" -ne 0 ]; then
	echo "pyuprof: making the sid root $dir needs root" >&2
	exit 1
fi
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

apt_in_root() {
	# (no service is started in the root: policy-rc.d says no to every start)
	DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get -qq \
		-o Acquire::Check-Valid-Until=false "$@"
}

installed_in_root() {
	# shellcheck disable=SC2016 # (dpkg-query's format, not the shell's)
	chroot "$dir" dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if [ ! -x "$dir/usr/bin/apt-get" ]; then
	command -v debootstrap >/dev/null 2>&1 || {
		echo "pyuprof: installing debootstrap" >&2
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
			--no-install-recommends debootstrap >/dev/null
	}
	echo "pyuprof: making a minimal Debian sid root in $dir (about a minute)" >&2
	rm -rf "$dir.new"
	debootstrap --variant=minbase sid "$dir.new" >"$dir.log" 2>&1 || {
		echo "pyuprof: debootstrap sid failed; its log: $dir.log" >&2
		exit 1
	}
	printf '#!/bin/sh\nexit 101\n' >"$dir.new/usr/sbin/policy-rc.d"
	chmod 755 "$dir.new/usr/sbin/policy-rc.d"
	rm -rf "$dir"
	mv "$dir.new" "$dir"
	rm -f "$dir.log"
fi

missing=()
for p in "${pkgs[@]}"; do
	installed_in_root "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "pyuprof: installing ${missing[*]} in $dir" >&2
	# (its output only on failure: apt-get says it cannot write its log without /dev/pts)
	if ! { apt_in_root update && apt_in_root install -y --no-install-recommends \
		"${missing[@]}" && apt_in_root clean; } >"$dir.log" 2>&1; then
		cat "$dir.log" >&2
		echo "pyuprof: installing ${missing[*]} in $dir failed" >&2
		exit 1
	fi
	rm -f "$dir.log"
fi

# python3.X-shared: Py_BytesMain of libpython3.X.so, which is what python3.X's own main() is,
# built with this machine's compiler. The root's libraries are newer than this machine's: the
# link leaves libpython's own needs to the root's loader, where the program runs.
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
