#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: the per-call cost of recording, for each interpreter and workload, every mode in
# one run so that ratios compare like with like (absolute times on a shared VM are noise).
# Modes: native; switch (3.11+ inlining off, no probe); entry / ret / both (counting-only
# probes at pyuprof's probe points, bench/bare); uretprobe (entry uprobe + uretprobe); pyuprof;
# cProfile. Writes bench/RESULTS.md. REPS (3), PYS (all present) and WORKLOADS can be set.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/helpers.bash 2>/dev/null || true
REPS=${REPS:-3}
PYS=${PYS:-"3.8 3.9 3.10 3.11 3.12 3.13 deb3.11"}
WORKLOADS=${WORKLOADS:-"fib generators compile"}
out=bench/RESULTS.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[[ $(id -u) -eq 0 ]] || { echo "bench: run as root (probes)" >&2; exit 1; }

workload_cmd() { # WORKLOAD -> argv after the interpreter
	case $1 in
	fib) echo "bench/workloads/fib.py 24" ;;
	generators) echo "bench/workloads/generators.py 40000" ;;
	compile) echo "bench/workloads/compile.py 2" ;;
	esac
}

# one timed run: prints "seconds calls"
run_mode() {
	local mode=$1 py=$2 w=$3 line
	# shellcheck disable=SC2046
	case $mode in
	native) line=$("$py" $(workload_cmd "$w")) ;;
	switch) line=$(build/bench/bare none -- "$py" $(workload_cmd "$w")) ;;
	entry | ret | both | uretprobe)
		line=$(build/bench/bare "$mode" -- "$py" $(workload_cmd "$w")) ;;
	pyuprof) line=$(build/pyuprof record -q -o "$tmp/p.prof" -- "$py" $(workload_cmd "$w")) ;;
	cprofile) line=$("$py" tests/tools/cprofile_run.py -o "$tmp/c.prof" $(workload_cmd "$w")) ;;
	esac
	awk '/^elapsed/ {print $2, $4}' <<<"$line"
}

stats() { # values... -> "min median"
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[1], a[int((NR+1)/2)]}'
}

{
	echo "# pyuprof overhead benchmark"
	echo
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo),"
	echo "kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
	echo "Run $(date -u +%Y-%m-%dT%H:%MZ), $REPS repetitions per cell, min and median."
	echo "Per-call cost = (time - native time) / calls of the timed section, in ns (medians)."
	echo "pyuprof/both = pyuprof's per-call cost over the counting-only probes at the same points."
	echo
	echo "| python | workload | calls | native ms | mode | min ms | median ms | ns/call |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$out.tmp"

for label in $PYS; do
	py=$(py_path "$label") || continue
	for w in $WORKLOADS; do
		declare -A med=()
		calls=0
		for mode in native switch entry ret both uretprobe pyuprof cprofile; do
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
		awk -v p="${med[pyuprof]}" -v b="${med[both]}" -v n="${med[native]}" -v l="$label" \
			-v w="$w" 'BEGIN {printf "| %s | %s | | | **pyuprof/both** | | | **%.2f** |\n",
			l, w, (p - n) / (b - n)}' >>"$out.tmp"
		unset med
	done
done
mv "$out.tmp" "$out"
echo "bench: wrote $out"
