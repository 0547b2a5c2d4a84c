#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What `make demo` runs after the build: records examples/compiler_workload.py under
# build/pyuprof into demo.prof, using the newest pyenv 3.12 if there is one (else
# /usr/bin/python3), then prints the top 15 functions by cumulative time with that
# interpreter's own pstats, which is the check that the file is really cProfile-compatible.
set -euo pipefail

cd "$(dirname "$0")/.."
PYUPROF=${PYUPROF:-build/pyuprof}
OUT=demo.prof

die() {
	echo "demo: $*" >&2
	exit 1
}

# Uprobes and BPF maps need root (CAP_BPF + CAP_PERFMON + CAP_SYS_ADMIN in practice).
[[ $EUID -eq 0 ]] || die "pyuprof loads BPF programs and must run as root; try: sudo make demo"
[[ -x $PYUPROF ]] || die "$PYUPROF not found; run make first"

# sudo often resets PATH and HOME, so also look in the invoking user's ~/.pyenv.
pyenv_roots() {
	[[ -n ${PYENV_ROOT:-} ]] && echo "$PYENV_ROOT"
	command -v pyenv >/dev/null && pyenv root 2>/dev/null
	echo "$HOME/.pyenv"
	if [[ -n ${SUDO_USER:-} ]]; then
		echo "$(getent passwd "$SUDO_USER" | cut -d: -f6)/.pyenv"
	fi
	return 0
}

pick_python() {
	local root py cands
	while read -r root; do
		cands=("$root"/versions/3.12.*/bin/python3)
		# sort -V so 3.12.10 beats 3.12.9; an unmatched glob stays literal and fails -x.
		py=$(printf '%s\n' "${cands[@]}" | sort -V | tail -n 1)
		if [[ -n $py && -x $py ]]; then
			echo "$py"
			return
		fi
	done < <(pyenv_roots)
	[[ -x /usr/bin/python3 ]] && echo /usr/bin/python3
	return 0
}

PY=$(pick_python)
[[ -n $PY ]] || die "no Python found (looked for pyenv 3.12.* and /usr/bin/python3)"

# 10 of the workload's 37 modules: about 1.7 million calls, 3-4 s recorded on our 2-core VM
echo "demo: $PYUPROF record -o $OUT -- $PY examples/compiler_workload.py --files 10"
"$PYUPROF" record -o "$OUT" -- "$PY" examples/compiler_workload.py --files 10
echo
"$PY" -c 'import pstats; pstats.Stats("'"$OUT"'").sort_stats("cumulative").print_stats(15)'
echo "demo: profile written to $PWD/$OUT (browse it with: $PY -m pstats $OUT)"
