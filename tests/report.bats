#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# record --raw and report (issue 3): a raw recording gives back, byte for byte, the outputs
# record wrote in the same run, without root; a truncated, corrupt or foreign file is refused
# with one clear line and nothing written.

load helpers

# Records FIXTURE on $PY with every output, in $BATS_TEST_TMPDIR/rec.
record_all() {
	mkdir -p "$BATS_TEST_TMPDIR/rec"
	cd "$BATS_TEST_TMPDIR/rec"
	run -0 --separate-stderr "$PYUPROF" record -o p.prof --raw run.raw --collapsed c.txt \
		--trace t.json.gz --svg g.svg --flamegraph f.svg --threads -- "$PY" "$TARGETS/$1.py"
}

@test "report: a raw recording gives back record's outputs byte for byte (threads, 3.12)" {
	require_bpf
	require_py 3.12
	record_all threads
	mkdir -p "$BATS_TEST_TMPDIR/rep"
	cd "$BATS_TEST_TMPDIR/rep"
	# no root needed to report
	cp "$BATS_TEST_TMPDIR/rec/run.raw" .
	chmod -R a+rwX "$BATS_TEST_TMPDIR/rep"
	run -0 --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PYUPROF" report run.raw -o p.prof --collapsed c.txt --trace t.json.gz --svg g.svg \
		--flamegraph f.svg --threads
	for f in p.prof c.txt g.svg f.svg; do
		cmp "$BATS_TEST_TMPDIR/rec/$f" "$f"
	done
	# the gzip headers may differ (time stamps); the traces themselves must not
	cmp <(gzip -dc "$BATS_TEST_TMPDIR/rec/t.json.gz") <(gzip -dc t.json.gz)
	[[ $stderr == *"calls, "*" functions, "*" threads, 0 lost events"* ]]
}

@test "report: on every interpreter, the .prof from the raw recording equals record's" {
	require_bpf
	local label n=0
	for label in $(available_pys); do
		PY=$(py_path "$label")
		cd "$BATS_TEST_TMPDIR"
		run -0 --separate-stderr "$PYUPROF" record -q -o "$label.prof" --raw "$label.raw" \
			-- "$PY" "$TARGETS/generators.py"
		run -0 --separate-stderr "$PYUPROF" report -q "$label.raw" -o "$label.again.prof"
		cmp "$label.prof" "$label.again.prof"
		n=$((n + 1))
	done
	((n > 0))
}

@test "report: a truncated raw recording is refused in one line, nothing written" {
	require_bpf
	require_some_py
	record_all recursion
	cd "$BATS_TEST_TMPDIR"
	size=$(stat -c %s rec/run.raw)
	head -c $((size * 2 / 3)) rec/run.raw >cut.raw
	mkdir out
	run -1 --separate-stderr "$PYUPROF" report cut.raw -o out/p.prof --trace out/t.json
	assert_one_error_line
	[[ $stderr == *"truncated"* || $stderr == *"corrupt"* ]]
	assert_empty_dir out
	# just the header, too
	head -c 64 rec/run.raw >header.raw
	run -1 --separate-stderr "$PYUPROF" report header.raw -o out/p.prof
	assert_one_error_line
	assert_empty_dir out
}

@test "report: random bytes, an empty file, a missing file and bad flips are refused" {
	cd "$BATS_TEST_TMPDIR"
	mkdir out
	head -c 100000 /dev/urandom >random.raw
	: >empty.raw
	for f in random.raw empty.raw missing.raw; do
		run -1 --separate-stderr "$PYUPROF" report "$f" -o out/p.prof
		assert_one_error_line
	done
	assert_empty_dir out
	# a valid header followed by garbage
	printf 'PYUPROF\x01\x01\x00\x00\x00' >hdr.raw
	head -c 54 /dev/zero >>hdr.raw
	head -c 5000 /dev/urandom >>hdr.raw
	run -1 --separate-stderr "$PYUPROF" report hdr.raw -o out/p.prof
	assert_one_error_line
	assert_empty_dir out
}

@test "report: a recording whose records are not gzip-compressed is refused" {
	require_bpf
	require_some_py
	record_all recursion
	cd "$BATS_TEST_TMPDIR"
	mkdir out
	# the same header and records, uncompressed: zlib would pass them through as they are
	head -c 64 rec/run.raw >plain.raw
	tail -c +65 rec/run.raw | gzip -dc >>plain.raw
	run -1 --separate-stderr "$PYUPROF" report plain.raw -o out/p.prof
	assert_one_error_line
	[[ $stderr == *"not compressed"* ]]
	assert_empty_dir out
}

@test "report: usage errors (no file, two files) exit 64" {
	run -64 --separate-stderr "$PYUPROF" report
	run -64 --separate-stderr "$PYUPROF" report a.raw b.raw
}
