#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# greenlet and gevent (issue 38): a greenlet switch moves a thread from one C stack, and the
# Python frames on it, to another without a return. Each greenlet's calls must keep their own
# callers (C functions too: a switch is a C call that returns on its own greenlet's stack), and a frame's cumtime must run from its call to its return, switches and all. The
# truth is tests/tools/greenlet_truth.py (a profile function that asks greenlet which greenlet
# runs at each event and keeps a stack for each, _lsprof's rules on each), itself checked
# against what the programs' structure says; cProfile, with one stack for all, files calls
# after a switch under the wrong caller. Debian's python3-greenlet and python3-gevent, for
# Debian's 3.11.

load helpers

require_gevent() {
	require_py deb3.11
	"$PY" -c 'import greenlet, gevent' 2>/dev/null ||
		skip_unless_ci "python3-greenlet and python3-gevent are not installed"
}

# fields.py PROF FILE: "name ncalls primitive cumtime caller:ncalls..." per function of FILE
fields() {
	"$PY" - "$1" "$2" <<-'PYEOF'
		import os, pstats, sys
		st = pstats.Stats(sys.argv[1]).stats
		for k, v in sorted(st.items(), key=lambda kv: kv[0][2]):
		    if os.path.realpath(k[0]) == os.path.realpath(sys.argv[2]):
		        callers = sorted("%s:%d" % (c[2], e[0]) for c, e in v[4].items())
		        print(k[2], v[1], v[0], "%.9f" % v[3], *callers)
	PYEOF
}

# cumtime NAME: from fields' output in FIELDS
cumtime() { awk -v n="$1" '$1 == n { print $4 }' <<<"$FIELDS"; }

# a >= b, as numbers
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

@test "greenlet: the truth tool counts as the program's structure says; cProfile files calls after a switch under the wrong caller" {
	require_gevent
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/greenlet_truth.py" -o truth.prof "$TARGETS/greenlets.py" 1000
	FIELDS=$(fields truth.prof "$TARGETS/greenlets.py")
	echo "$FIELDS"
	grep -Eq '^leaf_a 1001 1001 [0-9.]+ driver:1001$' <<<"$FIELDS"
	grep -Eq '^leaf_b 1000 1000 [0-9.]+ worker:1000$' <<<"$FIELDS"
	grep -Eq '^worker 1 1 [0-9.]+$' <<<"$FIELDS"
	grep -Eq '^driver 1 1 [0-9.]+ main:1$' <<<"$FIELDS"
	# the worker lives inside the driver's call
	ge "$(cumtime driver)" "$(cumtime worker)"
	"$PY" "$TOOLS/cprofile_run.py" -o cprofile.prof "$TARGETS/greenlets.py" 1000 >/dev/null
	run "$PY" "$TOOLS/pstats_compare.py" cprofile.prof truth.prof --file "$TARGETS/greenlets.py"
	echo "$output"
	[[ $status == 1 && $output == *"leaf_a): caller"*"(worker)"* ]]
}

# greenlets.py recorded (batch, or --exits EXITS): counts and callers equal the truth's; and
# with the times as recorded (--no-compensation), the worker's cumtime within the driver's,
# each leaf's within its caller's. Before, leaf_b's caller was driver x999 in the batch mode
# and the driver's cumtime was near 0 in both (its frames were closed at the worker's first
# call).
check_driver_worker() {
	local exits=() truth=()
	require_gevent
	require_bpf
	# (per call: no C functions, as the truth's --no-builtins)
	[[ -z ${1:-} ]] || exits=(--exits "$1") truth=(--no-builtins)
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/greenlet_truth.py" "${truth[@]}" -o truth.prof "$TARGETS/greenlets.py" 1000 \
		>/dev/null
	run_ok "$PYUPROF" record "${exits[@]}" -o ours.prof -- "$PY" "$TARGETS/greenlets.py" 1000
	run -0 "$PY" "$TOOLS/pstats_compare.py" ours.prof truth.prof --file "$TARGETS/greenlets.py"
	run_ok "$PYUPROF" record "${exits[@]}" --no-compensation -o raw.prof -- \
		"$PY" "$TARGETS/greenlets.py" 1000
	FIELDS=$(fields raw.prof "$TARGETS/greenlets.py")
	echo "$FIELDS"
	ge "$(cumtime main)" "$(cumtime driver)"
	ge "$(cumtime driver)" "$(cumtime worker)"
	ge "$(cumtime driver)" "$(cumtime leaf_a)"
	ge "$(cumtime worker)" "$(cumtime leaf_b)"
}

@test "greenlet: a driver and a worker switching 1000 times: callers as the truth's, cumtimes nested (batch)" {
	check_driver_worker
}

@test "greenlet: a driver and a worker switching 1000 times: callers as the truth's, cumtimes nested (per call)" {
	check_driver_worker trampoline
}

# gevent_pool.py: 50 greenlets, each work() calling leaf 200 times and yielding every 10th:
# work 50 calls (cProfile says 1), leaf 10,000 all from work, as the truth says. The
# greenlets take turns in 20 rounds, each alive from the first to the last: each work call's
# cumtime is most of run_all's, and their sum (50 of them) more than run_all's, in the truth
# and recorded (the times as recorded: --no-compensation). Before, a switch closed the frames
# of the greenlet left, and work's cumtimes summed to less than run_all's.
check_gevent_pool() {
	local exits=() truth=()
	require_gevent
	require_bpf
	# (per call: no C functions, as the truth's --no-builtins)
	[[ -z ${1:-} ]] || exits=(--exits "$1") truth=(--no-builtins)
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$TOOLS/greenlet_truth.py" "${truth[@]}" -o truth.prof "$TARGETS/gevent_pool.py" 50 200 \
		>/dev/null
	FIELDS=$(fields truth.prof "$TARGETS/gevent_pool.py")
	grep -Eq '^work 50 50 [0-9.]+$' <<<"$FIELDS"
	grep -Eq '^leaf 10000 10000 [0-9.]+ work:10000$' <<<"$FIELDS"
	ge "$(cumtime work)" "$(cumtime run_all)"
	run_ok "$PYUPROF" record "${exits[@]}" --no-compensation -o ours.prof -- \
		"$PY" "$TARGETS/gevent_pool.py" 50 200
	[[ $output == "total 29700" ]]
	run -0 "$PY" "$TOOLS/pstats_compare.py" ours.prof truth.prof --file "$TARGETS/gevent_pool.py"
	FIELDS=$(fields ours.prof "$TARGETS/gevent_pool.py")
	echo "$FIELDS"
	ge "$(cumtime work)" "$(cumtime run_all)"
	ge "$(cumtime work)" "$(cumtime leaf)"
}

@test "gevent: 50 greenlets taking turns: work 50 calls, leaf 10,000 from work, as the truth (batch)" {
	check_gevent_pool
}

@test "gevent: 50 greenlets taking turns: work 50 calls, leaf 10,000 from work, as the truth (per call)" {
	check_gevent_pool trampoline
}

# serve PORTFILE CMD...: the server run by CMD under load_client's load (20 connections of 50
# requests each, at once); the client's expectations in client.out
serve() {
	local port=$1 server
	shift
	rm -f "$port"
	start_bg server.out server.err "$@"
	server=$BG_PID
	"$PY" "$TOOLS/load_client.py" "$port" 20 50 >client.out || { cat server.err; return 1; }
	wait_exit "$server" 60
	[[ $EXIT_STATUS == 0 ]] || { cat server.out server.err; return 1; }
	grep -qx 'served 1000' server.out
}

# gevent_server.py under load, recorded (launch; batch, or --exits EXITS): its counts and
# callers equal the truth's (the truth's own counts are the client's), so they equal
# cProfile's wherever cProfile's are right; where they differ, cProfile's are not.
check_gevent_server() {
	local exits=() truth=() want
	require_gevent
	require_bpf
	[[ -z ${1:-} ]] || exits=(--exits "$1") truth=(--no-builtins)
	cd "$BATS_TEST_TMPDIR"
	serve port "$PY" "$TOOLS/greenlet_truth.py" "${truth[@]}" -o truth.prof \
		"$TARGETS/gevent_server.py" port
	FIELDS=$(fields truth.prof "$TARGETS/gevent_server.py")
	echo "$FIELDS"
	read -r _ requests _ leaves _ conns <client.out
	grep -Eq "^handle $conns $conns " <<<"$FIELDS"
	grep -Eq "^parse $requests $requests [0-9.]+ handle:$requests$" <<<"$FIELDS"
	grep -Eq "^compute $requests $requests [0-9.]+ handle:$requests$" <<<"$FIELDS"
	grep -Eq "^leaf $leaves $leaves [0-9.]+ compute:$leaves$" <<<"$FIELDS"
	serve port "$PYUPROF" record "${exits[@]}" -o ours.prof -- \
		"$PY" "$TARGETS/gevent_server.py" port
	run "$PY" "$TOOLS/pstats_compare.py" ours.prof truth.prof \
		--file "$TARGETS/gevent_server.py"
	echo "$output"
	[[ $status == 0 ]]
	serve port "$PY" "$TOOLS/cprofile_run.py" "${truth[@]}" -o cprofile.prof \
		"$TARGETS/gevent_server.py" port
	run "$PY" "$TOOLS/pstats_compare.py" cprofile.prof truth.prof \
		--file "$TARGETS/gevent_server.py"
	echo "# cProfile against the truth: $output" | head -4
}

@test "gevent: a server under load, recorded: counts and callers as the truth's (batch)" {
	check_gevent_server
}

@test "gevent: a server under load, recorded: counts and callers as the truth's (per call)" {
	check_gevent_server trampoline
}
