#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pyuprof dump (issue 14): on every interpreter, the stacks of three threads blocked in known
# functions (tests/targets/dump_blocked.py) are the ones each thread recorded of itself with
# traceback.extract_stack(): names, files and the lines running (tools/dump_check.py), in
# JSON and in py-spy's text form. The target is left running and untraced; targets that are
# not Python or not supported get record's one-line errors.

load helpers

# Starts the fixture on $PY and waits until its three threads are blocked.
start_fixture() {
	cd "$BATS_TEST_TMPDIR"
	start_bg fixture.out fixture.err "$PY" "$TARGETS/dump_blocked.py" truth.json
	local i
	for ((i = 0; i < 600; i++)); do
		[[ -f truth.json ]] && return 0
		is_running "$BG_PID" || break
		sleep 0.05
	done
	echo "the fixture did not get ready:" >&2
	cat fixture.err >&2
	return 1
}

# The target runs on, nobody traces it, and it is not stopped.
assert_left_alone() {
	local status
	status=$(cat "/proc/$1/status")
	grep -q '^TracerPid:[[:space:]]*0$' <<<"$status" || { echo "$status"; return 1; }
	grep -q '^State:[[:space:]]*[SR]' <<<"$status" || { echo "$status"; return 1; }
}

check_label() {
	require_bpf
	require_py "$1"
	start_fixture
	run -0 --separate-stderr "$PYUPROF" dump -p "$BG_PID" --json
	echo "$output" >dump.json
	run -0 --separate-stderr "$PYUPROF" dump -p "$BG_PID"
	echo "$output" >dump.txt
	# (its command line as the kernel has it: a Python of the sid root runs as
	# /usr/bin/python3.X, its wrapper having exec'd it)
	[[ ${lines[0]} == "Process $BG_PID: $(tr '\0' ' ' <"/proc/$BG_PID/cmdline" | sed 's/ $//')" ]]
	[[ ${lines[0]} == *" $TARGETS/dump_blocked.py truth.json" ]]
	[[ ${lines[1]} == "Python v$1"* || ${lines[1]} == "Python v3.11"* ]]
	run -0 "$PY" "$TOOLS/dump_check.py" dump.json dump.txt truth.json
	assert_left_alone "$BG_PID"
}

@test "dump: three blocked threads as they see themselves (3.8)" {
	check_label 3.8
}

@test "dump: three blocked threads as they see themselves (3.9)" {
	check_label 3.9
}

@test "dump: three blocked threads as they see themselves (3.10)" {
	check_label 3.10
}

@test "dump: three blocked threads as they see themselves (3.11)" {
	check_label 3.11
}

@test "dump: three blocked threads as they see themselves (3.12)" {
	check_label 3.12
}

@test "dump: three blocked threads as they see themselves (3.13)" {
	check_label 3.13
}

@test "dump: three blocked threads as they see themselves (3.14)" {
	check_label 3.14
}

@test "dump: three blocked threads as they see themselves (3.15)" {
	check_label 3.15
}

@test "dump: three blocked threads as they see themselves (Debian 3.11)" {
	check_label deb3.11
}

@test "dump: a thread running Python code is active and holds the GIL (every interpreter)" {
	require_bpf
	local label i n=0
	cd "$BATS_TEST_TMPDIR"
	for label in $(available_pys); do
		PY=$(py_path "$label")
		rm -f spin.out
		start_bg spin.out spin.err "$PY" -c '
import sys, threading, time
def spin():
    sys.stdout.write("spinning\n"); sys.stdout.flush()
    while True:
        pass
threading.Thread(target=time.sleep, args=(60,), name="sleeper", daemon=True).start()
spin()'
		for ((i = 0; i < 200; i++)); do
			[[ -s spin.out ]] && break
			sleep 0.05
		done
		run -0 --separate-stderr "$PYUPROF" dump -p "$BG_PID" --json
		run -0 python3 -c '
import json, sys
spin, sleeper = json.loads(sys.argv[1])
assert spin["active"] and spin["owns_gil"] and spin["thread_name"] == "MainThread", spin
assert [f["name"] for f in spin["frames"]] == ["spin", "<module>"], spin["frames"]
assert spin["frames"][0]["line"] in (5, 6), spin["frames"][0]
assert not sleeper["active"] and not sleeper["owns_gil"], sleeper
assert sleeper["thread_name"] == "sleeper", sleeper' "$output"
		assert_left_alone "$BG_PID"
		kill "$BG_PID"
		n=$((n + 1))
	done
	((n > 0))
}

@test "dump: not a Python process, an unsupported Python, no such process: one line, exit 1" {
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg sleep.out sleep.err sleep 60
	run -1 --separate-stderr "$PYUPROF" dump -p "$BG_PID"
	assert_one_error_line
	[[ $stderr == "pyuprof: cannot dump pid $BG_PID: pid $BG_PID is not a Python process"* ]]
	[[ -z $output ]]
	local label
	for label in "${UNSUPPORTED_PYS[@]}"; do
		PY=$(py_path "$label") || continue
		# (2.7 among them: no print function)
		start_bg old.out old.err "$PY" -c \
			'import sys, time; sys.stdout.write("ready\n"); sys.stdout.flush(); time.sleep(60)'
		wait_for_line old.out '^ready' 20 "$BG_PID"
		run -1 --separate-stderr "$PYUPROF" dump -p "$BG_PID"
		assert_one_error_line
		[[ $stderr == *"is not supported (supported: 3.8"* ]]
		assert_left_alone "$BG_PID"
	done
	run -1 --separate-stderr "$PYUPROF" dump -p 999999999
	assert_one_error_line
	[[ $stderr == *"no process with pid 999999999"* ]]
}

@test "dump: usage errors exit 64" {
	run -64 "$PYUPROF" dump
	[[ $output == *"give the process to dump"* ]]
	run -64 "$PYUPROF" dump -p 1 extra
	run -64 "$PYUPROF" dump -p x
}

@test "dump: pyuprof --help lists it, dump --help says what it prints and how long it stops" {
	run -0 "$PYUPROF" --help
	[[ $output == *"dump      print every thread's Python stack"* ]]
	run -0 "$PYUPROF" dump --help
	[[ $output == *"--json"* && $output == *"innermost first"* && $output == *"stopped"* ]]
}
