#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A Python that runs in another root: a chroot (maps names its files ROOT/usr/..., the path
# pyuprof sees them by, not the process), and a container's root (tools/container.sh: a mount
# and PID namespace of its own, pivot_root; maps names them /usr/..., which outside are not
# its files at all). Launched through the wrapper and attached from outside, every recording
# equals cProfile's (run in the same root) and is calibrated with the target's own interpreter,
# run in its root: a root of another Debian release than pyuprof's (sid's python3.13 needs a
# newer glibc than the machine's) cannot be run outside it. The roots come from
# scripts/make-root.sh (install-deps.sh test).

load helpers
load server

setup() {
	init_started
	require_bpf
	require_root_py sid python3.13
	# the test's files, in the root: IN as pyuprof sees them, INR as the target does
	IN=$(mktemp -d "$ROOT/tmp/pyuprof-test.XXXXXX")
	chmod 755 "$IN"
	INR=${IN#"$ROOT"}
	cp "$TARGETS/mutual_recursion.py" "$TARGETS/long_running.py" "$TARGETS/threads.py" \
		"$TOOLS/cprofile_run.py" "$TOOLS/pstats_compare.py" "$IN/"
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	kill_started
	[[ -z ${IN:-} ]] || rm -rf "$IN"
}

in_root() { chroot "$ROOT" "$@"; }

# truth SCRIPT ARGS...: cProfile's profile of SCRIPT in the root, into $IN/cprofile.prof
# (the script's stdout into cprofile.out)
truth() {
	local script=$1
	shift
	in_root "$RPY" "$INR/cprofile_run.py" -o "$INR/cprofile.prof" "$INR/$script" "$@" \
		>cprofile.out
}

# same_as_truth OURS SCRIPT ARGS...: OURS (a .prof) equals $IN/cprofile.prof for SCRIPT's
# functions (ARGS: pstats_compare's options), compared by the root's Python
same_as_truth() {
	local ours=$1 script=$2
	shift 2
	cp "$ours" "$IN/ours.prof"
	if ! in_root "$RPY" "$INR/pstats_compare.py" "$INR/ours.prof" "$INR/cprofile.prof" \
		--file "$INR/$script" "$@" >compare.out 2>&1; then
		cat compare.out
		return 1
	fi
}

# calibrated ERR: pyuprof's stderr ERR says the times were compensated, with no failure
calibrated() {
	if grep -q "cannot calibrate" "$1" || ! grep -q "; calibrated: " "$1"; then
		echo "not calibrated:"
		cat "$1"
		return 1
	fi
}

# attach_rounds: pyuprof attached to TARGET (long_running.py --serve in the root) over 3
# rounds, which equal cProfile's 3 rounds; then the target ends well (BG_PID: its wrapper)
attach_rounds() {
	attach_pyuprof -v
	run_rounds 1 3
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	assert_unharmed "$TARGET"
	truth long_running.py --rounds 3 >/dev/null
	same_as_truth ours.prof long_running.py --below do_round --below report
	calibrated ours.err
	kill -USR2 "$TARGET"
	wait_exit "$BG_PID" 20
	[[ $EXIT_STATUS == 0 ]]
	grep -q '^rounds 3$' target.out
}

@test "roots: a Python in a chroot, launched through chroot: exact, calibrated, named by its path here" {
	truth mutual_recursion.py
	"$PYUPROF" record -v -o ours.prof -- chroot "$ROOT" "$RPY" "$INR/mutual_recursion.py" \
		>ours.out 2>ours.err || { cat ours.err; return 1; }
	cmp cprofile.out ours.out
	same_as_truth ours.prof mutual_recursion.py
	calibrated ours.err
	grep -q "^pyuprof: Python 3\.13\.[0-9]* in $ROOT$RPY (pid [0-9]*)" ours.err ||
		{ cat ours.err; return 1; }
}

@test "roots: a Python in a chroot, attached from outside: exact, calibrated" {
	start_bg target.out target.err chroot "$ROOT" "$RPY" "$INR/long_running.py" --serve 300
	TARGET=$BG_PID # (chroot execs the interpreter)
	wait_for_line target.out '^ready ' 20 "$TARGET"
	attach_rounds
}

@test "roots: a Python in a container's root (mount and PID namespace, pivot_root), attached from outside: exact, calibrated" {
	start_bg target.out target.err "$TOOLS/container.sh" "$ROOT" "$RPY" \
		"$INR/long_running.py" --serve 300
	wait_for_line target.out '^ready 1$' 20 "$BG_PID"
	TARGET=$(pgrep -P "$BG_PID" | head -n 1) # the namespace's pid 1, by its pid here
	[[ $(readlink "/proc/$TARGET/exe") == "$RPY" ]]
	attach_rounds
	# its file is named as maps shows it, and said to be one in its root
	grep -q "^pyuprof: Python 3\.13\.[0-9]* in $RPY in pid $TARGET's root" ours.err ||
		{ cat ours.err; return 1; }
}

@test "roots: a Python in a container's root, launched through the container's start with --subprocesses: exact (threads), calibrated" {
	truth threads.py
	"$PYUPROF" record -v --subprocesses --top 0 -o ours.prof -- \
		"$TOOLS/container.sh" "$ROOT" "$RPY" "$INR/threads.py" >ours.out 2>ours.err ||
		{ cat ours.err; return 1; }
	cmp cprofile.out ours.out
	same_as_truth ours.prof threads.py
	calibrated ours.err
	[[ $(summary_lost_events ours.err) == 0 ]]
	# the Python, a child process of the wrapper, named with its threads
	grep -q "^pyuprof: pid [0-9]* (Python 3\.13\.[0-9]*, started by [0-9]*): .* 5 threads; wrote " \
		ours.err || { cat ours.err; return 1; }
}
