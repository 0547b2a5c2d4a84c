#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# No harm (issue 19): a recorded program behaves as it does natively. Its forked children run
# (kernel 6.18 rewrites a probed nop into a call of a page a child does not inherit: each child
# crashed at its first Python call), a fork pool finishes with no worker lost, a child that
# pyuprof follows is left with its own code whichever way pyuprof ends, and recursion stops
# where it stops natively (3.12+ spend a per-thread C budget per call once inlining is off),
# also after a hundred attach/detach cycles on one process; a thread asleep in epoll_wait or
# sigtimedwait sleeps on through pyuprof's stops (an interrupt ends those calls with EINTR). Each fixture checks itself; the
# natively measured results are the truth. One @test line per interpreter (bats 1.8 collects
# tests from the file's text).

load helpers

# Forked children in launch mode: each runs Python and checks its eval_frame hook is native.
check_fork_launch() {
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run_ok "$PYUPROF" record -q -o out.prof -- \
		"$PY" "$TARGETS/fork_children.py" 20
	[[ $output == "children 20 bad 0 signalled 0" ]] || { show_run; return 1; }
}

# Threads started while recorded, each of which forks a child as the first thing it does: in the
# batch mode a new thread runs before pyuprof seizes it (no clone stop), so its child may be one
# the hold never saw born; the page then gives the child its own hook back itself (each child
# checks that its hook is native). The native run is the truth, and the parent's calls are all
# recorded.
check_thread_forks() {
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run_ok "$PY" -W ignore "$TARGETS/fork_children.py" -T 40
	[[ $output == "children 40 bad 0 signalled 0" ]] || { show_run; return 1; }
	run_ok "$PYUPROF" record -q -o out.prof -- "$PY" -W ignore "$TARGETS/fork_children.py" -T 40
	[[ $output == "children 40 bad 0 signalled 0" ]] || { show_run; return 1; }
	[[ $(python3 "$TOOLS/pstats_field.py" out.prof spawn ncalls) == 40 ]] ||
		{ echo "spawn is not in out.prof 40 times"; return 1; }
}

# New threads whose first act asks pyuprof to write (the eval_frame hook reset to the default
# evaluator: NULL on 3.11+): a thread pyuprof does not trace yet is not sent the request signal,
# which would reach the program (it counts the SIGURG it gets: none natively). Every call is
# recorded (fib(12): 465 calls a thread), or, where a thread ran with its hook reset before
# pyuprof had seized it, that is said; with PYUPROF_CLONE_STOP=1 (each new thread held at its
# start) every call.
check_thread_requests() {
	local calls
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run_ok "$PY" "$TARGETS/thread_requests.py" 30
	[[ $output == "threads 30 fib 30 sigurg 0" ]] || { show_run; return 1; }
	run_ok "$PYUPROF" record -o out.prof -- "$PY" "$TARGETS/thread_requests.py" 30
	[[ $output == "threads 30 fib 30 sigurg 0" ]] || { show_run; return 1; }
	calls=$(python3 "$TOOLS/pstats_field.py" out.prof fib ncalls)
	[[ $calls == 13950 ]] || grep -q "asked pyuprof to act before pyuprof had seized it" \
		<<<"$stderr" || { echo "fib $calls times in out.prof, not said"; show_run; return 1; }
	PYUPROF_CLONE_STOP=1 run_ok "$PYUPROF" record -q -o stop.prof -- \
		"$PY" "$TARGETS/thread_requests.py" 30
	[[ $output == "threads 30 fib 30 sigurg 0" ]] || { show_run; return 1; }
	[[ $(python3 "$TOOLS/pstats_field.py" stop.prof fib ncalls) == 13950 ]] ||
		{ echo "fib is not in stop.prof 13950 times"; return 1; }
}

# A process that forks all along, attached to twice for a moment: no child harmed. It forks until
# both attaches are done (a fixed time was a race: two attaches of a second each once took 5.2
# s on a slow VM, longer than the 5 s the target had).
check_fork_attach() {
	local i
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" "$TARGETS/fork_children.py" -u stop
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
	for i in 1 2; do
		run_ok "$PYUPROF" record -v --top 0 -p "$TARGET" -d 1 \
			-o "out$i.prof"
		assert_unharmed "$TARGET"
		# the children must have been forked with the trampoline's probes in place
		grep -q "probe trampoline at" <<<"$stderr" || { show_run; return 1; }
	done
	touch stop
	wait_exit "$TARGET" 60
	cat target.out
	[[ $EXIT_STATUS == 0 ]] && grep -Eq '^children [0-9]+ bad 0 signalled 0$' target.out
}

# A fork pool: the right result, and no worker replaced (the pool hides a dead one).
check_fork_pool() {
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run_ok timeout 120 "$PYUPROF" record -q -o out.prof -- \
		"$PY" "$TARGETS/fork_pool.py" 2 60 pids
	[[ $output =~ ^result\ [0-9]+\ workers\ 2$ ]] || { show_run; return 1; }
}

# The fork pool fixture counts a worker that starts late, natively and recorded: here the second
# worker sleeps 1 s after its fork, by which time the first has done every task. The fixture
# used to leave the pool's `with` block at once, which terminates the pool and so killed a
# worker not yet past its initializer: "workers 1", natively too under load (a CPU-bound
# neighbour delays the second worker's start past the 60 short tasks).
check_fork_pool_late_worker() {
	local late='
import os, runpy, sys, time
forks = 0
def forked():
    global forks
    forks += 1
os.register_at_fork(after_in_parent=forked, after_in_child=lambda: forks and time.sleep(1))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")'
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run_ok timeout 120 "$PY" -c "$late" "$TARGETS/fork_pool.py" 2 60 pids
	[[ $output =~ ^result\ [0-9]+\ workers\ 2$ ]] || { show_run; return 1; }
	run_ok timeout 120 "$PYUPROF" record -q -o out.prof -- \
		"$PY" -c "$late" "$TARGETS/fork_pool.py" 2 60 pids
	[[ $output =~ ^result\ [0-9]+\ workers\ 2$ ]] || { show_run; return 1; }
}

# Recursion stops where it does natively, recorded from the start, with C functions (the
# default) and with --no-builtins. 3.14+: but where a bare PEP 523 hook alone moves it the same
# way (tools/recursion_compare.py: the kinds 3.14 counts otherwise when it runs their calls
# inline, which any hook turns off). With C functions recorded, 3.11-3.13 call builtins and
# (3.13) classes through paths that take other units of the recursion budgets than their
# specialised calls natively (the page gives them back: tramp_code.S, .Lcf_units, .Lcf_init);
# the fixture's kinds must show that path: a bare watcher of C calls (recursion_limits.py
# --ccalls, which gives nothing back) moves them there.
check_recursion_launch() {
	local native hook=() watched bare
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	build_hook
	native=$("$PY" "$TARGETS/recursion_limits.py")
	[[ $1 =~ 3\.1[4-9]$ ]] && hook=(--pep523)
	if [[ $1 =~ ^(deb)?3\.1[1-3]$ ]]; then
		watched=$("$PY" "$TARGETS/recursion_limits.py" --ccalls)
		[[ $watched != "$native" ]] ||
			{ echo "a bare watcher of C calls moves no kind: $watched"; return 1; }
	fi
	bare=()
	((${#hook[@]})) && bare=("$("$PY" "$TARGETS/recursion_limits.py" --pep523)")
	run_ok "$PYUPROF" record -q -o out.prof -- \
		"$PY" "$TARGETS/recursion_limits.py"
	if ! python3 "$TOOLS/recursion_compare.py" "$native" "$output" "${bare[@]}"; then
		show_run
		return 1
	fi
	run_ok "$PYUPROF" record -q --no-builtins -o out.prof -- \
		"$PY" "$TARGETS/recursion_limits.py"
	if ! python3 "$TOOLS/recursion_compare.py" "$native" "$output" "${bare[@]}"; then
		echo "(--no-builtins)"
		show_run
		return 1
	fi
}

# Every thread of PID is untraced (TracerPid 0): pyuprof let each one go.
assert_untraced() {
	local f tracer
	for f in /proc/"$1"/task/*/status; do
		tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "$f" 2>/dev/null) || continue
		[[ -z $tracer || $tracer == 0 ]] || { echo "$f: TracerPid $tracer" >&2; return 1; }
	done
}

# Two threads asleep in epoll_wait and sigtimedwait, called raw (an EINTR is seen as it is),
# while pyuprof attaches twice with the main thread running Python calls (busy), or asleep
# itself (then a thread is needed to make the trampoline's system calls in: the main one,
# which wakes every 10 ms and is stopped by the guard (asleep), or, when it sleeps 3 s at a
# time (dozing), is interrupted after 250 ms, in a call that restarts by itself); or while
# pyuprof dumps the stacks twice (dump); or launches the program and detaches at -d (launch).
# Each call must return what woke it, as natively; the asleep threads' frames are in the
# profile (taken at the attach from their stacks), and every thread is let go.
check_asleep() {
	local mode=$1 i f
	local -a args
	require_py "$2"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	if [[ $mode == launch ]]; then
		start_bg rec.out rec.err "$PYUPROF" record -d 2 -o out1.prof -- \
			"$PY" "$TARGETS/sleep_syscalls.py" --busy go
		wait_for_line rec.out '^ready' 30 "$BG_PID"
		wait_for_line rec.err 'wrote out1.prof' 60 "$BG_PID"
		TARGET=$(pgrep -P "$BG_PID" -f sleep_syscalls) || { cat rec.err; return 1; }
		poll_until 10 assert_untraced "$TARGET" 2>/dev/null
		assert_untraced "$TARGET"
		touch go
		wait "$BG_PID" || { cat rec.err; return 1; }
		cp rec.out target.out
	else
		case $mode in
		asleep) args=() ;;
		dozing) args=(--nap 3) ;;
		*) args=(--busy) ;;
		esac
		start_bg target.out target.err "$PY" "$TARGETS/sleep_syscalls.py" "${args[@]}" go
		TARGET=$BG_PID
		wait_for_line target.out '^ready' 20 "$TARGET"
		for i in 1 2; do
			if [[ $mode == dump ]]; then
				run_ok "$PYUPROF" dump -p "$TARGET"
				[[ $output == *epoll_thread* ]] || { show_run; return 1; }
			else
				run_ok "$PYUPROF" record -q -p "$TARGET" -d 1 \
					-o "out$i.prof" --debug
			fi
			# the path taken for the trampoline's system calls (the first attach
			# maps its page; the second finds it in place)
			if [[ $mode == dozing && $i == 1 ]]; then
				grep -q "interrupting thread $TARGET (asleep in system call 230)" \
					<<<"$stderr" || { echo "$stderr" | grep -v libbpf; return 1; }
			elif [[ $mode == asleep ]]; then
				! grep -q "interrupting thread" <<<"$stderr" ||
					{ echo "$stderr" | grep -v libbpf; return 1; }
			fi
			assert_unharmed "$TARGET"
			poll_until 10 assert_untraced "$TARGET" 2>/dev/null
			assert_untraced "$TARGET"
		done
		touch go
		wait_exit "$TARGET" 30
		[[ $EXIT_STATUS == 0 ]] || { cat target.out target.err; return 1; }
	fi
	cat target.out
	grep -qx 'epoll_wait 1' target.out || return 1
	grep -qx 'sigtimedwait 10' target.out || return 1
	[[ $mode != dump ]] || return 0
	for f in epoll_thread sigwait_thread; do
		[[ $(python3 "$TOOLS/pstats_field.py" out1.prof "$f" ncalls) == 1 ]] ||
			{ echo "$f is not in out1.prof once"; return 1; }
	done
}

@test "harm: forked children run as natively, launch (3.8)" {
	check_fork_launch 3.8
}

@test "harm: forked children run as natively, launch (3.9)" {
	check_fork_launch 3.9
}

@test "harm: forked children run as natively, launch (3.10)" {
	check_fork_launch 3.10
}

@test "harm: forked children run as natively, launch (3.11)" {
	check_fork_launch 3.11
}

@test "harm: forked children run as natively, launch (3.12)" {
	check_fork_launch 3.12
}

@test "harm: forked children run as natively, launch (3.13)" {
	check_fork_launch 3.13
}

@test "harm: forked children run as natively, launch (3.14)" {
	check_fork_launch 3.14
}

@test "harm: forked children run as natively, launch (3.15)" {
	check_fork_launch 3.15
}

@test "harm: forked children run as natively, launch (Debian 3.11)" {
	check_fork_launch deb3.11
}

@test "harm: children forked by threads as they start run as natively (3.8)" {
	check_thread_forks 3.8
}

@test "harm: children forked by threads as they start run as natively (3.11)" {
	check_thread_forks 3.11
}

@test "harm: children forked by threads as they start run as natively (3.12)" {
	check_thread_forks 3.12
}

@test "harm: children forked by threads as they start run as natively (3.13)" {
	check_thread_forks 3.13
}

@test "harm: children forked by threads as they start run as natively (3.14)" {
	check_thread_forks 3.14
}

@test "harm: children forked by threads as they start run as natively (3.15)" {
	check_thread_forks 3.15
}

@test "harm: children forked by threads as they start run as natively (Debian 3.11)" {
	check_thread_forks deb3.11
}

@test "harm: a new thread that asks for a write sends the program no signal (3.11)" {
	check_thread_requests 3.11
}

@test "harm: a new thread that asks for a write sends the program no signal (3.12)" {
	check_thread_requests 3.12
}

@test "harm: a new thread that asks for a write sends the program no signal (3.13)" {
	check_thread_requests 3.13
}

@test "harm: a new thread that asks for a write sends the program no signal (3.14)" {
	check_thread_requests 3.14
}

@test "harm: a new thread that asks for a write sends the program no signal (3.15)" {
	check_thread_requests 3.15
}

@test "harm: a new thread that asks for a write sends the program no signal (Debian 3.11)" {
	check_thread_requests deb3.11
}

@test "harm: children forked while attached run as natively (3.8)" {
	check_fork_attach 3.8
}

@test "harm: children forked while attached run as natively (3.12)" {
	check_fork_attach 3.12
}

@test "harm: children forked while attached run as natively (3.13)" {
	check_fork_attach 3.13
}

@test "harm: children forked while attached run as natively (3.14)" {
	check_fork_attach 3.14
}

@test "harm: children forked while attached run as natively (3.15)" {
	check_fork_attach 3.15
}

@test "harm: children forked while attached run as natively (Debian 3.11)" {
	check_fork_attach deb3.11
}

@test "harm: a fork pool finishes with no worker lost (3.8)" {
	check_fork_pool 3.8
}

@test "harm: a fork pool finishes with no worker lost (3.10)" {
	check_fork_pool 3.10
}

@test "harm: a fork pool finishes with no worker lost (3.12)" {
	check_fork_pool 3.12
}

@test "harm: a fork pool finishes with no worker lost (3.13)" {
	check_fork_pool 3.13
}

@test "harm: a fork pool finishes with no worker lost (3.14)" {
	check_fork_pool 3.14
}

@test "harm: a fork pool finishes with no worker lost (3.15)" {
	check_fork_pool 3.15
}

@test "harm: a fork pool finishes with no worker lost (Debian 3.11)" {
	check_fork_pool deb3.11
}

@test "harm: the fork pool fixture counts a worker that starts late (3.8)" {
	check_fork_pool_late_worker 3.8
}

@test "harm: the fork pool fixture counts a worker that starts late (3.13)" {
	check_fork_pool_late_worker 3.13
}

@test "harm: the fork pool fixture counts a worker that starts late (3.14)" {
	check_fork_pool_late_worker 3.14
}

@test "harm: the fork pool fixture counts a worker that starts late (3.15)" {
	check_fork_pool_late_worker 3.15
}

@test "harm: a followed child keeps its own code, pyuprof ended by SIGINT, SIGTERM, SIGKILL" {
	local label sig n=0
	require_bpf
	for label in 3.8 3.12 3.13 3.14; do
		have_py "$label" || continue
		for sig in INT TERM KILL; do
			mkdir -p "$BATS_TEST_TMPDIR/$label-$sig"
			echo "# $label, SIG$sig"
			python3 "$TOOLS/held_child.py" "$PYUPROF" "$PY" "$sig" \
				"$BATS_TEST_TMPDIR/$label-$sig"
			n=$((n + 1))
		done
	done
	((n > 0))
}

@test "harm: recursion stops where it does natively (3.8)" {
	check_recursion_launch 3.8
}

@test "harm: recursion stops where it does natively (3.9)" {
	check_recursion_launch 3.9
}

@test "harm: recursion stops where it does natively (3.10)" {
	check_recursion_launch 3.10
}

@test "harm: recursion stops where it does natively (3.11)" {
	check_recursion_launch 3.11
}

@test "harm: recursion stops where it does natively (3.12)" {
	check_recursion_launch 3.12
}

@test "harm: recursion stops where it does natively (3.13)" {
	check_recursion_launch 3.13
}

@test "harm: recursion stops where it does natively (3.14)" {
	check_recursion_launch 3.14
}

@test "harm: recursion stops where it does natively (3.15)" {
	check_recursion_launch 3.15
}

@test "harm: recursion stops where it does natively (lib3.14)" {
	check_recursion_launch lib3.14
}

@test "harm: recursion stops where it does natively (Debian 3.11)" {
	check_recursion_launch deb3.11
}

# pyuprof SIGKILLed while attached: the page finds its probes gone and puts the interpreter's
# eval_frame hook back, so the calls after run natively again (3.11+: inline, on the heap) and
# a recursion natively deeper than any C stack runs as before the attach. Before, the page
# stayed the hook: 3.11 crashed, 3.12 raised RecursionError. [EXITS] for --exits.
check_after_kill() {
	local pid exits=()
	require_py "$1"
	require_bpf
	[[ -z ${2:-} ]] || exits=(--exits "$2")
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" "$TARGETS/after_kill.py" go
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 30 "$TARGET"
	"$PYUPROF" record "${exits[@]}" -p "$TARGET" -o kill.prof 2>kill.err &
	pid=$!
	wait_for_line kill.err '^pyuprof: recording pid' 30 "$pid"
	kill -KILL "$pid"
	wait "$pid" || true
	assert_unharmed "$TARGET"
	touch go
	wait_exit "$TARGET" 60
	cat target.out target.err
	[[ $EXIT_STATUS == 0 ]] && grep -qx 'again 60000' target.out
}

@test "harm: pyuprof SIGKILLed: the hook is put back, a recursion runs as natively after (3.11)" {
	check_after_kill 3.11
}

@test "harm: pyuprof SIGKILLed: the hook is put back, a recursion runs as natively after (3.12)" {
	check_after_kill 3.12
}

@test "harm: pyuprof SIGKILLed: the hook is put back, a recursion runs as natively after (3.13)" {
	check_after_kill 3.13
}

@test "harm: pyuprof SIGKILLed: the hook is put back, a recursion runs as natively after (Debian 3.11)" {
	check_after_kill deb3.11
}

@test "harm: pyuprof SIGKILLed while recording per call: the hook is put back too (3.12)" {
	check_after_kill 3.12 trampoline
}

# (recorded, 3.14+ a bare PEP 523 hook's own changes are allowed: check_recursion_launch;
# after the last detach, none)
check_attach_cycles() {
	local hooked=()
	require_py "$1"
	require_bpf
	build_hook
	[[ $1 =~ 3\.1[4-9]$ ]] &&
		hooked=("$("$PY" "$TARGETS/recursion_limits.py" --pep523)")
	python3 "$TOOLS/attach_cycles.py" "$PYUPROF" "$PY" 100 "$BATS_TEST_TMPDIR" "${hooked[@]}"
}

@test "harm: recursion limits unchanged by 100 attach/detach cycles on one process (3.12)" {
	check_attach_cycles 3.12
}

@test "harm: recursion limits unchanged by 100 attach/detach cycles on one process (3.13)" {
	check_attach_cycles 3.13
}

@test "harm: recursion limits unchanged by 100 attach/detach cycles on one process (3.14)" {
	check_attach_cycles 3.14
}

@test "harm: recursion limits unchanged by 100 attach/detach cycles on one process (3.15)" {
	check_attach_cycles 3.15
}

# A thread that blocks SIGURG, attached to while its ring fills (pyuprof stopped meanwhile:
# every flush then asks pyuprof to act): it must not be sent the SIGURG pyuprof stops a thread
# with, since it would not stop, and the signal would wait, pending, past the detach. Before,
# it did: the program, once it handled SIGURG and unblocked it, got one it never sent (the
# fixture prints the SIGURGs pending then: natively 0).
@test "harm: a thread that blocks SIGURG gets no stray SIGURG from an attach (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" "$TARGETS/long_running.py" --loop-masked 12
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
	start_bg rec.out rec.err "$PYUPROF" record --ringbuf-mb 1 -p "$TARGET" -d 2 -o out.prof
	wait_for_line rec.err 'recording pid' 30 "$BG_PID"
	# pyuprof stopped while the target runs 400 rounds (3.7 MB of records; the ring holds 1)
	run_while_stopped "$BG_PID" target.out 400
	wait "$BG_PID" || { cat rec.err; return 1; }
	wait_exit "$TARGET" 30
	grep -v '^round ' target.out
	[[ $EXIT_STATUS == 0 ]] || return 1
	grep -qx 'SIGURG 0' target.out || return 1
	# pyuprof had to act while the thread blocked the signal (else this tests nothing)
	grep -q 'blocks SIGURG in a thread' rec.err || { cat rec.err; return 1; }
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through an attach (3.8)" {
	check_asleep busy 3.8
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through an attach (3.12)" {
	check_asleep busy 3.12
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through an attach (3.13)" {
	check_asleep busy 3.13
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through an attach (3.14)" {
	check_asleep busy 3.14
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through an attach (3.15)" {
	check_asleep busy 3.15
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through an attach (Debian 3.11)" {
	check_asleep busy deb3.11
}

@test "harm: with every thread asleep, an attach waits for one to wake rather than interrupt it (3.12)" {
	check_asleep asleep 3.12
}

@test "harm: with every thread asleep for long, an attach interrupts one whose call restarts (3.12)" {
	check_asleep dozing 3.12
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through a launch's detach (3.12)" {
	check_asleep launch 3.12
}

@test "harm: threads asleep in epoll_wait and sigtimedwait sleep on through a dump (3.12)" {
	check_asleep dump 3.12
}

# The launched program's parent, as PR_SET_PDEATHSIG sees it, is the thread that forked it:
# pyuprof's holding thread ends with the recording (-d), the program must not get its signal.
@test "harm: a launched program's parent-death signal does not fire as the recording ends (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run_ok "$PYUPROF" record -q -d 0.5 -o out.prof -- "$PY" -c '
import ctypes, time
ctypes.CDLL(None).prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM
for _ in range(60):
    time.sleep(0.05)
print("survived")'
	[[ $output == survived ]] || { show_run; return 1; }
}

# An attach loads the BPF side (the verifier: a few hundred ms) with the target running, between
# its two stops, and takes the target's state changes meanwhile: a signal the target gets then
# is handled at once. The load waits (PYUPROF_TEST_LOAD_UNTIL) until the target's handler of a
# SIGUSR1 sent during it has made a file: it can only if the target runs and its signal is
# passed on while the load lasts. Before, the target stood still through the load, and a
# CPython test that counts a timer's expirations failed (bench/REGRTEST.md).
check_load_unstopped() {
	require_py "$1"
	require_bpf
	shift
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" -c '
import os, signal, sys, time
def on_usr1(*_):
    open("signalled", "w").close()
def tick(n):
    return n + 1
signal.signal(signal.SIGUSR1, on_usr1)
print("ready", flush=True)
n = 0
while not os.path.exists("stop"):
    n = tick(n)
    time.sleep(0.01)
print("ticks", n > 0)
'
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
	start_bg rec.out rec.err env PYUPROF_TEST_LOAD_UNTIL="$PWD/signalled" \
		"$PYUPROF" record -p "$TARGET" -d 0.5 -o out.prof --debug "$@"
	local rec=$BG_PID
	wait_for_line rec.err "pid $TARGET: .* the BPF side, the held processes served meanwhile" 30 "$rec"
	kill -USR1 "$TARGET"
	wait_exit "$rec" 60
	[[ $EXIT_STATUS == 0 ]] || { grep -v libbpf rec.err; return 1; }
	grep -q "pid $TARGET: test: .*signalled appeared during the load" rec.err ||
		{ grep -v libbpf rec.err; return 1; }
	assert_unharmed "$TARGET"
	poll_until 10 assert_untraced "$TARGET" 2>/dev/null
	assert_untraced "$TARGET"
	touch stop
	wait_exit "$TARGET" 30
	[[ $EXIT_STATUS == 0 ]] || { cat target.out target.err; return 1; }
	grep -qx 'ticks True' target.out || return 1
	# recorded after the load, as ever
	(($(python3 "$TOOLS/pstats_field.py" out.prof tick ncalls) > 0)) || return 1
}

@test "harm: the target runs and takes its signals while an attach loads the BPF side (3.12)" {
	check_load_unstopped 3.12
}

@test "harm: the target runs and takes its signals while an attach loads the BPF side (Debian 3.11)" {
	check_load_unstopped deb3.11
}

@test "harm: the target runs and takes its signals while an attach loads the BPF side, no page to map (3.8)" {
	check_load_unstopped 3.8 --exits uretprobe
}

# The target runs while the BPF side loads: if it execs another program meanwhile, every
# address pyuprof found (the page it mapped, the interpreter) belongs to the old image; if it
# exits, there is nothing to record. The attach fails with one clear line and writes no file;
# an exec'd program has nothing of pyuprof's in it, and is let go. The load lasts until the
# test has seen the target exit (a zombie) or exec (its new command line, shown as the exec
# stops at its event).
check_gone_during_load() {
	local how=$1
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" -c '
import os, sys, time
print("ready", flush=True)
while not os.path.exists("go"):
    time.sleep(0.01)
if sys.argv[1] == "exit":
    sys.exit(0)
os.execv(sys.executable, [sys.executable, "-c", """
import os, time
while not os.path.exists("stop"):
    time.sleep(0.01)
print("new program done", flush=True)
""", "new-program"])
' "$how"
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
	start_bg rec.out rec.err env PYUPROF_TEST_LOAD_UNTIL="$PWD/leaving" \
		"$PYUPROF" record -p "$TARGET" -o out.prof --debug
	local rec=$BG_PID what
	wait_for_line rec.err "pid $TARGET: .* the BPF side, the held processes served meanwhile" 30 "$rec"
	touch go
	if [[ $how == exit ]]; then
		what=ended
	else
		what='ran another program \(exec\)'
	fi
	# seen by pyuprof's hold, not only done: the kernel reports an exec's stop after the new
	# program's command line shows
	local seen="pid $TARGET: gone \(it ended or ran another program\) while the hold served"
	wait_for_line rec.err "$seen" 30 "$rec"
	touch leaving
	wait_exit "$rec" 60
	((EXIT_STATUS != 0)) || { grep -v libbpf rec.err; return 1; }
	# (the last line but --debug's steps, "+N ms: ...")
	grep -Eqx "pyuprof: cannot record pid $TARGET: it $what as its probes loaded: nothing recorded" \
		<<<"$(grep -v '^pyuprof: +[0-9.]* ms: ' rec.err | tail -n 1)" ||
		{ grep -v libbpf rec.err; return 1; }
	! grep -q 'cannot read back' rec.err || { grep -v libbpf rec.err; return 1; }
	[[ ! -e out.prof ]] || return 1
	if [[ $how == exit ]]; then
		wait_exit "$TARGET" 30
		[[ $EXIT_STATUS == 0 ]] || return 1
		return 0
	fi
	assert_unharmed "$TARGET"
	assert_untraced "$TARGET"
	# no page of pyuprof's in the new program
	! grep -q 'memfd:pyuprof' "/proc/$TARGET/maps" || { cat "/proc/$TARGET/maps"; return 1; }
	touch stop
	wait_exit "$TARGET" 30
	[[ $EXIT_STATUS == 0 ]] || { cat target.out target.err; return 1; }
	grep -qx 'new program done' target.out || return 1
}

@test "harm: a target that execs while an attach loads the BPF side is let go unharmed (3.12)" {
	check_gone_during_load exec
}

@test "harm: a target that exits while an attach loads the BPF side: one clear line, no file (3.12)" {
	check_gone_during_load exit
}

# --- C functions (include/cfuncs.h): the slot pyuprof takes, and a program's own profilers ---

# A program that profiles or traces itself sees, recorded, what it sees natively, line for
# line (issue 39): one test a kind of profiler (tests/targets/own_profilers.py KIND, one
# process a kind), every interpreter: sys.setprofile, threading.setprofile, cProfile,
# sys.settrace, on 3.12+ sys.monitoring tools of its own (and no tool it can name has an event
# it did not set). Among what it must not see: the return event of the very call that set its
# profile function (sys.setprofile, set_events), which natively comes to no one, and on which
# Python's profile module stops ("Bad return"). A tool's C_RETURN events are taken for C
# functions only (as cProfile's): under any PEP 523 hook, pyuprof's with --no-builtins too,
# 3.12+ gives a tool a C_RETURN after each Python function it calls (docs/limits.md). The
# control: the program's C calls are pyuprof's too, outside its own profilers' turns
# (3.8-3.11: not while the program's profile function holds the thread's slot); on 3.12+ all
# of them, the profilers' turns included: leaf calls len once each.
check_own_profiler() {
	local kind=$1 label ran=0
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	for label in $(available_pys); do
		have_py "$label" || continue
		[[ $kind == monitoring && $label =~ ^(deb)?3\.([89]|1[01])$ ]] && continue
		"$PY" "$TARGETS/own_profilers.py" "$kind" >native.out 2>&1
		grep -qx "== $kind" native.out || { echo "$label: natively"; cat native.out; return 1; }
		run_ok "$PYUPROF" record -q -o out.prof -- "$PY" "$TARGETS/own_profilers.py" "$kind"
		diff native.out <(printf '%s\n' "$output") || { echo "($label)"; return 1; }
		"$PY" -c 'import pstats, sys
s = pstats.Stats(sys.argv[1]).stats
lens = [v for k, v in s.items() if k == ("~", 0, "<built-in method builtins.len>")]
assert lens and lens[0][1] > 0, "no C call"
if sys.argv[2] == "all":
    leaf = [(k, v[1]) for k, v in s.items() if k[2] == "leaf"]
    assert len(leaf) == 1, leaf
    assert lens[0][4].get(leaf[0][0], (0,))[0] == leaf[0][1], (leaf, lens[0][4])' out.prof \
			"$([[ $label == 3.1[2-9] ]] && echo all || echo some)" ||
			{ echo "($label: the control)"; return 1; }
		ran=$((ran + 1))
	done
	((ran > 0)) || { echo "no interpreter ran"; return 1; }
}

@test "harm: a program's own sys.setprofile function sees what it sees natively (every Python)" {
	check_own_profiler setprofile
}

@test "harm: a program's own threading.setprofile function sees what it sees natively (every Python)" {
	check_own_profiler threads
}

@test "harm: a program's own cProfile sees what it sees natively (every Python)" {
	check_own_profiler cprofile
}

@test "harm: a program's own sys.settrace function sees what it sees natively (every Python)" {
	check_own_profiler settrace
}

@test "harm: a program's own sys.monitoring tools see what they see natively (3.12+)" {
	check_own_profiler monitoring
}

# What pyuprof takes to record C functions is given back, whether it stops (SIGINT) or is
# killed (SIGKILL): each thread's profile slot (3.8-3.11), tool 7's CALL event (3.12+), as the
# next calls of the target find them. While recorded they are taken (the control), and on
# 3.12+ what sys.monitoring's get_events and _all_events show of tools is what it is natively.
check_slots_given_back() {
	local sig
	require_py "$1"
	require_bpf
	for sig in INT KILL; do
		mkdir -p "$BATS_TEST_TMPDIR/$sig" && cd "$BATS_TEST_TMPDIR/$sig"
		start_bg target.out target.err "$PY" "$TARGETS/cfunc_slots.py" "$PWD/stop"
		TARGET=$BG_PID
		wait_for_line target.out '^ready' 20 "$TARGET"
		start_bg rec.out rec.err "$PYUPROF" record -v --top 0 -p "$TARGET" -o out.prof
		wait_for_line rec.err '^pyuprof: recording pid' 30 "$BG_PID"
		touch stop.during
		# (its threads have read their state while recorded)
		for _ in $(seq 200); do
			[[ -e stop.seen.main && -e stop.seen.thread ]] && break
			sleep 0.1
		done
		[[ -e stop.seen.main && -e stop.seen.thread ]] || { cat target.out; return 1; }
		kill "-$sig" "$BG_PID"
		wait "$BG_PID" || true
		touch stop.after
		wait_exit "$TARGET" 30
		cat target.out
		[[ $EXIT_STATUS == 0 ]] || return 1
		if [[ $1 == 3.1[2-9] ]]; then
			local seen="seen \[\] \[(0, ){5}0\] tools \[(None, ){5}None\]"
			grep -Eqx "during main events \[\('CALL', 128\)\] $seen \| thread events \[\('CALL', 128\)\] $seen" target.out
			grep -Eqx "after main events \[\] $seen \| thread events \[\] $seen" target.out
		else
			grep -qx 'during main slot set | thread slot set' target.out
			grep -qx 'after main slot empty | thread slot empty' target.out
		fi
		grep -qx 'getprofile None' target.out
	done
}
@test "harm: what C functions take is given back, pyuprof stopped or killed (3.8)" { check_slots_given_back 3.8; }
@test "harm: what C functions take is given back, pyuprof stopped or killed (3.11)" { check_slots_given_back 3.11; }
@test "harm: what C functions take is given back, pyuprof stopped or killed (3.12)" { check_slots_given_back 3.12; }
@test "harm: what C functions take is given back, pyuprof stopped or killed (3.13)" { check_slots_given_back 3.13; }
@test "harm: what C functions take is given back, pyuprof stopped or killed (3.14)" { check_slots_given_back 3.14; }
@test "harm: what C functions take is given back, pyuprof stopped or killed (3.15)" { check_slots_given_back 3.15; }
