#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# How the speed gauge (include/stage.h: a loop of `dec; jnz` timed by the TSC) slows against the
# probes' cost when the vCPU slows (the test VM's two vCPUs run 1.5-2x apart, which one is slow
# changing every few seconds). On one CPU (CPU, default 0), SECS seconds plain then SECS
# recorded with --no-compensation: rounds of the call-free loop (sum(range(24000))), fib(17) and
# two candidate gauges (1,000 turns of dec/jnz; 500 turns of 4 adds and dec/jnz), each round
# timed by the thread's CPU time (the gauges by the TSC), then the rounds classed by the loop's
# step (fast: within 15% of the fastest; slow: over 1.6x it). Prints, per class, the medians,
# and each one's slow over fast: the probes' cost a fib call (recorded - plain) should slow as
# the gauge does. Settings: PY_LABEL (deb3.11; labels as tests/helpers.bash), SECS (12), CPU (0).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
source tests/helpers.bash 2>/dev/null || true
PY_LABEL=${PY_LABEL:-deb3.11}
SECS=${SECS:-12}
CPU=${CPU:-0}
[[ $(id -u) -eq 0 ]] || { echo "gauge_speed: run as root (probes)" >&2; exit 1; }
[[ -x build/pyuprof ]] || { echo "gauge_speed: build first (make)" >&2; exit 1; }
py=$(py_path "$PY_LABEL") || { echo "gauge_speed: no Python $PY_LABEL" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/loops.c" <<'EOF'
#include <stdlib.h>
#include <x86intrin.h>
static int cmpu(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? -1 : x > y;
}
static unsigned long one(int kind, int n)
{
	unsigned long t0 = __rdtsc(), a = 1, b = 2, c = 3, d = 4;
	if (kind == 0)
		__asm__ volatile("1: dec %0; jnz 1b" : "+r"(n));
	else
		__asm__ volatile("1: add $1,%1; add $1,%2; add $1,%3; add $1,%4; dec %0; jnz 1b"
				 : "+r"(n), "+r"(a), "+r"(b), "+r"(c), "+r"(d));
	__asm__ volatile("" ::"r"(a + b + c + d));
	return __rdtsc() - t0;
}
/* the median of 64 readings, in ticks */
double gauge(int kind, int n)
{
	unsigned long v[64];
	for (int k = 0; k < 64; k++)
		v[k] = one(kind, n);
	qsort(v, 64, sizeof(*v), cmpu);
	return (double)v[32];
}
EOF
cc -O2 -shared -fPIC -o "$tmp/loops.so" "$tmp/loops.c"

cat >"$tmp/rounds.py" <<'EOF'
import ctypes, sys, time
now = time.thread_time_ns
lib = ctypes.CDLL(sys.argv[1])
lib.gauge.restype = ctypes.c_double
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
def none(n, s=sum, r=range): s(r(n))
end = time.time() + float(sys.argv[2])
while time.time() < end:
    g0, g1 = lib.gauge(0, 1000), lib.gauge(1, 500)
    t0 = now(); none(24000); t1 = now(); fib(17); t2 = now(); none(24000); t3 = now()
    g0, g1 = (g0 + lib.gauge(0, 1000)) / 2, (g1 + lib.gauge(1, 500)) / 2
    print("%.3f %.2f %.0f %.0f" % ((t1 - t0 + t3 - t2) / 48000, (t2 - t1) / 5167, g0, g1), flush=True)
    time.sleep(0.02)
EOF
taskset -c "$CPU" "$py" "$tmp/rounds.py" "$tmp/loops.so" "$SECS" >"$tmp/plain.txt"
taskset -c "$CPU" build/pyuprof record -q --no-compensation --top 0 -o "$tmp/p.prof" \
	-- "$py" "$tmp/rounds.py" "$tmp/loops.so" "$SECS" >"$tmp/rec.txt"
python3 - "$tmp/plain.txt" "$tmp/rec.txt" <<'EOF'
import statistics as st, sys
def load(f):
    return [tuple(map(float, l.split())) for l in open(f) if len(l.split()) == 4]
plain, rec = load(sys.argv[1]), load(sys.argv[2])
lo = sorted(r[0] for r in plain + rec)[len(plain + rec) // 20]
def cls(r):
    return "fast" if r[0] < lo * 1.15 else "slow" if r[0] > lo * 1.6 else "mid"
def med(d, c, i):
    v = [r[i] for r in d if cls(r) == c]
    return st.median(v) if v else float("nan")
for name, d in (("plain", plain), ("recorded", rec)):
    for c in ("fast", "slow"):
        print("%-8s %s: %d rounds, step %.2f ns, fib %.1f ns a call, dec/jnz %.0f ticks, "
              "4 adds %.0f ticks" % ((name, c, sum(1 for r in d if cls(r) == c)) +
                                     tuple(med(d, c, i) for i in range(4))))
pf, ps = med(rec, "fast", 1) - med(plain, "fast", 1), med(rec, "slow", 1) - med(plain, "slow", 1)
print("slow over fast: the probes' cost a fib call %.2f (%.0f -> %.0f ns), the loop's step %.2f, "
      "fib's own %.2f, dec/jnz %.2f, 4 adds %.2f" % (ps / pf, pf, ps,
      med(plain, "slow", 0) / med(plain, "fast", 0), med(plain, "slow", 1) / med(plain, "fast", 1),
      med(rec, "slow", 2) / med(rec, "fast", 2), med(rec, "slow", 3) / med(rec, "fast", 3)))
EOF
