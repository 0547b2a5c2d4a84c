#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Chrome trace of a real recording (record --trace FILE [--trace-min-us N]). Each test
# records a fixture once, writing the pstats profile and the trace in the same run, and
# tests/unit/chrome_check.py (on the same interpreter) checks the trace: it parses as JSON
# (gunzipped for .gz), the events nest per thread, every thread with events is named, and
# each function has as many events as the .prof has calls, with its file and line in args;
# the process is named after its command and the summary says the trace's size. With
# --trace-min-us the trace holds fewer events, and events plus the calls it says it left out
# are all the calls.

load helpers

CHECKER="$REPO/tests/unit/chrome_check.py"

# record_trace NAME LABEL TRACE [OPTIONS...]: records tests/targets/NAME.py on LABEL into
# ours.prof and TRACE (in the test's directory); fails on any error or lost event.
record_trace() {
	local name=$1 label=$2 trace=$3 status=0 lost
	shift 3
	require_py "$label"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	"$PYUPROF" record -o ours.prof --trace "$trace" "$@" -- "$PY" "$TARGETS/$name.py" \
		>ours.out 2>ours.err || status=$?
	if ((status != 0)); then
		echo "pyuprof exited with status $status:"
		cat ours.err
		return 1
	fi
	lost=$(summary_lost_events ours.err)
	if [[ $lost != 0 ]]; then
		echo "pyuprof reports $lost lost events"
		return 1
	fi
	[[ -s $trace ]] || { echo "no trace written"; return 1; }
}

# check_trace TRACE [OPTIONS...]: chrome_check.py against ours.prof; sets EVENTS, LEFT_OUT
# and THREADS from its summary line.
check_trace() {
	local trace=$1 out
	shift
	if ! out=$("$PY" "$CHECKER" "$trace" --prof ours.prof "$@" 2>&1); then
		echo "$out"
		return 1
	fi
	[[ $out =~ ^events\ ([0-9]+)\ left_out\ ([0-9]+)\ threads\ ([0-9]+)$ ]] || {
		echo "unexpected checker output: $out"
		return 1
	}
	EVENTS=${BASH_REMATCH[1]}
	LEFT_OUT=${BASH_REMATCH[2]}
	THREADS=${BASH_REMATCH[3]}
}

# trace_matches_prof NAME LABEL TRACE MIN_THREADS: every call is in the trace.
trace_matches_prof() {
	local name=$1 label=$2 trace=$3 min_threads=$4
	record_trace "$name" "$label" "$trace"
	# the process is named after its command line, as /proc/PID/cmdline has it
	check_trace "$trace" --min-us 0.000 --left-out 0 --process "$(py_argv0) $TARGETS/$name.py"
	if ((EVENTS == 0 || THREADS < min_threads)); then
		echo "$EVENTS events in $THREADS threads (expected at least $min_threads threads)"
		return 1
	fi
	trace_size_said "$trace"
}

# trace_size_said TRACE: the summary gives the trace's size (uncompressed) and its events.
trace_size_said() {
	local trace=$1 bytes line gz=""
	if [[ $trace == *.gz ]]; then
		bytes=$(gzip -dc "$trace" | wc -c)
	else
		bytes=$(stat -c %s "$trace")
	fi
	line=$(grep "^pyuprof: trace $trace: " ours.err) || { cat ours.err; return 1; }
	[[ $trace == *.gz ]] && gz=" uncompressed"
	[[ $line =~ :\ ([0-9.]+)\ MB(\ uncompressed)?,\ ([0-9]+)\ calls$ ]] &&
		[[ ${BASH_REMATCH[2]} == "$gz" ]] || {
		echo "bad size line: $line"
		return 1
	}
	[[ $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') == "${BASH_REMATCH[1]}" ]] || {
		echo "$line: the file holds $bytes bytes"
		return 1
	}
	[[ ${BASH_REMATCH[3]} == "$EVENTS" ]] || { echo "$line: $EVENTS events"; return 1; }
}

@test "trace: threads on 3.8 nests per thread and matches the .prof" {
	trace_matches_prof threads 3.8 trace.json 5
}

@test "trace: threads on 3.11 matches the .prof (.gz)" {
	trace_matches_prof threads 3.11 trace.json.gz 5
}

@test "trace: threads on 3.12 nests per thread and matches the .prof" {
	trace_matches_prof threads 3.12 trace.json 5
}

@test "trace: threads on 3.13 matches the .prof (.gz)" {
	trace_matches_prof threads 3.13 trace.json.gz 5
}

@test "trace: threads on 3.14 matches the .prof (.gz)" {
	trace_matches_prof threads 3.14 trace.json.gz 5
}

@test "trace: threads on 3.15 matches the .prof (.gz)" {
	trace_matches_prof threads 3.15 trace.json.gz 5
}

@test "trace: threads on deb3.11 nests per thread and matches the .prof" {
	trace_matches_prof threads deb3.11 trace.json 5
}

@test "trace: recursion on 3.9 nests and matches the .prof" {
	trace_matches_prof recursion 3.9 trace.json 1
}

@test "trace: recursion on 3.12 matches the .prof (.gz)" {
	trace_matches_prof recursion 3.12 trace.json.gz 1
}

@test "trace: recursion on 3.13 nests and matches the .prof" {
	trace_matches_prof recursion 3.13 trace.json 1
}

@test "trace: recursion on 3.14 nests and matches the .prof" {
	trace_matches_prof recursion 3.14 trace.json 1
}

@test "trace: recursion on 3.15 nests and matches the .prof" {
	trace_matches_prof recursion 3.15 trace.json 1
}

@test "trace: --trace-min-us leaves short calls out and counts them" {
	local label min_us
	require_some_py
	for label in 3.12 "${SUPPORTED_PYS[@]}"; do
		[[ $(py_path "$label") == "$PY" ]] && break
	done
	# every call in a first trace, the events kept; the threshold comes from that trace (no
	# call's duration is assumed): halfway, on a log scale, from its shortest call to its
	# longest, then the same events are drawn again with it
	record_trace recursion "$label" full.json --raw run.raw
	min_us=$("$PY" - full.json <<'PYEOF'
import json, math, sys
durs = [e["dur"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
lo, hi = min(durs), max(durs)
t = int(math.sqrt(max(lo, 0.001) * hi))
print(min(max(t, math.floor(lo) + 1), math.floor(hi)))
PYEOF
)
	echo "--trace-min-us $min_us"
	run -0 --separate-stderr "$PYUPROF" report -q run.raw --trace trace.json \
		--trace-min-us "$min_us"
	check_trace trace.json --min-us "$min_us.000"
	if ((EVENTS == 0 || LEFT_OUT == 0)); then
		echo "$EVENTS events written, $LEFT_OUT left out: expected some of each"
		return 1
	fi
	# the checker has shown events + left out = the .prof's calls, so fewer events than calls
	[[ $(grep -c '"ph":"X"' trace.json) == "$EVENTS" ]]
}

@test "trace: --trace-min-us takes a non-negative number only" {
	local dir="$BATS_TEST_TMPDIR/out"
	mkdir "$dir"
	run -64 "$PYUPROF" record --trace "$dir/t.json" --trace-min-us abc -- true
	run -64 "$PYUPROF" record --trace "$dir/t.json" --trace-min-us -1 -- true
	assert_empty_dir "$dir"
}
