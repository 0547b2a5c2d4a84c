#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The reader thread (user/record/reader_thread.c): the ring buffers are read by a thread of its own
# at nice 19, so that on a machine with few CPUs reading records does not take the target's
# CPU time; the main loop, which serves the target's stops, keeps pyuprof's priority. What
# that must not cost: a reader starved of CPU time loses nothing and holds no target back for
# good (a full ring makes the target wait, the main loop reads it), and forks are served.

load helpers

# The threads of pyuprof (pid $1) and their nice values, "TID NICE" per line.
thread_nices() {
	local t stat
	local -a f
	for t in /proc/"$1"/task/*; do
		stat=$(cat "$t/stat" 2>/dev/null) || continue
		read -ra f <<<"${stat##*) }"
		echo "${t##*/} ${f[16]}"
	done
}

@test "reader: the rings are read at nice 19; the main loop keeps pyuprof's priority (3.12)" {
	require_py 3.12
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	start_bg out err nice -n 3 "$PYUPROF" record -o ours.prof -- \
		"$PY" "$TARGETS/long_running.py" --loop 2
	wait_for_line out '^ready' 30 "$BG_PID"
	# pyuprof's main thread (which waits), the thread that holds the target and runs the
	# main loop, and the reader
	run thread_nices "$BG_PID"
	echo "$output"
	[[ ${#lines[@]} == 3 ]]
	[[ ${lines[0]} == "$BG_PID 3" ]]
	[[ ${lines[1]} =~ ^[0-9]+\ 3$ ]]
	[[ ${lines[2]} =~ ^[0-9]+\ 19$ ]]
	wait "$BG_PID"
	[[ $(summary_lost_events err) == 0 ]] || { cat err; return 1; }
}

# pyuprof, the target and a busy loop on one CPU: the reader gets ~1% of it. Every round the
# target ran equals cProfile's, nothing is lost (with the smallest ring the target waits for
# the main loop to read what the reader did not), and a fork pool finishes.
@test "reader: a reader starved of CPU loses nothing and holds no fork back (3.8, 3.12)" {
	require_bpf
	local label
	cd "$BATS_TEST_TMPDIR"
	start_bg hog.out hog.err taskset -c 0 sh -c 'while :; do :; done'
	for label in 3.8 3.12; do
		require_py "$label"
		cd "$BATS_TEST_TMPDIR" && rm -rf "$label" && mkdir "$label" && cd "$label"
		run -0 --separate-stderr taskset -c 0 "$PYUPROF" record --ringbuf-mb 1 \
			-o ours.prof -- "$PY" "$TARGETS/long_running.py" --loop 2
		echo "$output" >out
		echo "$stderr" >err
		check_loop_rounds out err
		run_ok timeout 120 taskset -c 0 "$PYUPROF" record -q \
			-o pool.prof -- "$PY" "$TARGETS/fork_pool.py" 2 60 pids
		[[ $output =~ ^result\ [0-9]+\ workers\ 2$ ]] || { show_run; return 1; }
	done
}
