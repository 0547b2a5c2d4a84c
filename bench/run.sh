#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: the per-call cost of recording, for each interpreter and workload, every mode in
# one run so that ratios compare like with like (absolute times on a shared VM are noise).
# Modes: native; switch (3.11+ inlining off, no probe); entry / ret / both (counting-only
# probes at the entry and ret sites, bench/bare); exit (entry + the USDT frame exit that
# pyuprof uses instead of ret sites on Debian's 3.11; run there only, elsewhere it is both);
# uretprobe (entry uprobe + uretprobe); tramp (pyuprof's trampoline with counting-only
# programs on its two nops: the floor of that design); pyuprof (its default exits: the
# trampoline, Debian's 3.11 its USDT exit); pyuprof-uret, pyuprof-ret (--exits uretprobe,
# ret), pyuprof-tramp (Debian's 3.11: --exits trampoline); cProfile. Then one more run of the
# floor and of pyuprof with kernel.bpf_stats_enabled, for the time spent in the BPF programs
# themselves (not in the timed runs: the stats add two clock reads per probe). Then the consumer alone on a replayed raw recording (bench/replay) and the attach
# latency (bench/attach.sh). Writes bench/RESULTS.md (keeping its hand-written "## Findings"
# section). REPS (3), PYS (all present), WORKLOADS (fib generators compile deep), MODES and
# COMPILE_FILES (2: the stdlib modules
# the compile workload compiles) can be set. The 10-minute memory run is separate: make
# bench-soak (bench/soak.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/helpers.bash 2>/dev/null || true
REPS=${REPS:-3}
PYS=${PYS:-"3.8 3.9 3.10 3.11 3.12 3.13 deb3.11"}
WORKLOADS=${WORKLOADS:-"fib generators compile deep"}
COMPILE_FILES=${COMPILE_FILES:-2}
out=bench/RESULTS.md
tmp=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; rm -rf "$tmp"' EXIT

[[ $(id -u) -eq 0 ]] || { echo "bench: run as root (probes)" >&2; exit 1; }

workload_cmd() { # WORKLOAD -> argv after the interpreter
	case $1 in
	fib) echo "bench/workloads/fib.py 24" ;;
	generators) echo "bench/workloads/generators.py 40000" ;;
	compile) echo "bench/workloads/compile.py $COMPILE_FILES" ;;
	deep) echo "bench/workloads/deep.py 100" ;;
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
	pyuprof-uret | pyuprof-ret | pyuprof-tramp)
		line=$(build/pyuprof record -q --exits "$(exits_of "$mode")" -o "$tmp/p.prof" -- \
			"$py" $(workload_cmd "$w")) ;;
	tramp) # no call is recorded: pyuprof says so and exits 1
		line=$(PYUPROF_BENCH_COUNT_ONLY=1 build/pyuprof record -q --exits trampoline \
			-o "$tmp/p.prof" -- "$py" $(workload_cmd "$w") 2>/dev/null || true) ;;
	cprofile) line=$("$py" tests/tools/cprofile_run.py -o "$tmp/c.prof" $(workload_cmd "$w")) ;;
	esac
	awk '/^elapsed/ {print $2, $4}' <<<"$line"
}

exits_of() { # bench mode -> record --exits
	case $1 in
	pyuprof-uret) echo uretprobe ;;
	pyuprof-ret) echo ret ;;
	*) echo trampoline ;;
	esac
}

# BPF program time per Python call (ns): the floor's counting programs (bare at the exit
# points on deb3.11, the trampoline's elsewhere), then pyuprof; and pyuprof's lost events
bpf_per_call() {
	local py=$2 w=$3 calls b p
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

stats() { # values... -> "min median"
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[1], a[int((NR+1)/2)]}'
}

{
	echo "# pyuprof overhead benchmark"
	echo
	echo "Machine: $(nproc) vCPUs (a VM shared with other work), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo),"
	echo "kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
	echo "Run $(date -u +%Y-%m-%dT%H:%MZ), $REPS repetitions per cell, min and median; compile.py $COMPILE_FILES."
	echo "Per-call cost = (time - native time) / calls of the timed section, in ns (medians)."
	echo "**pyuprof/bare** = pyuprof's per-call cost over counting-only probes at the same points,"
	echo "same run: the trampoline's nops (tramp), on deb3.11 the entry and USDT exit (exit)."
	echo "BPF ns/call: time inside the BPF programs per Python call (kernel.bpf_stats_enabled,"
	echo "separate run), counting-only at the same points vs pyuprof, and the events pyuprof lost in"
	echo "that run (default settings). Modes: see bench/run.sh."
	echo
	echo "| python | workload | calls | native ms | mode | min ms | median ms | ns/call |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$out.tmp"

for label in $PYS; do
	py=$(py_path "$label") || continue
	modes=${MODES:-"native switch both uretprobe tramp pyuprof pyuprof-uret pyuprof-ret cprofile"}
	bare=tramp
	if [[ $label == deb3.11 ]]; then # the build with USDT: pyuprof's exits are function__return
		modes=${MODES:-"native switch both exit uretprobe tramp pyuprof pyuprof-tramp cprofile"}
		bare="exit"
	fi
	for w in $WORKLOADS; do
		declare -A med=()
		calls=0
		for mode in $modes; do
			vals=()
			for ((r = 0; r < REPS; r++)); do
				read -r secs calls < <(run_mode "$mode" "$py" "$w")
				vals+=("$secs")
			done
			read -r mn md < <(stats "${vals[@]}")
			med[$mode]=$md
			per=$(awk -v m="$md" -v n="${med[native]}" -v c="$calls" \
				'BEGIN {printf "%.0f", (m - n) * 1e9 / c}')
			printf '| %s | %s | %s | %.1f | %s | %.1f | %.1f | %s |\n' "$label" "$w" \
				"$calls" "$(awk -v n="${med[native]}" 'BEGIN {print n*1000}')" "$mode" \
				"$(awk -v v="$mn" 'BEGIN {print v*1000}')" \
				"$(awk -v v="$md" 'BEGIN {print v*1000}')" "$per" >>"$out.tmp"
		done
		read -r bb bp lost < <(bpf_per_call "$bare" "$py" "$w")
		awk -v p="${med[pyuprof]}" -v b="${med[$bare]}" -v n="${med[native]}" -v l="$label" \
			-v w="$w" -v bb="$bb" -v bp="$bp" -v lost="$lost" 'BEGIN {printf "| %s | %s | | | **pyuprof/bare** | | | **%.2f** |\n| %s | %s | | | BPF ns/call bare, pyuprof; lost events | | | %s, %s; %s |\n",
			l, w, (p - n) / (b - n), l, w, bb, bp, lost}' >>"$out.tmp"
		unset med
	done
done

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
			read -r _ md < <(stats "${vals[@]}")
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
# the hand-written findings at the end of the file are kept from one run to the next
if [[ -f $out ]] && grep -q '^## Findings' "$out"; then
	echo >>"$out.tmp"
	sed -n '/^## Findings/,$p' "$out" >>"$out.tmp"
fi
mv "$out.tmp" "$out"
echo "bench: wrote $out"
