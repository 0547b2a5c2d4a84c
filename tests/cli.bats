#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Bad input (issue 2): each case exits 1 (runtime failure) or 64 (usage error) with one
# "pyuprof: " line on stderr, leaves no output file (nor a temporary) behind, and leaves
# a target process running and not stopped. Every run starts in an empty directory so
# that the default output name, pyuprof-PID.prof, is checked too.

load helpers

setup() {
	init_started
	WORK="$BATS_TEST_TMPDIR/work"
	mkdir -p "$WORK"
	cd "$WORK"
	[[ -x $PYUPROF ]] || {
		[[ ${CI:-} == true ]] && { echo "$PYUPROF is not built" >&2; return 1; }
		skip_unless_ci "$PYUPROF is not built (run make)"
	}
}

teardown() {
	kill_started
	[[ -z ${NOBODY_DIR:-} ]] || rm -rf "$NOBODY_DIR"
}

# A Python process (2.7 too) that writes a line every 50 ms, for the attach cases; with
# arguments before the interpreter, e.g. setpriv ..., runs it through them.
HEARTBEAT='import sys, time
while True:
    sys.stdout.write("beat\n")
    sys.stdout.flush()
    time.sleep(0.05)'
start_heartbeat() {
	BEATS="$BATS_TEST_TMPDIR/beats.$RANDOM"
	start_bg "$BEATS" /dev/null "$@" -c "$HEARTBEAT"
	TARGET=$BG_PID
	wait_for_line "$BEATS" '^beat$' 10 "$TARGET"
}

# The output directory stays empty and, for attach cases, the target still runs: not
# stopped, and still writing lines.
check_nothing_left() {
	local before i
	assert_empty_dir "$WORK"
	[[ -n ${TARGET:-} ]] || return 0
	assert_unharmed "$TARGET"
	[[ -n ${BEATS:-} ]] || return 0
	before=$(wc -l <"$BEATS")
	for ((i = 0; i < 40; i++)); do
		(($(wc -l <"$BEATS") > before)) && return 0
		sleep 0.05
	done
	echo "target $TARGET stopped writing its heartbeat" >&2
	return 1
}

@test "cli: --help names the versions, says C functions are recorded, --no-builtins, exits 0" {
	run -0 "$PYUPROF" record --help
	[[ $output == *"CPython 3.8-3.15"* ]]
	[[ $(tr '\n' ' ' <<<"$output") == *"every call of a C function"* ]]
	[[ $output == *"--no-builtins"* ]]
}

@test "cli: C functions left out by a mode that cannot record them is said at the start" {
	require_bpf
	run_ok "$PYUPROF" record --exits trampoline -o "$BATS_TEST_TMPDIR/t.prof" -- \
		"$(py_path 3.12)" -c 'len("x")'
	grep -q '^pyuprof: recording pid [0-9]* (Python 3.12[.0-9]*); C functions are not recorded with --exits trampoline' <<<"$stderr"
	run_ok "$PYUPROF" record -o "$BATS_TEST_TMPDIR/b.prof" -- "$(py_path 3.12)" -c 'len("x")'
	! grep -q 'C functions are not recorded' <<<"$stderr"
	"$(py_path 3.12)" -c 'import pstats, sys; s = pstats.Stats(sys.argv[1]).stats
sys.exit(("~", 0, "<built-in method builtins.len>") not in s)' "$BATS_TEST_TMPDIR/b.prof"
}

@test "cli: unknown option is a usage error (64)" {
	run -64 --separate-stderr "$PYUPROF" record --no-such-flag
	[[ $stderr == *"unrecognized option"* ]]
	assert_empty_dir "$WORK"
}

@test "cli: no target at all is a usage error (64)" {
	run -64 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof"
	assert_one_error_line --usage
	assert_empty_dir "$WORK"
	run -64 --separate-stderr "$PYUPROF" record
	assert_one_error_line --usage
	check_nothing_left
}

@test "cli: both --pid and a command is a usage error (64)" {
	require_some_py
	start_heartbeat "$PY"
	run -64 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof" -p "$TARGET" -- "$PY" -c pass
	assert_one_error_line --usage
	check_nothing_left
}

@test "cli: bad -d values are usage errors (64)" {
	require_some_py
	start_heartbeat "$PY"
	local d
	# past 1e9 s (31 years) the deadline in ns would overflow: 1e300 once meant "stop now"
	for d in abc 0 -1 "" 1x nan inf 1e300 1000000001; do
		run -64 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof" -p "$TARGET" -d "$d"
		assert_one_error_line --usage || { echo "for -d '$d'" >&2; return 1; }
		check_nothing_left
	done
}

@test "cli: --ringbuf-mb must be a power of two from 1 to 2048 (usage error 64)" {
	require_some_py
	start_heartbeat "$PY"
	local mb
	# 4096 MiB is 2^32 bytes: it used to wrap to a 0-byte ring buffer
	for mb in 0 3 4096 8192 1048576 -2 abc; do
		run -64 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof" -p "$TARGET" \
			--ringbuf-mb "$mb"
		assert_one_error_line --usage || { echo "for --ringbuf-mb '$mb'" >&2; return 1; }
		[[ $stderr == *"from 1 to 2048"* ]]
		check_nothing_left
	done
}

@test "cli: a --pid that does not exist fails (1)" {
	local dead
	sleep 0 &
	dead=$!
	wait "$dead" || true
	if kill -0 "$dead" 2>/dev/null; then
		skip "pid $dead was reused already"
	fi
	run -1 --separate-stderr "$PYUPROF" record -p "$dead"
	assert_one_error_line
	check_nothing_left
	run -1 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof" -p "$dead" -d 1
	assert_one_error_line
	check_nothing_left
}

@test "cli: a pid that is not a Python process fails (1), target unharmed" {
	start_bg /dev/null /dev/null sleep 60
	TARGET=$BG_PID
	run -1 --separate-stderr "$PYUPROF" record -p "$TARGET"
	assert_one_error_line
	check_nothing_left
}

@test "cli: attaching to Python 2.7, 3.6 and 3.7 is refused (1), targets unharmed" {
	local label found=0
	for label in "${UNSUPPORTED_PYS[@]}"; do
		have_py "$label" || continue
		found=1
		start_heartbeat "$PY"
		run -1 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof" -p "$TARGET"
		assert_one_error_line || { echo "for Python $label" >&2; return 1; }
		check_nothing_left
	done
	[[ $found -eq 1 ]] || skip_unless_ci "none of ${UNSUPPORTED_PYS[*]} is installed"
}

@test "cli: launching Python 2.7, 3.6 or 3.7 is refused (1)" {
	local label found=0
	for label in "${UNSUPPORTED_PYS[@]}"; do
		have_py "$label" || continue
		found=1
		run -1 --separate-stderr "$PYUPROF" record -- "$PY" -c 'import sys; sys.exit(3)'
		assert_one_error_line || { echo "for Python $label" >&2; return 1; }
		assert_empty_dir "$WORK"
	done
	[[ $found -eq 1 ]] || skip_unless_ci "none of ${UNSUPPORTED_PYS[*]} is installed"
}

@test "cli: -- followed by a command that does not exist fails (1)" {
	run -1 --separate-stderr "$PYUPROF" record -o "$WORK/out.prof" -- "$WORK/no-such-program"
	assert_one_error_line
	assert_empty_dir "$WORK"
	run -1 --separate-stderr "$PYUPROF" record -- no-such-program-pyuprof-test
	assert_one_error_line
	assert_empty_dir "$WORK"
}

@test "cli: output in a missing directory fails (1), target unharmed" {
	require_some_py
	run -1 --separate-stderr "$PYUPROF" record -o "$WORK/missing/out.prof" -- "$PY" -c pass
	assert_one_error_line
	assert_empty_dir "$WORK"
	start_heartbeat "$PY"
	run -1 --separate-stderr "$PYUPROF" record -o "$WORK/missing/out.prof" -p "$TARGET"
	assert_one_error_line
	check_nothing_left
}

@test "cli: outputs onto a device or a FIFO go through it, which stays what it was" {
	require_bpf
	require_some_py
	# a private null device, so that a regression replaces this node, not the machine's
	mknod -m 666 "$WORK/null" c 1 3
	run -0 --separate-stderr "$PYUPROF" record -q -o "$WORK/null" --flamegraph "$WORK/null" \
		--collapsed "$WORK/null" -- "$PY" -c pass
	[[ -c $WORK/null ]]
	[[ -z $(ls -A "$WORK" | grep -v '^null$') ]] # no temporary file beside it
	# a FIFO with a reader gets the whole profile; without one, one error line before anything runs
	mkfifo "$WORK/fifo"
	run -1 --separate-stderr "$PYUPROF" record -o "$WORK/fifo" -- "$PY" -c 'open("ran", "w")'
	assert_one_error_line
	[[ $stderr == *"cannot write $WORK/fifo: No such device or address"* && ! -e ran ]]
	cat "$WORK/fifo" >"$WORK/got.prof" &
	run -0 --separate-stderr "$PYUPROF" record -q -o "$WORK/fifo" -- "$PY" "$TARGETS/recursion.py"
	wait
	[[ -p $WORK/fifo ]]
	run -0 "$PY" -c 'import pstats, sys; s = pstats.Stats(sys.argv[1]).stats
assert any(k[2] == "fib" for k in s), s' "$WORK/got.prof"
	# a directory is refused
	run -1 --separate-stderr "$PYUPROF" record -o "$WORK" -- "$PY" -c pass
	assert_one_error_line
	[[ $stderr == *"Is a directory"* ]]
}

@test "cli: output in a read-only directory fails (1), target unharmed" {
	require_some_py
	command -v unshare >/dev/null || skip_unless_ci "no unshare"
	[[ $(id -u) -eq 0 ]] || skip_unless_ci "needs root to mount"
	mkdir "$WORK/ro"
	# a read-only bind mount, private to this command's mount namespace: root ignores
	# permission bits, so chmod 555 would not make a directory read-only for pyuprof
	local ro="mount --bind -o ro \"\$0\" \"\$0\" && exec \"\$@\""
	run -1 --separate-stderr unshare -m sh -c "$ro" "$WORK/ro" \
		"$PYUPROF" record -o "$WORK/ro/out.prof" -- "$PY" -c pass
	assert_one_error_line
	start_heartbeat "$PY"
	run -1 --separate-stderr unshare -m sh -c "$ro" "$WORK/ro" \
		"$PYUPROF" record -o "$WORK/ro/out.prof" -p "$TARGET"
	assert_one_error_line
	rmdir "$WORK/ro"
	check_nothing_left
}


@test "cli: not root fails (1), in launch and attach mode, target unharmed" {
	local py=/usr/bin/python3 dir
	local -a nobody=()
	[[ -x $py ]] || skip_unless_ci "no $py (must be runnable by user nobody)"
	# as user nobody when we are root, else we are unprivileged already
	[[ $(id -u) -ne 0 ]] || nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# a directory nobody may write to, so a missing file proves pyuprof wrote nothing
	dir=$(mktemp -d "/tmp/pyuprof-cli.XXXXXX")
	NOBODY_DIR=$dir
	chmod 1777 "$dir"
	WORK=$dir
	cd "$dir"
	run -1 --separate-stderr "${nobody[@]}" "$PYUPROF" record -o "$dir/out.prof" -- "$py" -c pass
	assert_one_error_line
	assert_empty_dir "$dir"
	# a target of the same user: only the missing privileges are in the way
	start_heartbeat "${nobody[@]}" "$py"
	run -1 --separate-stderr "${nobody[@]}" "$PYUPROF" record -p "$TARGET"
	assert_one_error_line
	check_nothing_left
}

@test "cli: root without capabilities fails (1)" {
	[[ $(id -u) -eq 0 ]] || skip_unless_ci "needs root to drop capabilities"
	require_some_py
	run -1 --separate-stderr setpriv --bounding-set=-all --inh-caps=-all \
		"$PYUPROF" record -o "$WORK/out.prof" -- "$PY" -c pass
	assert_one_error_line
	assert_empty_dir "$WORK"
}

@test "outputs: under sudo they belong to the invoking user; a symlink is replaced, not followed" {
	require_bpf
	require_some_py
	echo keep >"$WORK/target.txt"
	ln -s "$WORK/target.txt" "$WORK/link.prof"
	SUDO_UID=65534 SUDO_GID=65534 run -0 --separate-stderr "$PYUPROF" record -q \
		-o "$WORK/own.prof" --collapsed "$WORK/own.txt" -- "$PY" "$TARGETS/plain_calls.py"
	[[ $(stat -c %u:%g "$WORK/own.prof") == 65534:65534 ]]
	[[ $(stat -c %u:%g "$WORK/own.txt") == 65534:65534 ]]
	run -0 --separate-stderr "$PYUPROF" record -q -o "$WORK/link.prof" -- "$PY" \
		"$TARGETS/plain_calls.py"
	[[ ! -L $WORK/link.prof && -s $WORK/link.prof ]]
	[[ $(cat "$WORK/target.txt") == keep ]]
	"$PY" "$TOOLS/pstats_load.py" "$WORK/link.prof" >/dev/null
}
