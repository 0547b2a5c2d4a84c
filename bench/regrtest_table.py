#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Reads bench/regrtest.sh's logs and prints, per interpreter and mode, the tests that fail
recorded (or with a bare hook) but pass natively, in Markdown (bench/REGRTEST.md).

    regrtest_table.py OUT LABEL...
    regrtest_table.py --recorded-only-modules OUT/LABEL

A test's failure is unittest's own "FAIL: name (id)" or "ERROR: name (id)" line; a module
that fails outside its tests (a crash, a fatal error, an import error) is regrtest's
"test_x failed"/"crashed" line. Both sets are compared with the native run's.
"""
import os
import re
import sys

FAILED_TEST = re.compile(r"^(FAIL|ERROR): (\S+ \(.+\))$")
# regrtest's per-module verdicts: "[30/52/1] test_next -- test_x failed (5 failures)",
# "test test_x failed", "test_x crashed (Exit code -11)"
FAILED_MODULE = re.compile(r"(?:^|^test |\] |-- )(test_[\w.]+) (failed|crashed)\b")
FATAL = re.compile(r"Fatal Python error|Segmentation fault|core dumped")
RUN = re.compile(r"^Ran (\d+) tests?")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def outcome(d, mode):
    log = read(os.path.join(d, mode + ".log"))
    if log is None:
        return None
    tests, modules, fatal, ran = set(), set(), [], 0
    for line in log.splitlines():
        m = FAILED_TEST.match(line)
        if m:
            tests.add(m.group(2))
        m = FAILED_MODULE.search(line)
        if m:
            modules.add(m.group(1) + " " + m.group(2))
        if FATAL.search(line):
            fatal.append(line.strip())
        m = RUN.match(line)
        if m:
            ran += int(m.group(1))
    status = dict(kv for kv in zip(*[iter((read(os.path.join(d, mode + ".status")) or "")
                                          .split())] * 2))
    extra = (read(os.path.join(d, mode + ".pyuprof")) or "").strip().splitlines()
    return dict(tests=tests, modules=modules, fatal=fatal, ran=ran, status=status, extra=extra,
                dmesg=(read(os.path.join(d, mode + ".dmesg")) or "").strip().splitlines())


def recorded_only_modules(d):
    """The modules (as regrtest names them) that failed recorded but not natively, in the
    order the runs ran them (OUT/LABEL/modules): a module can fail for what one before it left
    behind in the process (test_monitoring's failures under any hook leave a tool named that
    test_cprofile then finds taken), and the bare hook's run must meet the same."""
    native = outcome(d, "native") or dict(modules=set())
    names = set()
    for mode in ("launch", "attach"):
        r = outcome(d, mode)
        if r:
            names |= {m.split()[0] for m in r["modules"] - native["modules"]}
    order = (read(os.path.join(d, "modules")) or "").split()
    return [m for m in order if m in names] + sorted(names - set(order))


def main():
    if sys.argv[1] == "--recorded-only-modules":
        print(" ".join(recorded_only_modules(sys.argv[2])))
        return
    out, labels = sys.argv[1], sys.argv[2:]
    print("| Python | mode | tests run | exit | s | fail natively | fail only here "
          "| of which with a bare hook too | modules failed only here | fatal "
          "| new dmesg lines |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    details = []
    for label in labels:
        d = os.path.join(out, label)
        native = outcome(d, "native")
        hook = outcome(d, "hook")
        for mode in ("native", "launch", "attach", "hook"):
            r = outcome(d, mode)
            if r is None:
                continue
            base = native if native and mode != "native" else dict(tests=set(), modules=set())
            only = sorted(r["tests"] - base["tests"]) if mode != "native" else []
            only_mod = sorted(r["modules"] - base["modules"]) if mode != "native" else []
            st = r["status"]
            inherent = [t for t in only if hook and mode != "hook" and t in hook["tests"]]
            print("| %s | %s | %d | %s | %s | %d | %d | %s | %d | %d | %d |" % (
                label, mode, r["ran"], st.get("exit", "?"), st.get("seconds", "?"),
                len(r["tests"]) if mode == "native" else len(base["tests"] & r["tests"]),
                len(only), len(inherent) if hook and mode in ("launch", "attach") else "",
                len(only_mod), len(r["fatal"]), len(r["dmesg"])))
            if only or only_mod or r["fatal"] or r["dmesg"]:
                details.append("%s %s:" % (label, mode))
                details += ["  test  %s%s" % (t, "  (fails with a bare hook too)"
                                              if t in inherent else "") for t in only]
                details += ["  module  " + t for t in only_mod]
                details += ["  fatal  " + t for t in r["fatal"][:5]]
                details += ["  dmesg  " + t for t in r["dmesg"][:5]]
            if mode == "attach":
                details += ["%s attach: %s" % (label, e) for e in r["extra"] if "attaches" in e]
    if details:
        print("\n```")
        print("\n".join(details))
        print("```")


main()
