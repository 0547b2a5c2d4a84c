#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The harm scripts' one runner (bench/stop_eintr.sh, bench/attach_freeze.sh,
# bench/timerfd_attach.sh):
#
#   while_attached.sh FIXTURE.py NATIVE_ARG ARG
#
# runs FIXTURE.py NATIVE_ARG on a 3.13 (PY) natively, then FIXTURE.py ARG while pyuprof
# (PYUPROF, default build/pyuprof) attaches CYCLES times (-d 0.5, 0.3 s apart), and prints the
# last line of each run. The fixture prints "ready" before it starts counting.
set -euo pipefail
cd "$(dirname "$0")/.."
PYUPROF=${PYUPROF:-build/pyuprof} # (before helpers.bash, which sets its own)
bin=$PYUPROF
source tests/helpers.bash 2>/dev/null || true
PYUPROF=$bin
PY=${PY:-$(py_path 3.13)}
CYCLES=${CYCLES:-5}
name=$(basename "$1" .py)
[[ $(id -u) -eq 0 ]] || { echo "$name: run as root" >&2; exit 1; }
[[ -x $PYUPROF ]] || { echo "$name: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
target=
trap '[[ -n $target ]] && kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "natively: $("$PY" "$1" "$2" | tail -n 1)"
"$PY" "$1" "$3" >"$tmp/out" &
target=$!
until grep -q ready "$tmp/out"; do sleep 0.05; done
for ((i = 0; i < CYCLES; i++)); do
	"$PYUPROF" record -q -p "$target" -d 0.5 -o "$tmp/p.prof" >/dev/null
	sleep 0.3
done
wait "$target"
target=
echo "with $CYCLES attaches: $(tail -n 1 "$tmp/out")"
