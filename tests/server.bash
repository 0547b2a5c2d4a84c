# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Attach mode against tests/targets/long_running.py --serve: it runs one round of work per
# SIGUSR1 and waits in sigtimedwait in between, so that a recording holds exactly the rounds
# asked for. Loaded by the .bats files that attach to it (after helpers).

# Starts long_running.py --serve on $PY (sets TARGET) and waits for its "ready" line.
start_server() {
	start_bg "$BATS_TEST_TMPDIR/target.out" "$BATS_TEST_TMPDIR/target.err" \
		"$PY" "$TARGETS/long_running.py" --serve 300
	TARGET=$BG_PID
	wait_for_line "$BATS_TEST_TMPDIR/target.out" '^ready ' 20 "$TARGET"
}

# Waits until TARGET is idle in sigtimedwait: every round it was asked for has returned.
target_idle() { [[ $(cat "/proc/$TARGET/wchan" 2>/dev/null) == do_sigtimedwait* ]]; }

wait_idle() {
	poll_until 20 target_idle && return 0
	echo "target $TARGET never went back to waiting for a signal" >&2
	return 1
}

# run_rounds FIRST LAST: one SIGUSR1 per round, each waited for ("round N" printed).
run_rounds() {
	local i
	for ((i = $1; i <= $2; i++)); do
		kill -USR1 "$TARGET"
		wait_for_line "$BATS_TEST_TMPDIR/target.out" "^round $i\$" 20 "$TARGET"
	done
	wait_idle
}

# attach_pyuprof ARGS...: starts pyuprof record -o ours.prof -p TARGET ARGS (sets REC) and
# waits for its "recording pid" line, printed once the probes are in.
attach_pyuprof() {
	start_bg "$BATS_TEST_TMPDIR/ours.out" "$BATS_TEST_TMPDIR/ours.err" \
		"$PYUPROF" record -o "$BATS_TEST_TMPDIR/ours.prof" -p "$TARGET" "$@"
	REC=$BG_PID
	wait_for_line "$BATS_TEST_TMPDIR/ours.err" '^pyuprof: recording pid' 60 "$REC"
}

# After wait_exit REC: pyuprof must have ended with status 0.
check_rec_status() {
	[[ $EXIT_STATUS == 0 ]] && return 0
	echo "pyuprof exited with status $EXIT_STATUS:"
	cat "$BATS_TEST_TMPDIR/ours.err"
	return 1
}

# compare_rounds N: ours.prof holds exactly N rounds: everything do_round and report ran,
# against cProfile running N rounds of the same code.
compare_rounds() {
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/cprofile_run.py" -o "cprofile-$1.prof" "$TARGETS/long_running.py" \
		--rounds "$1" >/dev/null
	if ! "$PY" "$TOOLS/pstats_compare.py" ours.prof "cprofile-$1.prof" \
		--file "$TARGETS/long_running.py" --below do_round --below report >compare.out 2>&1; then
		cat compare.out
		grep '^pyuprof: ' ours.err
		return 1
	fi
}
