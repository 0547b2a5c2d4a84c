#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Attach latency: pyuprof record -p on a target calling fib flat out; from pyuprof's start to
# its first event handled, and how long detaching takes (pyuprof -v prints both). PYS and REPS
# as in run.sh; PYUPROF another binary than build/pyuprof. Prints one markdown row per
# interpreter (min and median over REPS).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PYUPROF:-build/pyuprof} # (before helpers.bash, which sets its own)
source tests/helpers.bash 2>/dev/null || true
REPS=${REPS:-5}
PYS=${PYS:-"3.8 3.9 3.10 3.11 3.12 3.13 deb3.11"}
tmp=$(mktemp -d)
target=
trap '[[ -n $target ]] && kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT

stats() { # values... -> "min median"
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[1], a[int((NR+1)/2)]}'
}

echo "| python | ret sites | probes in place s (min / median) | first event s | detach s |"
echo "|---|---|---|---|---|"
for label in $PYS; do
	py=$(py_path "$label") || continue
	"$py" bench/workloads/forever.py >"$tmp/out" &
	target=$!
	until grep -q ready "$tmp/out"; do sleep 0.05; done
	att=() first=() det=()
	for ((r = 0; r < REPS; r++)); do
		"$bin" record -v -p "$target" -d 0.3 --top=0 -o "$tmp/p.prof" 2>"$tmp/err"
		n='\([0-9.-]*\)'
		pat="s/.*probes in place $n s after start, first event after $n s; detach took $n s.*"
		read -r a f d < <(sed -n "$pat/\1 \2 \3/p" "$tmp/err")
		att+=("$a") first+=("$f") det+=("$d")
	done
	# the target's line: the calibration's snippet recording says its own first
	nret=$(sed -n 's/.*, \([0-9]*\) return sites.*/\1/p' "$tmp/err" | tail -n 1)
	kill "$target"
	wait "$target" 2>/dev/null || true
	target=
	printf '| %s | %s | %s | %s | %s |\n' "$label" "$nret" "$(stats "${att[@]}" | tr ' ' /)" \
		"$(stats "${first[@]}" | tr ' ' /)" "$(stats "${det[@]}" | tr ' ' /)"
done
