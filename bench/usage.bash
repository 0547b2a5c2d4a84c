# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench_usage "$@", sourced by the bench scripts that take their settings from the environment
# (their header comment says which): -h/--help prints that header; any other argument is a
# mistake, said in one line, before anything runs (a bench started by accident takes minutes)
bench_usage() {
	(($#)) || return 0
	if [[ $1 == -h || $1 == --help ]]; then
		sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
		exit 0
	fi
	echo "$(basename "$0"): takes no arguments, only settings in the environment (see --help)" >&2
	exit 2
}
