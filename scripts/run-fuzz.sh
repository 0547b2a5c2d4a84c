#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make fuzz (and make test, so CI): runs each libFuzzer harness build-fuzz/fuzz_NAME for
# FUZZ_SECONDS (30) from its committed corpus tests/fuzz/corpus/NAME (read only: new inputs
# go to a temporary directory), with ASan, UBSan and leak detection; then Python's own
# marshal.loads checks fuzz_marshal's outputs for that corpus on every interpreter present.
# One "ok"/"not ok" line per harness, then "N passed, N failed" (run-tests.sh reads it).
# FUZZ_MERGE=1 merges what the run found into the committed corpus (libFuzzer -merge=1,
# which keeps only inputs that add coverage). FUZZ_JOBS=N runs N processes per harness;
# FUZZ_SEED (1: the same run every time; 0: libFuzzer picks).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-1}
passed=0
failed=0
total=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# allocator_may_return_null: a huge allocation fails as glibc's does and the error path runs
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

bins=(build-fuzz/fuzz_*)
if [[ ! -x ${bins[0]} ]]; then
	echo "# no harness in build-fuzz/ (make fuzz-build)"
	echo "0 passed, 1 failed"
	exit 1
fi
i=0
for bin in "${bins[@]}"; do
	name=$(basename "$bin")
	i=$((i + 1))
	corpus=tests/fuzz/corpus/$name
	mkdir -p "$corpus" "$tmp/$name" "$tmp/art-$name"
	rc=0
	if ((jobs > 1)); then
		(cd "$tmp/art-$name" && "$OLDPWD/$bin" -max_total_time="$secs" -jobs="$jobs" \
			-workers="$jobs" -print_final_stats=1 "$tmp/$name" "$OLDPWD/$corpus") \
			>"$tmp/$name.log" 2>&1 || rc=$?
		cat "$tmp/art-$name"/fuzz-*.log >>"$tmp/$name.log" 2>/dev/null || true
	else
		# a fixed seed: the same mutations in the same order every run, so a run that
		# passed here passes again (a slower machine explores a prefix of the same
		# sequence); FUZZ_SEED=0 lets libFuzzer pick one (long runs)
		"$bin" -max_total_time="$secs" -seed="${FUZZ_SEED:-1}" -print_final_stats=1 \
			-artifact_prefix="$tmp/art-$name/" "$tmp/$name" "$corpus" \
			>"$tmp/$name.log" 2>&1 || rc=$?
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name.log" |
		awk '{s += $1} END {print s + 0}')
	total=$((total + runs))
	crashes=$(find "$tmp/art-$name" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
		-o -name 'oom-*' | wc -l)
	why=""
	((rc == 0)) || why="exit status $rc"
	((crashes == 0)) || why="$why, $crashes crash/leak/timeout/oom inputs"
	if [[ $name == fuzz_marshal && -z $why ]]; then
		# Python decodes what the writer wrote, on every interpreter present
		for py in python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.{8..13}*/bin/python3; do
			command -v "$py" >/dev/null || continue
			find "$corpus" "$tmp/$name" -type f -print0 |
				xargs -0 -r env FUZZ_MARSHAL_PRINT=1 "$bin" 2>/dev/null |
				"$py" tests/fuzz/marshal_check.py >"$tmp/check.out" 2>&1 ||
				why="marshal.loads disagrees ($py)"
			echo "#   $(tail -n 1 "$tmp/check.out")"
			[[ -z $why ]] || { cat "$tmp/check.out"; break; }
		done
	fi
	if [[ -z $why ]]; then
		echo "ok $i - $name: $runs runs in ${secs} s, 0 crashes, 0 leaks"
		passed=$((passed + 1))
		if [[ ${FUZZ_MERGE:-0} == 1 ]]; then
			"$bin" -merge=1 "$corpus" "$tmp/$name" >>"$tmp/$name.log" 2>&1
		fi
	else
		echo "not ok $i - $name: $why"
		grep -E 'ERROR|SUMMARY|^    #[0-9]+ ' "$tmp/$name.log" | head -40 | sed 's/^/#   /'
		for f in "$tmp/art-$name"/*; do
			[[ -f $f && $(basename "$f") != fuzz-*.log ]] || continue
			mkdir -p build-fuzz/artifacts
			cp "$f" "build-fuzz/artifacts/$name-$(basename "$f")"
			echo "#   input kept: build-fuzz/artifacts/$name-$(basename "$f")"
		done
		failed=$((failed + 1))
	fi
done
echo "# $total executions in all"
echo "$passed passed, $failed failed"
((failed == 0))
