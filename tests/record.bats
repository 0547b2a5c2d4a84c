#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Recording for real. Every fixture in tests/targets on every interpreter present (pyenv
# 3.8-3.13, Debian's python3.11, 3.14 and 3.15; some on Debian's libpython3.14 and 3.15) is
# recorded by pyuprof in launch mode and by cProfile
# (tools/cprofile_run.py, builtins=True as cProfile's default, every thread), and
# tools/pstats_compare.py demands the same calls, primitive calls and callers for every function
# of the fixture and every C function it calls; with --no-builtins, against builtins=False.
# Then: exit status and stdio pass-through, non-ASCII names, attach mode with exact
# counts (tests/targets/long_running.py), and every profile loading on every interpreter.
# The @test lines of the matrix are written out one per fixture and interpreter (bats
# 1.8 collects tests from the file's text, so they cannot come from a loop).

load helpers
load server

# check_fixture NAME LABEL [--no-builtins]: the matrix cell for tests/targets/NAME.py on
# interpreter LABEL (with --no-builtins: pyuprof's and cProfile's builtins=False).
check_fixture() {
	local name=$1 label=$2 script="$TARGETS/$1.py" status=0 lost builtins=("${@:3}")
	require_py "$label"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	if ! "$PY" "$TOOLS/cprofile_run.py" "${builtins[@]}" -o cprofile.prof "$script" \
		>cprofile.out 2>cprofile.err; then
		echo "the fixture fails under cProfile:"
		cat cprofile.err
		return 1
	fi
	"$PYUPROF" record "${builtins[@]}" -o ours.prof -- "$PY" "$script" >ours.out 2>ours.err ||
		status=$?
	if ((status != 0)); then
		echo "pyuprof exited with status $status:"
		cat ours.err
		return 1
	fi
	# the program's stdout passes through untouched
	if ! cmp -s cprofile.out ours.out; then
		echo "stdout differs from the program's own:"
		diff cprofile.out ours.out || true
		return 1
	fi
	lost=$(summary_lost_events ours.err)
	cp ours.prof "$BATS_FILE_TMPDIR/$name-$label.prof"
	if ! "$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof --file "$script" \
		>compare.out 2>&1; then
		cat compare.out
		grep '^pyuprof: ' ours.err
		return 1
	fi
	if [[ $lost != 0 ]]; then
		echo "pyuprof reports $lost lost events"
		return 1
	fi
}

# check_attach LABEL: attach to an idle server, run 5 rounds, stop with SIGINT; the profile
# has exactly the 5 rounds, the target carries on (round 6), then exits normally.
check_attach() {
	require_py "$1"
	require_bpf
	start_server
	attach_pyuprof
	run_rounds 1 5
	kill -INT "$REC"
	wait_exit "$REC" 60
	check_rec_status
	assert_unharmed "$TARGET"
	run_rounds 6 6
	compare_rounds 5
	kill -USR2 "$TARGET"
	wait_exit "$TARGET" 20
	[[ $EXIT_STATUS == 0 ]] || { echo "the target exited with $EXIT_STATUS"; return 1; }
	grep -q '^rounds 6$' "$BATS_TEST_TMPDIR/target.out"
}

# for_each_py FUNCTION: runs FUNCTION LABEL with PY set, for every interpreter present, and
# names the ones that failed. Each runs in a directory of its own (as BATS_TEST_TMPDIR), in a
# background subshell that is then waited for (a subshell tested directly by || would run
# with errexit off); what it started is killed before the next one.
for_each_py() {
	local label failed=() n=0
	for label in $(available_pys); do
		n=$((n + 1))
		echo "--- $label"
		mkdir -p "$BATS_TEST_TMPDIR/$label"
		(
			PY=$(py_path "$label")
			BATS_TEST_TMPDIR="$BATS_TEST_TMPDIR/$label"
			cd "$BATS_TEST_TMPDIR"
			"$1" "$label"
		) &
		wait $! || failed+=("$label")
		kill_started
	done
	((n > 0)) || skip_unless_ci "no supported Python is installed"
	if ((${#failed[@]})); then
		echo "failed on: ${failed[*]}"
		return 1
	fi
}

# --- the matrix: every fixture on every interpreter, and attach with exact counts ---

@test "record: plain_calls on 3.8 matches cProfile" { check_fixture plain_calls 3.8; }
@test "record: plain_calls on 3.9 matches cProfile" { check_fixture plain_calls 3.9; }
@test "record: plain_calls on 3.10 matches cProfile" { check_fixture plain_calls 3.10; }
@test "record: plain_calls on 3.11 matches cProfile" { check_fixture plain_calls 3.11; }
@test "record: plain_calls on 3.12 matches cProfile" { check_fixture plain_calls 3.12; }
@test "record: plain_calls on 3.13 matches cProfile" { check_fixture plain_calls 3.13; }
@test "record: plain_calls on 3.14 matches cProfile" { check_fixture plain_calls 3.14; }
@test "record: plain_calls on 3.15 matches cProfile" { check_fixture plain_calls 3.15; }
@test "record: plain_calls on deb3.11 matches cProfile" { check_fixture plain_calls deb3.11; }

@test "record: recursion on 3.8 matches cProfile" { check_fixture recursion 3.8; }
@test "record: recursion on 3.9 matches cProfile" { check_fixture recursion 3.9; }
@test "record: recursion on 3.10 matches cProfile" { check_fixture recursion 3.10; }
@test "record: recursion on 3.11 matches cProfile" { check_fixture recursion 3.11; }
@test "record: recursion on 3.12 matches cProfile" { check_fixture recursion 3.12; }
@test "record: recursion on 3.13 matches cProfile" { check_fixture recursion 3.13; }
@test "record: recursion on 3.14 matches cProfile" { check_fixture recursion 3.14; }
@test "record: recursion on 3.15 matches cProfile" { check_fixture recursion 3.15; }
@test "record: recursion on deb3.11 matches cProfile" { check_fixture recursion deb3.11; }

@test "record: mutual_recursion on 3.8 matches cProfile" { check_fixture mutual_recursion 3.8; }
@test "record: mutual_recursion on 3.9 matches cProfile" { check_fixture mutual_recursion 3.9; }
@test "record: mutual_recursion on 3.10 matches cProfile" { check_fixture mutual_recursion 3.10; }
@test "record: mutual_recursion on 3.11 matches cProfile" { check_fixture mutual_recursion 3.11; }
@test "record: mutual_recursion on 3.12 matches cProfile" { check_fixture mutual_recursion 3.12; }
@test "record: mutual_recursion on 3.13 matches cProfile" { check_fixture mutual_recursion 3.13; }
@test "record: mutual_recursion on 3.14 matches cProfile" { check_fixture mutual_recursion 3.14; }
@test "record: mutual_recursion on 3.15 matches cProfile" { check_fixture mutual_recursion 3.15; }
@test "record: mutual_recursion on deb3.11 matches cProfile" { check_fixture mutual_recursion deb3.11; }

@test "record: generators on 3.8 matches cProfile" { check_fixture generators 3.8; }
@test "record: generators on 3.9 matches cProfile" { check_fixture generators 3.9; }
@test "record: generators on 3.10 matches cProfile" { check_fixture generators 3.10; }
@test "record: generators on 3.11 matches cProfile" { check_fixture generators 3.11; }
@test "record: generators on 3.12 matches cProfile" { check_fixture generators 3.12; }
@test "record: generators on 3.13 matches cProfile" { check_fixture generators 3.13; }
@test "record: generators on 3.14 matches cProfile" { check_fixture generators 3.14; }
@test "record: generators on 3.15 matches cProfile" { check_fixture generators 3.15; }
@test "record: generators on lib3.14 matches cProfile" { check_fixture generators lib3.14; }
@test "record: generators on lib3.15 matches cProfile" { check_fixture generators lib3.15; }
@test "record: generators on deb3.11 matches cProfile" { check_fixture generators deb3.11; }

@test "record: throw_delegating on 3.8 matches cProfile" { check_fixture throw_delegating 3.8; }
@test "record: throw_delegating on 3.9 matches cProfile" { check_fixture throw_delegating 3.9; }
@test "record: throw_delegating on 3.10 matches cProfile" { check_fixture throw_delegating 3.10; }
@test "record: throw_delegating on 3.11 matches cProfile" { check_fixture throw_delegating 3.11; }
@test "record: throw_delegating on 3.12 matches cProfile" { check_fixture throw_delegating 3.12; }
@test "record: throw_delegating on 3.13 matches cProfile" { check_fixture throw_delegating 3.13; }
@test "record: throw_delegating on 3.14 matches cProfile" { check_fixture throw_delegating 3.14; }
@test "record: throw_delegating on 3.15 matches cProfile" { check_fixture throw_delegating 3.15; }
@test "record: throw_delegating on deb3.11 matches cProfile" { check_fixture throw_delegating deb3.11; }

@test "record: async_coroutines on 3.8 matches cProfile" { check_fixture async_coroutines 3.8; }
@test "record: async_coroutines on 3.9 matches cProfile" { check_fixture async_coroutines 3.9; }
@test "record: async_coroutines on 3.10 matches cProfile" { check_fixture async_coroutines 3.10; }
@test "record: async_coroutines on 3.11 matches cProfile" { check_fixture async_coroutines 3.11; }
@test "record: async_coroutines on 3.12 matches cProfile" { check_fixture async_coroutines 3.12; }
@test "record: async_coroutines on 3.13 matches cProfile" { check_fixture async_coroutines 3.13; }
@test "record: async_coroutines on 3.14 matches cProfile" { check_fixture async_coroutines 3.14; }
@test "record: async_coroutines on 3.15 matches cProfile" { check_fixture async_coroutines 3.15; }
@test "record: async_coroutines on lib3.14 matches cProfile" { check_fixture async_coroutines lib3.14; }
@test "record: async_coroutines on lib3.15 matches cProfile" { check_fixture async_coroutines lib3.15; }
@test "record: async_coroutines on deb3.11 matches cProfile" { check_fixture async_coroutines deb3.11; }

@test "record: exceptions on 3.8 matches cProfile" { check_fixture exceptions 3.8; }
@test "record: exceptions on 3.9 matches cProfile" { check_fixture exceptions 3.9; }
@test "record: exceptions on 3.10 matches cProfile" { check_fixture exceptions 3.10; }
@test "record: exceptions on 3.11 matches cProfile" { check_fixture exceptions 3.11; }
@test "record: exceptions on 3.12 matches cProfile" { check_fixture exceptions 3.12; }
@test "record: exceptions on 3.13 matches cProfile" { check_fixture exceptions 3.13; }
@test "record: exceptions on 3.14 matches cProfile" { check_fixture exceptions 3.14; }
@test "record: exceptions on 3.15 matches cProfile" { check_fixture exceptions 3.15; }
@test "record: exceptions on deb3.11 matches cProfile" { check_fixture exceptions deb3.11; }

@test "record: finalizers on 3.8 matches cProfile" { check_fixture finalizers 3.8; }
@test "record: finalizers on 3.9 matches cProfile" { check_fixture finalizers 3.9; }
@test "record: finalizers on 3.10 matches cProfile" { check_fixture finalizers 3.10; }
@test "record: finalizers on 3.11 matches cProfile" { check_fixture finalizers 3.11; }
@test "record: finalizers on 3.12 matches cProfile" { check_fixture finalizers 3.12; }
@test "record: finalizers on 3.13 matches cProfile" { check_fixture finalizers 3.13; }
@test "record: finalizers on 3.14 matches cProfile" { check_fixture finalizers 3.14; }
@test "record: finalizers on 3.15 matches cProfile" { check_fixture finalizers 3.15; }
@test "record: finalizers on deb3.11 matches cProfile" { check_fixture finalizers deb3.11; }

@test "record: methods on 3.8 matches cProfile" { check_fixture methods 3.8; }
@test "record: methods on 3.9 matches cProfile" { check_fixture methods 3.9; }
@test "record: methods on 3.10 matches cProfile" { check_fixture methods 3.10; }
@test "record: methods on 3.11 matches cProfile" { check_fixture methods 3.11; }
@test "record: methods on 3.12 matches cProfile" { check_fixture methods 3.12; }
@test "record: methods on 3.13 matches cProfile" { check_fixture methods 3.13; }
@test "record: methods on 3.14 matches cProfile" { check_fixture methods 3.14; }
@test "record: methods on 3.15 matches cProfile" { check_fixture methods 3.15; }
@test "record: methods on deb3.11 matches cProfile" { check_fixture methods deb3.11; }

@test "record: call_paths on 3.8 matches cProfile" { check_fixture call_paths 3.8; }
@test "record: call_paths on 3.9 matches cProfile" { check_fixture call_paths 3.9; }
@test "record: call_paths on 3.10 matches cProfile" { check_fixture call_paths 3.10; }
@test "record: call_paths on 3.11 matches cProfile" { check_fixture call_paths 3.11; }
@test "record: call_paths on 3.12 matches cProfile" { check_fixture call_paths 3.12; }
@test "record: call_paths on 3.13 matches cProfile" { check_fixture call_paths 3.13; }
@test "record: call_paths on 3.14 matches cProfile" { check_fixture call_paths 3.14; }
@test "record: call_paths on 3.15 matches cProfile" { check_fixture call_paths 3.15; }
@test "record: call_paths on lib3.14 matches cProfile" { check_fixture call_paths lib3.14; }
@test "record: call_paths on lib3.15 matches cProfile" { check_fixture call_paths lib3.15; }
@test "record: call_paths on deb3.11 matches cProfile" { check_fixture call_paths deb3.11; }
# --no-builtins: no C function, and a Python function called from C (sorted's key, map) has
# the Python frame below as its caller, as cProfile's builtins=False
@test "record: lambdas_closures on 3.8 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.8 --no-builtins; }
@test "record: lambdas_closures on 3.9 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.9 --no-builtins; }
@test "record: lambdas_closures on 3.10 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.10 --no-builtins; }
@test "record: lambdas_closures on 3.11 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.11 --no-builtins; }
@test "record: lambdas_closures on 3.12 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.12 --no-builtins; }
@test "record: lambdas_closures on 3.13 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.13 --no-builtins; }
@test "record: lambdas_closures on 3.14 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.14 --no-builtins; }
@test "record: lambdas_closures on 3.15 with --no-builtins matches builtins=False" { check_fixture lambdas_closures 3.15 --no-builtins; }
@test "record: lambdas_closures on deb3.11 with --no-builtins matches builtins=False" { check_fixture lambdas_closures deb3.11 --no-builtins; }
@test "record: call_paths on 3.12 with --no-builtins matches builtins=False" { check_fixture call_paths 3.12 --no-builtins; }

@test "record: getitem on 3.8 matches cProfile" { check_fixture getitem 3.8; }
@test "record: getitem on 3.9 matches cProfile" { check_fixture getitem 3.9; }
@test "record: getitem on 3.10 matches cProfile" { check_fixture getitem 3.10; }
@test "record: getitem on 3.11 matches cProfile" { check_fixture getitem 3.11; }
@test "record: getitem on 3.12 matches cProfile" { check_fixture getitem 3.12; }
@test "record: getitem on 3.13 matches cProfile" { check_fixture getitem 3.13; }
@test "record: getitem on 3.14 matches cProfile" { check_fixture getitem 3.14; }
@test "record: getitem on 3.15 matches cProfile" { check_fixture getitem 3.15; }
@test "record: getitem on deb3.11 matches cProfile" { check_fixture getitem deb3.11; }

@test "record: init on 3.8 matches cProfile" { check_fixture init 3.8; }
@test "record: init on 3.9 matches cProfile" { check_fixture init 3.9; }
@test "record: init on 3.10 matches cProfile" { check_fixture init 3.10; }
@test "record: init on 3.11 matches cProfile" { check_fixture init 3.11; }
@test "record: init on 3.12 matches cProfile" { check_fixture init 3.12; }
@test "record: init on 3.13 matches cProfile" { check_fixture init 3.13; }
@test "record: init on 3.14 matches cProfile" { check_fixture init 3.14; }
@test "record: init on 3.15 matches cProfile" { check_fixture init 3.15; }
@test "record: init on deb3.11 matches cProfile" { check_fixture init deb3.11; }

@test "record: lambdas_closures on 3.8 matches cProfile" { check_fixture lambdas_closures 3.8; }
@test "record: lambdas_closures on 3.9 matches cProfile" { check_fixture lambdas_closures 3.9; }
@test "record: lambdas_closures on 3.10 matches cProfile" { check_fixture lambdas_closures 3.10; }
@test "record: lambdas_closures on 3.11 matches cProfile" { check_fixture lambdas_closures 3.11; }
@test "record: lambdas_closures on 3.12 matches cProfile" { check_fixture lambdas_closures 3.12; }
@test "record: lambdas_closures on 3.13 matches cProfile" { check_fixture lambdas_closures 3.13; }
@test "record: lambdas_closures on 3.14 matches cProfile" { check_fixture lambdas_closures 3.14; }
@test "record: lambdas_closures on 3.15 matches cProfile" { check_fixture lambdas_closures 3.15; }
@test "record: lambdas_closures on deb3.11 matches cProfile" { check_fixture lambdas_closures deb3.11; }

@test "record: threads on 3.8 matches cProfile" { check_fixture threads 3.8; }
@test "record: threads on 3.9 matches cProfile" { check_fixture threads 3.9; }
@test "record: threads on 3.10 matches cProfile" { check_fixture threads 3.10; }
@test "record: threads on 3.11 matches cProfile" { check_fixture threads 3.11; }
@test "record: threads on 3.12 matches cProfile" { check_fixture threads 3.12; }
@test "record: threads on 3.13 matches cProfile" { check_fixture threads 3.13; }
@test "record: threads on 3.14 matches cProfile" { check_fixture threads 3.14; }
@test "record: threads on 3.15 matches cProfile" { check_fixture threads 3.15; }
@test "record: threads on lib3.14 matches cProfile" { check_fixture threads lib3.14; }
@test "record: threads on lib3.15 matches cProfile" { check_fixture threads lib3.15; }
@test "record: threads on deb3.11 matches cProfile" { check_fixture threads deb3.11; }
@test "record: thread_names on 3.8 matches cProfile" { check_fixture thread_names 3.8; }
@test "record: thread_names on 3.9 matches cProfile" { check_fixture thread_names 3.9; }
@test "record: thread_names on 3.10 matches cProfile" { check_fixture thread_names 3.10; }
@test "record: thread_names on 3.11 matches cProfile" { check_fixture thread_names 3.11; }
@test "record: thread_names on 3.12 matches cProfile" { check_fixture thread_names 3.12; }
@test "record: thread_names on 3.13 matches cProfile" { check_fixture thread_names 3.13; }
@test "record: thread_names on 3.14 matches cProfile" { check_fixture thread_names 3.14; }
@test "record: thread_names on 3.15 matches cProfile" { check_fixture thread_names 3.15; }
@test "record: thread_names on deb3.11 matches cProfile" { check_fixture thread_names deb3.11; }

@test "record: unicode_names on 3.8 matches cProfile" { check_fixture unicode_names 3.8; }
@test "record: unicode_names on 3.9 matches cProfile" { check_fixture unicode_names 3.9; }
@test "record: unicode_names on 3.10 matches cProfile" { check_fixture unicode_names 3.10; }
@test "record: unicode_names on 3.11 matches cProfile" { check_fixture unicode_names 3.11; }
@test "record: unicode_names on 3.12 matches cProfile" { check_fixture unicode_names 3.12; }
@test "record: unicode_names on 3.13 matches cProfile" { check_fixture unicode_names 3.13; }
@test "record: unicode_names on 3.14 matches cProfile" { check_fixture unicode_names 3.14; }
@test "record: unicode_names on 3.15 matches cProfile" { check_fixture unicode_names 3.15; }
@test "record: unicode_names on deb3.11 matches cProfile" { check_fixture unicode_names deb3.11; }

@test "record: deep_chain on 3.8 matches cProfile" { check_fixture deep_chain 3.8; }
@test "record: deep_chain on 3.9 matches cProfile" { check_fixture deep_chain 3.9; }
@test "record: deep_chain on 3.10 matches cProfile" { check_fixture deep_chain 3.10; }
@test "record: deep_chain on 3.11 matches cProfile" { check_fixture deep_chain 3.11; }
@test "record: deep_chain on 3.12 matches cProfile" { check_fixture deep_chain 3.12; }
@test "record: deep_chain on 3.13 matches cProfile" { check_fixture deep_chain 3.13; }
@test "record: deep_chain on 3.14 matches cProfile" { check_fixture deep_chain 3.14; }
@test "record: deep_chain on 3.15 matches cProfile" { check_fixture deep_chain 3.15; }
@test "record: deep_chain on deb3.11 matches cProfile" { check_fixture deep_chain deb3.11; }

@test "record: deep_recursion on 3.8 matches cProfile" { check_fixture deep_recursion 3.8; }
@test "record: deep_recursion on 3.9 matches cProfile" { check_fixture deep_recursion 3.9; }
@test "record: deep_recursion on 3.10 matches cProfile" { check_fixture deep_recursion 3.10; }
@test "record: deep_recursion on 3.11 matches cProfile" { check_fixture deep_recursion 3.11; }
@test "record: deep_recursion on 3.12 matches cProfile" { check_fixture deep_recursion 3.12; }
@test "record: deep_recursion on 3.13 matches cProfile" { check_fixture deep_recursion 3.13; }
@test "record: deep_recursion on 3.14 matches cProfile" { check_fixture deep_recursion 3.14; }
@test "record: deep_recursion on 3.15 matches cProfile" { check_fixture deep_recursion 3.15; }
@test "record: deep_recursion on lib3.14 matches cProfile" { check_fixture deep_recursion lib3.14; }
@test "record: deep_recursion on lib3.15 matches cProfile" { check_fixture deep_recursion lib3.15; }
@test "record: deep_recursion on deb3.11 matches cProfile" { check_fixture deep_recursion deb3.11; }


@test "record: attach on 3.8 counts the rounds run while attached exactly" { check_attach 3.8; }
@test "record: attach on 3.9 counts the rounds run while attached exactly" { check_attach 3.9; }
@test "record: attach on 3.10 counts the rounds run while attached exactly" { check_attach 3.10; }
@test "record: attach on 3.11 counts the rounds run while attached exactly" { check_attach 3.11; }
@test "record: attach on 3.12 counts the rounds run while attached exactly" { check_attach 3.12; }
@test "record: attach on 3.13 counts the rounds run while attached exactly" { check_attach 3.13; }
@test "record: attach on 3.14 counts the rounds run while attached exactly" { check_attach 3.14; }
@test "record: attach on 3.15 counts the rounds run while attached exactly" { check_attach 3.15; }
@test "record: attach on deb3.11 counts the rounds run while attached exactly" { check_attach deb3.11; }

# --- the tools themselves (no BPF needed) ---

@test "tools: cprofile_run sees every thread with its own stack, on every interpreter" {
	check_threads_reference() {
		cd "$BATS_TEST_TMPDIR"
		"$PY" "$TOOLS/cprofile_run.py" -o "threads-$1.prof" "$TARGETS/threads.py" >/dev/null
		"$PY" - "threads-$1.prof" <<-'PYEOF'
			import pstats, sys
			st = pstats.Stats(sys.argv[1]).stats
			got = {k[2]: (v[1], v[0]) for k, v in st.items() if k[0].endswith("targets/threads.py")}
			want = {"worker": (4, 4), "fib": (4 * 3193, 4), "crunch": (4, 4), "step": (2000, 2000)}
			bad = {n: (got.get(n), w) for n, w in want.items() if got.get(n) != w}
			if bad:
			    sys.exit("(nc, cc) got/expected: %r" % bad)
		PYEOF
	}
	for_each_py check_threads_reference
}

@test "tools: pstats_compare passes cProfile against cProfile and catches every doctored count" {
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	local script="$TARGETS/recursion.py" how
	"$PY" "$TOOLS/cprofile_run.py" -o a.prof "$script" >/dev/null
	"$PY" "$TOOLS/cprofile_run.py" -o b.prof "$script" >/dev/null
	run -0 "$PY" "$TOOLS/pstats_compare.py" a.prof b.prof --file "$script"
	# doctor.py SRC DST HOW: a copy of SRC with one thing changed
	cat >doctor.py <<-'PYEOF'
		import marshal, sys
		src, dst, how = sys.argv[1:]
		d = marshal.load(open(src, "rb"))
		by = {k[2]: k for k in d if k[0].endswith("targets/recursion.py")}
		fib, main, mod = by["fib"], by["main"], by["<module>"]
		cc, nc, tt, ct, callers = d[fib]
		callers = dict(callers)
		if how == "nc": d[fib] = (cc, nc + 1, tt, ct, callers)
		elif how == "cc": d[fib] = (cc + 1, nc, tt, ct, callers)
		elif how == "missing": del d[fib]
		elif how == "extra": d[(fib[0], 99, "ghost")] = (1, 1, 0.0, 0.0, {main: (1, 1, 0.0, 0.0)})
		elif how == "caller_added": callers[mod] = (1, 1, 0.0, 0.0)
		elif how == "caller_lost": del callers[main]
		elif how == "edge": callers[fib] = (callers[fib][0], callers[fib][1] + 1) + callers[fib][2:]
		elif how == "module_callers": d[mod] = d[mod][:4] + ({},)  # excluded: harness
		elif how == "other_files": d = {k: v for k, v in d.items() if k in by.values() or k[0] == "~"}
		elif how == "c_missing": del d[("~", 0, "<built-in method builtins.print>")]
		elif how == "c_edge":
		    pr = ("~", 0, "<built-in method builtins.print>")
		    c = dict(d[pr][4])
		    c[main] = (c[main][0] + 1,) + c[main][1:]
		    d[pr] = d[pr][:4] + (c,)
		elif how == "c_other_callers":  # excluded: a C function's calls from other files
		    pr = ("~", 0, "<built-in method builtins.print>")
		    c = dict(d[pr][4])
		    c[("elsewhere.py", 1, "f")] = (7, 7, 0.0, 0.0)
		    d[pr] = (9, 9, 0.0, 0.0, c)
		elif how == "times": d = {k: (v[0], v[1], v[2] + 1.0, v[3] + 2.0, v[4]) for k, v in d.items()}
		if how in ("caller_added", "caller_lost", "edge"): d[fib] = (cc, nc, tt, ct, callers)
		marshal.dump(d, open(dst, "wb"))
	PYEOF
	for how in nc cc missing extra caller_added caller_lost edge c_missing c_edge; do
		"$PY" doctor.py a.prof doctored.prof "$how"
		run -1 "$PY" "$TOOLS/pstats_compare.py" doctored.prof b.prof --file "$script"
		[[ $output == *"1 difference"* ]] || { echo "$how: $output"; return 1; }
	done
	# outside the comparison by design: <module>'s callers, other files (and their calls of C
	# functions), times
	for how in module_callers other_files c_other_callers times; do
		"$PY" doctor.py a.prof doctored.prof "$how"
		run -0 "$PY" "$TOOLS/pstats_compare.py" doctored.prof b.prof --file "$script"
	done
	# a profile with nothing of the fixture in it cannot pass
	run -2 "$PY" "$TOOLS/pstats_compare.py" a.prof a.prof --file "$TARGETS/plain_calls.py"
}

# --- launch mode ---

@test "record: exit status, stdin, stdout and stderr pass through; the profile is written" {
	require_some_py
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	local status=0
	printf 'some input\n' | "$PYUPROF" record -o ours.prof -- "$PY" -c '
import sys
def shout(s):
    return s.upper()
sys.stdout.write(shout(sys.stdin.read()))
sys.stderr.write("to stderr\n")
sys.exit(7)' >out 2>err || status=$?
	[[ $status -eq 7 ]] || { echo "exit status $status, want 7"; cat err; return 1; }
	[[ $(cat out) == "SOME INPUT" ]] || { echo "stdout:"; cat out; return 1; }
	grep -qx 'to stderr' err
	summary_lost_events err >/dev/null
	run -0 "$PY" "$TOOLS/pstats_load.py" ours.prof --name shout
}

@test "record: a program killed by a signal gives 128+N" {
	require_some_py
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	local sig status
	for sig in TERM KILL USR1; do
		status=0
		"$PYUPROF" record -o "ours-$sig.prof" -- "$PY" -c "
import os, signal
def die():
    os.kill(os.getpid(), signal.SIG$sig)
die()" >out 2>err || status=$?
		[[ $status -eq $((128 + $(kill -l "$sig"))) ]] ||
			{ echo "SIG$sig: exit status $status"; cat err; return 1; }
		run -0 "$PY" "$TOOLS/pstats_load.py" "ours-$sig.prof" --name die
	done
}

# pipe_prog MODE PY [PYUPROF...]: runs, under env --default-signal=PIPE (as a shell gives it)
# and piped into `head -n 1`, a program whose shell part runs `yes | head` and whose Python
# part writes 200000 lines into the closed pipe; MODE dfl has Python die of SIGPIPE, MODE ign
# keeps Python's own SIG_IGN (BrokenPipeError). Sets PIPE_STATUS (the program's, or
# pyuprof's, exit status); stderr goes to pipe.err.
pipe_prog() {
	local mode=$1 py=$2
	shift 2
	# shellcheck disable=SC2016
	env --default-signal=PIPE "$@" bash -c '
yes | head -n 1 >/dev/null
echo "yes: ${PIPESTATUS[0]}" >&2
exec "$1" -c "
import signal, sys
if sys.argv[1] == \"dfl\":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
def emit(i):
    print(i)
for i in range(200000):
    emit(i)
" "$2"' prog "$py" "$mode" 2>pipe.err | head -n 1 >/dev/null
	PIPE_STATUS=${PIPESTATUS[0]}
}

@test "record: in a | head pipeline the program meets SIGPIPE as without pyuprof" {
	require_some_py
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	local mode want
	for mode in dfl ign; do
		pipe_prog "$mode" "$PY"
		want=$PIPE_STATUS
		grep -qx 'yes: 141' pipe.err || { cat pipe.err; return 1; }
		[[ $mode == ign || $want == 141 ]] || { echo "$mode: baseline status $want"; return 1; }
		rm -f p.prof
		pipe_prog "$mode" "$PY" "$PYUPROF" record -o p.prof --top 0 --
		# the shell's `yes` died of SIGPIPE, not of an EPIPE it was left to report
		grep -qx 'yes: 141' pipe.err || { echo "$mode:"; cat pipe.err; return 1; }
		[[ $PIPE_STATUS == "$want" ]] ||
			{ echo "$mode: status $PIPE_STATUS, want $want"; cat pipe.err; return 1; }
		summary_lost_events pipe.err >/dev/null
		run -0 "$PY" "$TOOLS/pstats_load.py" p.prof --name emit
	done
}

@test "record: the default output is pyuprof-PID.prof in the current directory" {
	require_some_py
	require_bpf
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	local pid
	pid=$("$PYUPROF" record -q -- "$PY" -c 'import os; print(os.getpid())')
	[[ -f pyuprof-$pid.prof ]] || { ls -la; return 1; }
	[[ $(ls) == "pyuprof-$pid.prof" ]]
}

@test "record: non-ASCII function names come out as UTF-8, on every interpreter" {
	require_bpf
	check_names() {
		cd "$BATS_TEST_TMPDIR"
		"$PYUPROF" record -q -o "names-$1.prof" -- "$PY" "$TARGETS/unicode_names.py" >/dev/null
		"$PY" "$TOOLS/pstats_load.py" "names-$1.prof" \
			--name größe --name 関数 --name 𠀋𠀋 --name Straße --name länge >/dev/null
	}
	for_each_py check_names
}

# --- attach mode ---

@test "record: attach ends on SIGTERM, writes the profile, target carries on" {
	require_bpf
	stop_with_sigterm() {
		start_server
		attach_pyuprof
		run_rounds 1 2
		kill -TERM "$REC"
		wait_exit "$REC" 60
		check_rec_status
		assert_unharmed "$TARGET"
		run_rounds 3 3
		compare_rounds 2
	}
	for_each_py stop_with_sigterm
}

@test "record: attach ends on SIGHUP (the terminal went away), writes the profile, target carries on" {
	require_bpf
	stop_with_sighup() {
		start_server
		attach_pyuprof
		run_rounds 1 2
		kill -HUP "$REC"
		wait_exit "$REC" 60
		check_rec_status
		assert_unharmed "$TARGET"
		run_rounds 3 3
		compare_rounds 2
	}
	for_each_py stop_with_sighup
}

@test "record: attach ends after -d seconds, writes the profile, target carries on" {
	require_bpf
	stop_after_duration() {
		start_server
		attach_pyuprof -d 2
		run_rounds 1 1
		wait_exit "$REC" 60
		check_rec_status
		assert_unharmed "$TARGET"
		run_rounds 2 2
		compare_rounds 1
	}
	for_each_py stop_after_duration
}

@test "record: attach ends when the target exits, and writes the profile" {
	require_bpf
	stop_at_exit() {
		start_server
		attach_pyuprof
		run_rounds 1 3
		kill -USR2 "$TARGET"
		wait_exit "$TARGET" 20
		[[ $EXIT_STATUS == 0 ]] || { echo "target: status $EXIT_STATUS"; return 1; }
		wait_exit "$REC" 60
		check_rec_status
		compare_rounds 3
	}
	for_each_py stop_at_exit
}

# --- portability of the output ---

@test "record: a profile written for one interpreter loads with pstats on every other one" {
	require_bpf
	local label q prof failed=()
	cd "$BATS_TEST_TMPDIR"
	for label in $(available_pys); do
		prof="$BATS_FILE_TMPDIR/unicode_names-$label.prof"
		if [[ ! -f $prof ]]; then
			"$PYUPROF" record -q -o "$prof" -- "$(py_path "$label")" "$TARGETS/unicode_names.py" >/dev/null
		fi
		for q in $(available_pys); do
			"$(py_path "$q")" "$TOOLS/pstats_load.py" "$prof" --name größe --name 関数 >load.out 2>&1 ||
				{ failed+=("written for $label, loaded by $q"); cat load.out; }
		done
	done
	((${#failed[@]} == 0)) || { printf '%s\n' "${failed[@]}"; return 1; }
}
