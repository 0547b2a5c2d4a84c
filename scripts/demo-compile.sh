#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What `make demo-compile` runs after the build: records examples/compile_torch.py (PyTorch
# compiling small models: TorchScript, FX, torch.compile where there is one) with Debian's
# /usr/bin/python3, launch mode, no change to the script; writes the profile, its call graph
# and its flame graph into build/demo-compile/, and PNG renders of both (headless Chromium,
# if installed) for the "Profiling a compilation" in docs/usage.md. Installs python3-torch (Debian's,
# about 1 GB with its dependencies) when /usr/bin/python3 cannot import torch.
set -euo pipefail

cd "$(dirname "$0")/.."
PYUPROF=${PYUPROF:-build/pyuprof}
PY=${PY:-/usr/bin/python3}
OUT=${OUT:-build/demo-compile}
MODELS=${MODELS:-4}

die() {
	echo "demo-compile: $*" >&2
	exit 1
}

[[ $EUID -eq 0 ]] ||
	die "pyuprof loads BPF programs and must run as root; try: sudo make demo-compile"
[[ -x $PYUPROF ]] || die "$PYUPROF not found; run make first"
[[ -x $PY ]] || die "$PY not found"

if ! "$PY" -c 'import torch' 2>/dev/null; then
	[[ $PY == /usr/bin/python3 ]] || die "$PY cannot import torch"
	echo "demo-compile: installing python3-torch (Debian's PyTorch) for $PY" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends python3-torch >/dev/null
	"$PY" -c 'import torch' || die "python3-torch is installed but $PY cannot import torch"
fi

mkdir -p "$OUT"
# the call graph of main alone (--root), the compilation without `import torch` (about 80% of
# the run, in the flame graph): TorchScript's C++ entry point _create_methods_and_properties is
# about 6% of main, 1% of the whole run; the functions above 1% of main's time, so that it
# reads as a picture
set -x
"$PYUPROF" record -o "$OUT/compile.prof" --svg "$OUT/callgraph.svg" \
	--root compile_torch.py:main --node-thres 1 --edge-thres 0.5 \
	--flamegraph "$OUT/flamegraph.svg" --top 15 -- \
	"$PY" examples/compile_torch.py --models "$MODELS"
{ set +x; } 2>/dev/null

# PNG renders for the README: the SVGs opened in Chromium as a user would
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
if [[ -z $CHROMIUM ]]; then
	echo "demo-compile: no chromium: the SVGs are in $OUT, no PNG rendered" >&2
	exit 0
fi
# size_of SVG: its width and height in CSS px (graphviz writes pt)
size_of() {
	"$PY" - "$1" <<'EOF'
import re, sys
head = open(sys.argv[1], encoding="utf-8").read(4096)
m = re.search(r'<svg[^>]* width="([0-9.]+)(pt|px)?" height="([0-9.]+)(pt|px)?"', head)
scale = 4 / 3 if m.group(2) == "pt" else 1
print("%d,%d" % (round(float(m.group(1)) * scale), round(float(m.group(3)) * scale)))
EOF
}
# render SVG PNG SIZE: a screenshot about 2400 px wide at most (Chromium rounds the scale): a
# README picture, not a poster
render() {
	local svg=$1 png=$2 size=$3 scale
	scale=$(awk -v w="${size%,*}" 'BEGIN { printf "%.3f", (w > 2400 ? 2400 / w : 1) }')
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--force-device-scale-factor="$scale" \
		--no-first-run --disable-background-networking --disable-component-update \
		--screenshot="$png" --window-size="$size" "file://$(realpath "$svg")" >/dev/null 2>&1 ||
		die "chromium could not render $svg"
	[[ -s $png ]] || die "chromium rendered nothing for $svg"
	echo "demo-compile: $png ($size)"
}
render "$OUT/callgraph.svg" "$OUT/callgraph.png" "$(size_of "$OUT/callgraph.svg")"
# the flame graph fills the window it is given; its height is its own
fg=$(size_of "$OUT/flamegraph.svg")
render "$OUT/flamegraph.svg" "$OUT/flamegraph.png" "1600,${fg#*,}"
echo "demo-compile: profile, pictures and renders in $PWD/$OUT"
