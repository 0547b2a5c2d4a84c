#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The call graph (record --svg) end to end: the SVG is well-formed (xmllint), and what it
# shows agrees with the .prof written in the same run, by gprof2dot's reading of a pstats
# file: every fixture function above --node-thres has its box (name, file:line, total %,
# self %, total time, calls), every call above --edge-thres between two boxes its edge
# (total %, calls and, where some were recursive, primitive calls), and nothing under a
# threshold is drawn; boxes carry qualified names on 3.11+ (ending in the .prof's co_name).
# --root draws a function's calls alone, as cProfile enabled around that function counts them.

load helpers

# check_svg SVG PROF SCRIPT NODE_THRES EDGE_THRES: compares the SVG with the .prof; prints
# "kept N dropped N edges N dropped N" for the fixture's functions and calls.
check_svg() {
	"$PY" - "$@" <<'EOF'
import os, pstats, re, sys
import xml.etree.ElementTree as ET

svg, prof, script, node_thres, edge_thres = sys.argv[1:]
node_thres, edge_thres = float(node_thres), float(edge_thres)
S = "{http://www.w3.org/2000/svg}"
fails = []

# what the SVG shows: boxes by node id, edges as (caller box, callee box, texts)
boxes, edges = {}, []
for g in ET.parse(svg).getroot().iter(S + "g"):
    texts = [t.text or "" for t in g.iter(S + "text")]
    if g.get("class") == "node":
        boxes[g.find(S + "title").text] = texts
    elif g.get("class") == "edge":
        edges.append((g.find(S + "title").text.split("->"), texts))
shown = {}
for texts in boxes.values():
    if len(texts) != 6:
        fails.append("box with %d lines: %r" % (len(texts), texts))
        continue
    shown[(texts[0], texts[1])] = texts
shown_edges = {}
for (src, dst), texts in edges:
    a, b = boxes[src], boxes[dst]
    shown_edges[((a[0], a[1]), (b[0], b[1]))] = texts

# gprof2dot's numbers from the .prof (PstatsParser): 100% of total is the larger of the
# sum of self times and the largest cumtime, 100% of self the sum of self times
st = pstats.Stats(prof).stats
self_sum = sum(v[2] for v in st.values())
total = max([self_sum] + [v[3] for v in st.values()])

def box_key(key):
    """The box of a .prof key: its file:line and its name, which on 3.11+ is the qualified
    name ending in the .prof's co_name"""
    loc = "%s:%d" % (os.path.basename(key[0]), key[1])
    for name, l in list(shown) + [k[0] for k in shown_edges] + [k[1] for k in shown_edges]:
        if l == loc and (name == key[2] or name.endswith("." + key[2])):
            return (name, l)
    return (key[2], loc)

def seconds(text):
    m = re.fullmatch(r"([0-9.]+) (s|ms|\u00b5s|ns)", text)
    return float(m.group(1)) * {"s": 1, "ms": 1e-3, "\u00b5s": 1e-6, "ns": 1e-9}[m.group(2)]

def pct_ok(text, value, paren=False):
    if paren:
        text = text[1:-1] if text.startswith("(") and text.endswith(")") else "x"
    return text.endswith("%") and abs(float(text[:-1]) - value) <= 0.0101

def calls_label(nc, cc):  # all calls, and the primitive ones where some were recursive
    return "{:,}\u00d7".format(nc) + ("" if nc == cc else " ({:,} primitive)".format(cc))

def near(pct, thres):
    return abs(pct - thres) <= 0.02  # too close to the threshold to say which side

kept = dropped = ekept = edropped = 0
fixture = [k for k in st if k[0] == script]
if not fixture:
    fails.append("no function of %s in the .prof" % script)
for key in fixture:
    cc, nc, tt, ct, callers = st[key]
    pct = 100.0 * ct / total
    texts = shown.get(box_key(key))
    if near(pct, node_thres):
        continue
    if pct < node_thres:
        dropped += 1
        if texts:
            fails.append("%s drawn at %.3f%% < %g%%" % (key[2], pct, node_thres))
        continue
    kept += 1
    if not texts:
        fails.append("no box for %s (%.3f%%)" % (key[2], pct))
        continue
    if not pct_ok(texts[2], pct):
        fails.append("%s: total %s, .prof says %.3f%%" % (key[2], texts[2], pct))
    if not pct_ok(texts[3], 100.0 * tt / self_sum, True):
        fails.append("%s: self %s, .prof says %.3f%%" % (key[2], texts[3], 100.0 * tt / self_sum))
    if abs(seconds(texts[4]) - ct) > max(0.0006 * ct, 2e-9):
        fails.append("%s: time %s, .prof says %.9f s" % (key[2], texts[4], ct))
    if texts[5] != "{:,}\u00d7".format(nc):
        fails.append("%s: calls %s, .prof says %d" % (key[2], texts[5], nc))

# calls between two fixture functions: drawn when both boxes are and the call is above
# --edge-thres, labelled with the pair's calls and primitive calls (gprof2dot shows cc alone)
for key in fixture:
    for caller, (enc, ecc, ett, ect) in st[key][4].items():
        if caller[0] != script or caller not in st:
            continue
        epct = 100.0 * ect / total
        ends = [100.0 * st[k][3] / total for k in (caller, key)]
        if near(epct, edge_thres) or any(near(e, node_thres) for e in ends):
            continue
        label = shown_edges.get((box_key(caller), box_key(key)))
        if epct < edge_thres or min(ends) < node_thres:
            edropped += 1
            if label:
                fails.append("edge %s -> %s drawn at %.3f%%" % (caller[2], key[2], epct))
            continue
        ekept += 1
        if not label:
            fails.append("no edge %s -> %s (%.3f%%)" % (caller[2], key[2], epct))
        elif not pct_ok(label[0], epct) or label[1] != calls_label(enc, ecc):
            fails.append("edge %s -> %s: %r, .prof says %.3f%% %d/%d calls"
                         % (caller[2], key[2], label, epct, enc, ecc))

# and nothing drawn under the node threshold, fixture or not
for key, (cc, nc, tt, ct, callers) in st.items():
    pct = 100.0 * ct / total
    if pct < node_thres and not near(pct, node_thres) and box_key(key) in shown:
        others = [k for k in st if box_key(k) == box_key(key) and k != key]
        if not others:
            fails.append("%s:%d %s drawn at %.3f%%" % (key[0], key[1], key[2], pct))

for f in fails:
    print(f)
print("kept %d dropped %d edges %d dropped %d" % (kept, dropped, ekept, edropped))
sys.exit(1 if fails else 0)
EOF
}

# record_svg FIXTURE [OPTIONS...]: records tests/targets/FIXTURE.py on $PY with -o p.prof
# --svg g.svg and OPTIONS, in $BATS_TEST_TMPDIR, and checks the SVG with xmllint.
record_svg() {
	local name=$1
	shift
	cd "$BATS_TEST_TMPDIR" || return 1
	run -0 --separate-stderr "$PYUPROF" record -o p.prof --svg g.svg "$@" -- \
		"$PY" "$TARGETS/$name.py"
	[[ -s g.svg ]]
	run -0 xmllint --noout g.svg
}

@test "callgraph: record --help lists --svg, --node-thres and --edge-thres" {
	run -0 "$PYUPROF" record --help
	[[ $output == *"--svg=FILE"* ]]
	[[ $output == *"--node-thres=PCT"*"(default 0.5)"* ]]
	[[ $output == *"--edge-thres=PCT"*"(default 0.1)"* ]]
}

@test "callgraph: recursion.py, boxes and edges agree with the .prof" {
	require_bpf
	require_some_py
	# no threshold, times as recorded (as for mutual_recursion below): at the default 0.5%,
	# whether fib's box is drawn depended on how long the interpreter's start took (in CI:
	# "kept 2 dropped 1"); the thresholds' own tests compute theirs from the profile
	record_svg recursion --node-thres 0 --edge-thres 0 --no-compensation
	run check_svg g.svg p.prof "$TARGETS/recursion.py" 0 0
	echo "$output"
	((status == 0))
	# fib, main and <module> drawn (countdown's share may be too small to tell from 0); fib's
	# self-loop shows 2 primitive calls
	[[ $output =~ kept\ ([0-9]+) ]] || return 1
	((BASH_REMATCH[1] >= 3))
	run -0 xmllint --xpath 'count(//*[local-name()="text"][.="fib"])' g.svg
	[[ $output == 1 ]]
	run -0 xmllint --xpath 'count(//*[local-name()="text"][.="<module>"])' g.svg
	((output >= 1))
}

@test "callgraph: mutual_recursion.py, cycles agree with the .prof" {
	require_bpf
	require_some_py
	# no threshold: which boxes pass 0.5% depends on how long the interpreter's start took;
	# times as recorded: compensated, an edge of calls shorter than the calibrated probe cost
	# weighs 0 and is left out, which would make the count below a matter of timing
	record_svg mutual_recursion --node-thres 0 --edge-thres 0 --no-compensation
	run check_svg g.svg p.prof "$TARGETS/mutual_recursion.py" 0 0
	echo "$output"
	((status == 0))
	[[ $output =~ edges\ ([0-9]+) ]] && ((BASH_REMATCH[1] >= 4))
}

@test "callgraph: --node-thres and --edge-thres leave out boxes and edges" {
	require_bpf
	require_some_py
	# everything: no threshold; the events kept, to draw again with thresholds
	record_svg recursion --node-thres 0 --edge-thres 0 --raw run.raw
	run check_svg g.svg p.prof "$TARGETS/recursion.py" 0 0
	echo "$output"
	((status == 0))
	local all thres
	all=$(grep -c 'class="node"' g.svg)
	# the threshold from this very profile (a share of a short run moves from run to run):
	# halfway between countdown's share and the next larger one of the fixture
	thres=$("$PY" - p.prof "$TARGETS/recursion.py" <<'PYEOF'
import pstats, sys
st = pstats.Stats(sys.argv[1]).stats
total = max([sum(v[2] for v in st.values())] + [v[3] for v in st.values()])
pct = {k[2]: 100.0 * v[3] / total for k, v in st.items() if k[0] == sys.argv[2]}
above = min(p for p in pct.values() if p > pct["countdown"])
print("%.4f" % ((pct["countdown"] + above) / 2))
PYEOF
)
	echo "threshold $thres%"
	run -0 --separate-stderr "$PYUPROF" report -q run.raw -o p2.prof --svg g2.svg \
		--node-thres "$thres" --edge-thres "$thres"
	cmp p.prof p2.prof
	run check_svg g2.svg p2.prof "$TARGETS/recursion.py" "$thres" "$thres"
	echo "$output"
	((status == 0))
	[[ $output =~ kept\ [1-9][0-9]*\ dropped\ [1-9][0-9]*\ edges\ [0-9]+\ dropped\ [1-9] ]]
	(($(grep -c 'class="node"' g2.svg) < all))
	run -0 xmllint --xpath 'count(//*[local-name()="text"][.="countdown"])' g2.svg
	[[ $output == 0 ]]
}

@test "callgraph: the legend names the run and counts what was drawn and left out" {
	require_bpf
	require_some_py
	record_svg recursion --node-thres 1 --edge-thres 0.2
	run -0 "$PY" - g.svg p.prof "$PY $TARGETS/recursion.py" <<'PYEOF'
import pstats, re, sys
import xml.etree.ElementTree as ET
svg, prof, command = sys.argv[1:]
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(svg).getroot()
graph = [g for g in root.iter(S + "g") if g.get("class") == "graph"][0]
legend = [t.text for t in graph.findall(S + "text")]
boxes = sum(1 for g in root.iter(S + "g") if g.get("class") == "node")
edges = sum(1 for g in root.iter(S + "g") if g.get("class") == "edge")
st = pstats.Stats(prof).stats
calls = sum(v[1] for v in st.values())
listed = {k for k, v in st.items() if v[1]} | {c for v in st.values() for c in v[4]}
pairs = sum(len(v[4]) for v in st.values())
print("\n".join(legend))
m = re.fullmatch(r"pyuprof: (.*) \(pid ([0-9]+)\), [0-9.]+ m?s wall; ([0-9,]+) calls in 1 thread",
                 legend[0])
assert m and m.group(1) == command, legend[0]
assert int(m.group(3).replace(",", "")) == calls, (m.group(3), calls)
assert legend[1].startswith("100% = "), legend[1]
want = "%d of %d functions drawn: %d under 1.00%% total left out (--node-thres); " \
       "%d of %d caller-callee pairs drawn" % (boxes, len(listed), len(listed) - boxes,
                                               edges, pairs)
assert legend[2].startswith(want), (legend[2], want)
assert legend[3].startswith("box: name, file:line, total %"), legend[3]
PYEOF
	echo "$output"
}

@test "callgraph: --root draws main and the calls under it, as cProfile counts main's alone" {
	require_bpf
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	# the truth: cProfile enabled for main alone, after the same setup
	run -0 "$PY" "$TARGETS/rooted.py" truth truth.prof
	record_svg rooted --root rooted.py:main --node-thres 0 --edge-thres 0 --no-compensation
	run "$PY" - g.svg truth.prof p.prof <<'PYEOF'
import os, pstats, sys
import xml.etree.ElementTree as ET
svg, truth, whole = sys.argv[1:]
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(svg).getroot()
boxes, edges = {}, {}
for g in root.iter(S + "g"):
    texts = [t.text or "" for t in g.iter(S + "text")]
    if g.get("class") == "node":
        boxes[g.find(S + "title").text] = texts
    elif g.get("class") == "edge":
        edges[tuple(g.find(S + "title").text.split("->"))] = texts
legend = [t.text for g in root.iter(S + "g") if g.get("class") == "graph"
          for t in g.findall(S + "text")]
st = pstats.Stats(truth).stats
st = {k: v for k, v in st.items() if "_lsprof.Profiler" not in k[2]}  # runcall's own

def box_of(key):
    """the box of a truth key: a C function as pstats prints it, in braces, at "C function";
    a Python one by its file:line and its (qualified) name"""
    for node, t in boxes.items():
        if key[0] == "~" and t[0] == "{%s}" % key[2][1:-1] and t[1] == "C function":
            return node
        if t[1] == "%s:%d" % (os.path.basename(key[0]), key[1]) and \
           (t[0] == key[2] or t[0].endswith("." + key[2])):
            return node
    return None

def calls_label(nc, cc):
    return "{:,}\u00d7".format(nc) + ("" if nc == cc else " ({:,} primitive)".format(cc))

fails = []
node_of = {k: box_of(k) for k in st}
for k, node in node_of.items():
    if node is None:
        fails.append("no box for %s" % (k,))
    elif boxes[node][5] != "{:,}\u00d7".format(st[k][1]):
        fails.append("%s: %s, cProfile says %d calls" % (k[2], boxes[node][5], st[k][1]))
extra = set(boxes) - set(node_of.values())
if extra:
    fails.append("boxes cProfile has not under main: %r" % [boxes[n][:2] for n in extra])
main = [n for k, n in node_of.items() if k[2] == "main"]
if not main or boxes[main[0]][2] != "100.00%":
    fails.append("main's box is not 100%%: %r" % (main and boxes[main[0]]))
pairs = 0
for k, v in st.items():
    for caller, (nc, cc, tt, ct) in v[4].items():
        pairs += 1
        label = edges.get((node_of.get(caller), node_of[k]))
        if not label or label[1] != calls_label(nc, cc):
            fails.append("edge %s -> %s: %r, cProfile says %s" % (caller[2], k[2], label,
                                                                   calls_label(nc, cc)))
if len(edges) != pairs:
    fails.append("%d edges drawn, cProfile has %d pairs" % (len(edges), pairs))
calls = sum(v[1] for v in st.values())
if "{:,} calls in 1 thread under rooted.py:main (--root".format(calls) not in legend[0]:
    fails.append("legend: %r, %d calls" % (legend[0], calls))
# the whole profile counts leaf's calls in setup too (30 direct, 90 from sorted): the graph
# cannot come from its sums
leaf = [v[1] for k, v in pstats.Stats(whole).stats.items() if k[2] == "leaf"]
if leaf != [1120] or st[[k for k in st if k[2] == "leaf"][0]][1] != 1000:
    fails.append("leaf: %r calls in the whole profile, want 1120 (1000 under main)" % leaf)
print("\n".join(fails) or "%d boxes, %d edges as cProfile's" % (len(boxes), len(edges)))
sys.exit(1 if fails else 0)
PYEOF
	echo "$output"
	((status == 0))
}

@test "callgraph: --root naming no function is one line and no SVG; without --svg, a usage error" {
	require_bpf
	require_some_py
	record_raw
	run -1 --separate-stderr "$PYUPROF" report -q r.raw --svg g.svg --root nosuch -o q.prof
	echo "$stderr"
	[[ $stderr == "pyuprof: g.svg not written: no function named nosuch in the profile (--root)" ]]
	[[ ! -e g.svg && -s q.prof ]]
	# a name of recursion.py's, but of another file
	run -1 --separate-stderr "$PYUPROF" report -q r.raw --svg g.svg --root other.py:fib
	[[ $stderr == *"no function named other.py:fib"* && ! -e g.svg ]]
	run -0 --separate-stderr "$PYUPROF" report -q r.raw --svg g.svg --root recursion.py:fib
	run -0 xmllint --noout g.svg
	run -64 --separate-stderr "$PYUPROF" report r.raw --root fib -o q2.prof
	[[ $stderr == "pyuprof: --root draws the call graph: give --svg too"* && ! -e q2.prof ]]
	run -0 "$PYUPROF" record --help
	[[ $output == *"--root=FUNC"*"FILE:NAME"* ]]
}

# fake_dot MODE: a directory holding a `dot` that nobody can run, first in PATH. MODE ok: it
# answers with an SVG naming the uid it runs as and its NoNewPrivs; fail: it complains and exits 1.
fake_dot() {
	FAKE_DIR=$(mktemp -d /tmp/pyuprof-fake-dot.XXXXXX)
	chmod 755 "$FAKE_DIR"
	if [[ $1 == ok ]]; then
		cat >"$FAKE_DIR/dot" <<'SH'
#!/bin/sh
cat >/dev/null
echo "<svg>uid=$(id -u) $(grep NoNewPrivs /proc/self/status | tr -d '\t')</svg>"
SH
	else
		printf '#!/bin/sh\necho "Error: <stdin>: syntax error in line 1" >&2\nexit 1\n' \
			>"$FAKE_DIR/dot"
	fi
	chmod 755 "$FAKE_DIR/dot"
}

# a raw recording of recursion.py, for report (which needs neither root nor the target)
record_raw() {
	cd "$BATS_TEST_TMPDIR" || return 1
	run -0 --separate-stderr "$PYUPROF" record -q -o p.prof --raw r.raw -- \
		"$PY" "$TARGETS/recursion.py"
}

@test "callgraph: graphviz's dot runs as a child, as nobody, with no new privileges" {
	require_bpf
	require_some_py
	record_raw
	fake_dot ok
	PATH="$FAKE_DIR:$PATH" run -0 --separate-stderr "$PYUPROF" report r.raw --svg g.svg --top 0
	rm -rf "$FAKE_DIR"
	run -0 cat g.svg
	[[ $output == "<svg>uid=65534 NoNewPrivs:1</svg>" ]]
	# pyuprof itself maps none of graphviz's libraries
	run -0 ldd "$PYUPROF"
	[[ $output != *libgvc* && $output != *libcgraph* ]]
}

@test "callgraph: dot failing is one error line with its message; no SVG is left" {
	require_bpf
	require_some_py
	record_raw
	fake_dot fail
	PATH="$FAKE_DIR:$PATH" run -1 --separate-stderr "$PYUPROF" report r.raw --svg g.svg \
		-o q.prof --top 0
	rm -rf "$FAKE_DIR"
	echo "$stderr"
	[[ $stderr == *"pyuprof: graphviz: Error: <stdin>: syntax error in line 1"* ]]
	[[ $stderr == *"cannot write g.svg: Input/output error"* ]]
	[[ ! -e g.svg ]]
	[[ -s q.prof ]] # the other outputs are written
}

@test "callgraph: --svg without dot in PATH fails before recording, in one line" {
	require_bpf
	require_some_py
	cd "$BATS_TEST_TMPDIR"
	run -1 --separate-stderr env PATH=/nonexistent "$PYUPROF" record -o p.prof --svg g.svg -- \
		"$PY" -c 'open("ran", "w")'
	[[ $stderr == "pyuprof: --svg needs graphviz's dot, which is not in PATH"*"(apt-get install graphviz)" ]]
	[[ $(wc -l <<<"$stderr") == 1 ]]
	[[ ! -e g.svg && ! -e p.prof && ! -e ran ]]
	[[ -z $(ls -A | grep -E "prof|svg|ran") ]] # no temporary file either
}
