#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Qualified names: the pictures and the trace name a method "Counter.bump" and a closure
# "outer.<locals>.inner" (co_qualname, 3.11+), the .prof keeps cProfile's co_name keys. The
# truth is the interpreter's own compiler (tests/tools/qualnames_check.py); before 3.11 the
# names shown are co_name.

load helpers

# qualnames LABEL FIXTURE: records the fixture on LABEL with every output and checks them.
qualnames() {
	require_bpf
	require_py "$1"
	cd "$BATS_TEST_TMPDIR" || return 1
	run -0 --separate-stderr "$PYUPROF" record -q -o p.prof --svg g.svg --node-thres 0 \
		--edge-thres 0 --flamegraph f.svg --collapsed c.txt --trace t.json -- \
		"$PY" "$TARGETS/$2.py"
	run -0 "$PY" "$TOOLS/qualnames_check.py" p.prof "$TARGETS/$2.py" --collapsed c.txt \
		--svg g.svg --flamegraph f.svg --trace t.json
	echo "$output"
	# and the .prof is still cProfile's: same keys and counts as cProfile's own run
	run -0 "$PY" "$TOOLS/cprofile_run.py" -o c.prof "$TARGETS/$2.py"
	run -0 "$PY" "$TOOLS/pstats_compare.py" p.prof c.prof --file "$TARGETS/$2.py"
}

@test "qualnames: methods on 3.8 show co_name" {
	qualnames 3.8 methods
}

@test "qualnames: methods on 3.12 show co_qualname, the .prof co_name" {
	qualnames 3.12 methods
}

@test "qualnames: closures and lambdas on 3.13 show co_qualname" {
	qualnames 3.13 lambdas_closures
}

@test "qualnames: closures and lambdas on 3.14 show co_qualname" {
	qualnames 3.14 lambdas_closures
}

@test "qualnames: closures and lambdas on 3.15 show co_qualname" {
	qualnames 3.15 lambdas_closures
}

@test "qualnames: methods on Debian's 3.11 show co_qualname" {
	qualnames deb3.11 methods
}

@test "qualnames: report from a raw recording keeps them (3.11)" {
	require_bpf
	require_py 3.11
	cd "$BATS_TEST_TMPDIR" || return 1
	run -0 --separate-stderr "$PYUPROF" record -q -o p.prof --raw r.raw -- \
		"$PY" "$TARGETS/methods.py"
	run -0 --separate-stderr "$PYUPROF" report r.raw -o p2.prof --svg g.svg --node-thres 0 \
		--flamegraph f.svg --collapsed c.txt --trace t.json
	cmp p.prof p2.prof
	run -0 "$PY" "$TOOLS/qualnames_check.py" p2.prof "$TARGETS/methods.py" --collapsed c.txt \
		--svg g.svg --flamegraph f.svg --trace t.json
	[[ $output == *"qualified"* && $output != *"(0 qualified)"* ]]
}
