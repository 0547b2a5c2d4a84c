#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs every unit test binary (build/tests/test_*) and then `bats --tap tests/`; then the
# sanitizer part: the unit tests and, per interpreter, one launch and one attach test against
# cProfile built with ASan+UBSan (build-asan/, `make asan`); then each libFuzzer harness for
# FUZZ_SECONDS (build-fuzz/, scripts/run-fuzz.sh). Ends with exactly one line
# `N passed, N failed` over all of them; CI reads that line. Each unit binary prints its own
# `N passed, N failed` line; bats' TAP gives `ok`/`not ok` lines (a skipped test is
# `ok ... # skip` and counts as neither). Exits 1 if anything failed.
#   run-tests.sh        everything (make test)
#   run-tests.sh asan   the sanitizer part alone (make test-asan)
set -euo pipefail

cd "$(dirname "$0")/.."
# No BATS_TEST_TIMEOUT: bats 1.8.2's per-test watchdog races with a test that ends at once
# (its `sleep` is orphaned and holds bats' output pipe open until it expires). The tests wait
# with timeouts of their own, and the whole run is bounded instead.
BATS_RUN_TIMEOUT=${BATS_RUN_TIMEOUT:-3000}
what=${1:-all}

passed=0
failed=0
skipped=0
log=$(mktemp)
sanlogs=$(mktemp -d)
chmod 1777 "$sanlogs" # report runs as nobody in a test: its sanitizer logs go here too
trap 'rm -rf "$log" "$sanlogs"' EXIT

# run_unit BINARY...: each prints "N passed, N failed"; a missing line or a non-zero exit
# after a clean summary is a failure.
run_unit() {
	local t rc line
	for t in "$@"; do
		echo "# $t"
		rc=0
		timeout "${UNIT_TIMEOUT:-300}" "$t" >"$log" 2>&1 || rc=$?
		cat "$log"
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			passed=$((passed + BASH_REMATCH[1]))
			failed=$((failed + BASH_REMATCH[2]))
			# a binary that dies after its summary, or fails without saying so, fails
			if ((rc != 0 && BASH_REMATCH[2] == 0)); then
				echo "# $t exited with status $rc"
				failed=$((failed + 1))
			fi
		else
			echo "# $t printed no 'N passed, N failed' line (exit status $rc)"
			failed=$((failed + 1))
		fi
	done
}

# run_bats ARGS...: bats --tap ARGS, counted.
run_bats() {
	local rc=0 ok skip notok plan
	echo "# bats --tap $*"
	timeout "$BATS_RUN_TIMEOUT" bats --tap "$@" 2>&1 | tee "$log" || rc=$?
	ok=$(grep -Ec '^ok [0-9]+' "$log" || true)
	skip=$(grep -Ec '^ok [0-9]+ .*# skip' "$log" || true)
	notok=$(grep -Ec '^not ok [0-9]+' "$log" || true)
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)
	passed=$((passed + ok - skip))
	skipped=$((skipped + skip))
	failed=$((failed + notok))
	# bats failing outside any test (syntax error, missing file) or stopping early
	if ((rc != 0 && notok == 0)) || [[ -z $plan ]] || ((ok + notok != plan)); then
		echo "# bats exited with status $rc after $((ok + notok)) of ${plan:-?} tests"
		failed=$((failed + 1))
	fi
}

# The sanitizer part. Any ASan or UBSan finding aborts the process (-fno-sanitize-recover)
# and is also written under $sanlogs, so one cannot hide behind an exit status a test
# expected. LeakSanitizer is on: it stops pyuprof's own threads with ptrace at exit, which
# works because nothing traces pyuprof and its tracees are detached by then (run the
# build-asan pyuprof under strace or gdb and LSan fails: set detect_leaks=0 there).
# allocator_may_return_null: a huge allocation fails with NULL, as glibc's does, and the
# error path is what a unit test checks. The suppressions are graphviz's (files say why).
run_asan() {
	local f
	if [[ ! -x build-asan/pyuprof ]]; then
		echo "# build-asan/pyuprof is not built (make asan)"
		failed=$((failed + 1))
		return
	fi
	export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:abort_on_error=0"
	# fast_unwind_on_malloc=0: graphviz has no frame pointers; the leak suppressions name its
	# functions, which only the slow unwinder sees
	ASAN_OPTIONS+=":fast_unwind_on_malloc=0:log_path=$sanlogs/asan"
	ASAN_OPTIONS+=":suppressions=$PWD/tests/sanitizers/asan.supp"
	export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp"
	export UBSAN_OPTIONS="print_stacktrace=1:log_path=$sanlogs/ubsan"
	run_unit build-asan/tests/test_*
	# and every output, written by record and again by report from the raw events (3.12)
	PYUPROF="$PWD/build-asan/pyuprof" run_bats \
		-f '^(record: (threads on|attach on) |report: a raw recording gives back)' \
		tests/record.bats tests/report.bats
	unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
	for f in "$sanlogs"/*; do
		# (a warning alone, such as a huge allocation refused, is not a finding)
		[[ -e $f ]] && grep -Eq 'ERROR: |runtime error' "$f" || continue
		echo "# sanitizer report $f:"
		cat "$f"
		failed=$((failed + 1))
	done
}

if [[ $what == all ]]; then
	run_unit build/tests/test_*
	run_bats tests/
fi
run_asan
if [[ $what == all ]]; then
	# prints its own "N passed, N failed" line, one case per harness
	UNIT_TIMEOUT=$((${FUZZ_SECONDS:-30} * 6 + 300)) run_unit scripts/run-fuzz.sh
fi

((skipped == 0)) || echo "# $skipped skipped"
echo "$passed passed, $failed failed"
((failed == 0))
