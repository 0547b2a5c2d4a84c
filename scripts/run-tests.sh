#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs every unit test binary (build/tests/test_*) and then `bats --tap tests/`, and ends
# with exactly one line `N passed, N failed` over both; CI reads that line. Each unit binary
# prints its own `N passed, N failed` line; bats' TAP gives `ok`/`not ok` lines (a skipped
# test is `ok ... # skip` and counts as neither). Exits 1 if anything failed.
set -euo pipefail

cd "$(dirname "$0")/.."
# No BATS_TEST_TIMEOUT: bats 1.8.2's per-test watchdog races with a test that ends at once
# (its `sleep` is orphaned and holds bats' output pipe open until it expires). The tests wait
# with timeouts of their own, and the whole run is bounded instead.
BATS_RUN_TIMEOUT=${BATS_RUN_TIMEOUT:-3000}

passed=0
failed=0
skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in build/tests/test_*; do
	[[ -f $t && -x $t ]] || continue
	echo "# $t"
	rc=0
	timeout 300 "$t" >"$log" 2>&1 || rc=$?
	cat "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		# a binary that dies after its summary, or fails without saying so, is a failure
		if ((rc != 0 && BASH_REMATCH[2] == 0)); then
			echo "# $t exited with status $rc"
			failed=$((failed + 1))
		fi
	else
		echo "# $t printed no 'N passed, N failed' line (exit status $rc)"
		failed=$((failed + 1))
	fi
done

echo "# bats --tap tests/"
rc=0
timeout "$BATS_RUN_TIMEOUT" bats --tap tests/ 2>&1 | tee "$log" || rc=$?
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

((skipped == 0)) || echo "# $skipped skipped"
echo "$passed passed, $failed failed"
((failed == 0))
