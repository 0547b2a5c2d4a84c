#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Overhead compensation (issue 11): on by default, calibrated at the start of each recording
# and stated in the summary; --no-compensation keeps the times as recorded; a raw recording
# keeps the uncompensated events and the calibration, so report gives either back; when the
# calibration cannot run, one line says so and the recording goes on uncompensated; the
# calibration is kept for the next recordings of the same interpreter file, in steps of the
# call-free loop, and turned into ns by the machine's speed as each starts. The
# arithmetic itself is tests/unit/test_compensation.c's; no timing is asserted here. A signal
# during the calibration ends pyuprof before it records, and leaves no process behind.

load helpers
load server

# The figures of the summary line in $stderr: sets CALL_US and INSIDE_US.
calibrated_figures() {
	local re='calibrated: ([0-9.]+) µs a call, ([0-9.]+) inside'
	[[ $stderr =~ $re ]] || { echo "no calibration in: $stderr"; return 1; }
	CALL_US=${BASH_REMATCH[1]}
	INSIDE_US=${BASH_REMATCH[2]}
}

total_tottime() {
	"$PY" "$TOOLS/pstats_field.py" "$1" --total-tottime
}

@test "compensation: figures in the summary; report gives back either profile; calls unchanged" {
	require_bpf
	require_py 3.12
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record -o comp.prof --raw run.raw \
		-- "$PY" "$TARGETS/recursion.py"
	calibrated_figures
	awk -v c="$CALL_US" -v i="$INSIDE_US" 'BEGIN { exit !(c > 0 && i >= 0 && i <= c) }'
	run -0 --separate-stderr "$PYUPROF" report run.raw -o again.prof
	cmp comp.prof again.prof
	[[ $stderr == *"calibrated: $CALL_US µs a call, $INSIDE_US inside"* ]]
	run -0 --separate-stderr "$PYUPROF" report --no-compensation run.raw -o raw.prof
	[[ $stderr != *calibrated* ]]
	# the same calls and callers, less time
	"$PY" "$TOOLS/pstats_compare.py" raw.prof comp.prof --file "$TARGETS/recursion.py"
	awk -v r="$(total_tottime raw.prof)" -v c="$(total_tottime comp.prof)" \
		'BEGIN { exit !(r > c) }'
}

@test "compensation: --no-compensation records the times as they are, report gives them back" {
	require_bpf
	require_py 3.12
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record --no-compensation -o nc.prof --raw nc.raw \
		-- "$PY" "$TARGETS/generators.py"
	[[ $stderr != *calibrat* ]]
	run -0 --separate-stderr "$PYUPROF" report --no-compensation nc.raw -o again.prof
	cmp nc.prof again.prof
	# without calibration in it, report says so and gives the same times
	run -0 --separate-stderr "$PYUPROF" report nc.raw -o again2.prof
	[[ $stderr == *"nc.raw holds no calibration"* ]]
	cmp nc.prof again2.prof
}

@test "compensation: raw recordings of an older or a newer format are refused in one line" {
	local v
	require_bpf
	require_py 3.10
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record -q --no-compensation -o nc.prof --raw v4.raw \
		-- "$PY" "$TARGETS/plain_calls.py"
	run -0 --separate-stderr "$PYUPROF" report -q v4.raw -o again.prof
	cmp nc.prof again.prof
	mkdir out
	# the format number is the header's 32-bit word after the 8-byte magic; 2 had a shorter
	# code record, 9 is not made yet
	for v in 2 9; do
		cp v4.raw "v$v.raw"
		printf "\\x$(printf %02x "$v")\\000\\000\\000" |
			dd of="v$v.raw" bs=1 seek=8 conv=notrunc status=none
		run -1 --separate-stderr "$PYUPROF" report "v$v.raw" -o "out/v$v.prof"
		assert_one_error_line
		[[ $stderr == *"format $v"* ]]
	done
	assert_empty_dir out
}

@test "compensation: a raw recording of format 3 (no generator returns or code flushes, a shorter calibration) is read (3.12)" {
	require_bpf
	require_py 3.12
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record -o v4.prof --raw v4.raw \
		-- "$PY" "$TARGETS/gen_returns.py" 50
	calibrated_figures
	# format 4 has them: returns of generators that ended (9, 10), code flushes (106)
	run -0 "$PY" "$TOOLS/raw_types.py" v4.raw
	[[ $output == *$'\n9 '* && $output == *$'\n10 '* && $output == *$'\n106 '* ]]
	# as the last pyuprof that wrote format 3 would have: (tests/tools/raw_types.py)
	"$PY" "$TOOLS/raw_types.py" v4.raw --as-v3 v3.raw
	run -0 "$PY" "$TOOLS/raw_types.py" v3.raw
	[[ $output != *$'\n9 '* && $output != *$'\n10 '* && $output != *$'\n106 '* ]]
	run -0 --separate-stderr "$PYUPROF" report v3.raw -o v3.prof
	[[ $stderr == *"calibrated: $CALL_US µs a call, $INSIDE_US inside"* ]]
	"$PY" "$TOOLS/pstats_compare.py" v3.prof v4.prof --file "$TARGETS/gen_returns.py"
}

@test "compensation: the speed gauge's readings are recorded; a raw recording of format 7 (none, a shorter calibration) is read (3.12, Debian's 3.11)" {
	local label
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	for label in 3.12 deb3.11; do
		have_py "$label" || continue
		run -0 --separate-stderr "$PYUPROF" record -v -o v8.prof --raw v8.raw \
			-- "$PY" "$TARGETS/plain_calls.py"
		# the calibration's readings relate the gauge to the loop's step, and the
		# recording's scale its figures
		[[ $stderr == *"at a speed gauge reading of "* ]]
		[[ $stderr =~ [0-9]+\ speed\ gauge\ readings:\ the\ probes\'\ cost\ taken\ at ]]
		run -0 "$PY" "$TOOLS/raw_types.py" v8.raw
		[[ $output == *$'\n107 '* ]]
		"$PY" "$TOOLS/raw_types.py" v8.raw --as-v7 v7.raw
		run -0 "$PY" "$TOOLS/raw_types.py" v7.raw
		[[ $output != *$'\n107 '* ]]
		run -0 --separate-stderr "$PYUPROF" report v7.raw -o v7.prof
		[[ $stderr == *"calibrated: "* ]]
		"$PY" "$TOOLS/pstats_compare.py" v7.prof v8.prof --file "$TARGETS/plain_calls.py"
	done
}

@test "compensation: a program that is not a python interpreter by name: one line, uncompensated" {
	require_bpf
	require_py deb3.11
	cd "$BATS_TEST_TMPDIR"
	# Debian's static interpreter under another name, as an embedding program would be
	cp "$PY" ./interp
	run -0 --separate-stderr "$PYUPROF" record -o p.prof -- ./interp "$TARGETS/plain_calls.py"
	[[ $(grep -c "cannot calibrate" <<<"$stderr") == 1 ]]
	[[ $stderr == *"is not a python interpreter"* ]]
	[[ $stderr == *"not compensated (calibration failed)"* ]]
	"$PY" "$TOOLS/pstats_load.py" p.prof >/dev/null
}

@test "compensation: the calibration is kept per interpreter file and scaled by the machine's speed; --recalibrate measures again; a file others could write is not read" {
	require_bpf
	require_py deb3.11
	cd "$BATS_TEST_TMPDIR"
	export PYUPROF_CACHE_DIR=$BATS_TEST_TMPDIR/cache
	run -0 --separate-stderr "$PYUPROF" record -v -o a.prof -- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* && $stderr == *"calibration took"* ]]
	calibrated_figures
	# kept: no calibration, but the speed run's step turns the steps into ns
	run -0 --separate-stderr "$PYUPROF" record -v -o b.prof -- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr != *"calibrating the probes' cost"* ]]
	[[ $stderr =~ "calibration kept from "[0-9T:-]+"Z (steps of the call-free loop, "[0-9.]+" ns a step then); the loop's step now "[0-9.]+" ns" ]]
	calibrated_figures
	"$PY" "$TOOLS/pstats_compare.py" a.prof b.prof --file "$TARGETS/plain_calls.py"
	# C functions left out (--no-builtins): a Python call costs less, and no C call is
	# recorded; its figures are kept apart (before, either mode took the other's)
	run -0 --separate-stderr "$PYUPROF" record -v --no-builtins -o nb.prof \
		-- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* ]]
	run -0 --separate-stderr "$PYUPROF" record -v --no-builtins -o nb.prof \
		-- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibration kept from"* ]]
	run -0 --separate-stderr "$PYUPROF" record -v --recalibrate -o c.prof \
		-- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* ]]
	# another file (a copy of the interpreter) is calibrated for itself
	cp "$PY" ./python3-copy
	run -0 --separate-stderr "$PYUPROF" record -v -o d.prof \
		-- ./python3-copy "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* ]]
	run -0 --separate-stderr "$PYUPROF" record -v -o d.prof \
		-- ./python3-copy "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibration kept from"* ]]
	# a cache file that another user could have written is not read
	chmod 666 "$PYUPROF_CACHE_DIR/calibration"
	run -0 --separate-stderr "$PYUPROF" record -v -o e.prof -- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* ]]
	# nor a directory
	chmod 777 "$PYUPROF_CACHE_DIR"
	run -0 --separate-stderr "$PYUPROF" record -v -o f.prof -- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* ]]
	run -0 --separate-stderr "$PYUPROF" record -v -o f.prof -- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"calibrating the probes' cost with"* ]]
}

# A speed run made at a moment the machine ran 10x slower (PYUPROF_TEST_SPEED_SLOWER) would
# charge every call ten times the probes' cost: a short call-dense section compensated to
# nothing. A step above the machine's fast one (here: the calibration's own) is taken at the
# fast one: the figure in ns is then the calibration's, whatever the moment said. (10x: the
# speed run itself may fall at a moment faster than the calibration's, by 1.3-1.7x here.)
@test "compensation: a speed run slower than the machine's fast step charges no more than the cost at that step" {
	require_bpf
	require_py deb3.11
	cd "$BATS_TEST_TMPDIR"
	export PYUPROF_CACHE_DIR=$BATS_TEST_TMPDIR/cache
	run -0 --separate-stderr "$PYUPROF" record -v -o a.prof -- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr =~ "calibrated: "([0-9]+)" ns a call" ]]
	local measured=${BASH_REMATCH[1]}
	PYUPROF_TEST_SPEED_SLOWER=10 run -0 --separate-stderr "$PYUPROF" record -v -o b.prof \
		-- "$PY" "$TARGETS/plain_calls.py"
	[[ $stderr == *"is above the machine's fast one"*"that one taken"* ]]
	[[ $stderr =~ "calibrated: "([0-9]+)" ns a call" ]]
	echo "measured $measured ns a call, at 10x slower: ${BASH_REMATCH[1]}"
	((BASH_REMATCH[1] <= measured + 1))
}

# interrupted SIG: pyuprof attached to TARGET gets SIG while it calibrates: it ends before it
# records, with one line and no file, and the target was never touched.
interrupted() {
	local sig=$1 err=$BATS_TEST_TMPDIR/i.err
	start_bg /dev/null "$err" "$PYUPROF" record -v --recalibrate -o "$BATS_TEST_TMPDIR/i.prof" \
		-p "$TARGET"
	REC=$BG_PID
	wait_for_line "$err" "calibrating the probes' cost" 60 "$REC"
	kill "-$sig" "$REC"
	wait_exit "$REC" 30
	# (-v's progress lines come first)
	[[ $EXIT_STATUS == 1 ]] || { echo "SIG$sig: status $EXIT_STATUS"; cat "$err"; return 1; }
	[[ $(tail -n 1 "$err") == "pyuprof: stopped by a signal before recording pid $TARGET" ]] ||
		{ echo "SIG$sig:"; cat "$err"; return 1; }
	! grep -E "cannot calibrate|^pyuprof: recording pid|error" "$err"
	[[ ! -e $BATS_TEST_TMPDIR/i.prof ]]
	assert_unharmed "$TARGET"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TARGET/status"
}

# Processes still alive that pyuprof run with MARK in its environment left behind (the
# calibration's runs and a fork of pyuprof inherit it; other pyuprofs on the machine do not).
ours_left() {
	local p found=1
	for p in /proc/[0-9]*; do
		[[ ${p#/proc/} != "$REC" ]] || continue
		if tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "PYUPROF_TEST_MARK=$1"; then
			echo "${p#/proc/}"
			found=0
		fi
	done
	return $found
}

@test "compensation: a signal during the calibration ends pyuprof before it records; SIGKILL leaves no process behind" {
	local i mark
	require_bpf
	require_py 3.12
	start_server
	interrupted INT
	interrupted TERM
	interrupted HUP
	# SIGKILL at moments spread over the calibration (plain run, snippet launch, recording)
	for ((i = 0; i < 6; i++)); do
		mark="$BATS_TEST_TMPDIR/kill$i.prof"
		start_bg /dev/null "$BATS_TEST_TMPDIR/k.err" env PYUPROF_TEST_MARK="$mark" \
			"$PYUPROF" record -v --recalibrate -o "$mark" -p "$TARGET"
		REC=$BG_PID
		wait_for_line "$BATS_TEST_TMPDIR/k.err" "calibrating the probes' cost" 60 "$REC"
		sleep "0.$((i * 15))"
		kill -KILL "$REC"
		wait_exit "$REC" 10
		# the unprobed run ends by itself (well under a second); nothing may stay stopped
		for ((j = 0; j < 100; j++)); do
			ours_left "$mark" >/dev/null || break
			sleep 0.1
		done
		if ours_left "$mark"; then
			echo "SIGKILL $i left these:"
			ps -o pid,stat,args -p "$(ours_left "$mark" | paste -sd, -)"
			return 1
		fi
		assert_unharmed "$TARGET"
	done
}
