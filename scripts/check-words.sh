#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make check-words (part of make test): the project speaks of itself. A result is dated and tied
# to a commit, a comment says why; neither counts the sittings of work it came from. One line
# per hit (FILE:LINE: the line) and exit 1 for an ordinal or relative word right before
# "session" or "sessions", on one line or wrapped over two: first to twentieth, Nth, 1st, 2nd,
# ..., this, last, previous, next, earlier, later, prior (any case). pyuprof's own recording
# session (struct session, "the recording session") is not such a phrase.
#   scripts/check-words.sh            the project's files under README.md docs bench include bpf
#                                     user scripts tests (in a git clone those not ignored: not
#                                     node_modules/, bench/regrtest-logs/ or other output)
#   scripts/check-words.sh PATH...    every text file under PATH
set -euo pipefail
if (($#)); then
	mapfile -t files < <(grep -rlIi --exclude-dir=node_modules 'session' -- "$@" || true)
else
	cd "$(dirname "$0")/.."
	set -- README.md docs bench include bpf user scripts tests
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		mapfile -t files < <(git ls-files -z --cached --others --exclude-standard -- "$@" |
			xargs -0r grep -slIi 'session' -- || true)
	else
		mapfile -t files < <(grep -rlIi --exclude-dir=node_modules 'session' -- "$@" || true)
	fi
fi
((${#files[@]})) || exit 0

awk '
BEGIN {
	w = "(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
	w = w "|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth"
	w = w "|twentieth|nth|[0-9]+(st|nd|rd|th)|this|last|previous|next|earlier|later|prior)"
	one = "(^|[^a-z0-9_])" w "[ \t-]+sessions?([^a-z_]|$)"
	tail = "(^|[^a-z0-9_])" w "[ \t-]*$"
	head = "^[ \t#*/;>-]*sessions?([^a-z_]|$)"
}
FNR == 1 { prev = "" }
{
	l = tolower($0)
	if (l ~ one) {
		hit(FILENAME, FNR, $0)
	} else if (prev ~ tail && l ~ head) {
		hit(FILENAME, FNR - 1, prevraw " / " $0)
	}
	prev = l
	prevraw = $0
}
function hit(f, n, text) {
	gsub(/^[ \t]+|[ \t]+$/, "", text)
	printf "%s:%d: Session counted or placed in time (give the date and commit): %s\n", f, n, text
	bad = 1
}
END { exit bad }
' "${files[@]}" >&2
