#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-realjob: a real program's own work, recorded, on the interpreter the headline
# user's PyTorch runs on (Debian's static python3.11): sympy's own tests of its core
# (Debian's python3-sympy, installed here if missing; sympy's runner in process, its random
# seed and the hash seed fixed). Run natively, under cProfile, and recorded by pyuprof in its
# default mode (the batch mode) and per call (--exits usdt, the default there before the batch
# mode could see that build's inline __getitem__ calls; --exits trampoline), and in the batch
# mode with the probe on those calls' path single-stepped, as it was before it moved to an
# instruction the kernel emulates (batch-single-step: user/target/probe_site.h). Per mode the median
# wall time of REPS runs (the whole process, start-up included), the calls recorded, lost
# events, and how often and how long the target waited for pyuprof (batch mode: a full ring
# buffer). Writes bench/REALJOB.md, or OUT: this run's table under its date, commit, machine and
# versions, then its hand-written "## Findings" section kept (earlier runs, newest first).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
REPS=${REPS:-3}
OUT=${OUT:-bench/REALJOB.md}
MODES=${MODES:-"native cprofile batch batch-single-step usdt trampoline"}
PY=/usr/bin/python3.11
# the code measured, taken before the runs
commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
git diff --quiet HEAD -- 2>/dev/null || commit="$commit with uncommitted changes"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ $(id -u) -eq 0 ]] || { echo "bench-realjob: run as root (probes)" >&2; exit 1; }
# (checked first: the table's ratios are to native, and a run without it ended unwritten)
[[ " $MODES " == *" native "* ]] || { echo "bench-realjob: MODES must include native" >&2; exit 1; }
[[ -x build/pyuprof ]] || { echo "bench-realjob: build first (make)" >&2; exit 1; }
[[ -x $PY ]] || { echo "bench-realjob: no $PY (apt-get install python3.11)" >&2; exit 1; }
if ! "$PY" -c 'import sympy' 2>/dev/null; then
	echo "bench-realjob: installing python3-sympy" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		python3-sympy >/dev/null
fi
cat >"$tmp/job.py" <<'EOF'
import sys
import sympy
ok = sympy.test("sympy/core/tests/test_arit.py", "sympy/core/tests/test_expr.py",
                subprocess=False, seed=1)
sys.exit(0 if ok else 1)
EOF
export PYTHONHASHSEED=0

# one run of MODE: prints "seconds calls lost waits waited_s"
run_one() {
	local mode=$1 t0 t1 err="$tmp/err" calls=- lost=- waits=0 waited=0 line
	t0=$(date +%s%N)
	case $mode in
	native) "$PY" "$tmp/job.py" >/dev/null 2>"$err" ;;
	cprofile) "$PY" tests/tools/cprofile_run.py -o "$tmp/c.prof" "$tmp/job.py" >/dev/null \
		2>"$err" ;;
	batch) build/pyuprof record -o "$tmp/p.prof" -- "$PY" "$tmp/job.py" >/dev/null 2>"$err" ;;
	batch-single-step) PYUPROF_BENCH_SINGLE_STEP=1 build/pyuprof record -o "$tmp/p.prof" -- \
		"$PY" "$tmp/job.py" >/dev/null 2>"$err" ;;
	usdt | trampoline) build/pyuprof record --exits "$mode" -o "$tmp/p.prof" -- \
		"$PY" "$tmp/job.py" >/dev/null 2>"$err" ;;
	esac
	t1=$(date +%s%N)
	line=$(grep -E '^pyuprof: [0-9]+ calls' "$err" | tail -n 1 || true)
	[[ $line =~ ^pyuprof:\ ([0-9]+)\ calls.*\ ([0-9]+)\ lost\ events ]] &&
		calls=${BASH_REMATCH[1]} lost=${BASH_REMATCH[2]}
	line=$(grep -E 'ring buffer was full' "$err" || true)
	[[ $line =~ full\ ([0-9]+)\ times.*waited\ ([0-9.]+)\ s ]] &&
		waits=${BASH_REMATCH[1]} waited=${BASH_REMATCH[2]}
	echo "$(((t1 - t0) / 1000000)) $calls $lost $waits $waited"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A ms calls lost waits waited
for ((i = 0; i < REPS; i++)); do
	for mode in $MODES; do # interleaved: a drift of the machine touches every mode alike
		read -r t c l w s < <(run_one "$mode")
		ms[$mode]+="$t "
		calls[$mode]=$c lost[$mode]=$l waits[$mode]+="$w " waited[$mode]+="$s "
		echo "bench-realjob: $mode run $((i + 1)): $t ms, $c calls, $l lost, $w waits" >&2
	done
done
native=$(tr ' ' '\n' <<<"${ms[native]}" | grep . | median)
{
	echo "# A real job recorded: sympy's core tests on Debian's python3.11"
	echo
	echo "\`make bench-realjob\` (bench/realjob.sh), $(date -u +%Y-%m-%dT%H:%MZ), pyuprof $commit, $(nproc) vCPUs," \
		"kernel $(uname -r), $($PY -c 'import sys; print(sys.version.split()[0])')," \
		"sympy $($PY -c 'import sympy; print(sympy.__version__)'); median of $REPS," \
		"whole process wall time (start-up included)."
	echo
	echo "| mode | wall (ms) | × native | calls recorded (last run) | lost events (last run) | waits for pyuprof (s) |"
	echo "|---|---|---|---|---|---|"
	for mode in $MODES; do
		m=$(tr ' ' '\n' <<<"${ms[$mode]}" | grep . | median)
		echo "| $mode | $m | $(awk -v a="$m" -v b="$native" 'BEGIN { printf "%.2f", a / b }') |" \
			"${calls[$mode]} | ${lost[$mode]} | $(tr ' ' '\n' <<<"${waits[$mode]}" | grep . |
			median) ($(tr ' ' '\n' <<<"${waited[$mode]}" | grep . | median)) |"
	done
	echo
	sed -n '/^## Findings/,$p' "$OUT" 2>/dev/null || true
} >"$tmp/out.md"
mv "$tmp/out.md" "$OUT"
echo "bench-realjob: wrote $OUT" >&2
