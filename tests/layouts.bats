#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Layouts: the table (user/target/py_layouts.c) against the builds it comes from (their DWARF,
# machine code and, 3.13+, the offsets they publish: scripts/gen-py-offsets.py --check), and
# what pyuprof does with a build whose published offsets (_Py_DebugOffsets) are not the
# table's. Those builds are Debian's 3.14 and 3.15 of the sid root, copied and rewritten
# (tools/patch_pyruntime.py; the interpreter reads none of what is rewritten, so they run as
# before): one whose layout moved is refused in one line naming the field, launched or
# attached to, and an attached target runs on untouched; a free-threaded one is refused as
# such; a later patch release with the same layout is recorded exactly.

load helpers

HEARTBEAT='import time
for i in range(400):
    print("beat", flush=True)
    time.sleep(0.05)'

# patched LABEL ARGS...: PY runs a copy of Debian's python3.X (LABEL 3.14 or 3.15) with
# patch_pyruntime.py ARGS applied to it.
patched() {
	require_py "$1"
	require_bpf
	mkdir -p "$BATS_TEST_TMPDIR/bin" "$BATS_TEST_TMPDIR/out"
	cp "$SID_ROOT/usr/bin/python$1" "$BATS_TEST_TMPDIR/bin/python$1"
	python3 "$TOOLS/patch_pyruntime.py" "$BATS_TEST_TMPDIR/bin/python$1" "${@:2}"
	export PYUPROF_SID_EXE="$BATS_TEST_TMPDIR/bin/python$1"
	"$PY" -c 'print("runs")' | grep -qx runs
}

# refused WHAT: launched and attached, the build is refused (1) in one line that says WHAT; no
# file is written, and the attached target runs on, untraced, its heartbeat going on.
refused() {
	local beats="$BATS_TEST_TMPDIR/beats" before i
	run -1 --separate-stderr "$PYUPROF" record -o "$BATS_TEST_TMPDIR/out/x.prof" -- \
		"$PY" -c 'print("ran")'
	assert_one_error_line || { show_run; return 1; }
	[[ $stderr == *"$1"* ]] || { show_run; return 1; }
	[[ $output != *ran* ]]
	start_bg "$beats" /dev/null "$PY" -c "$HEARTBEAT"
	wait_for_line "$beats" '^beat$' 20 "$BG_PID"
	run -1 --separate-stderr "$PYUPROF" record -o "$BATS_TEST_TMPDIR/out/x.prof" -p "$BG_PID"
	assert_one_error_line || { show_run; return 1; }
	[[ $stderr == *"$1"* ]] || { show_run; return 1; }
	assert_empty_dir "$BATS_TEST_TMPDIR/out"
	assert_unharmed "$BG_PID"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$BG_PID/status"
	before=$(wc -l <"$beats")
	for ((i = 0; i < 40; i++)); do
		(($(wc -l <"$beats") > before)) && return 0
		sleep 0.05
	done
	echo "the target stopped its heartbeat" >&2
	return 1
}

@test "layouts: a 3.14 whose published thread state moved is refused in one line, the target runs on" {
	# thread_state.native_thread_id (at 224 in 3.14's struct) 8 bytes on
	patched 3.14 224=+8
	refused "thread_state.native_thread_id is 168, the table says 160"
}

@test "layouts: a 3.15 whose published frame moved is refused in one line, the target runs on" {
	# interpreter_frame.owner (at 352 in 3.15's struct) one byte on
	patched 3.15 352=+1
	refused "interpreter_frame.owner is 75, the table says 74"
}

@test "layouts: a free-threaded build is refused as such, in one line, the target runs on" {
	patched 3.14 16=1
	refused "is a free-threaded build"
}

@test "layouts: a later patch release with the same layout is recorded exactly (3.14.30, 3.15.9)" {
	local v
	for v in 3.14:0x030e1ef0 3.15:0x030f09f0; do
		patched "${v%%:*}" --version "${v#*:}"
		cd "$BATS_TEST_TMPDIR"
		"$PY" "$TOOLS/cprofile_run.py" -o cprofile.prof "$TARGETS/methods.py" >/dev/null
		run_ok "$PYUPROF" record -o ours.prof -- "$PY" "$TARGETS/methods.py"
		[[ $stderr == *"(Python ${v%%:*}.$((${v#*:} >> 8 & 255)))"* ]] || { show_run; return 1; }
		run -0 "$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof \
			--file "$TARGETS/methods.py"
	done
}

# 3.13's patch releases moved the main interpreter inside _PyRuntime (3.13.0: +88352, Debian's
# 3.13.18: +88424), a place no published offset names but the runtime state's size less the
# interpreter state's gives. Taken from the table, the hook was written 72 bytes off inside the
# real interpreter at launch and every call's interpreter compare failed: no call was staged
# (every one took the per-call probes, 2.3 us a call). Staged, the raw recording has the code
# flushes only the batch makes (RAW_FLUSH, 106), and the counts are exact.
@test "layouts: Debian's 3.13.18 (its main interpreter 72 bytes on from 3.13.0's) records in batches, exactly" {
	require_bpf
	require_root_py sid python3.13
	cd "$BATS_TEST_TMPDIR"
	run_ok "$PYUPROF" record -o p.prof --raw p.raw -- chroot "$ROOT" "$RPY" -c '
def f(i):
    return i
for i in range(5000):
    f(i)'
	[[ $stderr == *"(Python 3.13."* ]]
	run -0 python3 "$TOOLS/raw_types.py" p.raw
	grep -Eq '^106 [1-9]' <<<"$output" || { echo "no code flush staged:"; echo "$output"; return 1; }
	run -0 python3 -c 'import pstats, sys
n = {k[2]: v[1] for k, v in pstats.Stats(sys.argv[1]).stats.items() if k[0] == "<string>"}
assert n.get("f") == 5000, n' p.prof
}

# The table equals what gen-py-offsets.py reads from every build (pyenv's DWARF, Debian's
# headers, machine code and published offsets; the positions of the lists py_layouts.c
# compares at attach). gdb and gcc are test dependencies (install-deps.sh).
@test "layouts: the table agrees with every build's DWARF, machine code and published offsets" {
	local t
	for t in gdb gcc; do
		command -v "$t" >/dev/null || skip_unless_ci "$t is not installed"
	done
	[[ -x $SID_ROOT/usr/bin/python3.15 ]] || skip_unless_ci "no sid root (install-sid-root.sh)"
	PYUPROF_SID_ROOT=$SID_ROOT run -0 --separate-stderr python3 "$REPO/scripts/gen-py-offsets.py" \
		--check
	[[ $stderr == *"agrees with"* ]] || { show_run; return 1; }
}
