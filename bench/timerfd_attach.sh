#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The peer suite's witness of the attach's freeze (bench/REGRTEST.md, 2026-11-27, 11a8a5e):
# CPython's own test_timerfd_ns_select (bench/timerfd_select.py) on a 3.13 (PY), run over and
# over natively and while pyuprof (PYUPROF, default build/pyuprof) attaches CYCLES times (-d 0.5,
# 0.3 s apart). When the attach held the target for the BPF object's load (0.15-0.5 s), the
# test found 2 timer expirations where it expects 1 at the first attach.
set -euo pipefail
CYCLES=${CYCLES:-10}
CYCLES=$CYCLES exec "$(dirname "$0")/while_attached.sh" bench/timerfd_select.py 5 $((CYCLES * 3 + 2))
