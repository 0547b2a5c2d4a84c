#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A Python that runs in another root: a chroot (maps names its files ROOT/usr/..., the path
# pyuprof sees them by, not the process), and a container's root (tools/container.sh: a mount
# and PID namespace of its own, pivot_root; maps names them /usr/..., which outside are not
# its files at all). Launched through the wrapper and attached from outside, every recording
# equals cProfile's (run in the same root) and is calibrated with the target's own interpreter,
# run in its root: a root of another Debian release than pyuprof's (sid's python3.13 needs a
# newer glibc than the machine's) cannot be run outside it. The roots come from
# scripts/make-root.sh (install-deps.sh test). sid's python3.13 is also the stripped build whose
# inline __init__ path pyuprof reads from its machine code (init.py, below).

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
		"$TARGETS/init.py" "$TOOLS/cprofile_run.py" "$TOOLS/pstats_compare.py" "$IN/"
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	kill_started
	[[ -z ${IN:-} ]] || rm -rf "$IN"
}

in_root() { chroot "$ROOT" "$@"; }

# truth [--no-builtins] SCRIPT ARGS...: cProfile's profile of SCRIPT in the root (builtins=True,
# or False), into $IN/cprofile.prof (the script's stdout into cprofile.out)
truth() {
	local builtins=() script
	[[ $1 == --no-builtins ]] && builtins=("$1") && shift
	script=$1
	shift
	in_root "$RPY" "$INR/cprofile_run.py" "${builtins[@]}" -o "$INR/cprofile.prof" \
		"$INR/$script" "$@" >cprofile.out
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

# Debian's 3.13 runs a class's __init__ inline where its class call is specialised
# (CALL_ALLOC_AND_ENTER_INIT), whatever the eval_frame hook says; its build is stripped of
# _PyType_NewManagedObject and the path is read from its machine code
# (user/target/inline_init.c). Before: Point.__init__ 201 of 300, Point3's 102 of 200, Tagged's
# 2 of 100 (only those that call another Python function, recovered from the frame chain).
# While C functions are recorded, the page's CALL event keeps CPython from specialising class
# calls, so no __init__ runs inline: the path is exercised with --no-builtins (as by a program
# recorded so, or attached to with its call sites specialised before).
INLINE_INIT="__init__ calls ran inline through CPython 3.13.[0-9]*'s specialised class call"

@test "roots: Debian's 3.13 (stripped), launched: every __init__ its specialised class calls run inline, exact" {
	truth init.py
	"$PYUPROF" record -v -o ours.prof -- chroot "$ROOT" "$RPY" "$INR/init.py" \
		>ours.out 2>ours.err || { cat ours.err; return 1; }
	cmp cprofile.out ours.out
	same_as_truth ours.prof init.py
	calibrated ours.err
	truth --no-builtins init.py
	"$PYUPROF" record -v --no-builtins -o ours.prof -- chroot "$ROOT" "$RPY" "$INR/init.py" \
		>ours.out 2>ours.err || { cat ours.err; return 1; }
	cmp cprofile.out ours.out
	same_as_truth ours.prof init.py
	calibrated ours.err
	grep -q "^pyuprof: [0-9]* $INLINE_INIT" ours.err || { cat ours.err; return 1; }
}

@test "roots: Debian's 3.13 (stripped), attached with its class call sites specialised: every __init__, exact" {
	# init.py's build() run once before the attach (its call sites specialised), then once
	# recorded: build and all below it equal cProfile's run of init.py
	cat >"$IN/init_serve.py" <<'PYEOF'
import os, signal, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import init
init.build(100)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
print("ready", os.getpid(), flush=True)
signal.sigwait({signal.SIGUSR1})
init.main()
sys.stdout.flush()
signal.sigwait({signal.SIGUSR2})
PYEOF
	start_bg target.out target.err chroot "$ROOT" "$RPY" "$INR/init_serve.py"
	TARGET=$BG_PID # (chroot execs the interpreter)
	wait_for_line target.out '^ready ' 20 "$TARGET"
	attach_pyuprof -v --no-builtins
	kill -USR1 "$TARGET"
	wait_for_line target.out '^built 500$' 20 "$TARGET"
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	assert_unharmed "$TARGET"
	truth --no-builtins init.py
	same_as_truth ours.prof init.py --below build
	calibrated ours.err
	grep -q "^pyuprof: [0-9]* $INLINE_INIT" ours.err || { cat ours.err; return 1; }
	kill -USR2 "$TARGET"
	wait_exit "$BG_PID" 20
	[[ $EXIT_STATUS == 0 ]]
}

# Where the path cannot be read, nothing is probed: a copy of the same build whose split-off
# eval loop cannot be found (its .eh_frame_hdr's version byte changed: the interpreter does not
# read it) is recorded as before the path was read, said in one line with -v: the __init__
# calls that call another Python function recovered from the frame chain (and counted), the
# others unseen; no count above cProfile's.
@test "roots: Debian's 3.13 where its inline __init__ path is not found: said in one line, nothing probed, calls recovered" {
	cp "$ROOT$RPY" "$IN/python3.13"
	python3 - "$IN/python3.13" <<'PYEOF'
import subprocess, sys
path = sys.argv[1]
out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
off = next(int(line.split()[4], 16) for line in out.splitlines() if " .eh_frame_hdr " in line)
with open(path, "r+b") as f:
    f.seek(off)
    assert f.read(1) == b"\x01"
    f.seek(off)
    f.write(b"\x02")
PYEOF
	truth --no-builtins init.py
	"$PYUPROF" record -v --no-builtins -o ours.prof -- chroot "$ROOT" "$INR/python3.13" \
		"$INR/init.py" >ours.out 2>ours.err || { cat ours.err; return 1; }
	cmp cprofile.out ours.out
	# one line per process found (the calibration runs the interpreter too)
	grep -q "^pyuprof: $ROOT$INR/python3.13: the path of the __init__ calls Python 3\.13\.[0-9]* runs inline .* is not found" \
		ours.err || { cat ours.err; return 1; }
	! grep -q "$INLINE_INIT" ours.err
	grep -q "^pyuprof: [1-9][0-9]* calls had no entry event of their own .* from the frame chain" ours.err ||
		{ cat ours.err; return 1; }
	cp ours.prof "$IN/ours.prof"
	in_root "$RPY" - "$INR/ours.prof" "$INR/cprofile.prof" "$INR/init.py" <<'PYEOF'
import pstats, sys
ours, truth = (pstats.Stats(p).stats for p in sys.argv[1:3])
mine = {k: v for k, v in truth.items() if k[0] == sys.argv[3]}
for k, v in mine.items():
    n = ours.get(k, (0, 0))[1]
    assert n <= v[1], (k, n, v[1])
# the hole is there, partly recovered: fewer __init__ calls, not none
inits = [k for k in mine if k[2] == "__init__"]
assert sum(ours.get(k, (0, 0))[1] for k in inits) < sum(mine[k][1] for k in inits)
assert all(ours.get(k, (0, 0))[1] for k in inits)
PYEOF
}
