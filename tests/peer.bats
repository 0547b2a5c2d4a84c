#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A peer's judgement (issue 19): the parts of CPython's own regression suite that found pyuprof
# harming its targets, run with each interpreter's own `python -m test`, natively and then
# recorded from the start (tests in one process): the same tests must run and the result must
# be the same. Forked children that run Python (threading's fork tests, os.spawn* and waitpid,
# fork1), a fork pool (test_multiprocessing_fork: in 3.8-3.10 and Debian's 3.11, not in the
# pyenv builds of 3.11.7+) and the recursion limits (ast, compile, descr, functools, sys). The
# whole suite, also under repeated attaches, is bench/regrtest.sh (make bench-regrtest).

load helpers

FORK=(test_threading test_os test_fork1 -m '*fork*' -m '*spawn*' -m '*waitpid*')
RECURSION=(test_ast test_compile test_descr test_functools test_sys
	-m '*recursion*' -m test_recursive_call)

# verdict LOG: regrtest's result and counts in LOG, without times
verdict() {
	grep -E '^(Tests result|Result|Total tests|Ran [0-9]+ test)' "$1" | sed 's/ in [0-9.]*s$//'
}

# check_peer LABEL ARGS...: python -m test ARGS, natively and recorded, compared.
check_peer() {
	local label=$1 native recorded
	shift
	require_py "$label"
	require_bpf
	"$PY" -c 'import test.support' 2>/dev/null ||
		{ echo "Python $label has no test package"; return 1; }
	mkdir -p "$BATS_TEST_TMPDIR/native" "$BATS_TEST_TMPDIR/recorded"
	cd "$BATS_TEST_TMPDIR/native"
	"$PY" -m test -v "$@" >native.log 2>&1 || true
	cd "$BATS_TEST_TMPDIR/recorded"
	timeout 600 "$PYUPROF" record -q -o out.prof -- "$PY" -m test -v "$@" >recorded.log 2>&1 ||
		true
	# regrtest's verdict and counts; unittest's own FAIL:/ERROR: lines say which test
	native=$(verdict "$BATS_TEST_TMPDIR/native/native.log")
	recorded=$(verdict recorded.log)
	grep -Eq '(Tests result|Result): SUCCESS' <<<"$native" ||
		{ echo "natively not a success:"; cat "$BATS_TEST_TMPDIR/native/native.log"; return 1; }
	if [[ $native != "$recorded" ]]; then
		printf 'natively:\n%s\nrecorded:\n%s\n' "$native" "$recorded"
		grep -E '^(FAIL|ERROR):|Fatal Python error|crashed' recorded.log
		return 1
	fi
	python3 -c 'import pstats, sys; pstats.Stats(sys.argv[1])' out.prof
}

@test "peer: CPython's fork and spawn tests pass recorded as natively (3.8)" {
	check_peer 3.8 "${FORK[@]}"
}

@test "peer: CPython's fork and spawn tests pass recorded as natively (3.12)" {
	check_peer 3.12 "${FORK[@]}"
}

@test "peer: CPython's fork and spawn tests pass recorded as natively (3.13)" {
	check_peer 3.13 "${FORK[@]}"
}

@test "peer: CPython's fork and spawn tests pass recorded as natively (3.14)" {
	check_peer 3.14 "${FORK[@]}"
}

@test "peer: CPython's fork and spawn tests pass recorded as natively (3.15)" {
	check_peer 3.15 "${FORK[@]}"
}

@test "peer: CPython's fork and spawn tests pass recorded as natively (Debian 3.11)" {
	check_peer deb3.11 "${FORK[@]}"
}

@test "peer: CPython's fork pool tests pass recorded as natively (3.8)" {
	check_peer 3.8 test_multiprocessing_fork -m '*TestPool*'
}

@test "peer: CPython's fork pool tests pass recorded as natively (Debian 3.11)" {
	check_peer deb3.11 test_multiprocessing_fork -m '*TestPool*'
}

@test "peer: CPython's recursion-limit tests pass recorded as natively (3.12)" {
	check_peer 3.12 "${RECURSION[@]}"
}

@test "peer: CPython's recursion-limit tests pass recorded as natively (3.13)" {
	check_peer 3.13 "${RECURSION[@]}"
}

@test "peer: CPython's recursion-limit tests pass recorded as natively (3.14)" {
	check_peer 3.14 "${RECURSION[@]}"
}

@test "peer: CPython's recursion-limit tests pass recorded as natively (3.15)" {
	check_peer 3.15 "${RECURSION[@]}"
}
