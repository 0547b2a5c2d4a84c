#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# How long an attach and a detach freeze the target: a 3.13 (PY) that wakes every millisecond
# reports each gap over 50 ms while pyuprof (PYUPROF, default build/pyuprof) attaches CYCLES
# times (-d 0.5, 0.3 s apart). Natively there is no such gap. FREEZE_MIN_MS=N reports gaps over
# N ms instead. An attach loads the BPF object (the verifier) between two short stops, the
# target running: held inside a stop, the load froze the target 0.15-0.5 s, enough to fail
# CPython's test_timerfd_ns_select (bench/REGRTEST.md, 2026-11-27, 11a8a5e; bench/RESULTS.md,
# History, 2026-11-27T17:56Z: 0ca6ee0 against 11a8a5e).
set -euo pipefail
CYCLES=${CYCLES:-3}
CYCLES=$CYCLES exec "$(dirname "$0")/while_attached.sh" bench/attach_freeze.py 2 $((CYCLES * 3 + 2))
