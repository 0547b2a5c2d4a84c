#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-soak-forks: forked children while recorded (issue 19's done-when counts). Per
# interpreter (PYS: 3.8-3.13 and Debian's 3.11; empty: none): FORKS (1000) children forked one
# after the other under `pyuprof record` from the start; then a target that forks for SECS (20)
# seconds while pyuprof attaches (-d 1) and detaches over and over (thousands of children);
# each child runs fib(15) and checks its eval_frame hook is the native one
# (tests/targets/fork_children.py). Then ROUNDS (30) rounds per signal of the followed-child
# scenario (tests/tools/held_child.py: pyuprof ended by SIGINT, SIGTERM, SIGKILL while it
# follows a child that has not run yet; the child's page bytes and results checked) on
# HELD_PYS (3.12; empty: none). Counts bad and signalled children, failed rounds, and new
# `segfault`/`traps:` kernel log lines; appends the tables to bench/SOAK.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
bin=$(realpath "${PYUPROF:-build/pyuprof}")
source tests/helpers.bash 2>/dev/null || true
FORKS=${FORKS:-1000}
SECS=${SECS:-20}
ROUNDS=${ROUNDS:-30}
PYS=${PYS-3.8 3.9 3.10 3.11 3.12 3.13 deb3.11}
HELD_PYS=${HELD_PYS-3.12}
[[ $(id -u) -eq 0 ]] || { echo "bench-soak-forks: run as root (probes)" >&2; exit 1; }
tmp=$(mktemp -d)
target=
trap '[[ -n $target ]] && kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT

rows=()
for label in $PYS; do
	py=$(py_path "$label") || { echo "bench-soak-forks: no Python $label" >&2; exit 1; }
	d0=$(dmesg_count)
	# launch: one recording, FORKS children
	"$bin" record -q -o "$tmp/l.prof" -- "$py" tests/targets/fork_children.py "$FORKS" \
		>"$tmp/launch.out" 2>"$tmp/launch.err" || true
	launch=$(tail -n 1 "$tmp/launch.out")
	# attach: SECS seconds of a target forking all along, pyuprof attached for 1 s at a
	# time (no calibration) with 0.2 s between; the fixture counts every child it forked
	"$py" tests/targets/fork_children.py -t "$SECS" >"$tmp/attach.out" 2>&1 &
	target=$!
	until grep -q '^ready' "$tmp/attach.out"; do sleep 0.05; done
	cycles=0 failed=0
	while is_running "$target"; do
		cycles=$((cycles + 1))
		"$bin" record -q --no-compensation --top 0 -p "$target" -d 1 -o "$tmp/a.prof" \
			2>>"$tmp/attach.err" || { is_running "$target" && failed=$((failed + 1)); }
		sleep 0.2
	done
	wait "$target" 2>/dev/null || true
	target=
	attach=$(grep -E '^children' "$tmp/attach.out" | tail -n 1 || echo "no result")
	d1=$(dmesg_count)
	rows+=("| $label | $launch | $attach ($cycles attaches, $failed failed) | $((d1 - d0)) |")
	echo "bench-soak-forks: $label: launch: $launch; attach: $attach, $cycles attaches" >&2
done

held=()
for label in $HELD_PYS; do
	py=$(py_path "$label") || { echo "bench-soak-forks: no Python $label" >&2; exit 1; }
	for sig in INT TERM KILL; do
		bad=0
		d0=$(dmesg_count)
		for ((r = 0; r < ROUNDS; r++)); do
			mkdir -p "$tmp/held"
			python3 tests/tools/held_child.py "$bin" "$py" "$sig" "$tmp/held" \
				>"$tmp/held.out" 2>&1 || {
				bad=$((bad + 1))
				cp "$tmp/held.out" "$tmp/held-$label-$sig-$r.log"
			}
			rm -rf "$tmp/held"
		done
		d1=$(dmesg_count)
		held+=("| $label | SIG$sig | $ROUNDS | $bad | $((d1 - d0)) |")
		echo "bench-soak-forks: held child $label SIG$sig: $bad of $ROUNDS wrong" >&2
	done
done

{
	echo
	echo "## bench-soak-forks, $(date -u +%Y-%m-%d), pyuprof $(git rev-parse --short HEAD 2>/dev/null || echo '?'), kernel $(uname -r), $(nproc) CPUs"
	echo
	echo "Launch: FORKS=$FORKS children in one recording; attach: a target forking for $SECS s"
	echo "while pyuprof attaches for 1 s at a time. \"bad\": a child whose result or eval_frame"
	echo "hook was wrong; \"signalled\": one that died of a signal."
	echo
	echo "| Python | launch | attach | new dmesg lines |"
	echo "|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Followed child held unrun while pyuprof is ended (tests/tools/held_child.py):"
	echo
	echo "| Python | signal | rounds | wrong | new dmesg lines |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${held[@]}"
} | tee -a bench/SOAK.md
