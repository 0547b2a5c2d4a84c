#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The system calls pyuprof makes a target's thread run to map the trampoline page (inject.c):
# a target is never changed by them. Signals that arrive meanwhile are all taken, with what a
# handler does to the target's own blocked call; a thread under seccomp or in the target's own
# job-control stop is never made to run them; a process that forks and waits (SIGCHLDs all
# along) still gets its page; and a pyuprof killed in the middle of one leaves a thread that
# dies at once, never one that runs on with a wrong value. PYUPROF_TEST_INJECT_PAUSE=TID,K,MS
# holds the K-th call injected into TID for MS ms, with the thread inside it.

load helpers

# start_ready FIXTURE ARGS...: the fixture started under $PY (TARGET), once it says "ready"
start_ready() {
	start_bg target.out target.err "$PY" "$@"
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
}

# attach_paused PID K MS: pyuprof attached to PID for 3 s in the background (PYUPROF_PID),
# its K-th injected call held MS ms; returns once the call is held.
attach_paused() {
	PYUPROF_TEST_INJECT_PAUSE="$1,$2,$3" start_bg pyuprof.out pyuprof.err \
		"$PYUPROF" record -v --top 0 -p "$1" -d 3 -o out.prof
	PYUPROF_PID=$BG_PID
	wait_for_line pyuprof.err "test: injected call $2 " 20 "$PYUPROF_PID"
}

@test "inject: signals arriving mid-call are all taken; a raising handler ends the read (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_ready "$TARGETS/blocked_read.py" stop
	attach_paused "$TARGET" 1 1500
	kill -USR1 "$TARGET"
	kill -USR2 "$TARGET"
	kill -ALRM "$TARGET"
	# natively the handlers run at once and the read ends; they must not wait for the read
	# (which never returns) nor for pyuprof to leave
	wait_for_line target.out '^usr1' 10 "$TARGET"
	grep -qx 'usr1 1 usr2 1 timeout 6765' target.out || { cat target.out target.err; return 1; }
	wait_exit "$PYUPROF_PID" 20
	[[ $EXIT_STATUS == 0 ]] || { cat pyuprof.err; return 1; }
	grep -q "probe trampoline at 0x[0-9a-f]* in pid $TARGET\$" pyuprof.err || return 1
	touch stop
	wait_exit "$TARGET" 10
	[[ $EXIT_STATUS == 0 ]] || { cat target.out target.err; return 1; }
}

@test "inject: a thread under a seccomp filter is never made to run the calls (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	# its sandboxed thread's filter kills the process at memfd_create
	start_ready "$TARGETS/seccomp_thread.py" 3
	run -0 --separate-stderr "$PYUPROF" record -v --top 0 -p "$TARGET" -d 1 -o out.prof
	grep -q "probe trampoline at 0x[0-9a-f]* in pid $TARGET\$" <<<"$stderr" ||
		{ echo "$stderr"; return 1; }
	wait_exit "$TARGET" 20
	cat target.out target.err
	[[ $EXIT_STATUS == 0 ]] && grep -qx 'done 6765' target.out
}

@test "inject: a process stopped by job control stays stopped; -v says why no page (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_ready "$TARGETS/fork_children.py" -t 2
	kill -STOP "$TARGET"
	run -0 --separate-stderr "$PYUPROF" record -v --top 0 -p "$TARGET" -d 0.5 -o out.prof
	grep -q "no probe trampoline in pid $TARGET (no thread of it can make system calls" \
		<<<"$stderr" || { echo "$stderr"; return 1; }
	grep -q "cannot stop" <<<"$stderr" && { echo "$stderr"; return 1; }
	# pyuprof has exited: the target is let go as it was, stopped (T), not traced (t) nor
	# running (it never gets SIGCONT before the check)
	local i state
	for ((i = 0; i < 100; i++)); do
		state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$TARGET/status")
		[[ $state == t ]] || break
		sleep 0.05
	done
	[[ $state == T ]] || { echo "target state $state"; return 1; }
	kill -CONT "$TARGET"
	wait_exit "$TARGET" 30
	cat target.out
	[[ $EXIT_STATUS == 0 ]] && grep -Eq '^children [0-9]+ bad 0 signalled 0$' target.out
}

@test "inject: a process that forks and waits gets its page at every attach (3.12)" {
	local i
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	# each child's exit sends a SIGCHLD, often while the calls are made: once that held the
	# thread in a signal stop that the injection refused, and placing failed (EAGAIN). (The
	# target forks until the attach is done: on a loaded machine attaching took longer than
	# the 1.5 s it once had.)
	for i in 1 2 3 4 5; do
		rm -f stop
		start_bg "target$i.out" target.err "$PY" "$TARGETS/fork_children.py" -u stop
		TARGET=$BG_PID
		wait_for_line "target$i.out" '^ready' 20 "$TARGET"
		run -0 --separate-stderr "$PYUPROF" record -v --top 0 -p "$TARGET" -d 0.3 \
			-o "out$i.prof"
		grep -q "probe trampoline at 0x[0-9a-f]* in pid $TARGET\$" <<<"$stderr" ||
			{ echo "attach $i: $stderr"; return 1; }
		touch stop
		wait_exit "$TARGET" 30
		[[ $EXIT_STATUS == 0 ]] || { cat "target$i.out"; return 1; }
	done
}

# A storm of signals (SIGWINCH, ignored by the target) while pyuprof attaches: every call it
# injects meets many. The injection once gave up after 64 stops that were not its system
# call's and left the thread running from the vDSO's `syscall; leave; ret` with the injected
# registers (the target died; placing failed with "Protocol error"); now each signal waits
# in the kernel's queue while the thread makes the calls.
@test "inject: a storm of signals during the attach: the page is placed, the target runs on (3.13)" {
	local storm r
	require_py 3.13
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	cc -O2 -o storm "$TARGETS/ext/signal_storm.c"
	for r in 1 2 3; do # (not i: bats' run sets a global i)
		start_bg "target$r.out" target.err "$PY" "$TARGETS/long_running.py" --loop 4
		TARGET=$BG_PID
		wait_for_line "target$r.out" '^ready' 20 "$TARGET"
		start_bg /dev/null /dev/null ./storm "$TARGET" 2.5 28
		storm=$BG_PID
		run -0 --separate-stderr "$PYUPROF" record -v --top 0 -p "$TARGET" -d 1 \
			-o "out$r.prof"
		grep -q "probe trampoline at 0x[0-9a-f]* in pid $TARGET\$" <<<"$stderr" ||
			{ echo "attach $r: $stderr"; return 1; }
		wait_exit "$storm" 20
		wait_exit "$TARGET" 30
		[[ $EXIT_STATUS == 0 ]] || { cat "target$r.out" target.err; return 1; }
		grep -q '^rounds [0-9]' "target$r.out"
	done
}

@test "inject: a storm of signals during the attach: the page is placed, the target runs on (3.14)" {
	local storm r
	require_py 3.14
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	cc -O2 -o storm "$TARGETS/ext/signal_storm.c"
	for r in 1 2 3; do # (not i: bats' run sets a global i)
		start_bg "target$r.out" target.err "$PY" "$TARGETS/long_running.py" --loop 4
		TARGET=$BG_PID
		wait_for_line "target$r.out" '^ready' 20 "$TARGET"
		start_bg /dev/null /dev/null ./storm "$TARGET" 2.5 28
		storm=$BG_PID
		run -0 --separate-stderr "$PYUPROF" record -v --top 0 -p "$TARGET" -d 1 \
			-o "out$r.prof"
		grep -q "probe trampoline at 0x[0-9a-f]* in pid $TARGET\$" <<<"$stderr" ||
			{ echo "attach $r: $stderr"; return 1; }
		wait_exit "$storm" 20
		wait_exit "$TARGET" 30
		[[ $EXIT_STATUS == 0 ]] || { cat "target$r.out" target.err; return 1; }
		grep -q '^rounds [0-9]' "target$r.out"
	done
}

# pyuprof SIGKILLed while call K is held: the thread must die of SIG at once.
check_killed_in_call() {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_ready "$TARGETS/blocked_read.py"
	attach_paused "$TARGET" "$1" 3000
	kill -KILL "$PYUPROF_PID"
	wait_exit "$TARGET" 10
	[[ $EXIT_STATUS == "$2" ]] || { echo "target exit $EXIT_STATUS, not $2"; return 1; }
}

@test "inject: pyuprof SIGKILLed in the first call: the thread dies of SIGSEGV (3.12)" {
	check_killed_in_call 1 $((128 + 11))
}

@test "inject: pyuprof SIGKILLed in a later call: the thread dies of SIGILL (3.12)" {
	check_killed_in_call 3 $((128 + 4))
}
