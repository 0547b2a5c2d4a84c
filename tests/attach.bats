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
# the seeded outer frames show the time since attach, not 0: at least all of the ticks it made
assert by["wait_loop"][1][3] >= t[3] > 0, (by["wait_loop"][1][3], t[3])
print("ok", len(mine))
PYEOF
		n=$((n + 1))
		kill "$BG_PID"
	done
	((n > 0))
}

# Starts selfcheck.py on $PY (sets BG_PID, STOP) and waits until it runs.
start_selfcheck() {
	STOP="$BATS_TEST_TMPDIR/stop.$1"
	start_bg "$BATS_TEST_TMPDIR/$1.out" "$BATS_TEST_TMPDIR/$1.err" "$PY" \
		"$TARGETS/selfcheck.py" "$STOP"
	wait_for_line "$BATS_TEST_TMPDIR/$1.out" '^ready' 20 "$BG_PID"
}

# Lets selfcheck.py finish and asserts it found every result right.
finish_selfcheck() {
	local status=0
	touch "$STOP"
	wait "$BG_PID" || status=$?
	cat "$BATS_TEST_TMPDIR/$1.out"
	((status == 0))
	grep -q '^rounds [1-9]' "$BATS_TEST_TMPDIR/$1.out"
}

# 50 cycles on 3.12 (held under ptrace, eval_frame switched and restored each time), 10 on
# 3.10; a cycle takes about a second (the kernel waits for RCU at each probe's attach/detach).
@test "attach: 50 attach/detach cycles leave a self-checking target correct (3.12; 10 on 3.10)" {
	require_bpf
	local label cycle cycles
	for label in 3.12 3.10; do
		have_py "$label" || continue
		cycles=${ATTACH_CYCLES:-$([[ $label == 3.12 ]] && echo 50 || echo 10)}
		start_selfcheck "$label"
		# (not "i": bats' run uses that name itself)
		for ((cycle = 0; cycle < cycles; cycle++)); do
			run -0 --separate-stderr "$PYUPROF" record -q -p "$BG_PID" -d 0.1 \
				-o "$BATS_TEST_TMPDIR/$label.$cycle.prof"
		done
		finish_selfcheck "$label"
		# every one of the 50 profiles is valid
		run -0 "$PY" -c '
import pstats, sys
for f in sys.argv[1:]:
    s = pstats.Stats(f)
    assert any(k[2] == "one_round" for k in s.stats), f
print(len(sys.argv) - 1)' "$BATS_TEST_TMPDIR/$label".*.prof
		[[ $output == "$cycles" ]]
	done
}

@test "attach: SIGKILL of pyuprof mid-recording leaves the target running correctly" {
	require_bpf
	local label pid
	for label in 3.12 3.13 3.10 deb3.11; do
		have_py "$label" || continue
		start_selfcheck "kill$label"
		"$PYUPROF" record --top 0 -p "$BG_PID" -o "$BATS_TEST_TMPDIR/kill.prof" \
			2>"$BATS_TEST_TMPDIR/kill.err" &
		pid=$!
		# mid-recording: once the probes are in (it says so), not after a guessed delay
		wait_for_line "$BATS_TEST_TMPDIR/kill.err" '^pyuprof: recording pid' 30 "$pid"
		kill -KILL "$pid"
		wait "$pid" || true
		# (its tracer gone, the kernel has detached the target by the time wait returns)
		assert_unharmed "$BG_PID"
		grep -q '^TracerPid:[[:space:]]*0$' "/proc/$BG_PID/status"
		finish_selfcheck "kill$label"
		# no profile, and no temporary left half-written under the name
		[[ ! -e $BATS_TEST_TMPDIR/kill.prof ]]
	done
}

# Kernels before 6.6 make no uprobe_multi link: each probe is a link of its own, attached in
# the attach's second stop after a load with the target running. PYUPROF_NO_UPROBE_MULTI takes
# that path on this kernel. Launched: equal to cProfile; attached twice: the self-checking target
# stays correct and each profile has its calls.
@test "attach: one link per probe (kernels without uprobe_multi): launch equals cProfile, attach leaves the target correct (3.12, 3.8)" {
	require_bpf
	local label n=0 cycle
	for label in 3.12 3.8; do
		have_py "$label" || continue
		PY=$(py_path "$label")
		cd "$BATS_TEST_TMPDIR"
		"$PY" "$TOOLS/cprofile_run.py" -o "cprofile.$label.prof" "$TARGETS/generators.py" >/dev/null
		run --separate-stderr env PYUPROF_NO_UPROBE_MULTI=1 "$PYUPROF" record --debug \
			-o "ours.$label.prof" -- "$PY" "$TARGETS/generators.py"
		if ((status != 0)) || ! grep -q '^pyuprof: [0-9]* probes in pid [0-9]*, one link each$' <<<"$stderr"; then
			printf 'launch on %s: status %s\n' "$label" "$status"
			grep -v 'libbpf:' <<<"$stderr"
			return 1
		fi
		run -0 "$PY" "$TOOLS/pstats_compare.py" "ours.$label.prof" "cprofile.$label.prof" \
			--file "$TARGETS/generators.py"
		start_selfcheck "multi$label"
		for cycle in 1 2; do
			run --separate-stderr env PYUPROF_NO_UPROBE_MULTI=1 "$PYUPROF" record --debug \
				-p "$BG_PID" -d 0.3 -o "attach.$label.$cycle.prof"
			if ((status != 0)) || ! grep -q 'one link each$' <<<"$stderr"; then
				printf 'attach %s on %s: status %s\n' "$cycle" "$label" "$status"
				grep -v 'libbpf:' <<<"$stderr"
				return 1
			fi
			assert_unharmed "$BG_PID"
			run -0 "$PY" -c '
import pstats, sys
s = pstats.Stats(sys.argv[1])
assert any(k[2] == "one_round" and v[0] > 0 for k, v in s.stats.items()), sys.argv[1]' \
				"attach.$label.$cycle.prof"
		done
		finish_selfcheck "multi$label"
		n=$((n + 1))
	done
	((n > 0))
}
