#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerates the committed vmlinux/<arch>/vmlinux.h from the running kernel's BTF. The header is
# committed so builds do not depend on the build machine's kernel (CO-RE relocates at load time).
set -euo pipefail
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
out=${1:-vmlinux/$arch/vmlinux.h}
btf=/sys/kernel/btf/vmlinux
[ -r "$btf" ] || { echo "gen-vmlinux: $btf not readable: kernel without BTF" >&2; exit 1; }
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
mkdir -p "$(dirname "$out")"
"$bpftool" btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
