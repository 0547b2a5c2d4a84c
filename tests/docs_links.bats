#!/usr/bin/env bats
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The links of README.md, docs/ and bench/ between the project's own files lead somewhere: the
# file exists, and a #heading names one of its headings as GitHub makes their anchors.

load helpers

# links.py FILE...: prints "FILE: TARGET" for each relative link that leads nowhere
links() {
	python3 - "$@" <<'PY'
import os, re, sys

def anchors(path):
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            h = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(h.replace(" ", "-"))
    return out

bad = 0
for src in sys.argv[1:]:
    text = open(src, encoding="utf-8").read()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
        if not os.path.exists(dest) or (anchor and dest.endswith(".md") and anchor not in anchors(dest)):
            print("%s: %s" % (src, target))
            bad += 1
sys.exit(1 if bad else 0)
PY
}

@test "docs: README, docs/ and bench/ link only to files and headings that exist" {
	cd "$REPO"
	run links README.md docs/*.md bench/*.md
	echo "$output"
	[[ $status == 0 ]]
}

@test "docs: the link check finds a missing file and a missing heading" {
	cd "$BATS_TEST_TMPDIR"
	printf '# A\n\n## Some heading, with words\n' >t.md
	printf '[ok](t.md#some-heading-with-words) [no](t.md#nope) [gone](u.md) [web](https://x.org/y)\n' >r.md
	run links r.md
	[[ $status == 1 ]]
	[[ $output == *"r.md: t.md#nope"* && $output == *"r.md: u.md"* ]]
	[[ $output != *"some-heading"* && $output != *"x.org"* ]]
}
