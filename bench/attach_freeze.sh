#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# How long an attach and a detach freeze the target (twelfth session's note): a 3.13 (PY) that
# wakes every millisecond reports each gap over 50 ms while pyuprof (PYUPROF, default
# build/pyuprof) attaches CYCLES times (-d 0.5, 0.3 s apart). Natively there is no such gap.
# FREEZE_MIN_MS=N reports gaps over N ms instead. Until the thirteenth session the attach's
# stop held the target while the BPF object loaded (the verifier): 0.4-0.5 s on the test VM,
# enough to fail CPython's test_timerfd_ns_select (bench/REGRTEST.md); now it loads between
# two short stops (bench/RESULTS.md, thirteenth session).
set -euo pipefail
CYCLES=${CYCLES:-3}
CYCLES=$CYCLES exec "$(dirname "$0")/while_attached.sh" bench/attach_freeze.py 2 $((CYCLES * 3 + 2))
