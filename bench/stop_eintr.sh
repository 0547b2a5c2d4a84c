#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A harm mended in the twelfth session: pyuprof's stops (attach, detach) made a thread waiting
# in epoll_wait get EINTR, and a Python select() whose timeout ran out meanwhile return nothing
# ready (bench/stop_eintr.py); a thread asleep in a system call is now left asleep
# (user/inject/hold_guard.h). Runs the fixture on a 3.13 (PY) for SECS natively, then again while
# pyuprof (PYUPROF, default build/pyuprof: give an older binary to see the harm) attaches CYCLES
# times (-d 0.5, 0.3 s apart), and prints both counts. Natively the empty selects are 0.
set -euo pipefail
CYCLES=${CYCLES:-5} exec "$(dirname "$0")/while_attached.sh" bench/stop_eintr.py 3 "${SECS:-12}"
