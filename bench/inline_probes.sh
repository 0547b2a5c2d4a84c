#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The cost of the calls CPython runs inline whatever the eval_frame hook says (3.13's __init__
# through its specialised class call, Debian's 3.11.2 Python __getitem__), which pyuprof sees
# through a probe of their own, with the probe where it is now (the first instruction on the
# way that the kernel emulates: user/target/probe_site.h) and where it was (PYUPROF_BENCH_SINGLE_STEP:
# the instruction the path gave, single-stepped), beside native and a plain call, in one run.
# (3.13's __init__ probe sits on the call its path gives, which the kernel emulates: there both
# modes are the same.) Prints a markdown table (ns an operation, median of REPS, 5) for
# bench/RESULTS.md. PYS (3.12 3.13 deb3.13 deb3.11; 3.12 has neither hole: its column shows the
# plain hook's cost; deb3.13 is Debian's stripped 3.13 of the sid root).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/helpers.bash 2>/dev/null || true
REPS=${REPS:-5}
PYS=${PYS:-"3.12 3.13 deb3.13 deb3.11"}
N=${N:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ $(id -u) -eq 0 ]] || { echo "inline_probes: run as root (probes)" >&2; exit 1; }

run() { # MODE PY -> "init X getitem Y call Z"
	case $1 in
	native) "$2" bench/workloads/inline_calls.py "$N" ;;
	pyuprof) build/pyuprof record -q -o "$tmp/p.prof" -- "$2" bench/workloads/inline_calls.py "$N" ;;
	single-step) PYUPROF_BENCH_SINGLE_STEP=1 build/pyuprof record -q -o "$tmp/p.prof" -- \
		"$2" bench/workloads/inline_calls.py "$N" ;;
	esac
}

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "| python | mode | __init__ (ns) | __getitem__ (ns) | plain call (ns) |"
echo "|---|---|---|---|---|"
for label in $PYS; do
	py=$(py_path "$label") || { echo "inline_probes: no $label" >&2; exit 1; }
	for mode in native pyuprof single-step; do
		: >"$tmp/$mode"
	done
	# the modes interleaved, rep by rep, so that drift on the machine falls on all alike
	for ((r = 0; r < REPS; r++)); do
		for mode in native pyuprof single-step; do
			run "$mode" "$py" >>"$tmp/$mode"
		done
	done
	for mode in native pyuprof single-step; do
		printf '| %s | %s | %s | %s | %s |\n' "$label" "$mode" \
			"$(awk '{print $2}' "$tmp/$mode" | median)" \
			"$(awk '{print $4}' "$tmp/$mode" | median)" \
			"$(awk '{print $6}' "$tmp/$mode" | median)"
	done
done
