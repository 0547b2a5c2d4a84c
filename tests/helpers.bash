# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared by tests/*.bats: paths, the interpreters to test, the privilege check, helpers to
# start and wait for background processes, and a teardown that kills only the processes
# the test itself started (recorded with their start time, so a reused PID is left alone).
# Variables set here are read by the .bats files, and bats' `run` sets $stderr: shellcheck
# sees neither.
# shellcheck disable=SC2034,SC2154

bats_require_minimum_version 1.5.0

# (bench/*.sh source this file outside bats: there it finds the repository by its own path)
REPO="$(cd "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/.." && pwd)"
PYUPROF="${PYUPROF:-$REPO/build/pyuprof}"
TARGETS="$REPO/tests/targets"
TOOLS="$REPO/tests/tools"

# Interpreters by label: pyenv builds (shared libpython), Debian's static, stripped 3.11, and
# Debian's 3.14 and 3.15 (static, stripped), which run in the sid root (below).
SUPPORTED_PYS=(3.8 3.9 3.10 3.11 3.12 3.13 3.14 3.15 deb3.11)
# Debian's libpython3.14.so and libpython3.15.so (the sid root's python3.X-shared): the
# interpreter in a shared library, tested where a test names them.
SHARED_PYS=(lib3.14 lib3.15)
# In pyenv only to be refused.
UNSUPPORTED_PYS=(2.7 3.6 3.7)

# Debian roots that Pythons run in as in a chroot or a container (scripts/make-root.sh; made
# by `scripts/install-deps.sh test`, which reads the same variable).
ROOTS_DIR=${PYUPROF_ROOTS:-/var/lib/pyuprof/roots}
# The sid root's 3.14 and 3.15 (scripts/install-sid-root.sh, which install-deps.sh test runs)
# run chrooted in a mount namespace of their own, as in a container (tests/tools/sid-python).
SID_ROOT=${PYUPROF_SID_ROOT:-$ROOTS_DIR/sid}

# require_root_py NAME PYTHON: sets ROOT to the root NAME and RPY to PYTHON's path in it
# (/usr/bin/PYTHON), or skips the test when it is not there (fails it under CI=true).
require_root_py() {
	ROOT=$ROOTS_DIR/$1
	RPY=/usr/bin/$2
	[[ -x $ROOT$RPY ]] ||
		skip_unless_ci "no $2 in $ROOT (scripts/install-deps.sh test makes that root)"
}

pyenv_root() {
	if [[ -n "${PYENV_ROOT:-}" ]]; then
		echo "$PYENV_ROOT"
	elif command -v pyenv >/dev/null 2>&1; then
		pyenv root
	else
		echo "$HOME/.pyenv"
	fi
}

# Prints the interpreter for LABEL (highest patch release installed); returns 1 if absent. For
# 3.14 and 3.15, the command that runs it in the sid root.
py_path() {
	local label=$1 root cand
	if [[ $label =~ ^(lib)?(3\.1[4-9])$ ]]; then
		if [[ -n ${BASH_REMATCH[1]} ]]; then
			cand=python${BASH_REMATCH[2]}-shared
			[[ -x $SID_ROOT/usr/local/bin/$cand ]] || return 1
		else
			cand=python${BASH_REMATCH[2]}
			[[ -x $SID_ROOT/usr/bin/$cand ]] || return 1
		fi
		echo "$TOOLS/sid/$cand"
		return 0
	fi
	# Debian's 3.13 (static, stripped) of the sid root: not in SUPPORTED_PYS (tests/roots.bats
	# and tests/layouts.bats run it chrooted), named for bench/
	if [[ $label == deb3.13 ]]; then
		[[ -x $SID_ROOT/usr/bin/python3.13 ]] || return 1
		echo "$TOOLS/sid/python3.13"
		return 0
	fi
	if [[ $label == deb3.11 ]]; then
		cand=/usr/bin/python3.11
		# a real Debian build, not a pyenv shim or link into a pyenv tree
		[[ -x $cand && $(readlink -f "$cand") == /usr/bin/* ]] && { echo "$cand"; return 0; }
		return 1
	fi
	root=$(pyenv_root)
	cand=$(printf '%s\n' "$root/versions/$label".*/bin | sort -V | tail -n 1)
	if [[ -x $cand/python3 ]]; then
		echo "$cand/python3"
	elif [[ -x $cand/python ]]; then
		echo "$cand/python" # 2.7
	else
		return 1
	fi
}

# For bench/'s result files (run from the repository): "pyuprof COMMIT; Pythons V, V, ..." for
# the labels given, so that a run's numbers name the code and the interpreters they measured.
bench_stamp() {
	local label py v vs=()
	for label in "$@"; do
		py=$(py_path "$label") || continue
		v=$("$py" -c 'import sys; print(sys.version.split()[0])')
		[[ $label == deb3.* ]] && v="Debian's $v ($label)"
		vs+=("$v")
	done
	local c
	c=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
	git diff --quiet HEAD -- 2>/dev/null || c="$c with uncommitted changes"
	local IFS=,
	echo "pyuprof $c; Pythons ${vs[*]}" | sed 's/,/, /g'
}

# The interpreter's own argv[0], as /proc/PID/cmdline has it: $PY, but what tests/tools/sid-python
# execs in the end for a Python of the sid root.
py_argv0() {
	case $PY in
	"$TOOLS"/sid/*-shared) echo "/usr/local/bin/${PY##*/}" ;;
	"$TOOLS"/sid/*) echo "/usr/bin/${PY##*/}" ;;
	*) echo "$PY" ;;
	esac
}

# The Python that runs a tool which runs this machine's programs (go tool pprof): $PY, but
# this machine's python3 for a Python of the sid root, which sees none of them.
tool_py() {
	if [[ $PY == "$TOOLS"/sid/* ]]; then echo python3; else echo "$PY"; fi
}

# build_hook: tests/targets/ext/pep523hook.c, a bare PEP 523 hook (3.9+), and ccall_watch.c, a
# bare watcher of C calls, built for $PY into $PEP523_DIR (exported). A Python of the sid root is
# built for with its headers, and its multiarch pyconfig.h after this machine's C library
# headers.
build_hook() {
	local inc suffix root=""
	[[ $PY == "$TOOLS"/sid/* ]] && root=$SID_ROOT
	inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	suffix=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	export PEP523_DIR="$BATS_TEST_TMPDIR/ext"
	mkdir -p "$PEP523_DIR"
	# (3.8 has no setter of the hook: no bare hook there)
	"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 9))' &&
		cc -shared -fPIC -O2 -I"$root$inc" ${root:+-idirafter "$root/usr/include"} \
			-o "$PEP523_DIR/pep523hook$suffix" "$TARGETS/ext/pep523hook.c"
	cc -shared -fPIC -O2 -I"$root$inc" ${root:+-idirafter "$root/usr/include"} \
		-o "$PEP523_DIR/ccall_watch$suffix" "$TARGETS/ext/ccall_watch.c"
}

# Skips the test with WHY; under CI=true fails it instead, because in CI a skipped test is a
# test that cannot fail (the README lists no optional interpreter or tool).
skip_unless_ci() {
	if [[ ${CI:-} == true ]]; then
		echo "$1 (CI=true: failing instead of skipping)" >&2
		return 1
	fi
	skip "$1"
}

# Labels of the supported interpreters present on this machine. Under CI=true, every
# supported one: a missing one then fails where the test looks for it.
available_pys() {
	local label
	for label in "${SUPPORTED_PYS[@]}"; do
		if py_path "$label" >/dev/null || [[ ${CI:-} == true ]]; then
			echo "$label"
		fi
	done
	return 0
}

# Sets PY to the interpreter for LABEL, or skips the test when it is not installed.
require_py() {
	PY=$(py_path "$1") || skip_unless_ci "Python $1 is not installed"
}

# For a test that loops over interpreters: sets PY to LABEL's, or says it is missing and
# returns 1 (the caller goes on to the next); under CI=true a missing one fails the test.
have_py() {
	PY=$(py_path "$1") && return 0
	echo "Python $1 is not installed" >&2
	if [[ ${CI:-} == true ]]; then
		echo "(CI=true: a missing interpreter fails the test)" >&2
		exit 1
	fi
	return 1
}

# Sets PY to a supported interpreter for tests that need just one: 3.12 if present.
require_some_py() {
	local label
	for label in 3.12 "${SUPPORTED_PYS[@]}"; do
		PY=$(py_path "$label") && return 0
	done
	skip_unless_ci "no supported Python is installed"
}

# Skips when pyuprof cannot trace here (not root, no BTF, not built); with CI=true it fails
# instead, because in CI a skipped test is a test that cannot fail.
require_bpf() {
	local why=""
	[[ -x $PYUPROF ]] || why="$PYUPROF is not built (run make)"
	[[ -r /sys/kernel/btf/vmlinux ]] || why="the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	[[ $(id -u) -eq 0 ]] || why="not root"
	[[ -z $why ]] && return 0
	if [[ ${CI:-} == true ]]; then
		echo "cannot run a BPF test: $why (CI=true: failing instead of skipping)" >&2
		return 1
	fi
	skip "$why"
}

# check_loop_rounds OUT ERR: long_running.py --loop recorded into ours.prof (its stdout in OUT,
# pyuprof's stderr in ERR): every round it says it ran equals cProfile's, and nothing was lost.
check_loop_rounds() {
	local rounds
	rounds=$(sed -n 's/^rounds //p' "$1")
	[[ $rounds -gt 0 ]] || { echo "no rounds in $1"; return 1; }
	"$PY" "$TOOLS/cprofile_run.py" -o cprofile.prof "$TARGETS/long_running.py" \
		--rounds "$rounds" >/dev/null
	run -0 "$PY" "$TOOLS/pstats_compare.py" ours.prof cprofile.prof \
		--file "$TARGETS/long_running.py" --below do_round
	[[ $(summary_lost_events "$2") == 0 ]] || { cat "$2"; return 1; }
}

# How many lines of the kernel log say a process crashed (`segfault at`, `traps:`): a soak or
# bench counts the new ones over its run.
dmesg_count() {
	dmesg 2>/dev/null | grep -cE 'segfault at|traps:' || true
}

# Field 22 of /proc/PID/stat (start time in ticks); the comm field may contain spaces.
proc_start_time() {
	local stat
	local -a fields
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -ra fields <<<"${stat##*) }"
	echo "${fields[19]}"
}

# start_bg OUT ERR CMD...: starts CMD in the background with stdout and stderr in the given
# files and sets BG_PID. fd 3 is closed in the child, otherwise bats waits for it.
start_bg() {
	local out=$1 err=$2
	shift 2
	"$@" >"$out" 2>"$err" 3>&- &
	BG_PID=$!
	echo "$BG_PID $(proc_start_time "$BG_PID" || echo gone)" >>"$STARTED"
}

# True while PID is one of ours and has not exited (a zombie counts as exited).
is_running() {
	local state
	state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) ||
		return 1
	[[ -n $state && $state != Z && $state != X ]]
}

not_running() { ! is_running "$1"; }

# wait_exit PID TIMEOUT: waits for our child PID to exit; sets EXIT_STATUS. Returns 1 on timeout.
wait_exit() {
	local pid=$1 timeout=$2
	poll_until "$timeout" not_running "$pid" || true
	if is_running "$pid"; then
		echo "process $pid still running after ${timeout}s" >&2
		return 1
	fi
	EXIT_STATUS=0
	wait "$pid" || EXIT_STATUS=$?
}

# wait_for_line FILE REGEX TIMEOUT [PID]: waits until a line of FILE matches the extended
# REGEX; with PID, gives up early when that process has exited.
wait_for_line() {
	local file=$1 re=$2 timeout=$3 pid=${4:-} i
	for ((i = 0; i < timeout * 20; i++)); do
		grep -Eq -- "$re" "$file" 2>/dev/null && return 0
		if [[ -n $pid ]] && ! is_running "$pid"; then
			grep -Eq -- "$re" "$file" 2>/dev/null && return 0
			echo "process $pid exited before '$re' appeared in $file:" >&2
			sed 's/^/  | /' "$file" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "no line matching '$re' in $file after ${timeout}s:" >&2
	sed 's/^/  | /' "$file" >&2
	return 1
}

# poll_until TIMEOUT CMD...: runs CMD until it succeeds (0) or TIMEOUT seconds have passed (1):
# the one poll interval of the waits below, each of which waits for a condition, not a time.
poll_until() {
	local timeout=$1 i
	shift
	for ((i = 0; i < timeout * 20; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# has_rounds FILE N: FILE (a long_running.py target's stdout) has N "round" lines or more
has_rounds() {
	(($(grep -c '^round ' "$1" 2>/dev/null || true) >= $2))
}

# run_while_stopped PID FILE ROUNDS: stops PID (pyuprof) until the long_running.py target
# whose stdout is FILE has run ROUNDS more rounds meanwhile, then lets it go on
run_while_stopped() {
	local n
	n=$(grep -c '^round ' "$2" 2>/dev/null || true)
	kill -STOP "$1"
	poll_until 60 has_rounds "$2" $((n + $3)) || { kill -CONT "$1"; echo "no rounds run" >&2; return 1; }
	kill -CONT "$1"
}

# wait_for_state PID REGEX TIMEOUT: waits until PID's State line in /proc/PID/status matches
# the extended REGEX (e.g. 't \(tracing stop\)').
wait_for_state() {
	poll_until "$3" grep -Eq -- "^State:[[:space:]]*$2" "/proc/$1/status" 2>/dev/null && return 0
	echo "pid $1 never reached state '$2' in ${3}s" >&2
	return 1
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
cpu_past() { (($(cpu_ticks "$1") >= $2)); }

# wait_for_cpu PID TICKS TIMEOUT: waits until PID has used TICKS clock ticks of CPU (user and
# system) more than when called: a process that otherwise waits has begun to spin.
wait_for_cpu() {
	poll_until "$3" cpu_past "$1" $(($(cpu_ticks "$1") + $2)) && return 0
	echo "pid $1 used less than $2 ticks of CPU in ${3}s" >&2
	return 1
}

# Asserts PID is alive and neither stopped nor traced (state T or t) nor a zombie.
assert_unharmed() {
	local pid=$1 state
	state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null) ||
		true
	case $state in
	R | S | D | I) return 0 ;;
	"") echo "target $pid is gone" >&2 ;;
	*) echo "target $pid is in state $state" >&2 ;;
	esac
	return 1
}

# Prints what the last `run --separate-stderr` got: the exit status, stdout and stderr (bats
# shows a failed test's output, but never $stderr unless it is printed).
show_run() {
	printf 'exit status %s\n--- stdout:\n%s\n--- stderr:\n%s\n' "$status" "$output" "$stderr"
}

# run_ok CMD...: `run --separate-stderr CMD...` that fails, printing the status, stdout and
# stderr, unless CMD exits 0 (`run -0` fails before anything is printed, with no stderr).
run_ok() {
	run --separate-stderr "$@"
	[[ $status == 0 ]] || { show_run; return 1; }
}

# Asserts that pyuprof's stderr ($stderr after run --separate-stderr) is one line starting
# with "pyuprof: ". With --usage, argp's "Try `pyuprof ... --help'" hint may follow it.
assert_one_error_line() {
	local allow_try=0 line
	local -a lines=()
	[[ ${1:-} == --usage ]] && allow_try=1
	while IFS= read -r line; do
		[[ $allow_try -eq 1 && $line == "Try \`"* ]] && continue
		lines+=("$line")
	done <<<"$stderr"
	if [[ ${#lines[@]} -ne 1 || ${lines[0]} != "pyuprof: "?* ]]; then
		echo "expected one 'pyuprof: ' error line on stderr, got ${#lines[@]} line(s):" >&2
		printf '  | %s\n' "${lines[@]}" >&2
		return 1
	fi
}

# Asserts that directory DIR holds no file (no output, no temporary left behind).
assert_empty_dir() {
	local left
	left=$(find "$1" -mindepth 1 -print)
	if [[ -n $left ]]; then
		echo "files left behind in $1:" >&2
		printf '  | %s\n' "$left" >&2
		return 1
	fi
}

# The summary line must be present; prints its number of lost events.
summary_lost_events() {
	local line
	line=$(grep -E '^pyuprof: .*calls.*functions.*threads.*lost events' "$1" | tail -n 1)
	if [[ -z $line ]]; then
		echo "no summary line ('pyuprof: ... calls, ... functions, ... threads, ... lost events') in:" >&2
		sed 's/^/  | /' "$1" >&2
		return 1
	fi
	[[ $line =~ ([0-9]+)\ lost\ events ]] || return 1
	echo "${BASH_REMATCH[1]}"
}

# remove_perf_maps PID...: CPython's perf trampoline (-X perf, sys.activate_stack_trampoline)
# leaves /tmp/perf-PID.map behind; the maps of the processes a test ran go with it (only theirs:
# a map of someone else's may still be read by perf).
remove_perf_maps() {
	local pid
	for pid in "$@"; do
		[[ $pid =~ ^[0-9]+$ ]] && rm -f "/tmp/perf-$pid.map"
	done
	return 0
}

# recorded_pids FILE: the pids that pyuprof -v says it recorded
recorded_pids() { sed -n 's/^pyuprof: recording pid \([0-9]*\) .*/\1/p' "$1"; }

# The list of processes started by the test (PID and start time, one a line).
init_started() {
	STARTED="$BATS_TEST_TMPDIR/.started"
	: >"$STARTED"
}

setup() {
	init_started
}

# Kills, newest first, the processes this test started that are still the same processes.
kill_started() {
	local -a pids=()
	local pid start i
	[[ -f ${STARTED:-} ]] || return 0
	# (an if, not `[[ ]] && ...`: a process that ended meanwhile must not end the loop, and
	# so the teardown, with a failure under errexit)
	while read -r pid start; do
		if [[ $(proc_start_time "$pid" 2>/dev/null || true) == "$start" ]]; then
			pids=("$pid" "${pids[@]}")
		fi
	done <"$STARTED"
	for pid in "${pids[@]}"; do
		is_running "$pid" || continue
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 40; i++)); do
			is_running "$pid" || break
			sleep 0.05
		done
		if is_running "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
	done
	return 0
}

teardown() {
	kill_started
}
