#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Where calls and returns are probed (record --exits). The default, the batch mode (the probe
# trampoline's page staging calls and returns: tests/batch.bats), is what every other test
# records with; here: the page is really in place (its memfd page in the target's maps, its
# nops turned into calls by the kernel), it stays after detach and a second recording reuses
# it, and each other mechanism still equals cProfile: the per-call trampoline, the uretprobe
# pair (with a recursion far past its 64-deep limit), the ret instruction, the trampoline and
# the USDT exit on Debian's 3.11 (whose inline __getitem__ calls a probe on their own path
# sees), and calls that bypass the page because
# someone else's PEP 523 hook (3.12's perf trampoline) calls _PyEval_EvalFrameDefault itself.

load helpers
load server

# check_with LABEL FIXTURE PYUPROF_ARGS... [-- PYTHON_ARGS...]: FIXTURE recorded with those
# arguments equals cProfile (calls, primitive calls, callers), no event lost.
check_with() {
	local label=$1 name=$2 script="$TARGETS/$2.py" status=0 args=() pyargs=() cpid builtins=
	shift 2
	while (($#)) && [[ $1 != -- ]]; do
		args+=("$1")
		shift
	done
	(($#)) && shift
	pyargs=("$@")
	if [[ $label == /* ]]; then PY=$label; else require_py "$label"; fi
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	"$PYUPROF" record -v "${args[@]}" -o ours.prof -- "$PY" "${pyargs[@]}" "$script" \
		>ours.out 2>ours.err || status=$?
	if ((status != 0)); then
		echo "pyuprof exited with status $status:"
		cat ours.err
		return 1
	fi
	# C functions come with the batch mode only: elsewhere cProfile's builtins=False is the truth
	if ! grep -q 'returns from batch' ours.err || [[ " ${args[*]} " == *" --no-builtins "* ]]; then
		builtins=--no-builtins
	fi
	"$PY" "${pyargs[@]}" "$TOOLS/cprofile_run.py" $builtins -o cprofile.prof "$script" \
		>cprofile.out 2>cprofile.err &
	cpid=$!
	wait "$cpid" || { cat cprofile.err; return 1; }
	# shellcheck disable=SC2046
	remove_perf_maps "$cpid" $(recorded_pids ours.err)
	cmp -s cprofile.out ours.out || { diff cprofile.out ours.out; return 1; }
	if ! "$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof --file "$script" \
		>compare.out 2>&1; then
		cat compare.out
		grep '^pyuprof: ' ours.err
		return 1
	fi
	[[ $(summary_lost_events ours.err) == 0 ]] || { cat ours.err; return 1; }
}

@test "exits: trampoline (a probe per entry and return) on 3.8 equals cProfile (generators, threads)" {
	check_with 3.8 generators --exits trampoline
	grep -q 'returns from trampoline' ours.err
	check_with 3.8 threads --exits trampoline
}
@test "exits: trampoline on 3.11 equals cProfile (exceptions, finalizers)" {
	check_with 3.11 exceptions --exits trampoline
	check_with 3.11 finalizers --exits trampoline
}
@test "exits: trampoline on 3.12 equals cProfile (throw_delegating, threads, async)" {
	check_with 3.12 throw_delegating --exits trampoline
	check_with 3.12 threads --exits trampoline
	check_with 3.12 async_coroutines --exits trampoline
}
@test "exits: trampoline on 3.13 equals cProfile (init, generators, recursion)" {
	check_with 3.13 init --exits trampoline
	check_with 3.13 generators --exits trampoline
	check_with 3.13 recursion --exits trampoline
}
@test "exits: trampoline on 3.14 equals cProfile (init, generators, async, threads)" {
	check_with 3.14 init --exits trampoline
	check_with 3.14 generators --exits trampoline
	check_with 3.14 async_coroutines --exits trampoline
	check_with 3.14 threads --exits trampoline
}
@test "exits: trampoline on 3.15 equals cProfile (init, generators, async, threads)" {
	check_with 3.15 init --exits trampoline
	check_with 3.15 generators --exits trampoline
	check_with 3.15 async_coroutines --exits trampoline
	check_with 3.15 threads --exits trampoline
}
@test "exits: uretprobe on 3.8 equals cProfile 950 deep, returns past 64 closed and said" {
	check_with 3.8 deep_recursion --exits uretprobe
	grep -q 'returns from uretprobe' ours.err
	grep -q "past the kernel's limit of 64 pending uretprobes" ours.err
}
@test "exits: uretprobe on 3.12 equals cProfile 950 deep" {
	check_with 3.12 deep_recursion --exits uretprobe
	grep -q "past the kernel's limit of 64 pending uretprobes" ours.err
}
@test "exits: uretprobe on 3.13 equals cProfile (generators)" {
	check_with 3.13 generators --exits uretprobe
}
@test "exits: uretprobe on 3.14 equals cProfile 950 deep, and generators" {
	check_with 3.14 deep_recursion --exits uretprobe
	grep -q "past the kernel's limit of 64 pending uretprobes" ours.err
	check_with 3.14 generators --exits uretprobe
}
@test "exits: uretprobe on 3.15 equals cProfile (generators)" {
	check_with 3.15 generators --exits uretprobe
}
# The ring's pages are written before the recording by records that are then discarded
# (bpf/ring_warm.bpf.h): all of a 1 MiB ring but one record. The consumer skips them (were
# one submitted, it would be read as records: garbage), and the per-call records after them
# find room: the profile equals cProfile, nothing lost.
@test "exits: trampoline, a 1 MiB ring written before the recording: nothing lost (3.12)" {
	check_with 3.12 plain_calls --exits trampoline --ringbuf-mb 1 --debug
	grep -q '^pyuprof: ring buffer: 960 KiB of 1 MiB written before the recording$' ours.err
}

@test "exits: ret on 3.8 equals cProfile" { check_with 3.8 recursion --exits ret; }
@test "exits: ret on 3.12 equals cProfile" { check_with 3.12 finalizers --exits ret; }
# (Debian's static 3.14 and 3.15 keep nearly all of the eval function in a part its stripped
# symbols do not name, but no ret: the one ret is in the part they name)
@test "exits: ret on 3.14, 3.15 and their libpython equals cProfile" {
	check_with 3.14 finalizers --exits ret
	grep -q '1 return sites' ours.err
	check_with 3.15 generators --exits ret
	check_with lib3.14 generators --exits ret
	check_with lib3.15 finalizers --exits ret
}
# (With C functions, the default, CPython's tracing runs no specialised instruction, the
# inline __getitem__ path among them: every call reaches the page. Without, that path's probe
# counts them.)
@test "exits: default on Debian 3.11: the batch mode, inline __getitem__ calls from their path's probe" {
	check_with deb3.11 getitem
	grep -q 'returns from batch' ours.err
	check_with deb3.11 getitem --no-builtins
	grep -q 'returns from batch' ours.err
	grep -q 'runs __getitem__ inline: a probe on that path' ours.err
	grep -q '__getitem__ calls ran inline through CPython 3.11.2' ours.err
}
@test "exits: trampoline on Debian 3.11 equals cProfile (getitem, generators)" {
	check_with deb3.11 getitem --exits trampoline
	grep -q 'returns from trampoline' ours.err
	! grep -q 'they are missing' ours.err
	check_with deb3.11 generators --exits trampoline
}
@test "exits: usdt on Debian 3.11 equals cProfile (getitem, plain_calls)" {
	check_with deb3.11 getitem --exits usdt
	grep -q 'returns from usdt' ours.err
	grep -q 'probe trampoline at' ours.err
	check_with deb3.11 plain_calls --exits usdt
}
# A copy of Debian's 3.11 whose dispatch table sends BINARY_SUBSCR_GETITEM (19) to the generic
# BINARY_SUBSCR's code (25): it runs as before (that code takes any container), but the inline
# path is nowhere to be found, so the default is its USDT exit, and the trampoline says what
# it would miss.
@test "exits: Debian 3.11 whose inline __getitem__ path is not found: USDT exits by default" {
	require_py deb3.11
	require_bpf
	local copy="$BATS_TEST_TMPDIR/python3.11"
	cp "$(readlink -f "$PY")" "$copy"
	"$PY" "$TOOLS/opcode_table.py" "$copy" --point 19 25
	check_with "$copy" getitem
	grep -q 'returns from usdt' ours.err
	! grep -q 'runs __getitem__ inline: a probe' ours.err
	check_with "$copy" plain_calls --exits trampoline
	grep -q 'with --exits trampoline they are missing' ours.err
}
@test "exits: 3.12 -X perf: the perf trampoline's direct calls are recorded (deep, generators)" {
	check_with 3.12 deep_chain -- -X perf
	grep -q 'calls bypassed the trampoline' ours.err
	! grep -q ' 0 calls bypassed the trampoline' ours.err
	check_with 3.12 generators -- -X perf
}
@test "exits: 3.13 -X perf: the perf trampoline's direct calls are recorded" {
	check_with 3.13 mutual_recursion -- -X perf
	! grep -q ' 0 calls bypassed the trampoline' ours.err
}
# (Debian's builds are stripped of _PyPerfTrampoline_Init: its copies are found by the error it
# raises, lib3.14 has two)
@test "exits: 3.14 -X perf: the perf trampoline starts, its direct calls are recorded" {
	check_with 3.14 mutual_recursion -- -X perf
	! grep -q ' 0 calls bypassed the trampoline' ours.err
	check_with lib3.14 generators -- -X perf
	! grep -q ' 0 calls bypassed the trampoline' ours.err
}
# (3.15's perf trampoline runs the hook it finds, ours: no call bypasses it)
@test "exits: 3.15 -X perf: the perf trampoline starts, every call is recorded" {
	check_with 3.15 generators -- -X perf
	check_with lib3.15 mutual_recursion -- -X perf
}
# A Dynamo-like hook installed while pyuprof records chains to the trampoline it finds (no
# call bypasses it but, on <= 3.10, the interpreter's very first one, made before its hook was
# switched), and puts it back when it goes.
check_chained() {
	local most=0
	require_py "$1"
	PY=$(py_path "$1")
	[[ $1 == 3.10 ]] && most=1
	build_hook
	check_with "$1" pep523
	grep -q 'returns from batch' ours.err
	[[ $(sed -n 's/.*; \([0-9]*\) calls bypassed the trampoline/\1/p' ours.err) -le $most ]]
}
@test "exits: a Dynamo-like PEP 523 hook chains to the trampoline (3.10)" { check_chained 3.10; }
@test "exits: a Dynamo-like PEP 523 hook chains to the trampoline (3.12)" { check_chained 3.12; }
@test "exits: a Dynamo-like PEP 523 hook chains to the trampoline (3.13)" { check_chained 3.13; }
@test "exits: a Dynamo-like PEP 523 hook chains to the trampoline (3.14)" { check_chained 3.14; }
@test "exits: a Dynamo-like PEP 523 hook chains to the trampoline (3.15)" { check_chained 3.15; }

@test "exits: usdt where the build has no such probe is one clear error" {
	require_py 3.12
	require_bpf
	mkdir "$BATS_TEST_TMPDIR/out"
	run --separate-stderr "$PYUPROF" record --exits usdt -o "$BATS_TEST_TMPDIR/out/x.prof" -- \
		"$PY" -c pass
	[[ $status == 1 ]]
	assert_one_error_line
	[[ $stderr == *"no USDT python:function__return probe"* ]]
	assert_empty_dir "$BATS_TEST_TMPDIR/out"
}
@test "exits: --exits takes batch, trampoline, uretprobe, ret or usdt only" {
	run --separate-stderr "$PYUPROF" record --exits bogus -- true
	[[ $status == 64 ]]
	[[ $stderr == *"invalid --exits: bogus"* ]]
}

# check_in_place LABEL: attach twice to an idle server. While recording, its maps show the
# trampoline page and the kernel's [uprobes-trampoline] (the nops optimized); after each
# detach the page is still there, one page only, the hook is given back, and the rounds are
# exact and the target carries on.
check_in_place() {
	local label=$1 pages
	require_py "$label"
	require_bpf
	start_server
	attach_pyuprof -v
	run_rounds 1 2
	grep -q '/memfd:pyuprof-tramp' "/proc/$TARGET/maps"
	grep -q '\[uprobes-trampoline\]' "/proc/$TARGET/maps"
	grep -q "probe trampoline at" "$BATS_TEST_TMPDIR/ours.err"
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	compare_rounds 2
	pages=$(grep -c '/memfd:pyuprof-tramp' "/proc/$TARGET/maps")
	[[ $pages == 1 ]] || { echo "$pages trampoline pages after one recording"; return 1; }
	run_rounds 3 3
	attach_pyuprof -v
	grep -q "in place from an earlier recording" "$BATS_TEST_TMPDIR/ours.err"
	run_rounds 4 5
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	compare_rounds 2
	pages=$(grep -c '/memfd:pyuprof-tramp' "/proc/$TARGET/maps")
	[[ $pages == 1 ]] || { echo "$pages trampoline pages after two recordings"; return 1; }
	assert_unharmed "$TARGET"
	run_rounds 6 6
	kill -USR2 "$TARGET"
	wait_exit "$TARGET" 20
	[[ $EXIT_STATUS == 0 ]] && grep -q '^rounds 6$' "$BATS_TEST_TMPDIR/target.out"
}

@test "exits: the trampoline is in place, optimized, kept after detach and reused (3.8)" {
	PY=$(py_path 3.8)
	check_in_place 3.8
}
@test "exits: the trampoline is in place, optimized, kept after detach and reused (3.12)" {
	PY=$(py_path 3.12)
	check_in_place 3.12
}
