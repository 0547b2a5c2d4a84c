#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# How long an attach and a detach freeze the target (twelfth session's note): a 3.13 (PY) that
# wakes every millisecond reports each gap over 50 ms while pyuprof (PYUPROF, default
# build/pyuprof) attaches CYCLES times (-d 0.5, 0.3 s apart). Natively there is no such gap.
# The attach stop holds the target while the BPF object loads (the verifier): 0.4-0.5 s on
# the test VM, enough to fail CPython's test_timerfd_ns_select (bench/REGRTEST.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYUPROF=${PYUPROF:-build/pyuprof} # (before helpers.bash, which sets its own)
bin=$PYUPROF
source tests/helpers.bash 2>/dev/null || true
PYUPROF=$bin
PY=${PY:-$(py_path 3.13)}
CYCLES=${CYCLES:-3}
[[ $(id -u) -eq 0 ]] || { echo "attach_freeze: run as root" >&2; exit 1; }
[[ -x $PYUPROF ]] || { echo "attach_freeze: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
target=
trap '[[ -n $target ]] && kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "natively: $("$PY" bench/attach_freeze.py 2 | tail -n 1)"
"$PY" bench/attach_freeze.py $((CYCLES * 3 + 2)) >"$tmp/out" &
target=$!
until grep -q ready "$tmp/out"; do sleep 0.05; done
for ((i = 0; i < CYCLES; i++)); do
	"$PYUPROF" record -q -p "$target" -d 0.5 -o "$tmp/p.prof" >/dev/null
	sleep 0.3
done
wait "$target"
target=
echo "with $CYCLES attaches: $(tail -n 1 "$tmp/out")"
