#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-whole: what a user times, the whole command from start to end, on Debian's
# python3.11: `python3 -c pass`, the compile job (examples/compile_torch.py --models 4, Debian's
# python3-torch), sympy's core tests (bench/realjob.sh's job, python3-sympy) and a 4-thread
# workload (bench/workloads/threads4.py), natively, under cProfile (python3 -m cProfile -o) and
# recorded by pyuprof in its defaults (batch mode, calibrated). REPS runs of each, the three
# taking turns (a drift of the machine touches every mode alike); median and spread of the wall
# times. pyuprof runs once first, untimed: its calibration and its sweep of the interpreter are
# then kept (/var/cache/pyuprof), as a user's second recording finds them; the first recording
# of an interpreter costs one calibration more (its own row, "pass, first").
#
# Then pyuprof's fixed part step by step, from its --debug step lines ("+N ms: ...") over REPS
# runs of `-c pass` (median ms of each step); the threads workload's calls and thread starts
# over native (ns a call, us a start), with one thread and with four; and the attach's first
# event (bench/attach.sh, fib flat out). Prints markdown (or writes OUT). PYUPROF_BASE, set to
# another build of pyuprof, adds it as a mode of its own ("base") to every turn: before and after
# in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
REPS=${REPS:-5}
PY=${PY:-/usr/bin/python3.11}
WORKLOADS=${WORKLOADS:-"pass compile sympy threads"}
OUT=${OUT:-/dev/stdout}
PYUPROF=${PYUPROF:-build/pyuprof}
PYUPROF_BASE=${PYUPROF_BASE:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ $(id -u) -eq 0 ]] || { echo "bench-whole: run as root (probes)" >&2; exit 1; }
[[ -x $PYUPROF ]] || { echo "bench-whole: build first (make)" >&2; exit 1; }

echo pass >"$tmp/pass.py"
cat >"$tmp/sympy_job.py" <<'EOF'
import sys
import sympy
ok = sympy.test("sympy/core/tests/test_arit.py", "sympy/core/tests/test_expr.py",
                subprocess=False, seed=1)
sys.exit(0 if ok else 1)
EOF
export PYTHONHASHSEED=0

# the script and arguments of WORKLOAD, or nothing if it cannot run here (said on stderr)
workload_args() {
	case $1 in
	pass) echo "$tmp/pass.py" ;;
	compile)
		"$PY" -c 'import torch' 2>/dev/null ||
			{ echo "bench-whole: no torch for $PY (make demo-compile installs it)" >&2; return 1; }
		echo "examples/compile_torch.py --models 4" ;;
	sympy)
		"$PY" -c 'import sympy' 2>/dev/null ||
			{ echo "bench-whole: no sympy for $PY (make bench-realjob installs it)" >&2; return 1; }
		echo "$tmp/sympy_job.py" ;;
	threads) echo "bench/workloads/threads4.py 4 2000000" ;;
	esac
}

# one run of MODE on WORKLOAD: its wall time, ms (stdout of the program in $tmp/out)
run_one() {
	local mode=$1 t0 t1
	shift
	t0=$(date +%s%N)
	case $mode in
	native) "$PY" "$@" >"$tmp/out" 2>"$tmp/err" ;;
	cprofile) "$PY" -m cProfile -o "$tmp/c.prof" "$@" >"$tmp/out" 2>"$tmp/err" ;;
	pyuprof) "$PYUPROF" record -q -o "$tmp/p.prof" -- "$PY" "$@" >"$tmp/out" 2>"$tmp/err" ;;
	base) "$PYUPROF_BASE" record -q -o "$tmp/p.prof" -- "$PY" "$@" >"$tmp/out" 2>"$tmp/err" ;;
	first) # pyuprof with nothing kept: a calibration and a sweep first
		PYUPROF_CACHE_DIR=$tmp/cache.$RANDOM "$PYUPROF" record -q -o "$tmp/p.prof" \
			-- "$PY" "$@" >"$tmp/out" 2>"$tmp/err" ;;
	esac
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
spread() { sort -n | awk '{ v[NR] = $1 } END { printf "%d%%", v[1] ? 100 * (v[NR] - v[1]) / v[1] : 0 }'; }

"$PYUPROF" record -q -o "$tmp/p.prof" -- "$PY" "$tmp/pass.py" >/dev/null 2>&1 || true
{
	echo "whole_command.sh: $(date -u +%Y-%m-%dT%H:%MZ), pyuprof $(git rev-parse --short HEAD)," \
		"$(nproc) vCPUs, kernel $(uname -r), $PY, REPS=$REPS, load average at the start:" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| workload | native ms | cProfile ms | pyuprof ms | pyuprof - native | pyuprof / cProfile | the same, median of the runs' pairs | spread (native, cProfile, pyuprof) |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$OUT"
declare -A ms med spr
for w in $WORKLOADS; do
	args=$(workload_args "$w") || continue
	modes="native cprofile pyuprof"
	[[ -n $PYUPROF_BASE ]] && modes+=" base"
	[[ $w == pass ]] && modes+=" first"
	for ((i = 0; i < REPS; i++)); do
		for mode in $modes; do
			# shellcheck disable=SC2086 # (args: words)
			t=$(run_one "$mode" $args)
			ms[$w.$mode]+="$t "
			echo "bench-whole: $w $mode run $((i + 1)): $t ms" >&2
		done
	done
	for mode in $modes; do
		med[$mode]=$(tr ' ' '\n' <<<"${ms[$w.$mode]}" | grep . | median)
		spr[$mode]=$(tr ' ' '\n' <<<"${ms[$w.$mode]}" | grep . | spread)
	done
	# each run of pyuprof over the cProfile run of its turn: a drift slower than a turn cancels
	pairs=$(paste -d' ' <(tr ' ' '\n' <<<"${ms[$w.pyuprof]}" | grep .) \
		<(tr ' ' '\n' <<<"${ms[$w.cprofile]}" | grep .) |
		awk '{ printf "%.4f\n", $1 / $2 }' | median)
	awk -v w="$w" -v n="${med[native]}" -v c="${med[cprofile]}" -v p="${med[pyuprof]}" \
		-v r="$pairs" -v s="${spr[native]}, ${spr[cprofile]}, ${spr[pyuprof]}" 'BEGIN {
		printf "| %s | %d | %d | %d | %+d | %.2f | %.2f | %s |\n", w, n, c, p, p - n, p / c,
			r, s }' >>"$OUT"
	if [[ -n $PYUPROF_BASE ]]; then
		pairs=$(paste -d' ' <(tr ' ' '\n' <<<"${ms[$w.base]}" | grep .) \
			<(tr ' ' '\n' <<<"${ms[$w.cprofile]}" | grep .) |
			awk '{ printf "%.4f\n", $1 / $2 }' | median)
		awk -v w="$w" -v n="${med[native]}" -v c="${med[cprofile]}" -v p="${med[base]}" \
			-v r="$pairs" -v s="${spr[base]}" 'BEGIN {
			printf "| %s, base (PYUPROF_BASE) | %d | %d | %d | %+d | %.2f | %.2f | %s |\n", w,
				n, c, p, p - n, p / c, r, s }' >>"$OUT"
	fi
	if [[ $w == pass ]]; then
		awk -v n="${med[native]}" -v f="${med[first]}" -v s="${spr[first]}" 'BEGIN {
			printf "| pass, first (nothing kept) | %d | | %d | %+d | | | %s |\n", n, f, f - n,
				s }' >>"$OUT"
	fi
done

# the fixed part, step by step: each step's ms after the one before it, median over REPS (and
# the base build's, taking turns)
steps_of() { # BUILD FILE: one run's steps
	"$1" record --debug -o "$tmp/p.prof" -- "$PY" "$tmp/pass.py" 2>&1 >/dev/null |
		sed -n 's/^pyuprof: +\([0-9.]*\) ms: \(.*\)$/\1\t\2/p' |
		sed 's/pid [0-9]*: //; s/; instructions the verifier.*//' >"$2"
}
steps_table() { # TITLE FILES...
	echo
	echo "$1"
	echo
	echo "| step | ms | at ms |"
	echo "|---|---|---|"
	shift
	awk -F'\t' '
		{ if (FNR == 1) prev = 0
		  k = $2; if (!(k in order)) { order[k] = ++n; name[n] = k }
		  d[k] = d[k] " " ($1 - prev); at[k] = at[k] " " $1; prev = $1 }
		function med(s,   a, m, i, j, t) { m = split(s, a, " ")
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
				if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
			return a[int((m + 1) / 2)] }
		END { for (i = 1; i <= n; i++)
			printf "| %s | %.1f | %.1f |\n", name[i], med(d[name[i]]), med(at[name[i]]) }
	' "$@"
}
for ((i = 0; i < REPS; i++)); do
	steps_of "$PYUPROF" "$tmp/steps.$i"
	[[ -z $PYUPROF_BASE ]] || steps_of "$PYUPROF_BASE" "$tmp/bsteps.$i"
done
{
	steps_table "pyuprof's fixed part on \`$PY -c pass\` (--debug's steps; ms after the step before,
median of $REPS runs):" "$tmp"/steps.*
	[[ -z $PYUPROF_BASE ]] ||
		steps_table "The same, base (PYUPROF_BASE), taking turns with it:" "$tmp"/bsteps.*
} >>"$OUT"

# the threads workload: a call in one thread and in four, and a thread's start
if [[ " $WORKLOADS " == *" threads "* ]]; then
	declare -A sec st
	for ((i = 0; i < REPS; i++)); do
		for tn in 1 4; do
			for mode in native pyuprof cprofile ${PYUPROF_BASE:+base}; do
				run_one "$mode" bench/workloads/threads4.py "$tn" 2000000 >/dev/null
				read -r _ calls _ s _ _ _ u <"$tmp/out"
				sec[$mode.$tn]+="$s " st[$mode.$tn]+="$u "
			done
		done
	done
	{
		echo
		echo "bench/workloads/threads4.py (2,000,000 calls of a small function in T threads under"
		echo "the GIL; then 100 threads started and joined in turn): median of $REPS runs, the"
		echo "modes taking turns:"
		echo
		echo "| threads | mode | section s | ns a call over native | a start and join, us | over native, us |"
		echo "|---|---|---|---|---|---|"
		for tn in 1 4; do
			n=$(tr ' ' '\n' <<<"${sec[native.$tn]}" | grep . | median)
			nu=$(tr ' ' '\n' <<<"${st[native.$tn]}" | grep . | median)
			for mode in native cprofile pyuprof ${PYUPROF_BASE:+base}; do
				s=$(tr ' ' '\n' <<<"${sec[$mode.$tn]}" | grep . | median)
				u=$(tr ' ' '\n' <<<"${st[$mode.$tn]}" | grep . | median)
				awk -v t="$tn" -v m="$mode" -v s="$s" -v n="$n" -v u="$u" -v nu="$nu" \
					-v calls="$calls" 'BEGIN {
					printf "| %d | %s | %.3f | %.0f | %.0f | %+.0f |\n", t, m, s,
						(s - n) / calls * 1e9, u, u - nu }'
			done
		done
	} >>"$OUT"
fi

{
	echo
	echo "Attach (bench/attach.sh: record -p on a target calling fib flat out, s, min/median of"
	echo "$REPS):"
	echo
	REPS=$REPS PYS="3.12 deb3.11" PYUPROF=$PYUPROF bench/attach.sh 2>/dev/null
} >>"$OUT"
