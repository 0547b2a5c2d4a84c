#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-soak: pyuprof's memory over a long full-rate recording. Attaches to a target that
# calls fib flat out (bench/workloads/forever.py) for SECS (600) seconds, samples pyuprof's RSS
# every 30 s, and reports its peak RSS (VmHWM), the calls recorded and the lost events. A
# flat RSS while the calls grow shows that memory follows distinct call edges, not events.
# PY (3.12) picks the interpreter; DISTINCT=N has the target also define and call N new
# functions while recorded (memory grows with those). Appends its result to bench/SOAK.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
source tests/helpers.bash 2>/dev/null || true
SECS=${SECS:-600}
PY=${PY:-3.12}
DISTINCT=${DISTINCT:-0}
py=$(py_path "$PY")
tmp=$(mktemp -d)
[[ $(id -u) -eq 0 ]] || { echo "bench-soak: run as root (probes)" >&2; exit 1; }

"$py" bench/workloads/forever.py "$DISTINCT" >"$tmp/target.out" &
target=$!
trap 'kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT
until grep -q ready "$tmp/target.out"; do sleep 0.1; done

/usr/bin/time -f 'maxrss_kb %M' -o "$tmp/time" \
	build/pyuprof record -p "$target" -d "$SECS" --top=0 -o "$tmp/soak.prof" 2>"$tmp/err" &
timer=$!
sleep 0.5
rec=$(pgrep -P "$timer")
{
	echo "| t s | VmRSS MB | VmHWM MB |"
	echo "|---|---|---|"
} >"$tmp/samples"
for ((t = 30; t <= SECS; t += 30)); do
	sleep 30
	[[ -r /proc/$rec/status ]] || break
	awk -v t="$t" '/^VmRSS/ {r=$2} /^VmHWM/ {h=$2} END {printf "| %d | %.1f | %.1f |\n", t, r/1024, h/1024}' \
		"/proc/$rec/status" >>"$tmp/samples"
done
# the peak over the whole run, outputs written included: the kernel's figure through GNU time
wait "$timer"
summary=$(grep -E 'calls, .* lost events' "$tmp/err" || true)
peak=$(awk '/maxrss_kb/ {printf "%.1f", $2/1024}' "$tmp/time")
{
	echo
	echo "### soak $(date -u +%Y-%m-%dT%H:%MZ): Python $PY, ${SECS} s," \
		"$DISTINCT extra distinct functions, pyuprof $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo
	echo "${summary#pyuprof: }; peak RSS $peak MB"
	echo
	cat "$tmp/samples"
} | tee -a bench/SOAK.md
