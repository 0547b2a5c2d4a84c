#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# container.sh ROOT CMD...: runs CMD (a path in ROOT) as a container runtime runs a container's
# first process: in a new mount and PID namespace (CMD is its pid 1), whose root is ROOT
# (pivot_root; the old root unmounted) with a /proc of its own. Seen from outside, the
# process's /proc/PID/maps names its files as it sees them (/usr/bin/python3.13), paths that
# are not its files in the outer root. Exits with CMD's status. Needs root.
set -eu
if [ "${1:-}" != --inside ]; then
	[ $# -ge 2 ] || { echo "usage: $0 ROOT CMD..." >&2; exit 64; }
	exec unshare --mount --pid --fork --propagation private "$0" --inside "$@"
fi
root=$2
shift 2
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
cd "$root"
old=$(mktemp -d tmp/container-old.XXXXXX)
pivot_root . "$old"
# from here on, the root's own programs
# shellcheck disable=SC2016 # (the inner shell's arguments)
exec /usr/sbin/chroot . /bin/sh -c 'umount -l "$1" && rmdir "$1" && shift && exec "$@"' sh \
	"/$old" "$@"
