#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: the per-call cost of recording, for each interpreter and workload, every mode in
# one run so that ratios compare like with like (absolute times on a shared VM are noise), the
# modes taking turns (each repetition runs every mode once).
# Modes: native; switch (3.11+ inlining off, no probe); entry / ret / both (counting-only
# probes at the entry and ret sites, bench/bare); exit (entry + the USDT frame exit that
# pyuprof uses instead of ret sites on Debian's 3.11; run there only, elsewhere it is both);
# uretprobe (entry uprobe + uretprobe); tramp (pyuprof's trampoline with counting-only
# programs on its two nops: the floor of that design); stage (the staging anchor) and
# stagefloor (the batch mode with its flush only counting); pyuprof (its default: the batch
# mode); pyuprof-coldring (the same, its ring buffer's pages not written before the
# recording: bpf/ring_warm.bpf.h); pyuprof-trap (its flush probe trapping); pyuprof-uret,
# pyuprof-ret (--exits uretprobe, ret), pyuprof-tramp (--exits trampoline), pyuprof-usdt
# (--exits usdt: Debian's 3.11, its default before the batch mode saw its inline __getitem__
# calls); pyuprof-nobuiltins (record --no-builtins: no C functions); pyuprof-base (the pyuprof
# at $PYUPROF_BASE, e.g. main's build, to compare a branch with: skipped if unset); cProfile
# (builtins=True, its default, as pyuprof's default) and cprofile-nobuiltins. Then one
# more run of the floor and of pyuprof with kernel.bpf_stats_enabled, for the time spent in the
# BPF programs themselves (not in the timed runs: the stats add two clock reads per probe).
# Then the consumer alone on a replayed raw recording (bench/replay) and the attach latency
# (bench/attach.sh). Writes bench/RESULTS.md: this run at the top (its date, machine, commit
# and interpreters first), then everything from its hand-written "## Findings" on, kept (the
# findings, and "## History": the runs before, each moved there by hand under its date and
# commit). REPS (3), PYS (all present), WORKLOADS (fib generators compile deep many; also
# cdense: C calls, densely), MODES,
# CELLS_ONLY (set: the cells' table only, above the findings), COMPILE_FILES (2: the stdlib modules the compile
# workload compiles) and COMPILE_ROUNDS (1: the timed rounds in each run of the compile
# workload, of which the median is the run's: bench/workloads/compile.py) can be set. The
# 10-minute memory run is separate: make bench-soak (bench/soak.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
source tests/helpers.bash 2>/dev/null || true
REPS=${REPS:-3}
PYS=${PYS:-"3.8 3.9 3.10 3.11 3.12 3.13 3.14 3.15 deb3.11"}
WORKLOADS=${WORKLOADS:-"fib generators compile deep many"}
COMPILE_FILES=${COMPILE_FILES:-2}
export BENCH_COMPILE_ROUNDS=${COMPILE_ROUNDS:-1}
out=bench/RESULTS.md
tmp=$(mktemp -d)
# finish FILE [NOTE]: this run's tables replace the file's top; the hand-written findings and
# history at its end ("## Findings" on) are kept from one run to the next, a CELLS_ONLY run too
finish() {
	if [[ -f $1 ]] && grep -q '^## Findings' "$1"; then
		echo >>"$1.tmp"
		sed -n '/^## Findings/,$p' "$1" >>"$1.tmp"
	fi
	mv "$1.tmp" "$1"
	echo "bench: wrote $1${2:+ $2}"
}
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; rm -rf "$tmp"' EXIT

[[ $(id -u) -eq 0 ]] || { echo "bench: run as root (probes)" >&2; exit 1; }
# what the run needs, checked before an hour of runs rather than at its end
for f in build/pyuprof build/bench/bare build/bench/replay; do
	[[ -x $f ]] || { echo "bench: $f is not built (make bench-tools)" >&2; exit 1; }
done
# A cell whose runs spread more than this (max over min, %) was measured on a machine that
# changed speed meanwhile: its per-call figures are not resolved, and the table says so.
NOISY_PCT=${NOISY_PCT:-10}

workload_cmd() { # WORKLOAD -> argv after the interpreter
	case $1 in
	fib) echo "bench/workloads/fib.py 24" ;;
	generators) echo "bench/workloads/generators.py 40000" ;;
	compile) echo "bench/workloads/compile.py $COMPILE_FILES" ;;
	deep) echo "bench/workloads/deep.py 100" ;;
	many) echo "bench/workloads/many_functions.py 20000" ;;
	cdense) echo "bench/workloads/cdense.py 100000" ;;
	esac
}

# one timed run: prints "seconds calls"
run_mode() {
	local mode=$1 py=$2 w=$3 line
	# shellcheck disable=SC2046
	case $mode in
	native) line=$("$py" $(workload_cmd "$w")) ;;
	switch) line=$(build/bench/bare none -- "$py" $(workload_cmd "$w")) ;;
	entry | ret | both | exit | preret | uretprobe)
		line=$(build/bench/bare "$mode" -- "$py" $(workload_cmd "$w")) ;;
	pyuprof) line=$(build/pyuprof record -q -o "$tmp/p.prof" -- "$py" $(workload_cmd "$w")) ;;
	pyuprof-nobuiltins)
		line=$(build/pyuprof record -q --no-builtins -o "$tmp/p.prof" -- \
			"$py" $(workload_cmd "$w")) ;;
	pyuprof-base) # another build, e.g. main's: same run, same cell
		[[ -n ${PYUPROF_BASE:-} ]] || return 0
		line=$("$PYUPROF_BASE" record -q -o "$tmp/p.prof" -- "$py" $(workload_cmd "$w")) ;;
	pyuprof-uret | pyuprof-ret | pyuprof-tramp | pyuprof-usdt)
		line=$(build/pyuprof record -q --exits "$(exits_of "$mode")" -o "$tmp/p.prof" -- \
			"$py" $(workload_cmd "$w")) ;;
	pyuprof-coldring) # the default without its ring's pages written first (ring_warm.bpf.h)
		line=$(PYUPROF_BENCH_NO_RING_WARM=1 build/pyuprof record -q -o "$tmp/p.prof" -- \
			"$py" $(workload_cmd "$w")) ;;
	pyuprof-trap) # the batch with a flush probe that traps (kernels before 6.18)
		line=$(PYUPROF_BENCH_FLUSH_TRAP=1 build/pyuprof record -q -o "$tmp/p.prof" -- \
			"$py" $(workload_cmd "$w")) ;;
	stagefloor) # the batch as built, its flush probe counting only: no copy, no consumer
		line=$(PYUPROF_BENCH_COUNT_ONLY=1 build/pyuprof record -q --exits batch \
			-o "$tmp/p.prof" -- "$py" $(workload_cmd "$w") 2>/dev/null || true) ;;
	stage) # the staging anchor (../shared/anchors/stage) with a counting probe on its flush
		[[ -n $stage_so ]] || return 0
		line=$(STAGE_SO="$stage_so" BARE_STAGE="$stage_so:$stage_flush" build/bench/bare stage \
			-- "$py" bench/with_stage.py $(workload_cmd "$w")) ;;
	tramp) # no call is recorded: pyuprof says so and exits 1
		line=$(PYUPROF_BENCH_COUNT_ONLY=1 build/pyuprof record -q --exits trampoline \
			-o "$tmp/p.prof" -- "$py" $(workload_cmd "$w") 2>/dev/null || true) ;;
	cprofile) line=$("$py" tests/tools/cprofile_run.py -o "$tmp/c.prof" $(workload_cmd "$w")) ;;
	cprofile-nobuiltins)
		line=$("$py" tests/tools/cprofile_run.py --no-builtins -o "$tmp/c.prof" \
			$(workload_cmd "$w")) ;;
	esac
	awk '/^elapsed/ {print $2, $4, $6}' <<<"$line"
}

# The staging anchor, the floor of the batch design (../shared/anchors/stage/README.md), as a
# shared object, and the file offset of its flush nop (where bare's counting probe goes).
stage_so="" stage_flush=""
# (SHARED: where shared/ is, for a worktree that is not beside it)
anchor=${SHARED:-../shared}/anchors/stage/stage.S
if [[ -f $anchor ]] && gcc -shared -nostdlib -o "$tmp/stage.so" "$anchor"; then
	stage_so=$tmp/stage.so
	stage_flush=$(python3 - "$stage_so" <<'PY'
import subprocess, sys
out = subprocess.run(["readelf", "-sSW", sys.argv[1]], capture_output=True, text=True).stdout
secs = {}
for line in out.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[0].startswith("[") and f[0].endswith("]") and f[1] == ".text":
        secs["text"] = (int(f[3], 16), int(f[4], 16))
    if len(f) == 8 and f[7] == "tramp_flush":
        sym = int(f[1], 16)
addr, off = secs["text"]
print(hex(sym - addr + off))
PY
)
else
	echo "bench: no staging anchor at $anchor (SHARED: the shared folder): stage and stagefloor left out" >&2
fi

exits_of() { # bench mode -> record --exits
	case $1 in
	pyuprof-uret) echo uretprobe ;;
	pyuprof-ret) echo ret ;;
	pyuprof-usdt) echo usdt ;;
	*) echo trampoline ;;
	esac
}

# BPF program time per Python call (ns): the floor's counting programs (bare at the exit
# points on deb3.11, the trampoline's elsewhere), then pyuprof; and pyuprof's lost events
bpf_per_call() {
	local py=$2 w=$3 calls b p
	# (one compile round: the calls it divides by are one round's)
	local BENCH_COMPILE_ROUNDS=1
	sysctl -qw kernel.bpf_stats_enabled=1
	# shellcheck disable=SC2046
	if [[ $1 == tramp ]]; then
		b=$(PYUPROF_BENCH_COUNT_ONLY=1 build/pyuprof record -v --top=0 --exits trampoline \
			-o "$tmp/p.prof" -- "$py" $(workload_cmd "$w") 2>&1 || true)
	else
		b=$(build/bench/bare "$1" -- "$py" $(workload_cmd "$w"))
	fi
	# shellcheck disable=SC2046
	p=$(build/pyuprof record -v --top=0 -o "$tmp/p.prof" -- "$py" $(workload_cmd "$w") 2>&1)
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	calls=$(awk '/^elapsed/ {print $4}' <<<"$b")
	{
		awk '/^bpf_runs/ {print $2, $4}' <<<"$b"
		sed -n 's/.*BPF: \([0-9]*\) probe runs, \([0-9.]*\) ns each.*/\1 \2/p' <<<"$b"
	} | awk -v c="$calls" 'NR == 1 {printf "%.0f ", $1 * $2 / c}'
	sed -n 's/.*BPF: \([0-9]*\) probe runs, \([0-9.]*\) ns each.*/\1 \2/p' <<<"$p" |
		awk -v c="$calls" '{printf "%.0f ", $1 * $2 / c}'
	sed -n 's/.* \([0-9]*\) lost events.*/\1/p' <<<"$p"
}

stats() { # values... -> "min median spread", the spread (max over min) in %
	printf '%s\n' "$@" | sort -g |
		awk '{a[NR]=$1} END {printf "%s %s %.0f\n", a[1], a[int((NR+1)/2)], (a[NR] / a[1] - 1) * 100}'
}

{
	echo "# pyuprof overhead benchmark"
	echo
	echo "Machine: $(nproc) vCPUs (a VM shared with other work), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo),"
	echo "kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
	echo "Run $(date -u +%Y-%m-%dT%H:%MZ), $REPS repetitions per cell, min and median; compile.py $COMPILE_FILES, the median of $BENCH_COMPILE_ROUNDS round(s) in each run."
	# shellcheck disable=SC2086 # one word per label
	echo "$(bench_stamp $PYS)."
	echo "The modes take turns: each repetition runs every mode once, one after the other."
	if [[ -z ${SPEED_RAW:-} ]]; then
		echo "Each run's time is scaled by the machine's speed next to its section: times the cell's"
		echo "fastest timing of a call-free loop over the run's own (bench/workloads/speed.py; the"
		echo "host moves this VM between two speeds ~1.3x apart for seconds at a time). min, median,"
		echo "ns/call and spread are scaled, cProfile's too (the loop runs in C since 2026-11-28: a"
		echo "profile function set slows it no more); the last column is the unscaled median"
		echo "(SPEED_RAW=1: no scaling)."
	fi
	echo "Per-call cost = (time - native time) / calls of the timed section, in ns (medians)."
	echo "**pyuprof/stage** = pyuprof's per-call cost (its default: the batch mode) over the staging"
	echo "anchor's (../shared/anchors/stage: TSC-stamped records, a counting probe per 256), same run."
	echo "**pyuprof/cprofile** = pyuprof's extra time (its default, C functions recorded) over"
	echo "cProfile's (builtins=True), same run; **pyuprof-nobuiltins/base** = --no-builtins' extra time"
	echo "over \$PYUPROF_BASE's (when set)."
	echo "**pyuprof-tramp/bare** = the per-call trampoline's cost over counting-only probes at the same"
	echo "points, same run: the trampoline's nops (tramp), on deb3.11 the entry and USDT exit (exit)."
	echo "stagefloor: the batch as built with its flush probe counting only (no copy, no consumer);"
	echo "pyuprof-trap: the batch with a flush probe that traps (no nop optimization, kernels < 6.18)."
	echo "pyuprof-coldring: the default with its ring buffer's pages not written before the recording."
	echo "pyuprof records C functions by default (issue 39), as cProfile's default builtins=True;"
	echo "pyuprof-nobuiltins and cprofile-nobuiltins: without them; pyuprof-base: \$PYUPROF_BASE's"
	echo "build (${PYUPROF_BASE:-not set}). calls: the section's calls as cProfile counts them by"
	echo "default (cdense: its C calls; the other workloads make next to none in their sections)."
	echo "BPF ns/call: time inside the BPF programs per Python call (kernel.bpf_stats_enabled,"
	echo "separate run), counting-only at the same points vs pyuprof, and the events pyuprof lost in"
	echo "that run (default settings). Modes: see bench/run.sh."
	echo "spread: the cell's slowest run over its fastest, in %; over $NOISY_PCT% it says **noisy**, and"
	echo "a native cell so noisy leaves its workload's per-call figures and ratios unresolved."
	echo
	echo "| python | workload | calls | native ms | mode | min ms | median ms | ns/call | spread | unscaled median ms |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$out.tmp"

noisy=()
for label in $PYS; do
	py=$(py_path "$label") || continue
	modes=${MODES:-"native switch both uretprobe tramp stage stagefloor pyuprof pyuprof-coldring pyuprof-trap pyuprof-tramp pyuprof-uret pyuprof-ret cprofile"}
	bare=tramp
	if [[ $label == deb3.11 ]]; then # the build with USDT: pyuprof's exits are function__return
		modes=${MODES:-"native switch both exit uretprobe tramp stage stagefloor pyuprof pyuprof-coldring pyuprof-trap pyuprof-tramp pyuprof-usdt cprofile"}
		bare="exit"
	fi
	for w in $WORKLOADS; do
		declare -A med=() runs=() refs=() raw=()
		calls=0 rnote=""
		# (the USDT exit is Debian's 3.11's)
		cell_modes=()
		for mode in $modes; do
			[[ $mode == pyuprof-usdt && $label != deb3.11 ]] && continue
			[[ $mode == pyuprof-base && -z ${PYUPROF_BASE:-} ]] && continue
			[[ $mode == stage* && -z $stage_so ]] && continue # (said once, above)
			cell_modes+=("$mode")
		done
		# In rounds: each repetition runs every mode once, so that a stretch of time in which
		# the VM runs slower (its host busy) slows every mode alike, not the few runs of one.
		for ((r = 0; r < REPS; r++)); do
			for mode in "${cell_modes[@]}"; do
				read -r secs calls ref < <(run_mode "$mode" "$py" "$w")
				runs[$mode]+=" $secs"
				refs[$mode]+=" ${ref:-0}"
			done
		done
		# each run's section scaled by the machine's speed next to it (the workload's call-free
		# loop, bench/workloads/speed.py): times the cell's fastest loop over the run's own.
		# (the loop runs in C: a profile function set, cProfile's or the page's for C functions,
		# which sends every instruction down the slower path on 3.8-3.11, does not slow it)
		# shellcheck disable=SC2086
		fast=$(for mode in "${cell_modes[@]}"; do
			printf '%s\n' ${refs[$mode]}
		done | sort -g | awk '$1 > 0 {print; exit}')
		for mode in "${cell_modes[@]}"; do
			# shellcheck disable=SC2086
			read -r _ raw[$mode] _ < <(stats ${runs[$mode]})
			if [[ -z ${SPEED_RAW:-} && -n $fast ]]; then
				# shellcheck disable=SC2086
				runs[$mode]=$(paste -d' ' <(printf '%s\n' ${runs[$mode]}) \
					<(printf '%s\n' ${refs[$mode]}) |
					awk -v f="$fast" '{printf " %.6f", ($2 > 0 ? $1 * f / $2 : $1)}')
			fi
		done
		for mode in "${cell_modes[@]}"; do
			# shellcheck disable=SC2086
			read -r mn md spread < <(stats ${runs[$mode]})
			med[$mode]=$md
			per=$(awk -v m="$md" -v n="${med[native]}" -v c="$calls" \
				'BEGIN {printf "%.0f", (m - n) * 1e9 / c}')
			note=$spread%
			if ((spread > NOISY_PCT)); then
				note="$spread% **noisy**"
				if [[ $mode == native ]]; then
					noisy+=("$label/$w")
					rnote="native **noisy**"
				fi
			fi
			printf '| %s | %s | %s | %.1f | %s | %.1f | %.1f | %s | %s | %.1f |\n' "$label" "$w" \
				"$calls" "$(awk -v n="${med[native]}" 'BEGIN {print n*1000}')" "$mode" \
				"$(awk -v v="$mn" 'BEGIN {print v*1000}')" \
				"$(awk -v v="$md" 'BEGIN {print v*1000}')" "$per" "$note" \
				"$(awk -v v="${raw[$mode]}" 'BEGIN {print v*1000}')" >>"$out.tmp"
		done
		# the batch (pyuprof's default) over the staging anchor's floor, the per-call
		# trampoline over its counting-only probes (the floors of the two designs)
		if [[ -n ${med[stage]:-} && -n ${med[pyuprof]:-} ]]; then
			awk -v p="${med[pyuprof]}" -v b="${med[stage]}" -v n="${med[native]}" \
				-v l="$label" -v w="$w" -v z="$rnote" 'BEGIN {printf "| %s | %s | | | **pyuprof/stage** | | | **%.2f** | %s |\n",
				l, w, (p - n) / (b - n), z}' >>"$out.tmp"
		fi
		# the extra time of pyuprof's default over cProfile's (both with C functions), of
		# --no-builtins over the base build's (issue 39: at most 1, and 1)
		if [[ -n ${med[pyuprof]:-} && -n ${med[cprofile]:-} ]]; then
			awk -v p="${med[pyuprof]}" -v b="${med[cprofile]}" -v n="${med[native]}" \
				-v l="$label" -v w="$w" -v z="$rnote" 'BEGIN {printf "| %s | %s | | | **pyuprof/cprofile** | | | **%.2f** | %s |\n",
				l, w, (p - n) / (b - n), z}' >>"$out.tmp"
		fi
		if [[ -n ${med[pyuprof-nobuiltins]:-} && -n ${med[pyuprof-base]:-} ]]; then
			awk -v p="${med[pyuprof-nobuiltins]}" -v b="${med[pyuprof-base]}" -v n="${med[native]}" \
				-v l="$label" -v w="$w" -v z="$rnote" 'BEGIN {printf "| %s | %s | | | **pyuprof-nobuiltins/base** | | | **%.2f** | %s |\n",
				l, w, (p - n) / (b - n), z}' >>"$out.tmp"
		fi
		if [[ -n ${med[pyuprof-tramp]:-} && -n ${med[$bare]:-} ]]; then
			awk -v p="${med[pyuprof-tramp]}" -v b="${med[$bare]}" -v n="${med[native]}" \
				-v l="$label" -v w="$w" -v z="$rnote" 'BEGIN {printf "| %s | %s | | | **pyuprof-tramp/bare** | | | **%.2f** | %s |\n",
				l, w, (p - n) / (b - n), z}' >>"$out.tmp"
		fi
		if [[ -z ${NO_BPF_STATS:-} ]]; then
			read -r bb bp lost < <(bpf_per_call "$bare" "$py" "$w")
			printf '| %s | %s | | | BPF ns/call bare, pyuprof; lost events | | | %s, %s; %s | |\n' \
				"$label" "$w" "$bb" "$bp" "$lost" >>"$out.tmp"
		fi
		unset med runs refs raw
	done
done

if ((${#noisy[@]})); then
	{
		echo
		echo "**Noisy run**: native runs spread over $NOISY_PCT% in ${#noisy[@]} cell(s) (${noisy[*]}):"
		echo "the machine changed speed during them, and their per-call figures are not resolved."
	} >>"$out.tmp"
	echo "bench: native runs spread over $NOISY_PCT% in: ${noisy[*]} (a noisy machine)" >&2
fi

# CELLS_ONLY=1: the cells' table alone (the sections below take a quarter of an hour more)
if [[ -n ${CELLS_ONLY:-} ]]; then
	finish "$out" "(the cells only)"
	exit 0
fi

# where the exit probe can sit: fib only, per-call ns over native (median of REPS)
{
	echo
	echo "## Exit probe placement (fib, ns per call over native, median of $REPS)"
	echo
	echo "entry: the entry probe alone. ret: + each ret (single-stepped). preret: + the instruction"
	echo "before each ret instead (pop %r15, single-stepped too). exit: + USDT function__return"
	echo "(a nop; Debian's 3.11 only). uretprobe: + a uretprobe (no trap on the way back, but the"
	echo "kernel drops returns past 64 nested calls: not correct for pyuprof)."
	echo
	echo "| python | entry | both (entry + ret) | preret | exit | uretprobe |"
	echo "|---|---|---|---|---|---|"
} >>"$out.tmp"
for label in $PYS; do
	py=$(py_path "$label") || continue
	row="| $label"
	read -r _ nat < <(for ((r = 0; r < REPS; r++)); do run_mode native "$py" fib; done |
		awk '{print $1}' | sort -g | awk '{a[NR]=$1} END {print "x", a[int((NR+1)/2)]}')
	for mode in entry both preret exit uretprobe; do
		if [[ $mode == exit && $label != deb3.11 ]]; then
			row="$row | -"
			continue
		fi
		vals=()
		for ((r = 0; r < REPS; r++)); do
			read -r secs calls < <(run_mode "$mode" "$py" fib 2>/dev/null) || true
			[[ -n ${secs:-} ]] && vals+=("$secs")
			secs=
		done
		if ((${#vals[@]})); then
			read -r _ md _ < <(stats "${vals[@]}")
			row="$row | $(awk -v m="$md" -v n="$nat" -v c="$calls" 'BEGIN {printf "%.0f", (m - n) * 1e9 / c}')"
		else
			row="$row | n/a"
		fi
	done
	echo "$row |" >>"$out.tmp"
done

# the consumer alone: a raw recording of the compile workload, replayed
if py=$(py_path 3.12); then
	build/pyuprof record -q --raw="$tmp/c.raw" -o "$tmp/c.prof" -- "$py" bench/workloads/compile.py 2 \
		>/dev/null
	read -r _ records _ _ _ gz _ hs _ eps _ gzeps < <(build/bench/replay "$tmp/c.raw" 5)
	t0=$(date +%s.%N)
	build/pyuprof report -q -o "$tmp/r.prof" "$tmp/c.raw"
	t1=$(date +%s.%N)
	{
		echo
		echo "## Consumer on replay (3.12 compile workload, --raw)"
		echo
		echo "| records | handling s | handling events/s | gunzip s | gunzip events/s | pyuprof report events/s |"
		echo "|---|---|---|---|---|---|"
		awk -v r="$records" -v hs="$hs" -v eps="$eps" -v gz="$gz" -v g="$gzeps" -v t0="$t0" -v t1="$t1" \
			'BEGIN {printf "| %d | %.3f | %.1f M | %.3f | %.1f M | %.1f M |\n", r, hs, eps/1e6, gz, g/1e6, r/(t1-t0)/1e6}'
	} >>"$out.tmp"
fi
{
	echo
	echo "## Attach latency (record -p on a target calling fib flat out; s, min/median of 5)"
	echo
	REPS=5 bench/attach.sh
} >>"$out.tmp"
finish "$out"
