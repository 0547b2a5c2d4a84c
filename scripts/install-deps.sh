#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs the Debian packages a target needs, only those missing. Quiet and quick when
# everything is present, so make can call it every time.
#
#   install-deps.sh [build]   what building pyuprof and running it need (make, make demo)
#   install-deps.sh test      that and what the tests need (make test, .ci/run), the sid root
#                             with CPython 3.14 and 3.15 too (install-sid-root.sh)
set -euo pipefail

what=${1:-build}
# build: the compiler and BPF tool chain, the libraries pyuprof links (libbpf, libelf, libdw,
# zlib, capstone), graphviz (its dot renders --svg, run as a child: user/output/dot_render.h), and python3
# for make demo's pstats check
build=(clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev libcapstone-dev graphviz
       pkg-config make gcc python3)
# test: bats; Debian's static python3.11 (one of the interpreters tested); the real consumers
# of the outputs: xmllint (SVG), Chromium driven from node (the flame graph), go tool pprof;
# tmux (pyuprof top, driven as a user types); clang's runtimes (make test's ASan build and
# libFuzzer harnesses); Debian's 3.11 regression tests (tests/peer.bats: a peer's judgement);
# greenlet and gevent for Debian's 3.11 (tests/greenlet.bats: programs that switch stacks);
# debootstrap, which makes the sid root (below); gdb, through which gen-py-offsets.py checks
# the layout table against the builds (tests/layouts.bats)
test=(bats python3.11 libxml2-utils chromium nodejs golang-go tmux libclang-rt-14-dev
      libpython3.11-testsuite python3-greenlet python3-gevent debootstrap gdb)
# test, too: Debian roots that Pythons run in as in a chroot or a container (make-root.sh; the
# tests find them in the same $PYUPROF_ROOTS, tests/helpers.bash). sid: python3.13 built
# against a newer glibc than the machine's, so that it runs only inside its root
# (tests/roots.bats)
roots_dir=${PYUPROF_ROOTS:-/var/lib/pyuprof/roots}
sid_packages=(python3.13)

case $what in
build) pkgs=("${build[@]}") ;;
test) pkgs=("${build[@]}" "${test[@]}") ;;
*)
	echo "usage: $0 [build|test]" >&2
	exit 64
	;;
esac

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

install() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "pyuprof: missing packages: $* (run as root, or apt-get install them)" >&2
		exit 1
	fi
	echo "pyuprof: installing $*" >&2
	export DEBIAN_FRONTEND=noninteractive
	# (another apt-get, e.g. unattended-upgrades, may hold the lock a while: wait for it)
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || install "${missing[@]}"

if [ "$what" = test ]; then
	"$(dirname "$0")/make-root.sh" "$roots_dir/sid" sid "${sid_packages[@]}"
	# CPython 3.14 and 3.15 in the same root, which the tests run them in
	"$(dirname "$0")/install-sid-root.sh" "$roots_dir/sid"
fi

# Debian's nodejs comes without npm, which is its own package there; NodeSource's nodejs
# bundles npm and conflicts with Debian's. So: npm only where nodejs left it out.
if [ "$what" = test ] && ! command -v npm >/dev/null 2>&1; then
	install npm
fi
exit 0
