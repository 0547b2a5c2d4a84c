#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A harm mended in the twelfth session: pyuprof's stops (attach, detach) made a thread waiting
# in epoll_wait get EINTR, and a Python select() whose timeout ran out meanwhile return nothing
# ready (bench/stop_eintr.py); a thread asleep in a system call is now left asleep
# (user/hold_guard.h). Runs the fixture on a 3.13 (PY) for SECS natively, then again while
# pyuprof (PYUPROF, default build/pyuprof: give an older binary to see the harm) attaches CYCLES
# times (-d 0.5, 0.3 s apart), and prints both counts. Natively the empty selects are 0.
set -euo pipefail
cd "$(dirname "$0")/.."
PYUPROF=${PYUPROF:-build/pyuprof} # (before helpers.bash, which sets its own)
bin=$PYUPROF
source tests/helpers.bash 2>/dev/null || true
PYUPROF=$bin
PY=${PY:-$(py_path 3.13)}
CYCLES=${CYCLES:-5}
SECS=${SECS:-12}
[[ $(id -u) -eq 0 ]] || { echo "stop_eintr: run as root" >&2; exit 1; }
[[ -x $PYUPROF ]] || { echo "stop_eintr: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
target=
trap '[[ -n $target ]] && kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "natively: $("$PY" bench/stop_eintr.py 3 | tail -n 1)"
"$PY" bench/stop_eintr.py "$SECS" >"$tmp/out" &
target=$!
until grep -q ready "$tmp/out"; do sleep 0.05; done
for ((i = 0; i < CYCLES; i++)); do
	"$PYUPROF" record -q -p "$target" -d 0.5 -o "$tmp/p.prof" >/dev/null
	sleep 0.3
done
wait "$target"
target=
echo "with $CYCLES attaches: $(tail -n 1 "$tmp/out")"
