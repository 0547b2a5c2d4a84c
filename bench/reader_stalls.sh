#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# How often pyuprof's reader thread holds the target's CPU during a short timed section: N
# recordings (20) of fib(22) (a ~1.5 ms section natively, ~4 ms recorded) on PY (Debian's
# python3.11), the reader reading in turns with the CPU offered between them (pyuprof's
# default) and, interleaved, reading all it finds at once (PYUPROF_BENCH_READER_WHOLE: as
# before). A recording is stalled when its section, uncompensated, took more than 1.4x the
# fastest of all. Prints a markdown table for bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20}
PY=${PY:-/usr/bin/python3.11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ $(id -u) -eq 0 ]] || { echo "reader_stalls: run as root (probes)" >&2; exit 1; }

section() { # RAW -> the section's uncompensated cumulative seconds
	build/pyuprof report -q --top 0 --no-compensation "$1" -o "$tmp/r.prof"
	"$PY" -c "import pstats, sys
print([v[3] for k, v in pstats.Stats(sys.argv[1]).stats.items() if k[2] == 'section'][0])" \
		"$tmp/r.prof"
}

for ((i = 0; i < N; i++)); do
	for mode in turns whole; do
		knob=()
		[[ $mode == whole ]] && knob=(PYUPROF_BENCH_READER_WHOLE=1)
		env "${knob[@]}" build/pyuprof record -q --top 0 \
			-o "$tmp/p.prof" --raw "$tmp/p.raw" -- "$PY" bench/fidelity/fib.py 22 >/dev/null
		echo "$(section "$tmp/p.raw")" >>"$tmp/$mode"
	done
done
min=$(sort -g "$tmp/turns" "$tmp/whole" | head -1)
echo "| reader | recordings | fastest ms | median ms | slowest ms | stalled (> 1.4x fastest) |"
echo "|---|---|---|---|---|---|"
for mode in turns whole; do
	sort -g "$tmp/$mode" | awk -v m="$mode" -v min="$min" '
		{ v[NR] = $1; s += ($1 > 1.4 * min) }
		END { printf "| %s | %d | %.2f | %.2f | %.2f | %d |\n", m, NR, v[1] * 1e3,
			v[int((NR + 1) / 2)] * 1e3, v[NR] * 1e3, s }'
done
