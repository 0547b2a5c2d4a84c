#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-fidelity: do pyuprof's times say where the time goes? For each interpreter and
# workload (bench/fidelity/*.py, each with its timed section in section()): the section's
# native time (min of REPS plain runs), its time under cProfile and under pyuprof with and
# without overhead compensation (RECS recordings, each record --raw, then report
# --no-compensation on the same events; the one whose compensated time is the median is the
# row's, the others give the range: single recordings of a short section swing by 20-80%), and
# the share error (total variation distance of per-function
# self-time shares, bench/fidelity/evaluate.py) of pyuprof against cProfile (builtins off: a
# C call's time stays in its Python caller, i.e. builtins folded into their callers) and
# against samplers: bench/fidelity/sigsample.py (in-process SIGPROF, every interpreter,
# single-thread workloads) and Debian's austin 1.0.1 (3.8-3.10 only). Samplers run a larger
# size of the same workload (shares, not times, are compared). Writes bench/FIDELITY.md
# (keeping its hand-written "## Findings" section), or OUT.
# Settings: PYTHONS (labels as tests/helpers.bash: "3.8 3.10 3.12 3.13 deb3.11"), WORKLOADS
# ("fib generators compile recursion threads known"), REPS (3), RECS (3), PYUPROF_ARGS (extra
# record options, e.g. "--exits uretprobe"), OUT, NOISY_PCT (10: a native spread that marks a
# row noisy).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/helpers.bash
source tests/helpers.bash 2>/dev/null || true
PYTHONS=${PYTHONS:-"3.8 3.10 3.12 3.13 deb3.11"}
WORKLOADS=${WORKLOADS:-"fib generators compile recursion threads known"}
REPS=${REPS:-3}
RECS=${RECS:-3}
PYUPROF_ARGS=${PYUPROF_ARGS:-}
OUT=${OUT:-bench/FIDELITY.md}
NOISY_PCT=${NOISY_PCT:-10}
PYUPROF=build/pyuprof
EVAL="python3 bench/fidelity/evaluate.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[[ $(id -u) -eq 0 ]] || { echo "bench-fidelity: run as root (probes)" >&2; exit 1; }
[[ -x $PYUPROF ]] || { echo "bench-fidelity: build first (make)" >&2; exit 1; }
have_austin=0
command -v austin >/dev/null && have_austin=1
((have_austin)) || echo "bench-fidelity: no austin (apt-get install austin): its columns stay empty" >&2

size() { # WORKLOAD -> the bench's size; WORKLOAD big -> the samplers'
	case $1 in
	fib) [[ ${2:-} == big ]] && echo 28 || echo 22 ;;
	generators) [[ ${2:-} == big ]] && echo 200000 || echo 10000 ;;
	compile) echo 1 ;;
	known) [[ ${2:-} == big ]] && echo 30000 || echo 3000 ;;
	recursion) [[ ${2:-} == big ]] && echo 600 || echo 30 ;;
	threads) [[ ${2:-} == big ]] && echo 200000 || echo 10000 ;;
	esac
}

elapsed() { awk '/^elapsed/ {print $2}'; }

row() { # LABEL WORKLOAD
	local label=$1 w=$2 py script n big times=() native i summary calib lost ref k f range
	local c_tot p_tot r_tot s_file="-" a_file="-" t_file="-" cols=() totals=() spread
	py=$(py_path "$label") || { echo "bench-fidelity: no Python $label, skipped" >&2; return 0; }
	script=bench/fidelity/$w.py
	n=$(size "$w")
	big=$(size "$w" big)
	for ((i = 0; i < REPS; i++)); do
		times+=("$("$py" "$script" "$n" | elapsed)")
	done
	native=$(printf '%s\n' "${times[@]}" | sort -g | head -n 1)
	spread=$(printf '%s\n' "${times[@]}" | sort -g |
		awk -v z="$NOISY_PCT" '{a[NR] = $1} END {s = (a[NR] / a[1] - 1) * 100;
			printf "%.0f%%%s", s, (s > z ? " **noisy**" : "")}')
	# a workload that knows its functions' true self times writes them (natively)
	if [[ $w == known ]]; then
		"$py" "$script" "$n" --truth "$tmp/t.truth" >/dev/null
		t_file=$tmp/t.truth
	fi
	rm -f "$tmp/c.prof"
	# cProfile of the section alone; not for threads: it profiles the calling thread only
	# (3.8-3.11), or all threads into one stack (3.12+)
	[[ $w == threads ]] || FIDELITY_CPROFILE=$tmp/c.prof "$py" "$script" "$n" >/dev/null
	for ((k = 0; k < RECS; k++)); do
		# shellcheck disable=SC2086
		"$PYUPROF" record --top 0 $PYUPROF_ARGS -o "$tmp/p$k.prof" --raw "$tmp/p$k.raw" \
			--collapsed "$tmp/p$k.collapsed" -- "$py" "$script" "$n" 2>&1 >/dev/null |
			grep -E '^pyuprof: .* lost events' >"$tmp/p$k.summary" || true
		totals+=("$($EVAL total "$tmp/p$k.prof") $k")
	done
	# the recording whose compensated section is the median is the row's
	k=$(printf '%s\n' "${totals[@]}" | sort -g | sed -n "$(((RECS + 1) / 2))p" | cut -d' ' -f2)
	range=$(printf '%s\n' "${totals[@]}" | sort -g | awk -v n="$native" \
		'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo / n, hi / n }')
	# lost events: of every recording
	lost=$(for ((i = 0; i < RECS; i++)); do
		sed -n 's/.* \([0-9]*\) lost events.*/\1/p' "$tmp/p$i.summary"
	done | awk '{ n += $1 } END { print NR ? n : "?" }')
	for f in prof raw collapsed summary; do
		mv "$tmp/p$k.$f" "$tmp/p.$f"
	done
	rm -f "$tmp"/p[0-9]*.*
	summary=$(cat "$tmp/p.summary")
	"$PYUPROF" report -q --no-compensation "$tmp/p.raw" -o "$tmp/r.prof" \
		--collapsed "$tmp/r.collapsed"
	calib=$(sed -n 's/.*calibrated: \([0-9.]*\) µs a call, \([0-9.]*\) inside.*/\1 \/ \2/p' \
		<<<"$summary")
	if [[ $w != threads ]]; then
		"$py" bench/fidelity/sigsample.py -o "$tmp/s.samples" "$script" "$big" >/dev/null
		s_file=$tmp/s.samples
	fi
	if ((have_austin)) && [[ $label =~ ^3\.(8|9|10)$ ]]; then
		austin -i 1000 -o "$tmp/a.austin" "$py" "$script" "$big" >/dev/null 2>&1 || true
		a_file=$tmp/a.austin
	fi
	c_tot=-
	[[ -f $tmp/c.prof ]] && c_tot=$($EVAL total "$tmp/c.prof")
	p_tot=$($EVAL total "$tmp/p.prof")
	r_tot=$($EVAL total "$tmp/r.prof")
	cols=("$label" "$w" "$native" "$spread" "$c_tot" "$r_tot" "$p_tot"
		"$(awk -v p="$p_tot" -v n="$native" 'BEGIN { printf "%.2f", p / n }')" "$range"
		"${calib:--}" "${lost:-?}"
	)
	# raw then compensated, against each reference present
	for ref in "$tmp/c.prof" "$s_file" "$a_file" "$t_file"; do
		if [[ $ref == - || ! -s $ref ]]; then
			cols+=("-" "-")
		else
			cols+=("$($EVAL tvd "$tmp/r.collapsed" "$ref")"
				"$($EVAL tvd "$tmp/p.collapsed" "$ref")")
		fi
	done
	if [[ $s_file != - && -s $tmp/c.prof ]]; then
		cols+=("$($EVAL tvd "$tmp/c.prof" "$s_file")")
	else
		cols+=("-")
	fi
	# cProfile against the truth: its own distortion
	if [[ $t_file != - && -s $tmp/c.prof ]]; then
		cols+=("$($EVAL tvd "$tmp/c.prof" "$t_file")")
	else
		cols+=("-")
	fi
	# how many samples the sigsample shares rest on (its noise)
	cols+=("$([[ $s_file != - ]] && awk '{n += $1} END {print n + 0}' "$s_file" || echo -)")
	printf '| %s ' "${cols[@]}"
	echo "|"
}

findings=""
[[ -f $OUT ]] && findings=$(sed -n '/^## Findings/,$p' "$OUT")
{
	echo "# Fidelity benchmark: do pyuprof's times say where the time goes?"
	echo
	echo "Machine: $(nproc) vCPUs (a VM shared with other work), kernel $(uname -r)."
	echo "Run $(date -u +%Y-%m-%dT%H:%MZ) by \`make bench-fidelity\` (bench/fidelity.sh);"
	echo "pyuprof $(git rev-parse --short HEAD 2>/dev/null || echo '?'), record options: \`${PYUPROF_ARGS:-(default)}\`."
	echo
	echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared)."
	echo
	echo "- **native**: the timed section (section()) without a profiler, min of $REPS runs, s;"
	echo "  **spread**: their slowest over their fastest, %: over $NOISY_PCT% (**noisy**) the machine"
	echo "  changed speed during them, and comp/native says more about the machine than pyuprof."
	echo "- **cProfile**, **raw**, **comp**: cumtime of section() under cProfile (enabled around"
	echo "  section() only, bench/fidelity/_fidelity.py; not for threads), and under"
	echo "  pyuprof without and with overhead compensation (of $RECS recordings, each record --raw"
	echo "  then report --no-compensation on it, the one whose comp is the median), s."
	echo "  **comp/native**: the budget is 1 +- 0.15 (compile, generators), +- 0.30 (fib);"
	echo "  **all $RECS**: its range over the recordings."
	echo "- **calib**: the calibration of that recording, µs a call / µs inside the callee;"
	echo "  **lost**: events lost in all $RECS recordings."
	echo "- **TVD**: total variation distance of per-function self-time shares within"
	echo "  section() (and the threads' worker()), matched by (file, name), pyuprof's from its"
	echo "  --collapsed stacks through section()/worker(): 0.3 = 30% of the time"
	echo "  in the wrong functions. Budget <= 0.10 on compile and generators. Against cProfile"
	echo "  (builtins off: a C call's time is its caller's), sigsample (SIGPROF every ms of CPU,"
	echo "  main thread only: no threads row) and austin 1.0.1 (Debian; 3.8-3.10 only)."
	echo
	echo "  **truth**: the known workload's own self times (bench/fidelity/known.py: each function's"
	echo "  own work timed natively on its own, times its calls); cProfile against it too."
	echo
	echo "| py | workload | native | spread | cProfile | raw | comp | comp/native | all $RECS | calib | lost | TVD cProf raw | TVD cProf comp | TVD sigsample raw | TVD sigsample comp | TVD austin raw | TVD austin comp | TVD truth raw | TVD truth comp | TVD cProf vs sigsample | TVD cProf vs truth | sigsample n |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for label in $PYTHONS; do
		for w in $WORKLOADS; do
			row "$label" "$w"
		done
	done
	echo
	if [[ -n $findings ]]; then
		echo "$findings"
	else
		echo "## Findings"
		echo
		echo "(to be written after a run)"
	fi
} >"$tmp/out.md"
cp "$tmp/out.md" "$OUT"
echo "bench-fidelity: wrote $OUT" >&2
