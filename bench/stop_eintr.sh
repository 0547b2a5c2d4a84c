#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A harm pyuprof's stops (attach, detach) must not do: interrupted, a thread waiting in
# epoll_wait gets EINTR, and a Python select() whose timeout ran out meanwhile returns nothing
# ready (bench/stop_eintr.py); so a thread asleep in a system call is left asleep
# (user/inject/hold_guard.h; bench/REGRTEST.md, 2026-11-27, c366ca2). Runs the fixture on a 3.13
# (PY) for SECS natively, then again while pyuprof (PYUPROF, default build/pyuprof: a binary
# before c366ca2 shows the harm) attaches CYCLES times (-d 0.5, 0.3 s apart), and prints both
# counts. Natively the empty selects are 0.
set -euo pipefail
CYCLES=${CYCLES:-5} exec "$(dirname "$0")/while_attached.sh" bench/stop_eintr.py 3 "${SECS:-12}"
