#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench-soak-attach: CYCLES (1000) attach/detach cycles per interpreter (PYS: 3.10 3.12
# deb3.11) on one self-checking multi-threaded target each (bench/workloads/
# selfcheck_threads.py: it exits 1 at its first wrong result, and threads come and go). Each
# cycle ends pyuprof one way, drawn at random: -d (0.05-1 s), SIGINT or SIGTERM at a random
# time (sometimes before the probes are in, or during the calibration, which a third of the
# cycles run), or SIGKILL at a random time. After every cycle
# the target must be alive, not stopped and not traced, no process of pyuprof's left (a hung
# pyuprof, 60 s past its end, is killed and counted); pyuprof must exit 0 (-d, INT, TERM;
# 1 is allowed only for a signal before the probes were in, with one error line) and every
# profile it wrote must load with pstats and hold one_round (or check) with fib called only
# by fib and one_round, boom only by boom and one_round. The target's trampoline pages (and
# any descendant's) must hold their own bytes after every cycle (tests/tools/pages.py), and new
# `segfault`/`traps:` kernel log lines are counted. pyuprof's fd count and RSS are sampled once
# per cycle while it records, the target's after each cycle; the first and last tenth are
# compared. Appends to bench/SOAK.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/usage.bash && bench_usage "$@"
bin=${PYUPROF:-build/pyuprof}
source tests/helpers.bash 2>/dev/null || true
PYUPROF=$bin
CYCLES=${CYCLES:-1000}
PYS=${PYS:-3.10 3.12 deb3.11}
SEED=${SEED:-$$}
RANDOM=$SEED
[[ $(id -u) -eq 0 ]] || { echo "bench-soak-attach: run as root (probes)" >&2; exit 1; }
tmp=$(mktemp -d)
target=
trap '[[ -n $target ]] && kill "$target" 2>/dev/null; rm -rf "$tmp"' EXIT

# rand_ms LO HI
rand_ms() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
# (0 for a zombie too, which has a status but no VmRSS: an empty field shifted the columns)
rss_kb() { awk '/^VmRSS/ {r = $2} END {print r + 0}' "/proc/$1/status" 2>/dev/null || echo 0; }
traced() { awk '/^TracerPid/ {print $2}' "/proc/$1/status" 2>/dev/null; }
state() { sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null; }

results=()
for label in $PYS; do
	py=$(py_path "$label") || { echo "bench-soak-attach: no Python $label" >&2; exit 1; }
	rm -f "$tmp"/*
	"$py" bench/workloads/selfcheck_threads.py "$tmp/stop" 3 >"$tmp/target.out" 2>&1 &
	target=$!
	until grep -q ready "$tmp/target.out" 2>/dev/null; do sleep 0.05; done
	declare -A ends=([d]=0 [INT]=0 [TERM]=0 [KILL]=0)
	deaths=0 wrong=0 bad_exit=0 early=0 profiles=0 page_bad=0
	dmesg0=$(dmesg_count)
	: >"$tmp/samples"
	t0=$(date +%s)
	# (no -e in the cycles: every step is checked, and under heavy load bash itself once lost
	# track of a command substitution's child, which -e turned into the soak's end)
	set +e
	for ((c = 0; c < CYCLES; c++)); do
		how=$(echo d INT TERM KILL | cut -d' ' -f$((RANDOM % 4 + 1)))
		ends[$how]=$((ends[$how] + 1))
		prof="$tmp/c$c.prof"
		args=(record -p "$target" -o "$prof" --top 0)
		# the calibration (about 0.5 s) on a third of the cycles: its window is covered
		# while the soak still fits in an hour
		((RANDOM % 3)) && args+=(--no-compensation)
		[[ $how == d ]] && args+=(-d "$(secs "$(rand_ms 50 1000)")")
		# (SIGINT and SIGQUIT back to their default: a background job of a script starts
		# with them ignored, and an early SIGINT would be lost)
		# (emptied first: a signal that ends the job before its redirection would leave the
		# last cycle's lines there)
		: >"$tmp/rec.err"
		env --default-signal=INT,QUIT "$PYUPROF" "${args[@]}" 2>"$tmp/rec.err" &
		rec=$!
		pfd=0 prss=0
		if [[ $how == d ]]; then
			# sample once recording
			for ((i = 0; i < 400; i++)); do
				grep -q '^pyuprof: recording' "$tmp/rec.err" && break
				kill -0 "$rec" 2>/dev/null || break
				sleep 0.01
			done
			pfd=$(fds "$rec") prss=$(rss_kb "$rec")
		else
			# a random moment: before the probes are in half of the time
			if ((RANDOM % 2)); then
				sleep "$(secs "$(rand_ms 0 300)")"
			else
				for ((i = 0; i < 400; i++)); do
					grep -q '^pyuprof: recording' "$tmp/rec.err" && break
					sleep 0.01
				done
				pfd=$(fds "$rec") prss=$(rss_kb "$rec")
				sleep "$(secs "$(rand_ms 0 500)")"
			fi
			grep -q '^pyuprof: recording' "$tmp/rec.err" || early=$((early + 1))
			# a background job of a script starts with SIGINT ignored, and env resets it
			# only just before it runs pyuprof: a SIGINT sent before that is lost (and
			# pyuprof then records until killed): wait until it would be taken
			if [[ $how == INT ]]; then
				for ((i = 0; i < 200; i++)); do
					ign=$(awk '/^SigIgn/ {print $2}' "/proc/$rec/status" 2>/dev/null) || break
					[[ -n $ign ]] && (((16#$ign & 2) == 0)) && break
					sleep 0.005
				done
			fi
			kill "-$how" "$rec" 2>/dev/null || true
		fi
		hung=0
		# a pyuprof that does not end within 60 s of its -d or signal is hung: counted as a
		# bad exit, shown, and killed so the soak goes on
		for ((i = 0; i < 1200; i++)); do
			kill -0 "$rec" 2>/dev/null && [[ $(state "$rec") != Z ]] || break
			sleep 0.05
		done
		if kill -0 "$rec" 2>/dev/null && [[ $(state "$rec") != Z ]]; then
			echo "cycle $c ($how): pyuprof still running after 60 s: killed" >&2
			sed 's/^/  | /' "$tmp/rec.err" >&2
			kill -KILL "$rec" 2>/dev/null || true
			hung=1
			bad_exit=$((bad_exit + 1))
		fi
		st=0
		{ wait "$rec"; } 2>/dev/null || st=$?
		if [[ $how != KILL ]] && ((!hung)); then
			if ((st == 0)); then
				[[ -s $prof ]] && profiles=$((profiles + 1))
			elif ((st == 1 || st == 128 + $(kill -l "$how"))) &&
				! grep -q '^pyuprof: recording' "$tmp/rec.err"; then
				# stopped before it recorded anything: refused in one line, or killed by
				# the signal before its handlers were in
				:
			else
				bad_exit=$((bad_exit + 1))
				echo "cycle $c ($how): pyuprof exited $st" >&2
				sed 's/^/  | /' "$tmp/rec.err" >&2
			fi
		fi
		# nothing of pyuprof's may stay behind (a fork of it keeps its command line; one
		# that is being killed with it may still show for a moment)
		for ((i = 0; i < 40; i++)); do
			pgrep -f -- "-o $prof" >/dev/null || break
			sleep 0.05
		done
		for pid in $(pgrep -f -- "-o $prof" || true); do
			[[ $pid == "$rec" ]] && continue
			echo "cycle $c ($how): a process of pyuprof's stayed behind: $(ps -o stat=,args= -p "$pid")" >&2
			kill -KILL "$pid" 2>/dev/null || true
			bad_exit=$((bad_exit + 1))
		done
		rm -f "$tmp"/*.tmp
		cp "$tmp/rec.err" "$tmp/c$c.err"
		# the target: alive, running, not traced
		s=$(state "$target")
		if [[ -z $s || $s == Z || $s == X ]]; then
			deaths=$((deaths + 1))
			echo "cycle $c ($how): the target died:" >&2
			cat "$tmp/target.out" >&2
			break
		fi
		for ((i = 0; i < 100; i++)); do
			[[ $(traced "$target") == 0 && $(state "$target") != [Tt] ]] && break
			sleep 0.01
		done
		if [[ $(traced "$target") != 0 || $(state "$target") == [Tt] ]]; then
			deaths=$((deaths + 1))
			echo "cycle $c ($how): target left state $(state "$target"), tracer $(traced "$target")" >&2
			break
		fi
		# its trampoline page (and any descendant's) holds its own bytes again, however
		# pyuprof ended: the kernel's removal of the probes, or pyuprof's read-back
		if ! python3 tests/tools/pages.py --tree "$target" >"$tmp/pages.out" 2>&1; then
			page_bad=$((page_bad + 1))
			echo "cycle $c ($how): page bytes not the page's own:" >&2
			head -5 "$tmp/pages.out" >&2
		fi
		echo "$c $pfd $prss $(fds "$target") $(rss_kb "$target")" >>"$tmp/samples"
	done
	set -e
	secs_taken=$(($(date +%s) - t0))
	touch "$tmp/stop"
	tst=0
	wait "$target" || tst=$?
	target=
	((tst == 0)) || { wrong=$((wrong + 1)); echo "target exited $tst:" >&2; cat "$tmp/target.out" >&2; }
	# every profile written loads, and its call graph is the target's
	check=$("$py" - "$tmp"/c*.prof <<'PYEOF' 2>&1 || true
import pstats, sys
bad = 0
for f in sys.argv[1:]:
    try:
        st = pstats.Stats(f).stats
    except Exception as e:
        print("unreadable", f, e); bad += 1; continue
    by = {}
    for k, v in st.items():
        by.setdefault(k[2], []).append(v)
    # (a window of a millisecond may see no fib call complete: not wrong, just short)
    why = [] if "one_round" in by or "check" in by else ["neither one_round nor check"]
    for name, allowed in (("fib", {"fib", "one_round"}), ("boom", {"boom", "one_round"})):
        for v in by.get(name, []):
            extra = {c[2] for c in v[4]} - allowed
            if extra:
                why.append("%s called by %s" % (name, sorted(extra)))
    if why:
        print("wrong call graph in", f, "(%s)" % "; ".join(why)); bad += 1
print("checked", len(sys.argv) - 1, "bad", bad)
PYEOF
)
	nbad=$(sed -n 's/^checked [0-9]* bad \([0-9]*\)$/\1/p' <<<"$check")
	[[ -n $nbad ]] || { nbad=1; echo "$check" >&2; }
	wrong=$((wrong + nbad))
	grep -v '^checked' <<<"$check" | head -5 >&2 || true
	# the wrong ones are kept for a look (KEEP, default /tmp/soak-attach-kept)
	for f in $(sed -n 's/^wrong call graph in \([^ ]*\) .*/\1/p; s/^unreadable \([^ ]*\) .*/\1/p' <<<"$check"); do
		mkdir -p "${KEEP:-/tmp/soak-attach-kept}"
		cp "$f" "${KEEP:-/tmp/soak-attach-kept}/$label-$(basename "$f")"
		cp "$tmp/$(basename "$f" .prof).err" "${KEEP:-/tmp/soak-attach-kept}/$label-$(basename "$f" .prof).err" 2>/dev/null || true
	done
	flat=$(awk -v n="$c" '
		{ row[NR] = $0 }
		END {
			k = int(NR / 10); if (k < 1) k = 1
			for (i = 1; i <= NR; i++) {
				split(row[i], f, " ")
				head = i <= k; tail = i > NR - k
				if (f[2] > 0) { if (head) { pf1 = pf1 > f[2] ? pf1 : f[2]; pr1 = pr1 > f[3] ? pr1 : f[3] }
					       if (tail) { pf2 = pf2 > f[2] ? pf2 : f[2]; pr2 = pr2 > f[3] ? pr2 : f[3] } }
				if (head) { tf1 = tf1 > f[4] ? tf1 : f[4]; tr1 = tr1 > f[5] ? tr1 : f[5] }
				if (tail) { tf2 = tf2 > f[4] ? tf2 : f[4]; tr2 = tr2 > f[5] ? tr2 : f[5] }
			}
			printf "pyuprof fds %d -> %d, RSS %.1f -> %.1f MB; target fds %d -> %d, RSS %.1f -> %.1f MB",
				pf1, pf2, pr1 / 1024, pr2 / 1024, tf1, tf2, tr1 / 1024, tr2 / 1024
		}' "$tmp/samples")
	dmesg_new=$(($(dmesg_count) - dmesg0))
	line="| $label | $c | ${ends[d]}/${ends[INT]}/${ends[TERM]}/${ends[KILL]} | $early | $deaths | $wrong | $bad_exit | $page_bad | $dmesg_new | $profiles | $flat | ${secs_taken} s |"
	echo "$line"
	results+=("$line")
	unset ends
done
{
	echo
	echo "### attach soak $(date -u +%Y-%m-%dT%H:%MZ): CYCLES=$CYCLES, seed $SEED, $(git rev-parse --short HEAD)"
	echo
	echo "| Python | cycles run | ends -d/INT/TERM/KILL | signalled before attach done | target deaths or left traced | wrong results | bad pyuprof exits | cycles leaving page bytes changed | new segfault/traps dmesg lines | profiles written | fds and RSS, first vs last tenth (max) | time |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${results[@]}"
} | tee -a bench/SOAK.md
