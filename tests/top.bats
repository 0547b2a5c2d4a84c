#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pyuprof top in a real terminal (a tmux pane of a private tmux server): the view shows the
# fixture's hot function and its methods by qualified name (3.11+), q quits with status 0,
# the terminal gets its modes back, and the target runs on, untraced and unstopped.

load helpers

require_tmux() {
	command -v tmux >/dev/null 2>&1 && return 0
	if [[ ${CI:-} == true ]]; then
		echo "tmux is not installed (CI=true: failing instead of skipping)" >&2
		return 1
	fi
	skip "tmux is not installed (scripts/install-deps.sh installs it)"
}

setup() {
	init_started
	TMUX_SOCKET="pyuprof-test-$$-$BATS_TEST_NUMBER"
}

teardown() {
	tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
	kill_started
}

# pane_has REGEX TIMEOUT: waits until the pane's screen has a line matching REGEX.
pane_has() {
	local re=$1 timeout=$2 i
	for ((i = 0; i < timeout * 10; i++)); do
		tmux -L "$TMUX_SOCKET" capture-pane -p -t top >"$BATS_TEST_TMPDIR/pane.txt" 2>/dev/null
		grep -Eq -- "$re" "$BATS_TEST_TMPDIR/pane.txt" && return 0
		sleep 0.1
	done
	echo "no line matching '$re' on the screen after ${timeout}s:" >&2
	sed 's/^/  | /' "$BATS_TEST_TMPDIR/pane.txt" >&2
	return 1
}

# top_on LABEL: the whole round trip on one interpreter.
top_on() {
	local label=$1 pid rounds_before rounds_after method
	require_bpf
	require_tmux
	require_py "$label"
	cd "$BATS_TEST_TMPDIR" || return 1
	start_bg lr.out lr.err "$PY" "$TARGETS/long_running.py" --loop 120
	pid=$BG_PID
	wait_for_line lr.out '^ready' 20 "$pid"
	# the pane runs pyuprof, then says how it ended and what the terminal's modes are
	tmux -L "$TMUX_SOCKET" new-session -d -s top -x 150 -y 40 \
		"'$PYUPROF' top -p $pid 2>top.err; echo \$? >top.status; stty -a >stty.txt; sleep 60"
	pane_has '^ pyuprof top - pid '"$pid"' \(Python ' 20
	pane_has ' fib \(long_running\.py:[0-9]+\)$' 20
	pane_has 'calls, [0-9,]+/s .* lost events [0-9,]+' 5
	# Accumulator.add is a method: its qualified name where the interpreter has one
	case $label in
	3.8 | 3.9 | 3.10) method=' add \(long_running\.py:[0-9]+\)$' ;;
	*) method=' Accumulator\.add \(long_running\.py:[0-9]+\)$' ;;
	esac
	pane_has "$method" 10
	# ordered by calls ('c'), fib first: it makes ten times the calls of any other function in
	# every round (an order by time would be a timing: compensation takes most of fib's off)
	pane_has '^ recording ([3-9]|[1-9][0-9]+) s ' 20
	tmux -L "$TMUX_SOCKET" send-keys -t top c
	pane_has '^ order: calls in the last interval ' 10
	pane_has '^ recording ([4-9]|[1-9][0-9]+) s ' 20
	awk '/FUNCTION/ { getline; print; exit }' pane.txt | grep -q ' fib (long_running.py:' || {
		echo "fib is not the first row:" >&2
		sed 's/^/  | /' pane.txt >&2
		return 1
	}
	tmux -L "$TMUX_SOCKET" send-keys -t top q
	wait_for_line top.status '^[0-9]+$' 20
	[[ $(cat top.status) == 0 ]] || { cat top.err >&2; return 1; }
	grep -q '^pyuprof: .* detached from pid '"$pid"', which runs on$' top.err
	# the terminal as it was: canonical mode and echo back on
	wait_for_line stty.txt 'icanon' 5
	grep -qw -- 'icanon' stty.txt || return 1
	grep -qw -- 'echo' stty.txt || return 1
	# the target: running, not traced, and still doing its rounds
	assert_unharmed "$pid"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$pid/status"
	rounds_before=$(grep -c '^round' lr.out)
	sleep 0.5
	rounds_after=$(grep -c '^round' lr.out)
	((rounds_after > rounds_before))
}

@test "top: 3.8, q quits, the target runs on untraced" {
	top_on 3.8
}

@test "top: 3.12, qualified names, q quits, the target runs on untraced" {
	top_on 3.12
}

@test "top: 3.14, qualified names, q quits, the target runs on untraced" {
	top_on 3.14
}

@test "top: 3.15, qualified names, q quits, the target runs on untraced" {
	top_on 3.15
}

@test "top: Debian's 3.11, qualified names, q quits, the target runs on untraced" {
	top_on deb3.11
}

@test "top: not on a terminal: one error line, exit 1, target untouched" {
	require_bpf
	require_py 3.12
	start_bg "$BATS_TEST_TMPDIR/lr.out" "$BATS_TEST_TMPDIR/lr.err" \
		"$PY" "$TARGETS/long_running.py" --loop 60
	wait_for_line "$BATS_TEST_TMPDIR/lr.out" '^ready' 20 "$BG_PID"
	run -1 --separate-stderr "$PYUPROF" top -p "$BG_PID" </dev/null
	assert_one_error_line
	[[ $stderr == *"terminal"* ]]
	assert_unharmed "$BG_PID"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$BG_PID/status"
}

@test "top: usage errors exit 64; --help tells the keys" {
	run -64 --separate-stderr "$PYUPROF" top
	[[ $stderr == *"give --pid PID"* ]]
	run -64 --separate-stderr "$PYUPROF" top -p 1 extra
	run -64 --separate-stderr "$PYUPROF" top -p 1 --interval 0
	run -0 "$PYUPROF" top --help
	[[ $output == *"q quits"* && $output == *"--interval=SECONDS"* ]]
	run -0 "$PYUPROF" --help
	[[ $output == *"top "*"live"* ]]
}
