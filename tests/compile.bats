#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The compile recipe (examples/compile_torch.py, `make demo-compile`): PyTorch compiling
# small models (TorchScript, FX; torch.compile where the installed PyTorch has it) recorded
# in launch mode equals cProfile's run of the same script, for the script's own functions and
# for every function of torch.jit and torch.fx; the pictures name PyTorch's methods by their
# qualified names, and the call graph draws TorchScript's C++ entry point
# (torch._C._create_methods_and_properties) as a box of its own, with cProfile's count. Needs
# Debian's python3-torch for /usr/bin/python3, which README lists as optional: without it
# these tests are skipped, saying so.

load helpers

require_torch() {
	PY=/usr/bin/python3
	"$PY" -c 'import torch' 2>/dev/null ||
		skip "python3-torch is not installed (optional; make demo-compile installs it)"
}

@test "compile: compile_torch.py recorded equals cProfile (script, torch.jit, torch.fx)" {
	require_bpf
	require_torch
	cd "$BATS_TEST_TMPDIR" || return 1
	run -0 --separate-stderr "$PYUPROF" record -o p.prof --svg g.svg --flamegraph f.svg \
		--collapsed c.txt --raw r.raw --top 0 -- "$PY" "$REPO/examples/compile_torch.py" \
		--models 2
	[[ $output == *"2 models compiled"* ]]
	run -0 "$PY" "$TOOLS/cprofile_run.py" -o ref.prof "$REPO/examples/compile_torch.py" \
		--models 2
	run -0 "$PY" "$TOOLS/pstats_compare.py" p.prof ref.prof \
		--file "$REPO/examples/compile_torch.py"
	run -0 "$PY" - p.prof ref.prof <<'PYEOF'
import pstats, sys
ours, ref = (pstats.Stats(p).stats for p in sys.argv[1:])
keys = [k for k in ref if "/torch/jit/" in k[0] or "/torch/fx/" in k[0]]
bad = [(k, ref[k][:2], ours.get(k, (None, None))[:2]) for k in keys
       if ours.get(k, (None, None))[:2] != ref[k][:2]]
for b in bad[:20]:
    print("calls differ:", *b)
assert len(keys) > 100, "only %d functions of torch.jit and torch.fx" % len(keys)
assert not bad, "%d of %d differ" % (len(bad), len(keys))
print("%d functions of torch.jit and torch.fx: calls and primitive calls equal" % len(keys))
PYEOF
	echo "$output"
	# qualified names of PyTorch's own methods in the pictures (Python 3.11)
	grep -q '^.*;Tracer\.trace (/usr/lib/python3/dist-packages/torch/fx/_symbolic_trace\.py:' \
		c.txt
	grep -q '<title>RecursiveScriptModule\._construct$' f.svg
	# the titles name the run
	grep -q "<text id=\"title\"[^>]*>pyuprof: $PY $REPO/examples/compile_torch.py --models 2 \
(pid [0-9]*)</text>" f.svg
	run -0 xmllint --noout g.svg
	# TorchScript's C++ entry point is a box of its own in the call graph, under the Python
	# that calls it (--root: all of it, no threshold), with cProfile's count of its calls
	run -0 --separate-stderr "$PYUPROF" report -q r.raw --svg ts.svg --node-thres 0 \
		--edge-thres 0 --root create_methods_and_properties_from_stubs
	run -0 "$PY" - ts.svg ref.prof <<'PYEOF'
import pstats, sys
import xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
boxes = {}
for g in ET.parse(sys.argv[1]).getroot().iter(S + "g"):
    if g.get("class") == "node":
        t = [x.text for x in g.iter(S + "text")]
        boxes[(t[0], t[1])] = t
ref = pstats.Stats(sys.argv[2]).stats
name = "built-in method torch._C._create_methods_and_properties"
calls = ref[("~", 0, "<%s>" % name)][1]
box = boxes.get(("{%s}" % name, "C function"))
print(box, calls)
assert box and box[5] == "%d\u00d7" % calls, (box, calls)
PYEOF
	echo "$output"
}
