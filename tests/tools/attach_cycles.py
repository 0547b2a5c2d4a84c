# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Attach to one process over and over; its recursion limits must never move (tests/harm.bats).

    attach_cycles.py PYUPROF PYTHON CYCLES WORKDIR [HOOKED]

Serves tests/targets/recursion_limits.py under PYTHON, reads its results natively, then
attaches `PYUPROF record -p PID` CYCLES times, ending it by SIGINT and SIGTERM in turn, and
asks for the results again while recorded (every tenth cycle) and after the last detach. Every
answer must equal the native one; while recorded, but on 3.14+ where a bare PEP 523 hook alone
moves it the same way (HOOKED: recursion_limits.py --pep523's line; recursion_compare.py);
after the last detach, everywhere. Prints each difference; exits 0 if there is none.
"""
import json
import os
import signal
import subprocess
import sys
import time

from recursion_compare import differences

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "targets", "recursion_limits.py")


def main():
    pyuprof, python, cycles, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    hooked = json.loads(sys.argv[5]) if len(sys.argv) > 5 else None
    log = os.path.join(work, "pyuprof.err")
    target = subprocess.Popen([python, FIXTURE, "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, universal_newlines=True, bufsize=1)
    assert target.stdout.readline().strip() == "ready"

    def ask():
        target.stdin.write("results\n")
        return target.stdout.readline().strip()

    native, bad = ask(), 0
    print("native: " + native)
    for i in range(cycles):
        with open(log, "w") as err:
            rec = subprocess.Popen([pyuprof, "record", "-v", "--no-compensation", "--top", "0",
                                    "-p", str(target.pid), "-o", os.path.join(work, "out.prof")],
                                   stdout=subprocess.DEVNULL, stderr=err)
        end = time.time() + 30
        while "recording pid" not in open(log).read():
            if rec.poll() is not None or time.time() > end:
                sys.exit("cycle %d: pyuprof did not start:\n%s" % (i, open(log).read()))
            time.sleep(0.02)
        if i % 10 == 9:
            got = ask()
            harm, _ = differences(json.loads(native), json.loads(got), hooked)
            if harm:
                print("cycle %d, recorded: %s" % (i, "; ".join(harm)))
                bad += 1
        rec.send_signal(signal.SIGINT if i % 2 else signal.SIGTERM)
        if rec.wait(timeout=60) != 0:
            sys.exit("cycle %d: pyuprof exited with %d:\n%s" % (i, rec.returncode,
                                                               open(log).read()))
    got = ask()
    if got != native:
        print("after %d cycles: %s" % (cycles, got))
        bad += 1
    target.stdin.write("quit\n")
    target.wait(timeout=30)
    if target.returncode != 0:
        print("the target exited with %d" % target.returncode)
        bad += 1
    sys.exit(1 if bad else 0)


main()
