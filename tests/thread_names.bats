#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Thread names (issue 4): the names the program gave its threads through threading (given,
# default, non-ASCII, and a thread that starts and finishes while recorded) are the roots of
# the --threads flame graph and collapsed stacks and the trace's thread_name metadata, in
# launch and attach mode on every interpreter, and report gives them back from --raw. The
# expected names and tids are what tests/targets/thread_names.py prints about itself. Its
# counts against cProfile are checked with the other fixtures in record.bats. Short threads
# whose Thread the program drops at once (tests/targets/threads_dropped.py) are named too, by
# the BPF side as they start, without standing.

load helpers

FIXTURE="$TARGETS/thread_names.py"
OUTPUTS=(--collapsed c.txt --trace t.json --flamegraph f.svg --threads)

# check_names DIR: DIR/target.err has the fixture's "thread TID NAME" lines; DIR/t.json,
# DIR/c.txt and DIR/f.svg must name every one of those threads by the fixture's name.
check_names() {
	"$PY" - "$1" "$TOOLS" <<'PYEOF'
import os, sys, xml.etree.ElementTree as E
sys.path.insert(0, sys.argv[2])
from thread_names_check import fixture_threads, trace_mismatches
d = sys.argv[1]
want = fixture_threads(os.path.join(d, "target.err"))
bad = [] if len(want) == 5 else ["the fixture printed %d threads, not 5" % len(want)]
bad += trace_mismatches(os.path.join(d, "t.json"), want)
with open(os.path.join(d, "c.txt"), encoding="utf-8") as f:
    roots = {line.split(";", 1)[0] for line in f}
S = "{http://www.w3.org/2000/svg}"
frames = [g for g in E.parse(os.path.join(d, "f.svg")).getroot().iter(S + "g")
          if g.get("id") == "frames"][0]
svg_roots = {g.find(S + "title").text.split("\n")[0] for g in frames if g.get("data-d") == "1"}
for n in want.values():
    if n not in roots:
        bad.append("collapsed: no root %r in %s" % (n, sorted(roots)))
    if n not in svg_roots:
        bad.append("flame graph: no thread %r in %s" % (n, sorted(svg_roots)))
print("\n".join(bad) if bad else "names: " + ", ".join(sorted(want.values())))
sys.exit(1 if bad else 0)
PYEOF
}

# check_report: report from rec/r.raw (no root needed) writes the same outputs, names and all.
check_report() {
	mkdir -p "$BATS_TEST_TMPDIR/rep"
	cp "$BATS_TEST_TMPDIR/rec/r.raw" "$BATS_TEST_TMPDIR/rec/target.err" "$BATS_TEST_TMPDIR/rep/"
	chmod -R a+rwX "$BATS_TEST_TMPDIR/rep"
	cd "$BATS_TEST_TMPDIR/rep"
	run -0 --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PYUPROF" report r.raw -o p.prof "${OUTPUTS[@]}"
	for f in p.prof c.txt t.json f.svg; do
		cmp "$BATS_TEST_TMPDIR/rec/$f" "$f"
	done
	run -0 check_names .
}

# check_launch LABEL: every thread starts and finishes while recorded.
check_launch() {
	require_py "$1"
	require_bpf
	mkdir -p "$BATS_TEST_TMPDIR/rec"
	cd "$BATS_TEST_TMPDIR/rec"
	"$PYUPROF" record -q -o p.prof --raw r.raw "${OUTPUTS[@]}" -- "$PY" "$FIXTURE" \
		>target.out 2>target.err
	run -0 check_names .
	echo "$output"
	check_report
}

# check_attach LABEL: three threads run at attach; the short-lived one starts and finishes
# while attached (the fixture waits for "go", the test for its "late done").
check_attach() {
	local target rec
	require_py "$1"
	require_bpf
	mkdir -p "$BATS_TEST_TMPDIR/rec"
	cd "$BATS_TEST_TMPDIR/rec"
	start_bg target.out target.err "$PY" "$FIXTURE" --attach "$BATS_TEST_TMPDIR/rec"
	target=$BG_PID
	wait_for_line target.out '^ready' 20 "$target"
	start_bg rec.out rec.err "$PYUPROF" record -p "$target" -o p.prof --raw r.raw "${OUTPUTS[@]}"
	rec=$BG_PID
	wait_for_line rec.err '^pyuprof: recording pid' 20 "$rec"
	touch go
	wait_for_line target.out '^late done' 20 "$target"
	kill -TERM "$rec"
	wait_exit "$rec" 30
	cat rec.err
	((EXIT_STATUS == 0))
	assert_unharmed "$target"
	touch stop
	wait_exit "$target" 20
	((EXIT_STATUS == 0))
	run -0 check_names .
	echo "$output"
	check_report
}

# check_dropped LABEL BPF: the threads of threads_dropped.py, each dropped by the program as
# soon as it has started, have their names in the trace. With BPF 1, every one was named by the
# BPF side as it entered threading's bootstrap (--debug says so): the start of the first of each
# class has the thread that starts it stand, in its clone, while user space reads the Thread and
# tells the BPF side how to read the names of its class (bpf/thread_births.bpf.h; <= 3.10: a
# Thread's dict there soon has a table of its own, which the BPF side searches); with
# PYUPROF_CLONE_STOP=1 (each new thread held at its start) the first of each class stands itself
# at its bootstrap instead, named by user space. With BPF 0, none was.
check_dropped() {
	require_py "$1"
	require_bpf
	cd "$BATS_TEST_TMPDIR"
	local by_bpf=12
	[[ -z ${PYUPROF_CLONE_STOP:-} ]] || by_bpf=10
	"$PYUPROF" record --debug -o p.prof --trace t.json -- "$PY" "$TARGETS/threads_dropped.py" 6 \
		"$BATS_TEST_TMPDIR/threads.txt" >target.out 2>rec.err
	grep -qx 'done 12' target.out
	run "$PY" - "$2" "$TOOLS" "$by_bpf" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[2])
from thread_names_check import fixture_threads, trace_mismatches
want = fixture_threads("threads.txt")
with open("rec.err", encoding="utf-8") as f:
    bpf = sum("named by the BPF side as it started" in line for line in f)
bad = [] if len(want) == 13 else ["the fixture wrote %d threads, not 13" % len(want)]
bad += trace_mismatches("t.json", want)
if sys.argv[1] == "1" and bpf != int(sys.argv[3]):
    bad.append("%d threads named by the BPF side, not %s" % (bpf, sys.argv[3]))
if sys.argv[1] == "0" and bpf:
    bad.append("%d threads named by the BPF side, not 0" % bpf)
print("\n".join(bad) if bad else "named: %d, by the BPF side %d" % (len(want), bpf))
sys.exit(1 if bad else 0)
PYEOF
	echo "$output"
	((status == 0)) || { grep 'thread' rec.err; return 1; }
}

@test "thread names: launch on 3.8, and report from --raw" { check_launch 3.8; }
@test "thread names: launch on 3.9, and report from --raw" { check_launch 3.9; }
@test "thread names: launch on 3.10, and report from --raw" { check_launch 3.10; }
@test "thread names: launch on 3.11, and report from --raw" { check_launch 3.11; }
@test "thread names: launch on 3.12, and report from --raw" { check_launch 3.12; }
@test "thread names: launch on 3.13, and report from --raw" { check_launch 3.13; }
@test "thread names: launch on 3.14, and report from --raw" { check_launch 3.14; }
@test "thread names: launch on 3.15, and report from --raw" { check_launch 3.15; }
@test "thread names: launch on deb3.11, and report from --raw" { check_launch deb3.11; }

@test "thread names: attach on 3.8, and report from --raw" { check_attach 3.8; }
@test "thread names: attach on 3.9, and report from --raw" { check_attach 3.9; }
@test "thread names: attach on 3.10, and report from --raw" { check_attach 3.10; }
@test "thread names: attach on 3.11, and report from --raw" { check_attach 3.11; }
@test "thread names: attach on 3.12, and report from --raw" { check_attach 3.12; }
@test "thread names: attach on 3.13, and report from --raw" { check_attach 3.13; }
@test "thread names: attach on 3.14, and report from --raw" { check_attach 3.14; }
@test "thread names: attach on 3.15, and report from --raw" { check_attach 3.15; }
@test "thread names: attach on deb3.11, and report from --raw" { check_attach deb3.11; }

@test "thread names: dropped at once, on 3.8, read by the BPF side" { check_dropped 3.8 1; }
@test "thread names: dropped at once, on 3.10, read by the BPF side" { check_dropped 3.10 1; }
@test "thread names: dropped at once, on 3.11, read by the BPF side" { check_dropped 3.11 1; }
@test "thread names: dropped at once, on 3.12, read by the BPF side" { check_dropped 3.12 1; }
@test "thread names: dropped at once, on 3.13, read by the BPF side" { check_dropped 3.13 1; }
@test "thread names: dropped at once, on 3.14, read by the BPF side" { check_dropped 3.14 1; }
@test "thread names: dropped at once, on 3.15, read by the BPF side" { check_dropped 3.15 1; }
@test "thread names: dropped at once, on deb3.11, read by the BPF side" { check_dropped deb3.11 1; }
@test "thread names: dropped at once, on 3.12, each new thread held at its start" {
	PYUPROF_CLONE_STOP=1 check_dropped 3.12 1
}

# check_reused LABEL [fork]: tests/targets/tid_reuse.py has the kernel give the tid of its
# ended thread "first" again, to a thread "second" or (fork, followed) to a child process: each
# is a thread of its own in the collapsed stacks (the calls of each under its own root), in the
# trace (one tid, named by both in turn) and in a report from --raw.
check_reused() {
	require_py "$1"
	require_bpf
	mkdir -p "$BATS_TEST_TMPDIR/rec"
	cd "$BATS_TEST_TMPDIR/rec"
	local -a extra=(--raw r.raw --trace t.json)
	[[ ${2:-} != fork ]] || extra=(--subprocesses)
	"$PYUPROF" record -q -o p.prof --collapsed c.txt --threads "${extra[@]}" -- \
		"$PY" "$TARGETS/tid_reuse.py" ${2:-} >target.out 2>target.err
	cat target.err
	run -0 "$PY" - "${2:-thread}" <<'PYEOF'
import json, re, sys
fork = sys.argv[1] == "fork"
tid = int(re.search(r"^reused (\d+)$", open("target.err").read(), re.M).group(1))
roots = {}
for line in open("c.txt", encoding="utf-8"):
    m = re.search(r";(work_\w+) \(", line)
    if m:
        roots.setdefault(m.group(1), set()).add(line.split(";", 1)[0])
later = "work_child" if fork else "work_second"
bad = []
if roots.get("work_first") != {"first"}:
    bad.append("work_first under %s, not first alone" % sorted(roots.get("work_first", ())))
if not roots.get(later):
    bad.append("no %s in the collapsed stacks" % later)
elif fork and any(not r.startswith("MainThread") for r in roots[later]):
    bad.append("work_child under %s, not the child's MainThread" % sorted(roots[later]))
elif not fork and any(not re.match(r"second( \(\d+\))?$", r) for r in roots[later]):
    # (a try whose thread got another tid is a "second" too: "second (TID)" each)
    bad.append("work_second under %s, not second alone" % sorted(roots[later]))
if not fork:
    names = {e["tid"]: e["args"]["name"] for e in json.load(open("t.json"))["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if names.get(tid) != "first / second":
        bad.append("trace: tid %d is %r, not 'first / second'" % (tid, names.get(tid)))
print("\n".join(bad) if bad else "tid %d: %s" % (tid, sorted(roots.items())))
sys.exit(1 if bad else 0)
PYEOF
	echo "$output"
	[[ ${2:-} != fork ]] || return 0
	"$PYUPROF" report r.raw -o q.prof --collapsed c2.txt --threads >/dev/null 2>&1
	cmp c.txt c2.txt
}

@test "thread names: a tid given again is another thread, on 3.8" { check_reused 3.8; }
@test "thread names: a tid given again is another thread, on 3.12" { check_reused 3.12; }
@test "thread names: a tid given again is another thread, on 3.14" { check_reused 3.14; }
@test "thread names: a tid given again is another thread, on deb3.11" { check_reused deb3.11; }
@test "thread names: a tid given again to a followed child is its own, on 3.13" {
	check_reused 3.13 fork
}
@test "thread names: a tid given again to a followed child is its own, on deb3.11" {
	check_reused deb3.11 fork
}
