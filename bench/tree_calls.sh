#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What a call costs pyuprof by its shape, the calibration's question (user/record/calibrate.c): per
# interpreter (PYS, labels as tests/helpers.bash), bench/workloads/tree_calls.py run natively
# and recorded, RUNS times each in turns; prints the probes' ns a call (recorded - native, by
# the thread's CPU time, the median run's) for a loop of empty calls, trees of calls of depth
# 2, 5 and 11, and fib, and each shape's over the loop's.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/helpers.bash 2>/dev/null || true
PYS=${PYS:-"3.8 3.12 3.13 deb3.11"}
RUNS=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ $(id -u) -eq 0 ]] || { echo "tree_calls: run as root (probes)" >&2; exit 1; }
echo "| py | flat | tree2 | tree5 | tree11 | fib | tree5 - flat | fib - flat |"
echo "|---|---|---|---|---|---|---|---|"
for label in $PYS; do
	py=$(py_path "$label") || continue
	for ((r = 0; r < RUNS; r++)); do
		"$py" bench/workloads/tree_calls.py >"$tmp/n$r"
		build/pyuprof record -q --no-compensation -o "$tmp/p.prof" -- "$py" \
			bench/workloads/tree_calls.py >"$tmp/p$r"
	done
	python3 - "$label" "$tmp" "$RUNS" <<'PY'
import sys
label, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def read(f):
    return {k: float(v) for k, v in (l.split() for l in open(f))}
cost = {}
for r in range(runs):
    n, p = read("%s/n%d" % (tmp, r)), read("%s/p%d" % (tmp, r))
    for k in n:
        cost.setdefault(k, []).append(p[k] - n[k])
med = {k: sorted(v)[len(v) // 2] for k, v in cost.items()}
print("| %s | %s | %.1f | %.1f |" % (label, " | ".join("%.1f" % med[k] for k in
      ("flat", "tree2", "tree5", "tree11", "fib")), med["tree5"] - med["flat"],
      med["fib"] - med["flat"]))
PY
done
