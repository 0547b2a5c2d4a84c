#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# PID namespaces (containers, `docker exec`, `unshare -p`): pyuprof run inside one records a
# program in it, and pyuprof on the host records a program inside one by its host pid. Both
# against cProfile.

load helpers
load server

# in_ns_launch LABEL: pyuprof and the fixture in a new PID namespace (pyuprof is its pid 1).
in_ns_launch() {
	local script="$TARGETS/mutual_recursion.py"
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/cprofile_run.py" -o cprofile.prof "$script" >cprofile.out
	unshare --pid --fork --mount-proc "$PYUPROF" record -o ours.prof -- "$PY" "$script" \
		>ours.out 2>ours.err || { cat ours.err; return 1; }
	cmp cprofile.out ours.out
	"$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof --file "$script"
}

@test "namespaces: pyuprof inside a PID namespace records a program there (3.12)" {
	in_ns_launch 3.12
}
@test "namespaces: pyuprof inside a PID namespace records a program there (3.8)" {
	in_ns_launch 3.8
}
@test "namespaces: pyuprof inside a PID namespace records a program there (3.14)" {
	in_ns_launch 3.14
}
@test "namespaces: pyuprof inside a PID namespace records a program there (Debian 3.11)" {
	in_ns_launch deb3.11
}

@test "namespaces: a program in a PID namespace is attached from the host by its host pid" {
	local ns_pid i
	require_py 3.12
	require_bpf
	start_bg "$BATS_TEST_TMPDIR/target.out" "$BATS_TEST_TMPDIR/target.err" \
		unshare --pid --fork --mount-proc "$PY" "$TARGETS/long_running.py" --serve 300
	wait_for_line "$BATS_TEST_TMPDIR/target.out" '^ready ' 20 "$BG_PID"
	# the server prints its pid in its namespace (1); its host pid is unshare's child
	grep -q '^ready 1$' "$BATS_TEST_TMPDIR/target.out"
	TARGET=$(pgrep -P "$BG_PID" | head -n 1)
	[[ -n $TARGET ]]
	attach_pyuprof
	run_rounds 1 3
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	assert_unharmed "$TARGET"
	compare_rounds 3
	kill -USR2 "$TARGET"
}
