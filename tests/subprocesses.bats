#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# --subprocesses: tests/targets/subprocesses.py runs work in a fork pool, a spawn pool, a
# subprocess of the same interpreter, a forked child that does not exec, and itself, and
# writes which process ran which tasks. For every process that ran tasks, its own profile
# (out.PID.prof) must agree with cProfile's profile of the same tasks
# (tools/cprofile_tasks.py) for every function below work(), and out.prof, the merge, with
# the merge of those. On every interpreter present (one @test line each: bats 1.8 collects
# tests from the file's text).

load helpers

check_subprocesses() {
	local label=$1 fixture="$TARGETS/subprocesses.py" status=0 pid n=0
	require_py "$label"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	"$PYUPROF" record --subprocesses --top 0 -o out.prof -- "$PY" "$fixture" manifest.json \
		>ours.out 2>ours.err || status=$?
	if ((status != 0)); then
		echo "pyuprof (or the fixture) exited with status $status:"
		cat ours.err
		return 1
	fi
	[[ $(summary_lost_events ours.err) == 0 ]] || { cat ours.err; return 1; }
	for pid in $("$PY" -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))))' \
		manifest.json); do
		if [[ ! -f out.$pid.prof ]]; then
			echo "no profile for pid $pid, which ran $(grep -o "\"$pid\": [^]]*]]" manifest.json)"
			cat ours.err
			return 1
		fi
		# the summary names each process with its own file
		grep -q "^pyuprof: pid $pid (Python .*wrote out.$pid.prof\$" ours.err ||
			{ echo "pid $pid is not in the summary:"; cat ours.err; return 1; }
		"$PY" "$TOOLS/cprofile_tasks.py" "$fixture" manifest.json "$pid" "truth.$pid.prof"
		if ! "$PY" "$TOOLS/pstats_compare.py" "out.$pid.prof" "truth.$pid.prof" \
			--file "$fixture" --below work >compare.out 2>&1; then
			echo "pid $pid; the tasks each process ran (manifest.json):"
			cat manifest.json
			cat compare.out
			grep '^pyuprof:' ours.err
			return 1
		fi
		n=$((n + 1))
	done
	# main, the fork pool (1-2 workers), the spawn pool (1-2), the subprocess, the child
	((n >= 5)) || { echo "only $n processes ran tasks:"; cat manifest.json; return 1; }
	"$PY" -c 'import pstats, sys; pstats.Stats(*sys.argv[2:]).dump_stats(sys.argv[1])' \
		truth.prof truth.*.prof
	"$PY" "$TOOLS/pstats_compare.py" out.prof truth.prof --file "$fixture" --below work
}

@test "subprocesses: each process's profile and their merge match cProfile (3.8)" {
	check_subprocesses 3.8
}

@test "subprocesses: each process's profile and their merge match cProfile (3.9)" {
	check_subprocesses 3.9
}

@test "subprocesses: each process's profile and their merge match cProfile (3.10)" {
	check_subprocesses 3.10
}

@test "subprocesses: each process's profile and their merge match cProfile (3.11)" {
	check_subprocesses 3.11
}

@test "subprocesses: each process's profile and their merge match cProfile (3.12)" {
	check_subprocesses 3.12
}

@test "subprocesses: each process's profile and their merge match cProfile (3.13)" {
	check_subprocesses 3.13
}

@test "subprocesses: each process's profile and their merge match cProfile (3.14)" {
	check_subprocesses 3.14
}

@test "subprocesses: each process's profile and their merge match cProfile (3.15)" {
	check_subprocesses 3.15
}

@test "subprocesses: each process's profile and their merge match cProfile (Debian 3.11)" {
	check_subprocesses deb3.11
}

@test "subprocesses: attach mode follows the processes started after the attach" {
	require_some_py
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	# the fixture waits for a go file, so that pyuprof is attached before any child starts
	start_bg target.out target.err "$PY" "$TARGETS/subprocesses.py" manifest.json --wait go
	TARGET=$BG_PID
	wait_for_line target.out '^waiting' 20 "$TARGET"
	start_bg rec.out rec.err "$PYUPROF" record --subprocesses --top 0 -o out.prof -p "$TARGET"
	REC=$BG_PID
	wait_for_line rec.err '^pyuprof: recording pid' 30 "$REC"
	touch go
	wait_exit "$TARGET" 120
	[[ $EXIT_STATUS == 0 ]] || { cat target.err; return 1; }
	wait_exit "$REC" 60
	[[ $EXIT_STATUS == 0 ]] || { cat rec.err; return 1; }
	for pid in $("$PY" -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))))' \
		manifest.json); do
		[[ $pid == "$TARGET" ]] && continue
		"$PY" "$TOOLS/cprofile_tasks.py" "$TARGETS/subprocesses.py" manifest.json "$pid" \
			"truth.$pid.prof"
		"$PY" "$TOOLS/pstats_compare.py" "out.$pid.prof" "truth.$pid.prof" \
			--file "$TARGETS/subprocesses.py" --below work
	done
}

@test "subprocesses: a subprocess of another interpreter is recorded with its own layout" {
	local parent child cpy pid
	require_bpf
	for pair in 3.12:3.8 3.8:deb3.11 3.13:3.11; do
		parent=${pair%%:*} child=${pair#*:}
		have_py "$child" || continue
		cpy=$PY
		have_py "$parent" || continue
		mkdir -p "$BATS_TEST_TMPDIR/$parent-$child"
		cd "$BATS_TEST_TMPDIR/$parent-$child"
		SUBPROCESS_PYTHON=$cpy "$PYUPROF" record --subprocesses --top 0 -o out.prof -- \
			"$PY" "$TARGETS/subprocesses.py" manifest.json >out 2>err || { cat err; return 1; }
		pid=$("$PY" -c 'import json, sys
print(*[p for p, t in json.load(open(sys.argv[1])).items() if t == [["sub", 4]]])' manifest.json)
		# with the child's own version (the patch level is not always known)
		grep -Eq "^pyuprof: pid $pid \(Python $("$cpy" -c 'import sys
print("%d\\.%d" % sys.version_info[:2])')(\.[0-9]+)?, started by" err || { cat err; return 1; }
		"$cpy" "$TOOLS/cprofile_tasks.py" "$TARGETS/subprocesses.py" manifest.json "$pid" \
			truth.prof
		"$cpy" "$TOOLS/pstats_compare.py" "out.$pid.prof" truth.prof \
			--file "$TARGETS/subprocesses.py" --below work
	done
}

# stop_midway LABEL SIG: pyuprof attached with --subprocesses is stopped by SIG while the
# fixture's children come and go: once it follows the first child (a fork-pool worker), and
# once it follows the third (the first spawn-pool worker); either way the subprocess and the
# forked child are still to come, so pyuprof is still running. Every process must carry on
# and compute right (the fixture exits non-zero otherwise), and with SIGTERM the profiles are
# written.
stop_midway() {
	local label=$1 sig=$2 nth
	have_py "$label" || return 0
	cd "$BATS_TEST_TMPDIR"
	for nth in 1 3; do
		rm -f go manifest.json ./*.prof
		start_bg target.out target.err "$PY" "$TARGETS/subprocesses.py" manifest.json --wait go
		TARGET=$BG_PID
		wait_for_line target.out '^waiting' 20 "$TARGET"
		start_bg rec.out rec.err "$PYUPROF" record -v --subprocesses --top 0 -o out.prof \
			-p "$TARGET"
		REC=$BG_PID
		wait_for_line rec.err '^pyuprof: recording pid' 30 "$REC"
		touch go
		wait_for_nth_child "$nth"
		if ! kill "-$sig" "$REC"; then
			echo "$label, $sig at child $nth: pyuprof was no longer running"
			cat rec.err
			return 1
		fi
		wait_exit "$REC" 60
		if [[ $sig == TERM && $EXIT_STATUS != 0 ]]; then
			echo "$label, $sig at child $nth: pyuprof exited with $EXIT_STATUS"
			cat rec.err
			return 1
		fi
		wait_exit "$TARGET" 120
		if [[ $EXIT_STATUS != 0 ]]; then
			echo "$label, $sig at child $nth: the fixture exited with $EXIT_STATUS"
			cat target.err
			return 1
		fi
		[[ $sig == KILL ]] || "$PY" -c 'import pstats, sys; pstats.Stats(sys.argv[1])' out.prof
	done
}

# wait_for_nth_child N: until pyuprof (-v, rec.err) says it records the Nth child process.
wait_for_nth_child() {
	local i
	for ((i = 0; i < 1200; i++)); do
		(($(grep -c 'started by pid' rec.err) >= $1)) && return 0
		is_running "$REC" || break
		sleep 0.05
	done
	echo "pyuprof never recorded a child process number $1:"
	cat rec.err
	return 1
}

@test "subprocesses: SIGTERM or SIGKILL of pyuprof midway leaves every process correct" {
	require_bpf
	stop_midway 3.12 TERM
	stop_midway 3.10 KILL
}

@test "subprocesses: --trace and --raw are refused with --subprocesses (usage error)" {
	require_some_py
	run --separate-stderr "$PYUPROF" record --subprocesses --trace t.json -- "$PY" -c pass
	[[ $status == 64 ]]
	[[ $stderr == *"--subprocesses cannot be combined with --trace"* ]]
	run --separate-stderr "$PYUPROF" record --subprocesses --raw r.raw -- "$PY" -c pass
	[[ $status == 64 ]]
}

# An attach loads the BPF side with the target running (session.c): a child forked meanwhile
# is held from its birth and recorded once the attach is done. It was forked before its parent's
# eval_frame hook was written, so it has none of its own: pyuprof writes it (3.12's batch mode
# sees calls only through it). The load lasts (PYUPROF_TEST_LOAD_UNTIL) until the target says
# it forked.
@test "subprocesses: a child forked while an attach loads is recorded from its birth (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg target.out target.err "$PY" -c '
import os, time
def tick(n):
    return n + 1
print("ready", flush=True)
while not os.path.exists("go"):
    time.sleep(0.01)
pid = os.fork()
if pid == 0:
    n = 0
    for _ in range(100):
        n = tick(n)
    os._exit(0 if n == 100 else 1)
open("forked", "w").write(str(pid))
_, st = os.waitpid(pid, 0)
print("child", pid, st, flush=True)
'
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
	start_bg rec.out rec.err env PYUPROF_TEST_LOAD_UNTIL="$PWD/forked" \
		"$PYUPROF" record --subprocesses --top 0 -o out.prof -p "$TARGET" --debug
	REC=$BG_PID
	wait_for_line rec.err "pid $TARGET: .* the BPF side, the held processes served meanwhile" 30 "$REC"
	touch go
	wait_exit "$TARGET" 60
	[[ $EXIT_STATUS == 0 ]] || { cat target.err; return 1; }
	wait_exit "$REC" 60
	[[ $EXIT_STATUS == 0 ]] || { grep -v libbpf rec.err; return 1; }
	local child
	child=$(cat forked)
	grep -qx "child $child 0" target.out || { cat target.out; return 1; }
	grep -q "pid $TARGET: test: .*forked appeared during the load" rec.err ||
		{ grep -v libbpf rec.err; return 1; }
	[[ $(python3 "$TOOLS/pstats_field.py" "out.$child.prof" tick ncalls) == 100 ]] ||
		{ grep -v libbpf rec.err; return 1; }
}

# A followed child's BPF side is loaded at its birth (it waits, stopped, to be recorded from its
# first instruction); meanwhile the other processes run on and their signals are passed on.
# The child's load lasts (PYUPROF_TEST_LOAD_UNTIL) until its parent's handler of a SIGUSR1 sent
# during it has made a file: before, the parent stood still in that signal's delivery until
# the load was done.
@test "subprocesses: a followed child's load holds up no signal of its parent's (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg rec.out rec.err env PYUPROF_TEST_LOAD_UNTIL="$PWD/signalled" \
		"$PYUPROF" record --subprocesses --top 0 --debug -o out.prof -- "$PY" -c '
import os, signal, time
def on_usr1(*_):
    open("signalled", "w").close()
def tick(n):
    return n + 1
signal.signal(signal.SIGUSR1, on_usr1)
print("parent", os.getpid(), flush=True)
pid = os.fork()
if pid == 0:
    n = 0
    for _ in range(100):
        n = tick(n)
    os._exit(0 if n == 100 else 1)
_, st = os.waitpid(pid, 0)
print("child", pid, st, flush=True)
'
	local rec=$BG_PID parent child
	wait_for_line rec.out '^parent' 30 "$rec"
	parent=$(sed -n 's/^parent //p' rec.out)
	wait_for_line rec.err "pid [0-9]+: loading the BPF side" 30 "$rec"
	child=$(sed -n 's/.*pid \([0-9]*\): loading the BPF side.*/\1/p' rec.err | head -n 1)
	[[ $child != "$parent" ]] || return 1
	kill -USR1 "$parent"
	wait_exit "$rec" 60
	[[ $EXIT_STATUS == 0 ]] || { grep -v libbpf rec.err; return 1; }
	grep -qx "child $child 0" rec.out || { cat rec.out; return 1; }
	grep -q "pid $child: test: .*signalled appeared during the load" rec.err ||
		{ grep -v libbpf rec.err; return 1; }
	[[ $(python3 "$TOOLS/pstats_field.py" "out.$child.prof" tick ncalls) == 100 ]] ||
		{ grep -v libbpf rec.err; return 1; }
}

# through_shell LABEL: launched through a shell that starts the Python as a child process and
# exits 3 after it (`bash -c "python x.py; exit 3"`, as make or a script would), with
# --subprocesses the Python is recorded, equal to cProfile, calibrated; pyuprof exits with the
# shell's status.
through_shell() {
	local script="$TARGETS/mutual_recursion.py" status=0
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/cprofile_run.py" -o cprofile.prof "$script" >cprofile.out
	# shellcheck disable=SC2016 # (the inner shell's arguments)
	"$PYUPROF" record --subprocesses --top 0 -o ours.prof -- \
		bash -c '"$0" "$1"; exit 3' "$PY" "$script" >ours.out 2>ours.err || status=$?
	[[ $status == 3 ]] || { echo "pyuprof exited with $status"; cat ours.err; return 1; }
	cmp cprofile.out ours.out
	"$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof --file "$script"
	grep -q "^pyuprof: recording pid [0-9]* (bash) and the processes it starts" ours.err
	grep -q "; calibrated: " ours.err || { cat ours.err; return 1; }
	[[ $(summary_lost_events ours.err) == 0 ]]
}

@test "subprocesses: launched through a shell that runs the Python as a child, it is recorded (3.12)" {
	through_shell 3.12
}

@test "subprocesses: launched through a shell that runs the Python as a child, it is recorded (Debian 3.11)" {
	through_shell deb3.11
}

@test "subprocesses: launched through env, which execs the Python, it is recorded (3.8)" {
	local script="$TARGETS/mutual_recursion.py"
	require_py 3.8
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/cprofile_run.py" -o cprofile.prof "$script" >cprofile.out
	run_ok "$PYUPROF" record --subprocesses --top 0 -o ours.prof -- env "$PY" "$script"
	[[ $output == "$(cat cprofile.out)" ]]
	"$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof --file "$script"
	[[ $stderr == *"; calibrated: "* ]]
}

@test "subprocesses: without --subprocesses, a shell that runs the Python as a child: one line naming --subprocesses, nothing written" {
	require_some_py
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	# shellcheck disable=SC2016
	run --separate-stderr "$PYUPROF" record -o ours.prof -- \
		bash -c '"$0" -c "print(6 * 7)"; true' "$PY"
	[[ $status == 1 ]] || { show_run; return 1; }
	[[ $output == 42 ]] # the program ran, as it would have
	assert_one_error_line
	[[ $stderr == "pyuprof: 'bash' ran no Python interpreter itself"*"--subprocesses"* ]]
	[[ ! -e ours.prof ]]
}

@test "subprocesses: launched through a shell that runs no Python: one line, the shell's status" {
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$PYUPROF" record -q --subprocesses -o ours.prof -- bash -c 'true; exit 5'
	[[ $status == 5 ]] || { show_run; return 1; }
	assert_one_error_line
	[[ $stderr == "pyuprof: no Python calls were recorded; nothing written" ]]
	[[ ! -e ours.prof ]]
}

# Following, the next child's BPF side is loaded while the processes run (a spare): a child born
# later takes it, held at its birth only while its probes are attached, and is recorded exactly.
@test "subprocesses: a child takes the BPF side loaded for it while its parent ran (Debian 3.11)" {
	require_py deb3.11
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PYUPROF" record --subprocesses --top 0 --debug -o out.prof \
		-- "$PY" -c '
import os, time
def tick(n):
    return n + 1
time.sleep(1)
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        n = 0
        for _ in range(100):
            n = tick(n)
        os._exit(0 if n == 100 else 1)
    _, st = os.waitpid(pid, 0)
    print("child", pid, st, flush=True)
    time.sleep(1)
'
	local child
	for child in $(sed -n 's/^child \([0-9]*\) 0$/\1/p' <<<"$output"); do
		grep -q "pid $child: the spare BPF side loaded for its interpreter taken" <<<"$stderr" ||
			{ grep -v libbpf <<<"$stderr"; return 1; }
		[[ $(python3 "$TOOLS/pstats_field.py" "out.$child.prof" tick ncalls) == 100 ]] ||
			return 1
	done
	[[ $(grep -c '^child [0-9]* 0$' <<<"$output") == 2 ]]
}
