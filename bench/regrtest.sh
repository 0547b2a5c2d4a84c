#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-regrtest: CPython's own regression tests, from each installed interpreter (PYS:
# 3.8-3.15 and Debian's 3.11 by default; its tests are Debian's libpython3.11-testsuite,
# installed here if missing; 3.14's and 3.15's are Debian's too, in the sid root where they
# run: scripts/install-sid-root.sh), run three ways: natively; recorded from the start (pyuprof record --
# python -m test, the tests in one process: no -j); and natively while pyuprof attaches and
# detaches over and over (-p PID -d 3, then a pause, until the suite ends). The judge is the
# interpreter's own suite: a test that fails recorded but passes natively is harm, unless it
# fails as well natively with the smallest PEP 523 hook set and no pyuprof (the modules that
# failed only recorded run a fourth time so, bench/with_hook.py, 3.11-3.15: CPython's own
# behaviour under any hook). Also
# counted: fatal errors and crashes of the suite's process, and new `segfault`/`traps:` lines
# in the kernel's log during each run. Per run a log in OUT (bench/regrtest-logs by default,
# not committed); the table is printed at the end (bench/REGRTEST.md holds the runs so far).
#
#   PYS="3.12 3.13" MODULES="test_os test_sys" bench/regrtest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
repo=$PWD
bin=$(realpath "${PYUPROF:-build/pyuprof}")
BATS_TEST_DIRNAME=$repo/tests # (helpers.bash finds the repository, TOOLS, by it)
source tests/helpers.bash 2>/dev/null || true
PYUPROF=$bin
PYS=${PYS:-3.8 3.9 3.10 3.11 3.12 3.13 3.14 3.15 deb3.11}
MODES=${MODES:-native launch attach hook}
OUT=${OUT:-$PWD/bench/regrtest-logs}
[[ $(id -u) -eq 0 ]] || { echo "bench-regrtest: run as root (probes)" >&2; exit 1; }
# A background job (nohup, `&` in a script) starts with SIGINT ignored, and so does every
# Python under it: its KeyboardInterrupt tests then fail in every mode, and one
# (test_threading's gh_102056 child, which recurses until interrupt_main) never ends.
if [[ -z ${REGRTEST_SIGNALS_RESET:-} ]]; then
	REGRTEST_SIGNALS_RESET=1 exec env --default-signal=INT,QUIT "$0" "$@"
fi
[[ -x $PYUPROF ]] || { echo "bench-regrtest: $PYUPROF is not built (make)" >&2; exit 1; }

# By what they exercise (issue 19): threads; fork, wait and subprocesses; multiprocessing with
# fork and spawn (modules 3.8-3.11 ship; the pyenv builds of 3.12+ lack them); signals;
# asyncio; generators and coroutines; recursion limits (ast, compile, sys, descr, functools,
# exceptions); gc and weakrefs; the tracing and profiling hooks; pickle; and a broad rest.
# Only the modules an interpreter has are run.
DEFAULT_MODULES="test_threading test_thread test_threading_local
	test_fork1 test_wait4 test_wait3 test_subprocess test_os test_popen
	test_multiprocessing_fork test_multiprocessing_spawn
	test_signal
	test_asyncio.test_tasks test_asyncio.test_locks test_asyncio.test_queues
	test_asyncio.test_subprocess
	test_generators test_coroutines test_asyncgen test_yield_from test_contextlib_async
	test_ast test_compile test_sys test_descr test_functools test_exceptions
	test_gc test_weakref test_finalization
	test_sys_settrace test_sys_setprofile test_cprofile test_profile test_trace
	test_pickle
	test_builtin test_dataclasses test_itertools test_json test_re test_collections
	test_enum test_inspect test_traceback test_contextlib test_logging test_scope
	test_class test_dict test_list test_set test_unicode test_str test_math"
MODULES=${MODULES:-$DEFAULT_MODULES}


# has_module PY NAME: NAME (or its package, for test_pkg.test_mod) is in PY's Lib/test (a
# Python of the sid root sees its Lib/test there)
has_module() {
	local lib base=${2%%.*} root=""
	[[ $1 == */tests/tools/sid/* ]] && root=$SID_ROOT
	lib=$root$("$1" -c 'import os, test; print(os.path.dirname(test.__file__))' 2>/dev/null) ||
		return 1
	[[ -e $lib/$base.py || -d $lib/$base ]] || return 1
	[[ $2 != *.* ]] || [[ -e $lib/$base/${2#*.}.py ]]
}

# run_mode LABEL PY MODE DIR MODULES...: the suite in DIR, its log DIR/MODE.log
run_mode() {
	local label=$1 py=$2 mode=$3 dir=$4 before after start pid n=0 bad=0 rc=0
	shift 4
	local -a cmd=("$py" -m test -v "$@")
	before=$(dmesg_count)
	start=$(date +%s)
	mkdir -p "$dir/$mode.cwd"
	case $mode in
	native)
		(cd "$dir/$mode.cwd" && "${cmd[@]}") >"$dir/$mode.log" 2>&1 || rc=$?
		;;
	hook) # natively, with the smallest PEP 523 hook: what fails here fails for any hook
		(cd "$dir/$mode.cwd" && "$py" "$repo/bench/with_hook.py" test -v "$@") \
			>"$dir/$mode.log" 2>&1 || rc=$?
		;;
	launch)
		(cd "$dir/$mode.cwd" && "$PYUPROF" record -q -o "$dir/launch.prof" -- "${cmd[@]}") \
			>"$dir/$mode.log" 2>"$dir/$mode.pyuprof" || rc=$?
		;;
	attach)
		(cd "$dir/$mode.cwd" && exec "${cmd[@]}") >"$dir/$mode.log" 2>&1 &
		pid=$!
		sleep 2
		while kill -0 "$pid" 2>/dev/null && ! grep -q '^== Tests result' "$dir/$mode.log"; do
			n=$((n + 1))
			"$PYUPROF" record -q --top 0 -p "$pid" -d 3 -o "$dir/attach.prof" \
				2>>"$dir/$mode.pyuprof" || {
				# the suite ending under it is not a failure of pyuprof's
				kill -0 "$pid" 2>/dev/null && bad=$((bad + 1))
			}
			sleep 0.5
		done
		wait "$pid" || rc=$?
		echo "attaches $n failed $bad" >>"$dir/$mode.pyuprof"
		;;
	esac
	after=$(dmesg_count)
	echo "exit $rc seconds $(($(date +%s) - start)) dmesg $((after - before))" >"$dir/$mode.status"
	dmesg 2>/dev/null | grep -E 'segfault at|traps:' | tail -n $((after - before)) \
		>"$dir/$mode.dmesg" || true
	echo "bench-regrtest: $label $mode: $(cat "$dir/$mode.status")" >&2
}

for label in $PYS; do
	py=$(py_path "$label") || { echo "bench-regrtest: no Python $label" >&2; exit 1; }
	if [[ $label == deb3.11 ]] && ! "$py" -c 'import test.support' 2>/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			libpython3.11-testsuite >/dev/null
	fi
	dir=$OUT/$label
	rm -rf "$dir"
	mkdir -p "$dir"
	mods=()
	for m in $MODULES; do
		has_module "$py" "$m" && mods+=("$m")
	done
	echo "${mods[*]}" >"$dir/modules"
	for mode in $MODES; do
		[[ $mode == hook ]] && continue
		run_mode "$label" "$py" "$mode" "$dir" "${mods[@]}"
	done
	# the modules that failed only recorded, again natively with a bare hook (its slot's
	# offset is with_hook.py's: 3.11-3.15)
	hooked=$(python3 bench/regrtest_table.py --recorded-only-modules "$dir")
	if [[ " $MODES " == *" hook "* && -n $hooked && $label != deb3.11 ]] &&
		"$py" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 15))'; then
		# shellcheck disable=SC2086 # one word per module
		run_mode "$label" "$py" hook "$dir" $hooked
	fi
done
python3 bench/regrtest_table.py "$OUT" $PYS
