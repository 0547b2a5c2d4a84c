#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# No harm (issue 38): a program whose C stack suffices natively never crashes recorded. Any
# PEP 523 hook makes each Python call a C activation (natively none from 3.11, a smaller one
# before), so a thread with a small stack (threading.stack_size; musl's default is 128 KiB)
# or a deep recursion on the main thread with a raised limit can run out of C stack only while
# recorded. Where the hook's stack use cannot keep the native depth, the call that would go
# past the stack's end raises RecursionError instead (the page's guard: user/inject/tramp.h),
# and pyuprof says so in one line; where it can, the result is the native one. The truth is
# the program run natively. And the summary line says when the program died of a signal.

load helpers

# small_stack.py in a 256 KiB thread at depths that run natively: the native result, or a
# RecursionError said in pyuprof's line, never a signal. [EXITS] for --exits; DEPTHS (300 500
# 900): before 3.11 such a thread crashes natively at about 512 (each call is a C activation
# there too), and a depth that crashes natively is passed over.
check_small_stack() {
	local depth native nstatus n=0 exits=() hooked=""
	require_py "$1"
	require_bpf
	[[ -z ${2:-} ]] || exits=(--exits "$2")
	cd "$BATS_TEST_TMPDIR"
	# 3.14+ check their C stack themselves (no guard of pyuprof's): there a RecursionError
	# recorded must be one a bare PEP 523 hook meets too
	[[ $1 =~ 3\.1[4-9]$ ]] && build_hook
	for depth in ${DEPTHS:-300 500 900}; do
		nstatus=0
		native=$(PEP523_DIR="" "$PY" "$TARGETS/small_stack.py" thread 256 "$depth") ||
			nstatus=$?
		[[ $nstatus == 0 ]] || { echo "# depth $depth: crashes natively ($nstatus)"; continue; }
		echo "# depth $depth: natively $native"
		[[ -z ${PEP523_DIR:-} ]] ||
			hooked=$("$PY" "$TARGETS/small_stack.py" thread 256 "$depth")
		run_ok env PEP523_DIR= "$PYUPROF" record "${exits[@]}" -o "out$depth.prof" -- \
			"$PY" "$TARGETS/small_stack.py" thread 256 "$depth"
		if [[ -n ${PEP523_DIR:-} && $output == "RecursionError: Stack overflow"* ]]; then
			echo "# depth $depth: recorded $output; under a bare hook $hooked"
			[[ $hooked == "RecursionError: Stack overflow"* ]] || { show_run; return 1; }
		elif [[ $output == "RecursionError: "* ]]; then
			grep -q "calls raised RecursionError, their thread's C stack (256 KiB)" <<<"$stderr" ||
				{ show_run; return 1; }
			# the shallowest runs recorded as natively
			[[ $depth != 300 ]] || { show_run; return 1; }
		elif [[ $output != "$native" ]]; then
			show_run
			return 1
		fi
		! grep -q "died of" <<<"$stderr" || { show_run; return 1; }
		n=$((n + 1))
	done
	((n > 0))
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (3.8)" {
	DEPTHS="300 500" check_small_stack 3.8
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (3.11)" {
	check_small_stack 3.11
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (3.12)" {
	check_small_stack 3.12
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (3.13)" {
	check_small_stack 3.13
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (3.14)" {
	check_small_stack 3.14
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (3.15)" {
	check_small_stack 3.15
}

@test "stack: a thread with a small stack: the native result or RecursionError, never a crash (Debian 3.11)" {
	check_small_stack deb3.11
}

@test "stack: a thread with a small stack, recorded per call: never a crash (3.12)" {
	check_small_stack 3.12 trampoline
}

# Attached before the thread starts: the same, the thread's stack read from its glibc block.
check_small_stack_attach() {
	local native
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	native=$("$PY" "$TARGETS/small_stack.py" thread 256 900)
	start_bg target.out target.err "$PY" "$TARGETS/small_stack.py" thread 256 900 go
	TARGET=$BG_PID
	wait_for_line target.out '^ready' 20 "$TARGET"
	start_bg rec.out rec.err "$PYUPROF" record -p "$TARGET" -o out.prof
	wait_for_line rec.err '^pyuprof: recording pid' 30 "$BG_PID"
	touch go
	wait_exit "$TARGET" 60
	wait_exit "$BG_PID" 60
	cat target.out rec.err
	[[ $(sed -n 2p target.out) == "$native" || $(sed -n 2p target.out) == "RecursionError: "* ]]
	[[ $EXIT_STATUS == 0 ]]
	if [[ $(sed -n 2p target.out) == "RecursionError: "* ]]; then
		grep -q "calls raised RecursionError, their thread's C stack (256 KiB)" rec.err
	fi
}

@test "stack: a small stack's thread started while attached: never a crash (3.12)" {
	check_small_stack_attach 3.12
}

@test "stack: a small stack's thread started while attached: never a crash (Debian 3.11)" {
	check_small_stack_attach deb3.11
}

# The main thread, its limit raised past 60,000: natively (3.11+) the recursion runs inline on
# the heap; recorded it may end in RecursionError near the end of the 8 MiB stack, never in
# a crash.
check_main_deep() {
	local native hooked=""
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	native=$("$PY" "$TARGETS/small_stack.py" main 60000)
	[[ $native == "depth 60000" ]]
	# (3.14+: CPython's own check raises it, as under a bare PEP 523 hook)
	if [[ $1 =~ 3\.1[4-9]$ ]]; then
		build_hook
		hooked=$("$PY" "$TARGETS/small_stack.py" main 60000)
		[[ $hooked == "RecursionError: Stack overflow"* ]] || { echo "hooked: $hooked"; return 1; }
	fi
	run_ok env PEP523_DIR= "$PYUPROF" record -o out.prof -- "$PY" "$TARGETS/small_stack.py" main 60000
	[[ $output == "$native" ]] ||
		{ [[ $output == "RecursionError: "* ]] && grep -q "calls raised RecursionError" <<<"$stderr"; } ||
		{ [[ -n $hooked && $output == "RecursionError: Stack overflow"* ]]; } ||
		{ show_run; return 1; }
}

@test "stack: a deep recursion on the main thread: the native result or RecursionError, never a crash (3.11)" {
	check_main_deep 3.11
}

@test "stack: a deep recursion on the main thread: the native result or RecursionError, never a crash (3.13)" {
	check_main_deep 3.13
}

@test "stack: a deep recursion on the main thread: the native result or RecursionError, never a crash (3.14)" {
	check_main_deep 3.14
}

@test "stack: a deep recursion on the main thread: the native result or RecursionError, never a crash (3.15)" {
	check_main_deep 3.15
}

@test "stack: a deep recursion on the main thread: the native result or RecursionError, never a crash (Debian 3.11)" {
	check_main_deep deb3.11
}

@test "stack: the summary line says the program died of a signal, and pyuprof exits as it did (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$PYUPROF" record -o out.prof -- \
		"$PY" -c 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)'
	[[ $status == 143 ]] || { show_run; return 1; }
	grep -Eq '^pyuprof: .* calls, .*; pid [0-9]+ died of SIGTERM; wrote out.prof$' <<<"$stderr" ||
		{ show_run; return 1; }
	run --separate-stderr "$PYUPROF" record -o out.prof -- "$PY" -c 'print("ok")'
	[[ $status == 0 ]] && ! grep -q "died of" <<<"$stderr" || { show_run; return 1; }
}
