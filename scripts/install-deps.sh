#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs the Debian packages that building and testing pyuprof need, only those missing.
# Quiet and quick when everything is present, so make can call it every time.
set -euo pipefail

pkgs=(clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libcapstone-dev pkg-config make gcc
      bats python3 python3.11 libxml2-utils libgraphviz-dev graphviz chromium nodejs
      libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "pyuprof: missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
	exit 1
fi
echo "pyuprof: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
