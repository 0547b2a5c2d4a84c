#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The ptrace hold on awkward targets: one that starts and ends threads during the attach,
# one the user stops with SIGSTOP (Ctrl-Z) while it is recorded, and a launched program whose
# process exits while pyuprof is stopping another one of its processes; a target with two
# interpreters that each have a GIL (3.12+).

load helpers
load server

# storm LABEL: ten attaches to a target that keeps starting threads: each one succeeds.
storm() {
	local i
	require_py "$1"
	require_bpf
	start_bg "$BATS_TEST_TMPDIR/target.out" "$BATS_TEST_TMPDIR/target.err" \
		"$PY" "$TARGETS/thread_storm.py" 300
	TARGET=$BG_PID
	wait_for_line "$BATS_TEST_TMPDIR/target.out" '^ready ' 20 "$TARGET"
	for ((i = 0; i < 10; i++)); do
		if ! "$PYUPROF" record -q -d 0.2 -o "$BATS_TEST_TMPDIR/s.prof" -p "$TARGET" \
			2>"$BATS_TEST_TMPDIR/s.err"; then
			echo "attach $i failed:"
			cat "$BATS_TEST_TMPDIR/s.err"
			return 1
		fi
		assert_unharmed "$TARGET"
	done
}

@test "hold: attaching while the target starts threads succeeds every time (3.12)" {
	storm 3.12
}
@test "hold: attaching while the target starts threads succeeds every time (3.10)" {
	storm 3.10
}

@test "hold: a target stopped with SIGSTOP while recorded is let go stopped, then runs on" {
	require_py 3.12
	require_bpf
	PY=$(py_path 3.12)
	start_server
	attach_pyuprof
	run_rounds 1 2
	kill -STOP "$TARGET"
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	! grep -q 'cannot stop pid' "$BATS_TEST_TMPDIR/ours.err"
	grep -q '^State:[[:space:]]*T' "/proc/$TARGET/status"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TARGET/status"
	compare_rounds 2
	kill -CONT "$TARGET"
	run_rounds 3 3
	kill -USR2 "$TARGET"
	wait_exit "$TARGET" 20
	[[ $EXIT_STATUS == 0 ]]
}

@test "hold: the program's exit status survives its exit during a stop (--subprocesses)" {
	local i status
	require_py 3.12
	require_bpf
	PY=$(py_path 3.12)
	# the parent exits at once after forking, while pyuprof stops the child to record it
	for ((i = 0; i < 5; i++)); do
		status=0
		"$PYUPROF" record -q --subprocesses -o "$BATS_TEST_TMPDIR/f.prof" -- "$PY" -c \
			'import os, time
def child(): time.sleep(0.2)
if os.fork() == 0:
    child(); os._exit(0)
os._exit(7)' 2>"$BATS_TEST_TMPDIR/f.err" || status=$?
		[[ $status == 7 ]] || { echo "run $i: exit status $status"; cat "$BATS_TEST_TMPDIR/f.err"; return 1; }
	done
}

# subinterp LABEL: a subinterpreter with its own GIL keeps pyuprof's hook while the perf
# trampoline takes the main interpreter's, and its calls meanwhile are all recorded; the
# writes that touch every interpreter waited for the whole process to stop (-v says so). 3.15's
# perf trampoline runs the hook it finds (pyuprof's): nothing is withdrawn, nothing waited for.
subinterp() {
	require_py "$1"
	require_bpf
	"$PYUPROF" record -v -o "$BATS_TEST_TMPDIR/s.prof" -- "$PY" "$TARGETS/subinterpreters.py" \
		5000 >"$BATS_TEST_TMPDIR/s.out" 2>"$BATS_TEST_TMPDIR/s.err" ||
		{ cat "$BATS_TEST_TMPDIR/s.err"; return 1; }
	# shellcheck disable=SC2046
	remove_perf_maps $(recorded_pids "$BATS_TEST_TMPDIR/s.err")
	grep -qx ok "$BATS_TEST_TMPDIR/s.out"
	if [[ $1 != 3.15 ]]; then
		grep -q 'waited for the whole process to stop' "$BATS_TEST_TMPDIR/s.err" ||
			{ grep -v 'debug: code' "$BATS_TEST_TMPDIR/s.err"; return 1; }
	fi
	# cProfile sees one interpreter only: the counts are the fixture's own
	"$PY" -c 'import pstats, sys
calls = {k[2]: v[1] for k, v in pstats.Stats(sys.argv[1]).stats.items()}
want = {"sub_leaf": 5001, "sub_work": 2, "main_leaf": 5000, "main_work": 1}
got = {f: calls.get(f) for f in want}
assert got == want, got' "$BATS_TEST_TMPDIR/s.prof"
}

@test "hold: two interpreters with a GIL each: hook writes wait for the whole process, every call is recorded (3.12)" {
	subinterp 3.12
}
@test "hold: two interpreters with a GIL each: hook writes wait for the whole process, every call is recorded (3.13)" {
	subinterp 3.13
}

@test "hold: two interpreters with a GIL each: hook writes wait for the whole process, every call is recorded (3.14)" {
	subinterp 3.14
}

@test "hold: two interpreters with a GIL each: hook writes wait for the whole process, every call is recorded (3.15)" {
	subinterp 3.15
}
