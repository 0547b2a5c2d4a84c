#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-soak-subprocesses: ROUNDS (300) rounds of `pyuprof record --subprocesses -p` on
# tests/targets/subprocesses.py (fork pool, spawn pool, a subprocess, a forked child; every
# process checks each result and the fixture exits non-zero at the first wrong one), pyuprof
# SIGKILLed once it follows child number NTH (1: the first fork-pool worker; 3: the first
# spawn-pool worker), on PY (3.10). Counts the rounds where the fixture did not exit 0 and
# keeps their logs; also counts the rounds after which a process of the fixture's tree holds
# trampoline bytes that are not its page's (tests/tools/pages.py), and new `segfault`/`traps:`
# kernel log lines; the fixture itself exits non-zero when a pool replaced a worker (one
# died). Appends the counts to bench/SOAK.md. A CI run once saw a fork-pool worker compute a
# wrong result after such a SIGKILL (docs/limits.md: a followed child's page, since repaired).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
repo=$PWD
bin=$(realpath "${PYUPROF:-build/pyuprof}")
fixture=$repo/tests/targets/subprocesses.py
source tests/helpers.bash 2>/dev/null || true
ROUNDS=${ROUNDS:-300}
NTH=${NTH:-1}
label=${PY:-3.10}
py=$(py_path "$label") || { echo "bench-soak-subprocesses: no Python $label" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "bench-soak-subprocesses: run as root (probes)" >&2; exit 1; }
bad=0 page_bad=0 kept=()
dmesg0=$(dmesg_count)

# waits (up to 30 s) until the command in $2 succeeds or pid $1 is gone
until_or_gone() {
	local i
	for ((i = 0; i < 600; i++)); do
		eval "$2" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

for ((r = 1; r <= ROUNDS; r++)); do
	d=$(mktemp -d /tmp/pyuprof-soak-sub.XXXXXX)
	cd "$d"
	"$py" "$fixture" manifest.json --wait go >target.out 2>target.err &
	tp=$!
	until_or_gone "$tp" 'grep -q waiting target.out'
	"$bin" record -v --subprocesses --top 0 -o out.prof -p "$tp" >rec.out 2>rec.err &
	rp=$!
	until_or_gone "$rp" 'grep -q "recording pid" rec.err' || true
	touch go
	until_or_gone "$rp" '(($(grep -c "started by pid" rec.err) >= NTH))' || true
	kill -KILL "$rp" 2>/dev/null || true
	wait "$rp" 2>/dev/null || true
	# every process of the fixture's tree holds its trampoline pages' own bytes (the
	# kernel removed the probes of all of them when pyuprof died)
	if ! python3 "$repo/tests/tools/pages.py" --tree "$tp" >pages.out 2>&1; then
		page_bad=$((page_bad + 1))
		echo "round $r: page bytes not the page's own: $(head -n 1 pages.out)" >&2
	fi
	# a fixture that does not end in 120 s (a pool waiting for a lost task) is killed
	for ((i = 0; i < 2400; i++)); do
		[[ $(ps -o stat= -p "$tp" 2>/dev/null) == [^Z]* ]] || break
		sleep 0.05
	done
	kill -KILL "$tp" 2>/dev/null || true
	st=0
	wait "$tp" || st=$?
	cd - >/dev/null
	if ((st != 0)); then
		bad=$((bad + 1))
		kept+=("$d")
		echo "round $r: the fixture exited $st: $(tail -n 1 "$d/target.err") (logs: $d)" >&2
	else
		rm -rf "$d"
	fi
done
dmesg_new=$(($(dmesg_count) - dmesg0))
line="$bad of $ROUNDS rounds wrong, $page_bad leaving page bytes changed, $dmesg_new new segfault/traps dmesg lines (Python $label, SIGKILL at child $NTH, $(git -C "$repo" rev-parse --short HEAD))"
echo "$line"
{
	echo
	echo "### subprocesses SIGKILL soak $(date -u +%Y-%m-%dT%H:%MZ)"
	echo
	echo "$line${kept:+; logs: ${kept[*]}}"
} >>"$repo/bench/SOAK.md"
