#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make check-words (scripts/check-words.sh): sessions counted or placed in time fail with
# FILE:LINE, on one line or wrapped over two; pyuprof's own recording session passes.

CHECK="$BATS_TEST_DIRNAME/../scripts/check-words.sh"
W=session # the planted phrases are built here, so that this file passes the check itself

setup() {
	D="$BATS_TEST_TMPDIR/tree"
	mkdir -p "$D/bench" "$D/user"
	printf 'One recording session: the target and its processes.\n' >"$D/user/session.h"
	printf 'struct session *s; /* the session reads the rings */\n' >>"$D/user/session.h"
	printf 'class Session:\n    pass\n' >"$D/bench/fixture.py"
}

@test "check-words: pyuprof's recording session passes" {
	run "$CHECK" "$D"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "check-words: an ordinal, a numbered or a relative word before it fails, naming file:line" {
	printf '# Results\n\nMeasured in the Fifteenth %s: 3 ns.\n' $W >"$D/bench/R.md"
	printf 'x\ny\nas before this %s\nthe 2nd %ss table\n' $W $W >"$D/bench/S.md"
	run "$CHECK" "$D"
	[ "$status" -eq 1 ]
	[[ $output == *"$D/bench/R.md:3: "*"Fifteenth $W"* ]]
	[[ $output == *"$D/bench/S.md:3: "*"this $W"* ]]
	[[ $output == *"$D/bench/S.md:4: "*"2nd ${W}s"* ]]
	[ "${#lines[@]}" -eq 3 ]
}

@test "check-words: a phrase wrapped over two comment lines fails at its first line" {
	printf '/*\n * measured on the test VM (bench/RESULTS.md, the twelfth\n * %s): 4 ns\n */\n' $W \
		>"$D/user/stage.h"
	run "$CHECK" "$D"
	[ "$status" -eq 1 ]
	[[ $output == "$D/user/stage.h:2: "*"twelfth"*"$W"* ]]
}
