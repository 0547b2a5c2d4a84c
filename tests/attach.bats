#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Attach in the middle of a deep call chain (issue 4): the frames running at attach are put on
# the thread's stack, so they appear, each once, with their real callers, and the calls made
# after attach have the innermost of them as caller.

load helpers

@test "attach: frames running at attach become the callers of what runs after (every python)" {
	require_bpf
	local label n=0
	for label in $(available_pys); do
		PY=$(py_path "$label")
		cd "$BATS_TEST_TMPDIR"
		start_bg "$label.out" "$label.err" "$PY" "$TARGETS/deep_wait.py" 30
		wait_for_line "$label.out" '^ready' 20 "$BG_PID"
		run -0 --separate-stderr "$PYUPROF" record -q -p "$BG_PID" -d 1 -o "$label.prof"
		assert_unharmed "$BG_PID"
		run -0 "$PY" - "$label.prof" "$TARGETS/deep_wait.py" <<'PYEOF'
import pstats, sys
stats = pstats.Stats(sys.argv[1]).stats
mine = {k: v for k, v in stats.items() if k[0] == sys.argv[2]}
by = {k[2]: (k, v) for k, v in mine.items()}
def callers(name):
    return {c[2]: cv[0] for c, cv in by[name][1][4].items() if c[0] == sys.argv[2]}
# level(i) recursion: 30 frames of one function; seeded once each: 30 calls, 1 primitive
k, v = by["level"]
assert v[1] == 30 and v[0] == 1, ("level", v[:2])
assert callers("level") == {"level": 29, "<module>": 1}, callers("level")
assert by["wait_loop"][1][1] == 1 and callers("wait_loop") == {"level": 1}, callers("wait_loop")
t = by["tick"][1]
assert t[1] > 10 and callers("tick") == {"wait_loop": t[1]}, (t[:2], callers("tick"))
# the seeded outer frames show the time since attach (about -d 1), not 0
assert by["wait_loop"][1][3] > 0.5, by["wait_loop"][1][3]
print("ok", len(mine))
PYEOF
		n=$((n + 1))
		kill "$BG_PID"
	done
	((n > 0))
}
