#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The batch path's instructions a call, in process (bench/page_instructions.c), for this tree
# and another commit's, counted by valgrind (a VM without hardware counters measures no
# instructions otherwise; times there move with the host): the instructions of 10^6 calls
# less those of none, per layout, with a chain record every call and without (the common
# case: a call from the frame entered last). Needs valgrind and a build of both trees
# (BASE: a git worktree of the other commit, built with make; BASE_FLAGS=-DBEFORE_GUARD for
# one older than the stack guard).
#
#   BASE=/work/wt/base BASE_FLAGS=-DBEFORE_GUARD bench/page_instructions.sh [MINOR...]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE:?BASE: a built worktree of the commit to compare with}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
libs="-lelf -lz -lcapstone -lbpf -lpthread"
build() { # build TREE FLAGS OUT
	# shellcheck disable=SC2086
	gcc -O2 -D_GNU_SOURCE $2 -I"$1/user" -I"$1/include" -o "$3" bench/page_instructions.c \
		"$1/build/libpyuprof.a" $libs
}
build "$base" "${BASE_FLAGS:-}" "$out/base"
build "$PWD" "" "$out/this"
ir() { # ir BINARY MINOR N [NOCHAIN]: valgrind's instruction count
	env ${4:+NOCHAIN=1} valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 1 \
		2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '| layout | %s: no chain / chain | %s: no chain / chain |\n|---|---|---|\n' \
	"$(git -C "$base" rev-parse --short HEAD)" "$(git rev-parse --short HEAD)"
(($#)) || set -- 8 11 12 13
for m in "$@"; do
	row="| 3.$m"
	for side in base this; do
		zero=$(ir "$out/$side" "$m" 0 1)
		plain=$(ir "$out/$side" "$m" 1000000 1)
		chain=$(ir "$out/$side" "$m" 1000000)
		row+=" | $(((plain - zero) / 1000000)) / $(((chain - zero) / 1000000))"
	done
	echo "$row |"
done
