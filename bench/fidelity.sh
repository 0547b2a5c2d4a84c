#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-fidelity: do pyuprof's times say where the time goes? For each interpreter and
# workload (bench/fidelity/*.py, each with its timed section in section()): the section's
# native time (median of REPS plain runs), its time under cProfile and under pyuprof with and
# without overhead compensation (RECS recordings, each record --raw, then report
# --no-compensation on the same events; the one whose compensated time is the median is the
# row's, the others give the range: single recordings of a short section swing by 20-80%).
# The plain runs and the recordings take turns, and each one's time is scaled by the machine's
# speed next to its section (the row's fastest timing of bench/workloads/speed.py's call-free
# loop over the run's own; the test VM's host moves it between two speeds ~1.3x apart for
# seconds at a time; SPEED_RAW=1: no scaling). Then the share error (total variation distance
# of per-function self-time shares, bench/fidelity/evaluate.py) of pyuprof against cProfile
# (builtins off: a C call's time stays in its Python caller, i.e. builtins folded into their
# callers) and against samplers: bench/fidelity/sigsample.py (in-process SIGPROF, every
# interpreter, single-thread workloads) and Debian's austin 1.0.1 (3.8-3.10 only). Samplers run
# a larger size of the same workload (shares, not times, are compared). Writes
# bench/FIDELITY.md, or OUT: this run's table at the top (its date, machine, commit and
# interpreters first), and every hand-written "## " section after it kept ("## Findings", then
# "## History": the earlier runs, newest first, each moved there by hand under its date and
# commit).
# Settings: PYTHONS (labels as tests/helpers.bash: "3.8 3.10 3.12 3.13 deb3.11"), WORKLOADS
# ("fib generators compile recursion threads known"; also cdense: C calls, densely), REPS (5), RECS (5), PYUPROF_ARGS (extra
# record options, e.g. "--exits uretprobe"), OUT, NOISY_PCT (10: a native spread that marks a
# row noisy).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
# shellcheck source=tests/helpers.bash
source tests/helpers.bash 2>/dev/null || true
PYTHONS=${PYTHONS:-"3.8 3.10 3.12 3.13 deb3.11"}
WORKLOADS=${WORKLOADS:-"fib generators compile recursion threads known"}
REPS=${REPS:-5}
RECS=${RECS:-5}
PYUPROF_ARGS=${PYUPROF_ARGS:-}
OUT=${OUT:-bench/FIDELITY.md}
NOISY_PCT=${NOISY_PCT:-10}
PYUPROF=build/pyuprof
EVAL="python3 bench/fidelity/evaluate.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the code and interpreters measured, taken before the runs
# shellcheck disable=SC2086 # one word per label
stamp=$(bench_stamp $PYTHONS)

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
	cdense) [[ ${2:-} == big ]] && echo 200000 || echo 20000 ;;
	known) [[ ${2:-} == big ]] && echo 30000 || echo 3000 ;;
	recursion) [[ ${2:-} == big ]] && echo 600 || echo 30 ;;
	threads) [[ ${2:-} == big ]] && echo 200000 || echo 10000 ;;
	esac
}

# "elapsed S ref R" (bench/fidelity/_fidelity.py) -> "S R"
elapsed() { awk '/^elapsed/ {print $2, $4}'; }
# "offcpu S" and "elapsed S ..." -> the share of the section its thread was off the CPU, less
# WAITED s (a recording's stops while the ring was full: pyuprof takes them out of its times)
offcpu() {
	awk -v w="${1:-0}" '/^offcpu/ {o = $2 - w; if (o < 0) o = 0} /^elapsed/ {e = $2}
		END {printf "%.3f", (e > 0 ? o / e : 0)}'
}
# a recording's summary on stderr -> the seconds its threads stood while the ring was full
waited() { sed -n 's/.* waited \([0-9.]*\) s in all .*/\1/p' "$1" | head -1; }

budget() { # WORKLOAD -> comp/native's budget around 1 (none: 0)
	case $1 in
	fib | cdense) echo 0.30 ;;
	compile | generators) echo 0.15 ;;
	*) echo 0 ;;
	esac
}

# scaled SECONDS REF FAST: the seconds at the row's fastest speed (SPEED_RAW=1: as measured)
scaled() {
	awk -v s="$1" -v r="$2" -v f="$3" -v raw="${SPEED_RAW:-}" \
		'BEGIN { printf "%.6f", (raw == "" && r > 0 && f > 0 ? s * f / r : s) }'
}

row() { # LABEL WORKLOAD
	local label=$1 w=$2 py script n big times=() native i summary calib lost ref k f range
	local c_tot p_tot r_tot s_file="-" a_file="-" t_file="-" cols=() totals=() spread
	local c_ref="" t r refs fast speeds scaled_times p_ref out sh offs=() off_native off_budget
	local line lt lk lr lsh lw control
	py=$(py_path "$label") || { echo "bench-fidelity: no Python $label, skipped" >&2; return 0; }
	script=bench/fidelity/$w.py
	n=$(size "$w")
	big=$(size "$w" big)
	# cProfile of the section alone; not for threads: it profiles the calling thread only
	# (3.8-3.11), or all threads into one stack (3.12+)
	rm -f "$tmp/c.prof"
	[[ $w == threads ]] ||
		read -r _ c_ref < <(FIDELITY_CPROFILE=$tmp/c.prof "$py" "$script" "$n" | elapsed)
	# the plain runs and the recordings take turns, so that a stretch of time in which the
	# machine runs slower falls on both alike
	for ((i = 0; i < REPS || i < RECS; i++)); do
		if ((i < REPS)); then
			out=$("$py" "$script" "$n")
			read -r t r < <(elapsed <<<"$out")
			times+=("$t $r")
			offs+=("$(offcpu <<<"$out")")
			# (as measured, for comparisons at one speed: the loop slows 1.8x on the
			# test VM's slow vCPU, fib 1.4-1.6x)
			echo "bench-fidelity: $label $w plain run $i: $t s, loop $r s, off CPU" \
				"${offs[-1]}" >&2
		fi
		if ((i < RECS)); then
			k=$i
			# shellcheck disable=SC2086
			"$PYUPROF" record --top 0 $PYUPROF_ARGS -o "$tmp/p$k.prof" --raw "$tmp/p$k.raw" \
				--collapsed "$tmp/p$k.collapsed" -- "$py" "$script" "$n" \
				2>"$tmp/p$k.err" >"$tmp/p$k.out"
			grep -E '^pyuprof: .* lost events' "$tmp/p$k.err" >"$tmp/p$k.summary" || true
			read -r _ r < <(elapsed <"$tmp/p$k.out")
			totals+=("$($EVAL total "$tmp/p$k.prof") $k ${r:-0} $(offcpu "$(waited \
				"$tmp/p$k.err")" <"$tmp/p$k.out")")
			echo "bench-fidelity: $label $w recorded run $k: comp ${totals[-1]%% *} s," \
				"loop ${r:-0} s, off CPU ${totals[-1]##* }" >&2
		fi
	done
	# the loops of the plain runs and the recordings; the row's fastest speed is the shortest
	# loop of any run (cProfile's too: its loop runs outside enable())
	refs=$({
		printf '%s\n' "${times[@]}" | cut -d' ' -f2
		printf '%s\n' "${totals[@]}" | cut -d' ' -f3
	})
	fast=$(printf '%s\n%s\n' "$refs" "${c_ref:-0}" | sort -g | awk '$1 > 0 {print; exit}')
	speeds=$(awk -v f="$fast" '$1 > 0 {s = $1 / f; if (s > hi) hi = s} END {printf "%.2f", hi}' \
		<<<"$refs")
	scaled_times=()
	for t in "${times[@]}"; do
		# shellcheck disable=SC2086
		scaled_times+=("$(scaled $t "$fast")")
	done
	# the median of the runs on the CPU (off it for 10% of the section at most), if 3 or more
	native=$(for i in "${!scaled_times[@]}"; do echo "${scaled_times[$i]} ${offs[$i]}"; done |
		awk '$2 <= 0.10 {on[++n] = $1} {all[++m] = $1}
		     END { if (n < 3) { n = m; for (i = 1; i <= m; i++) on[i] = all[i] }
			   for (i = 1; i <= n; i++) print on[i] }' | sort -g |
		awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
	spread=$(printf '%s\n' "${scaled_times[@]}" | sort -g |
		awk -v z="$NOISY_PCT" '{a[NR] = $1} END {s = (a[NR] / a[1] - 1) * 100;
			printf "%.0f%%%s", s, (s > z ? " **noisy**" : "")}')
	# each recording's compensated section at the row's fastest speed
	for i in "${!totals[@]}"; do
		read -r t k r sh <<<"${totals[$i]}"
		totals[i]="$(scaled "$t" "$r" "$fast") $k $r $sh"
	done
	# a workload that knows its functions' true self times writes them (natively)
	if [[ $w == known ]]; then
		"$py" "$script" "$n" --truth "$tmp/t.truth" >/dev/null
		t_file=$tmp/t.truth
	fi
	# the recording whose compensated section is the median is the row's
	read -r _ k p_ref _ < <(printf '%s\n' "${totals[@]}" | sort -g | sed -n "$(((RECS + 1) / 2))p")
	range=$(printf '%s\n' "${totals[@]}" | sort -g | awk -v n="$native" \
		'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo / n, hi / n }')
	# each recording, on stderr (the log): its comp/native, loop, off-CPU share and calibration
	for line in "${totals[@]}"; do
		read -r lt lk lr lsh <<<"$line"
		lw=$(waited "$tmp/p$lk.err")
		echo "bench-fidelity: $label $w recording $lk: comp/native $(awk -v t="$lt" \
			-v n="$native" 'BEGIN { printf "%.2f", t / n }'), loop $lr s (fastest $fast)," \
			"off CPU $lsh (less ${lw:-0} s waited for pyuprof);" \
			"$(grep -o 'calibrated: [0-9.]* µs a call' "$tmp/p$lk.err" | head -1)" >&2
	done
	# the recordings off the budget, and of them those off the CPU for over 10% of the section
	off_budget=$(printf '%s\n' "${totals[@]}" | awk -v n="$native" -v b="$(budget "$w")" \
		'b > 0 { r = $1 / n; if (r < 1 - b || r > 1 + b) { k++; if ($4 > 0.10) j++ } }
		 END { if (b > 0) printf "%d (%d off CPU)", k, j; else printf "-" }')
	# the control: each plain run over the median of the others, counted as the recordings
	# are (how often the truth itself is off by the budget on this machine)
	control=$(printf '%s\n' "${scaled_times[@]}" | awk -v b="$(budget "$w")" '
		function med(v, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
		{ a[NR] = $1 }
		END { if (NR < 3 || b == 0) { printf "-"; exit }
			for (i = 1; i <= NR; i++) { m = 0
				for (j = 1; j <= NR; j++) if (j != i) o[++m] = a[j]
				r[i] = a[i] / med(o, m); if (r[i] >= 1 - b && r[i] <= 1 + b) k++ }
			printf "%d of %d, %.2f-%.2f", k, NR, min(r, NR), max(r, NR) }
		function min(v, n,   i, x) { x = v[1]; for (i = 2; i <= n; i++) if (v[i] < x) x = v[i]; return x }
		function max(v, n,   i, x) { x = v[1]; for (i = 2; i <= n; i++) if (v[i] > x) x = v[i]; return x }')
	off_native=$(printf '%s\n' "${offs[@]}" | sort -g | sed -n "$(((REPS + 1) / 2))p" |
		awk '{ printf "%.0f%%", $1 * 100 }')
	# lost events: of every recording
	lost=$(for ((i = 0; i < RECS; i++)); do
		sed -n 's/.* \([0-9]*\) lost events.*/\1/p' "$tmp/p$i.summary"
	done | awk '{ n += $1 } END { print NR ? n : "?" }')
	for f in prof raw collapsed summary err out; do
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
	[[ -f $tmp/c.prof ]] && c_tot=$(scaled "$($EVAL total "$tmp/c.prof")" "${c_ref:-0}" "$fast")
	p_tot=$(scaled "$($EVAL total "$tmp/p.prof")" "$p_ref" "$fast")
	r_tot=$(scaled "$($EVAL total "$tmp/r.prof")" "$p_ref" "$fast")
	cols=("$label" "$w" "$native" "$spread" "$off_native" "$speeds" "$c_tot" "$r_tot" "$p_tot"
		"$(awk -v p="$p_tot" -v n="$native" 'BEGIN { printf "%.2f", p / n }')" "$range"
		"$off_budget" "$control" "${calib:--}" "${lost:-?}"
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
[[ -f $OUT ]] && findings=$(sed -n '/^## /,$p' "$OUT")
{
	echo "# Fidelity benchmark: do pyuprof's times say where the time goes?"
	echo
	echo "Machine: $(nproc) vCPUs (a VM shared with other work), kernel $(uname -r)."
	echo "Run $(date -u +%Y-%m-%dT%H:%MZ) by \`make bench-fidelity\` (bench/fidelity.sh);"
	echo "$stamp; record options: \`${PYUPROF_ARGS:-(default)}\`."
	echo
	echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared)."
	echo
	echo "- **native**: the timed section (section()) without a profiler, median of the $REPS runs"
	echo "  that were on the CPU (off it for 10% of the section at most; all $REPS if fewer than 3), s;"
	echo "  **spread**: their slowest over their fastest, %: over $NOISY_PCT% (**noisy**) the machine"
	echo "  changed speed during them, and comp/native says more about the machine than pyuprof."
	echo "  **off CPU**: of their section's wall time, the share its thread did not run (median:"
	echo "  another process had the CPU; every wall-clock time of the section holds it too); of a"
	echo "  recording's, less the time pyuprof says its threads waited while the ring was full"
	echo "  (taken out of its times)."
	if [[ -z ${SPEED_RAW:-} ]]; then
		echo "  The plain runs and the recordings take turns, and every time in the table (native,"
		echo "  cProfile, raw, comp) is scaled by the machine's speed next to its section: times the"
		echo "  row's fastest timing of a call-free loop over the run's own (bench/workloads/speed.py,"
		echo "  timed just before and after section()). **speed**: the row's slowest loop over its"
		echo "  fastest, the most a run was scaled by (the host moves this VM between two speeds"
		echo "  ~1.3x apart for seconds at a time)."
	else
		echo "  Times as measured (SPEED_RAW=1); **speed**: the row's slowest call-free loop"
		echo "  over its fastest."
	fi
	echo "- **cProfile**, **raw**, **comp**: cumtime of section() under cProfile (enabled around"
	echo "  section() only, bench/fidelity/_fidelity.py; not for threads), and under"
	echo "  pyuprof without and with overhead compensation (of $RECS recordings, each record --raw"
	echo "  then report --no-compensation on it, the one whose comp is the median), s."
	echo "  **comp/native**: the budget is 1 +- 0.15 (compile, generators), +- 0.30 (fib, cdense);"
	echo "  **all $RECS**: its range over the recordings; **off budget**: how many of them were outside"
	echo "  the budget, and of those how many were off the CPU for over 10% of their section."
	echo "  **native vs native**: the control, the truth's own noise: each plain run over the median"
	echo "  of the other $((REPS - 1)), scaled alike; how many of the $REPS were within the budget,"
	echo "  and their range (a budget no set of plain runs meets is not pyuprof's to meet here)."
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
	echo "| py | workload | native | spread | off CPU | speed | cProfile | raw | comp | comp/native | all $RECS | off budget | native vs native | calib | lost | TVD cProf raw | TVD cProf comp | TVD sigsample raw | TVD sigsample comp | TVD austin raw | TVD austin comp | TVD truth raw | TVD truth comp | TVD cProf vs sigsample | TVD cProf vs truth | sigsample n |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
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
