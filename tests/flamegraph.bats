#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The flame graph and the collapsed stacks, checked against the .prof written in the same run
# and driven in Debian's headless Chromium by tests/browser/flamegraph.test.mjs (hover, zoom,
# search, screenshot; playwright-core from npm, installed here from the committed lock file).
# Collapsed values add up to pstats' total_tt and every frame is a key of the .prof; in the
# merged flame graph each function's outermost frames add up to its cumtime, as cProfile
# counts it. The first test needs no BPF: it drives the unit test's synthetic SVGs.

load helpers

BROWSER_DIR="$REPO/tests/browser"

# Node, Debian's Chromium and node_modules (npm ci, once). Skips when something is missing,
# except with CI=true, where a skipped test could not fail.
require_browser() {
	local why=""
	command -v node >/dev/null 2>&1 || why="node is not installed"
	command -v npm >/dev/null 2>&1 || why="npm is not installed"
	[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || why="chromium is not installed"
	if [[ -n $why ]]; then
		if [[ ${CI:-} == true ]]; then
			echo "cannot run the browser test: $why (CI=true: no skipping)" >&2
			return 1
		fi
		skip "$why"
	fi
	[[ -d $BROWSER_DIR/node_modules/playwright-core && -d $BROWSER_DIR/node_modules/eslint ]] &&
		return 0
	if ! npm ci --prefix "$BROWSER_DIR" --no-audit --no-fund --loglevel=error \
		>"$BATS_TEST_TMPDIR/npm.log" 2>&1; then
		echo "npm ci --prefix $BROWSER_DIR failed:"
		cat "$BATS_TEST_TMPDIR/npm.log"
		return 1
	fi
}

# check_outputs PROF COLLAPSED SVG [--threads]: prints what disagrees; fails if anything does.
check_outputs() {
	"$PY" - "$@" <<'EOF'
import pstats, re, sys, xml.etree.ElementTree as E

prof, coll, svg = sys.argv[1:4]
per_thread = "--threads" in sys.argv
bad = []
st = pstats.Stats(prof).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
total_tt = sum(v[2] for v in st.values())

def clean(s):  # what out_collapsed.c makes of a name
    return "".join("," if c == ";" else " " if ord(c) < 0x20 or ord(c) == 0x7F else c for c in s)

def c_label(n):  # a C function ('~', 0, '<...>') as the pictures name it: '{...}', no file
    return "{" + n[1:-1] + "}"

known = {f"{clean(n)} ({clean(f)}:{l})" for (f, l, n) in st}
known |= {clean(c_label(n)) for (f, l, n) in st if f == "~" and l == 0 and n.startswith("<")}
names_at = {}
for (f, l, n) in st:
    names_at.setdefault(f"{f}:{l}", set()).add(n)

def prof_name(name, loc):
    """The .prof's co_name of a frame named by its qualified name (3.11+), which ends in it"""
    for n in names_at.get(loc, ()):
        if name == n or name.endswith("." + n):
            return n
    return name

def known_frame(frame):
    m = re.fullmatch(r"(.*) \((.*)\)", frame)
    if frame in known or not m:
        return frame in known
    for (f, l, n) in st:
        if f"{clean(f)}:{l}" == m.group(2) and m.group(1).endswith("." + clean(n)):
            return True
    return False
total_us, threads, nlines = 0, set(), 0
for line in open(coll, encoding="utf-8"):
    m = re.fullmatch(r"(.+) ([0-9]+)\n", line)
    if not m or int(m.group(2)) == 0:
        bad.append(f"collapsed: bad line {line!r}")
        continue
    nlines += 1
    total_us += int(m.group(2))
    stack = m.group(1).split(";")
    if per_thread:
        threads.add(stack.pop(0))
    bad += [f"collapsed: frame {f!r} is not in the .prof" for f in stack if not known_frame(f)]
# rounded once on the running sum: within 1 us of the total (plus float noise)
if nlines == 0 or abs(total_us - total_tt * 1e6) > 1.01:
    bad.append(f"collapsed: {nlines} lines add up to {total_us} us, "
               f"total_tt is {total_tt * 1e6:.3f} us")

S = "{http://www.w3.org/2000/svg}"
root = E.parse(svg).getroot()
frames = []
for g in [g for g in root.iter(S + "g") if g.get("id") == "frames"][0]:
    t = g.find(S + "title").text.split("\n")
    f = dict(d=int(g.get("data-d")), x=int(g.get("data-x")), w=int(g.get("data-w")),
             r=g.get("class") == "r", name=t[0], loc=t[1], stats=t[2])
    if g.get("class") == "c":  # a C function: '{...}' in place of its .prof name '<...>'
        if t[1] != "C function" or not t[0].startswith("{"):
            bad.append(f"svg: C function frame {t[0]!r} at {t[1]!r}")
        f.update(name="<" + t[0][1:-1] + ">", loc="~:0")
    frames.append(f)
total = frames[0]["w"]
if int(root.get("data-total")) != total:
    bad.append("svg: the root frame is not the total")
if per_thread:
    labels = {f["name"] for f in frames if f["d"] == 1}
    if not all(f["r"] for f in frames if f["d"] == 1):
        bad.append("svg: a frame under the root is not a thread")
    if labels != threads or any(not s for s in labels):
        bad.append(f"svg thread roots {sorted(labels)} != collapsed threads {sorted(threads)}")
    print("threads:", ",".join(sorted(labels)))
else:
    # a function's outermost frames (no frame of its own below) add up to its cumtime
    outer, path = {}, []
    for f in frames:
        del path[f["d"]:]
        key = (prof_name(f["name"], f["loc"]), f["loc"])
        if not f["r"] and key not in path:
            outer[key] = outer.get(key, 0) + f["w"]
        path.append(key)
    for (fn, line, name), v in st.items():
        ct_ns, got = v[3] * 1e9, outer.get((name, f"{fn}:{line}"), 0)
        # frames under 0.1 px are left out: allow 0.2% of the total
        if ct_ns >= total / 100 and abs(got - ct_ns) > total / 500:
            bad.append(f"svg: {name} ({fn}:{line}) spans {got / 1e6:.3f} ms, "
                       f"cumtime {ct_ns / 1e6:.3f} ms")
    for f in frames:
        if not f["r"] and f"{100 * f['w'] / total:.2f}%" not in f["stats"]:
            bad.append(f"svg: {f['name']}: % in {f['stats']!r} is not its width's")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

@test "flamegraph: synthetic SVGs work in Chromium (hover, zoom, search, screenshot)" {
	[[ -x $REPO/build/tests/test_flamegraph ]] || {
		[[ ${CI:-} == true ]] && { echo "test_flamegraph is not built"; return 1; }
		skip_unless_ci "build/tests/test_flamegraph is not built (make unit)"
	}
	require_browser
	PYUPROF_FG_SAVE="$BATS_TEST_TMPDIR" "$REPO/build/tests/test_flamegraph" >/dev/null
	node "$BROWSER_DIR/flamegraph.test.mjs" "$BATS_TEST_TMPDIR/browser-merged.svg"
	node "$BROWSER_DIR/flamegraph.test.mjs" "$BATS_TEST_TMPDIR/browser-threads.svg" \
		--threads MainThread,thread-2
	# names with markup and broken UTF-8 must not break the script either
	node "$BROWSER_DIR/flamegraph.test.mjs" "$BATS_TEST_TMPDIR/escape.svg" --search '<lambda>'
	# C functions have a look of their own
	node "$BROWSER_DIR/flamegraph.test.mjs" "$BATS_TEST_TMPDIR/cfunc.svg" \
		--cfunc '{built-in method builtins.sorted}'
}

@test "flamegraph: the SVG embeds user/output/assets' script and stylesheet as they are; ESLint passes" {
	[[ -x $REPO/build/tests/test_flamegraph ]] || {
		[[ ${CI:-} == true ]] && { echo "test_flamegraph is not built"; return 1; }
		skip_unless_ci "build/tests/test_flamegraph is not built (make unit)"
	}
	require_browser
	require_some_py
	PYUPROF_FG_SAVE="$BATS_TEST_TMPDIR" "$REPO/build/tests/test_flamegraph" >/dev/null
	run -0 "$PY" - "$BATS_TEST_TMPDIR/browser-merged.svg" "$REPO/user/output/assets" <<'PYEOF'
import sys
svg, assets = open(sys.argv[1]).read(), sys.argv[2]
js, css = open(assets + "/flamegraph.js").read(), open(assets + "/flamegraph.css").read()
assert "<script><![CDATA[\n" + js + "]]></script>" in svg, "script differs"
assert "<style>\n" + css + "</style>" in svg, "stylesheet differs"
PYEOF
	cd "$REPO"
	"$BROWSER_DIR/node_modules/.bin/eslint" -c "$BROWSER_DIR/eslint.config.js" \
		user/output/assets/flamegraph.js tests/browser/flamegraph.test.mjs
}

@test "flamegraph: record --flamegraph --collapsed on recursion.py agree with the .prof" {
	require_bpf
	require_some_py
	require_browser
	cd "$BATS_TEST_TMPDIR"
	"$PYUPROF" record -q -o p.prof --flamegraph f.svg --collapsed c.txt -- \
		"$PY" "$TARGETS/recursion.py" >/dev/null
	xmllint --noout f.svg
	check_outputs p.prof c.txt f.svg
	grep -q '^<module> ([^;]*recursion.py:1);main ([^;]*recursion.py:21);fib ' c.txt
	# titled with the command and pid; the subtitle counts the frames drawn and left out
	grep -q "<text id=\"title\" [^>]*>pyuprof: $PY $TARGETS/recursion.py (pid [0-9]*)</text>" f.svg
	run -0 "$PY" - f.svg <<'PYEOF'
import re, sys
import xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
sub = [t for t in root.iter(S + "text") if t.get("id") == "subtitle"][0].text
frames = [g for g in root.iter(S + "g") if g.get("data-d") is not None]
m = re.match(r"Wall time [0-9.]+ m?s in 1 thread; ([0-9]+) frames, ([0-9]+) under 0\.1 px "
             r"left out\.", sub)
assert m and int(m.group(1)) == len(frames), (sub, len(frames))
PYEOF
	node "$BROWSER_DIR/flamegraph.test.mjs" f.svg --search fib
}

@test "flamegraph: threads.py merged, and with --threads one named root per thread" {
	require_bpf
	require_some_py
	require_browser
	cd "$BATS_TEST_TMPDIR"
	"$PYUPROF" record -q -o m.prof --flamegraph m.svg --collapsed m.txt -- \
		"$PY" "$TARGETS/threads.py" >/dev/null
	check_outputs m.prof m.txt m.svg
	# merged: the four workers' calls share one frame per path
	[[ $(grep -c '<title>worker$' m.svg) -eq 1 ]]
	grep -A2 '<title>worker$' m.svg | grep -q ', 4 calls</title>'

	"$PYUPROF" record -q -o t.prof --flamegraph t.svg --collapsed t.txt --threads -- \
		"$PY" "$TARGETS/threads.py" >/dev/null
	run -0 check_outputs t.prof t.txt t.svg --threads
	echo "$output"
	local names=${output#threads: }
	# the main thread and four workers, each its own root, the workers' under their names
	[[ $(tr ',' '\n' <<<"$names" | wc -l) -ge 5 ]]
	[[ $(grep ';worker (' t.txt | cut -d';' -f1 | sort -u | wc -l) -eq 4 ]]
	node "$BROWSER_DIR/flamegraph.test.mjs" t.svg --threads "$names" --search worker
}
