#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The compile recipe (examples/compile_torch.py, `make demo-compile`): PyTorch compiling
# small models (TorchScript, FX; torch.compile where the installed PyTorch has it) recorded
# in launch mode equals cProfile's run of the same script, for the script's own functions and
# for every function of torch.jit and torch.fx; the pictures name PyTorch's methods by their
# qualified names. Needs Debian's python3-torch for /usr/bin/python3, which README lists as
# optional: without it these tests are skipped, saying so.

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
		--collapsed c.txt --top 0 -- "$PY" "$REPO/examples/compile_torch.py" --models 2
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
}
