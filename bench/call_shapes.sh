#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Which shapes of call pyuprof's compensation gets right: bench/workloads/call_shapes.py's
# shapes, each timed natively (mean of 3 runs) and recorded (RECS recordings, its cumtime,
# compensated), per interpreter (PYS, labels as tests/helpers.bash). Prints compensated /
# native per shape, the median recording's and all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/helpers.bash 2>/dev/null || true
PYS=${PYS:-"3.8 3.12 3.13 deb3.11"}
RECS=${RECS:-3}
N=${N:-40000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ $(id -u) -eq 0 ]] || { echo "call_shapes: run as root (probes)" >&2; exit 1; }
echo "| py | shape | native ms | compensated ms | compensated / native | all $RECS |"
echo "|---|---|---|---|---|---|"
for label in $PYS; do
	py=$(py_path "$label") || continue
	"$py" bench/workloads/call_shapes.py "$N" --native >"$tmp/native"
	for ((r = 0; r < RECS; r++)); do
		build/pyuprof record -q -o "$tmp/$r.prof" -- "$py" bench/workloads/call_shapes.py "$N" \
			>/dev/null
	done
	"$py" - "$label" "$tmp" "$RECS" <<'PY'
import pstats, sys
label, tmp, recs = sys.argv[1], sys.argv[2], int(sys.argv[3])
native = dict(l.split() for l in open(tmp + "/native"))
got = {}
for r in range(recs):
    for k, v in pstats.Stats("%s/%d.prof" % (tmp, r)).stats.items():
        if k[0].endswith("call_shapes.py") and k[2] in native:
            got.setdefault(k[2], []).append(v[3] / 3)
for name in native:
    xs = sorted(got[name])
    n = float(native[name])
    print("| %s | %s | %.2f | %.2f | %.2f | %s |" % (label, name, n * 1e3, xs[len(xs) // 2] * 1e3,
          xs[len(xs) // 2] / n, " ".join("%.2f" % (x / n) for x in got[name])))
PY
done
