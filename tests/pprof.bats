#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# --pprof (issue 14): the real consumer, `go tool pprof` (Debian's golang-go), loads the file
# with -raw and -top, and its samples add up to the .prof of the same recording: the same
# total calls and self time, the same functions, the thread names and pids as labels
# (tools/pprof_check.py). report gives the same bytes from a raw recording; --subprocesses
# gives the merge and one file per process.

load helpers

# go is a test dependency (scripts/install-deps.sh): missing under CI=true is a failure.
require_go() {
	command -v go >/dev/null 2>&1 && return 0
	[[ ${CI:-} == true ]] && { echo "go (golang-go) is not installed" >&2; return 1; }
	skip "go (golang-go) is not installed"
}

# Records thread_names.py on interpreter LABEL with --pprof and checks it against its .prof.
check_label() {
	local label=$1 pid
	require_bpf
	require_go
	require_py "$label"
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record --top 0 -o p.prof --pprof p.pb.gz -- \
		"$PY" "$TARGETS/thread_names.py"
	pid=$(sed -n 's/^pyuprof: recording pid \([0-9]*\) .*/\1/p' <<<"$stderr")
	[[ -n $pid ]]
	# gzipped, as pprof consumers expect whatever the name
	[[ $(head -c 2 p.pb.gz | od -An -tx1 | tr -d ' ') == 1f8b ]]
	run -0 "$(tool_py)" "$TOOLS/pprof_check.py" p.pb.gz p.prof --pid "$pid" --thread MainThread \
		--thread loader-1
	echo "$output"
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (3.8)" {
	check_label 3.8
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (3.10)" {
	check_label 3.10
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (3.12)" {
	check_label 3.12
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (3.13)" {
	check_label 3.13
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (3.14)" {
	check_label 3.14
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (3.15)" {
	check_label 3.15
}

@test "pprof: go tool pprof loads it and its totals equal the .prof's (Debian 3.11)" {
	check_label deb3.11
}

@test "pprof: report from a raw recording gives record's bytes (.pb.gz and plain names)" {
	require_bpf
	require_go
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record -q -o p.prof --pprof p.pb.gz --raw r.raw -- \
		"$PY" "$TARGETS/threads.py"
	run -0 --separate-stderr "$PYUPROF" report -q r.raw --pprof again.pb.gz
	cmp p.pb.gz again.pb.gz
	# a name without .gz is gzipped all the same: the same profile once unzipped
	run -0 --separate-stderr "$PYUPROF" report -q r.raw --pprof plain.pprof -o again.prof
	cmp <(gzip -dc p.pb.gz) <(gzip -dc plain.pprof)
	cmp p.prof again.prof
	run -0 "$(tool_py)" "$TOOLS/pprof_check.py" plain.pprof again.prof
}

@test "pprof: --subprocesses writes the merge and one file per process, each as its .prof" {
	require_bpf
	require_go
	require_some_py
	local f pid n=0
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record -q --subprocesses -o out.prof --pprof out.pb.gz \
		-- "$PY" "$TARGETS/subprocesses.py" manifest.json
	local -a pids=()
	for f in out.*.prof; do
		pid=${f#out.}
		pid=${pid%.prof}
		[[ -f out.$pid.pb.gz ]] || { echo "no out.$pid.pb.gz beside $f"; ls; return 1; }
		run -0 "$(tool_py)" "$TOOLS/pprof_check.py" "out.$pid.pb.gz" "$f" --pid "$pid"
		pids+=(--pid "$pid")
		n=$((n + 1))
	done
	((n >= 5))
	run -0 "$(tool_py)" "$TOOLS/pprof_check.py" out.pb.gz out.prof "${pids[@]}"
}

@test "pprof: an unwritable --pprof path fails first, in one line, nothing written" {
	require_bpf
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	mkdir out
	run -1 --separate-stderr "$PYUPROF" record -o out/p.prof --pprof /nonexistent/p.pb.gz -- \
		"$PY" -c pass
	assert_one_error_line
	[[ $stderr == *"/nonexistent/p.pb.gz"* ]]
	assert_empty_dir out
}

@test "pprof: with --clock cpu the time samples say cpu, and still add up to the .prof" {
	require_bpf
	require_go
	require_py 3.12
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record --top 0 --clock cpu -o p.prof --pprof p.pb.gz -- \
		"$PY" "$TARGETS/recursion.py"
	run -0 go tool pprof -raw p.pb.gz
	[[ $output == *"calls/count cpu/nanoseconds"* ]]
	run -0 "$(tool_py)" "$TOOLS/pprof_check.py" p.pb.gz p.prof
	echo "$output"
}

@test "pprof: record --help and report --help list --pprof" {
	run -0 "$PYUPROF" record --help
	[[ $output == *"--pprof=FILE"*"pprof profile"* ]]
	run -0 "$PYUPROF" report --help
	[[ $output == *"--pprof=FILE"*"pprof profile"* ]]
}

@test "pprof: attach mode (frames running at attach included) adds up to the .prof too" {
	require_bpf
	require_go
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" "$TARGETS/long_running.py" --loop 60
	local target=$BG_PID
	wait_for_line target.out "^ready" 30 "$target"
	run -0 --separate-stderr "$PYUPROF" record -q -p "$target" -d 1 -o a.prof --pprof a.pb.gz
	run -0 "$(tool_py)" "$TOOLS/pprof_check.py" a.pb.gz a.prof --pid "$target" --thread MainThread
	assert_unharmed "$target"
}
