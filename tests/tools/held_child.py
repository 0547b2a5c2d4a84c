# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Follow a held child, end pyuprof, then check the child (tests/harm.bats).

    held_child.py PYUPROF PYTHON SIGNAL WORKDIR

Starts tests/targets/fork_held_child.py under PYTHON, attaches `PYUPROF record --subprocesses
-v`, lets the target fork its child (which makes no Python call until released), waits until
pyuprof records the child, ends pyuprof with SIGNAL (INT, TERM or KILL) and waits for it; then
reads the child's trampoline pages back (memory against the memfd behind each) and releases
the child. Prints one line per finding and "child status N"; exits 0 if every page byte is the
file's and the child's own checks passed (status 0).
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pages  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "targets", "fork_held_child.py")


def wait_line(path, needle, proc, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        with open(path) as f:
            if needle in f.read():
                return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(path) as f:
        sys.exit("no '%s' from pyuprof:\n%s" % (needle, f.read()))


def main():
    pyuprof, python, sig, work = sys.argv[1:5]
    log = os.path.join(work, "pyuprof.err")
    target = subprocess.Popen([python, FIXTURE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              universal_newlines=True, bufsize=1,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert target.stdout.readline().strip() == "ready"
    with open(log, "w") as err:
        rec = subprocess.Popen([pyuprof, "record", "-v", "--subprocesses", "--top", "0", "-p",
                                str(target.pid), "-o", os.path.join(work, "out.prof")],
                               stdout=subprocess.DEVNULL, stderr=err)
    wait_line(log, "recording pid %d (Python" % target.pid, rec)
    target.stdin.write("fork\n")
    child = int(target.stdout.readline().split()[1])
    wait_line(log, "recording pid %d (Python" % child, rec)
    rec.send_signal(getattr(signal, "SIG" + sig))
    rec.wait(timeout=60)
    diffs, npages = pages.differences(child)
    for start, i, got, want in diffs:
        print("child %d: page 0x%x +%d is %02x, not %02x" % (child, start, i, got, want))
    if not npages:
        print("child %d has no trampoline page: nothing was tested" % child)
    target.stdin.write("release\n")
    print(target.stdout.readline().strip())
    target.wait(timeout=60)
    sys.exit(0 if npages and not diffs and target.returncode == 0 else 1)


main()
