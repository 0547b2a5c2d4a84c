#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What docs/usage.md says happens when writing an output fails at the end of a recording (issue 14):
# that output is not written (no partial or temporary file), every other output is, one line
# names the failure, and the exit status is 1 in attach mode (the program's own in launch
# mode). The failure: the directory of one output is removed while recording, so its
# temporary file cannot be renamed into place.

load helpers

@test "output stage: launch mode: the failed output is absent, the others written, one line" {
	require_bpf
	require_some_py
	mkdir "$BATS_TEST_TMPDIR/run"
	cd "$BATS_TEST_TMPDIR/run"
	mkdir gone
	run -0 --separate-stderr "$PYUPROF" record -q -o p.prof --svg gone/g.svg --pprof p.pb.gz \
		-- "$PY" -c 'import shutil; shutil.rmtree("gone")'
	assert_one_error_line
	[[ $stderr == "pyuprof: cannot write gone/g.svg: No such file or directory" ]]
	run -0 "$PY" "$TOOLS/pstats_load.py" p.prof
	[[ -s p.pb.gz ]]
	# nothing else: no temporary file left beside the others
	[[ $(ls -A | sort | tr '\n' ' ') == "p.pb.gz p.prof " ]]
}

@test "output stage: attach mode: the same, and exit status 1" {
	require_bpf
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	mkdir gone out
	start_bg target.out target.err "$PY" "$TARGETS/long_running.py" --loop 60
	local target=$BG_PID
	wait_for_line target.out "^ready" 30 "$target"
	start_bg rec.out rec.err "$PYUPROF" record -p "$target" -d 2 -o out/p.prof \
		--flamegraph gone/f.svg
	local rec=$BG_PID
	wait_for_line rec.err "^pyuprof: recording pid" 30 "$rec"
	rm -r gone
	wait_exit "$rec" 60
	((EXIT_STATUS == 1))
	grep -q "^pyuprof: cannot write gone/f.svg: No such file or directory$" rec.err
	run -0 "$PY" "$TOOLS/pstats_load.py" out/p.prof
	[[ $(ls -A out) == "p.prof" ]]
	assert_unharmed "$target"
}
