#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Makes (or completes) a minimal Debian root that the tests run Pythons in: a chroot, or a
# container's root in a mount and PID namespace of its own. Quiet and quick when the root
# already holds every package, so install-deps.sh can call it every time.
#
#   make-root.sh DIR SUITE PACKAGE...   e.g. make-root.sh /var/lib/pyuprof/roots/sid sid python3.13
#
# A new root is made with `debootstrap --variant=minbase SUITE` beside DIR and moved into place
# whole, so a root cut short is never taken for a made one; then the packages are installed in
# it with its own apt-get (a package added to the list later is added to the root as it is).
# An archive snapshot's Release file can be past its Valid-Until date, which apt-get refuses:
# the root's apt-get reads it anyway (Check-Valid-Until=false). Two runs at once take turns.
# Roots are made by root only; the pyuprof tests only read them.
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 DIR SUITE [PACKAGE...]" >&2
	exit 64
fi
dir=$1 suite=$2
shift 2
pkgs=("$@")

if [ "$(id -u)" -ne 0 ]; then
	echo "pyuprof: making the $suite root $dir needs root" >&2
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
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			debootstrap >/dev/null
	}
	echo "pyuprof: making a minimal Debian $suite root in $dir (about a minute)" >&2
	rm -rf "$dir.new"
	debootstrap --variant=minbase "$suite" "$dir.new" >"$dir.log" 2>&1 || {
		echo "pyuprof: debootstrap $suite failed; its log: $dir.log" >&2
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
exit 0
