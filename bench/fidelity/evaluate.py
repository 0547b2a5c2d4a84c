# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The fidelity bench's numbers for one interpreter x workload (bench/fidelity.sh).

    evaluate.py total PROF            cumtime of section(): the timed section's time
    evaluate.py tvd A B               total variation distance between the per-function
                                      self-time shares of two sources

A source is a .prof (cProfile of the section alone, bench/fidelity/_fidelity.py: functions
reachable from section() through the callers, any builtins folded into their callers),
pyuprof's --collapsed stacks (*.collapsed: stacks through section() or worker()), an austin collapsed-stack file
(*.austin: samples with section or worker on the stack, by leaf frame, weighted by their
time), a sigsample.py file (*.samples) or a workload's own truth (*.truth: known.py's self
times, each function's own work timed natively on its own). Functions are matched by (filename, name): austin
knows no first line. TVD = half the sum of |share_a - share_b|: 0.3 means 30% of the time sits
in other functions. Prints "-" when a source has nothing."""
import collections
import marshal
import os
import re
import sys

ROOTS = ("section", "worker")


def norm(filename):
    """The same file by every source's spelling (relative, absolute, through links)."""
    if filename.startswith(("<", "~")):
        return filename
    return os.path.realpath(filename)


def load_prof(path):
    with open(path, "rb") as f:
        return marshal.load(f)


def prof_shares(path):
    stats = load_prof(path)
    callees = collections.defaultdict(set)
    for key, (_, _, _, _, callers) in stats.items():
        for c in callers:
            callees[c].add(key)
    seen = set(k for k in stats if k[2] in ROOTS)
    todo = list(seen)
    while todo:
        for k in callees[todo.pop()]:
            if k not in seen:
                seen.add(k)
                todo.append(k)
    tt = {k: stats[k][2] for k in seen}
    # builtins ('~' entries) pass their time to their callers, by the time of each edge
    for _ in range(10):
        moved = False
        for k in list(tt):
            if k[0] != "~" or tt[k] <= 0:
                continue
            callers = stats[k][4]
            w = {c: (v[2] if isinstance(v, tuple) else v) for c, v in callers.items()}
            tot = sum(w.values()) or len(w)
            for c, x in w.items():
                tt[c] = tt.get(c, 0.0) + tt[k] * ((x / tot) if sum(w.values()) else 1 / tot)
            tt[k] = 0.0
            moved = True
        if not moved:
            break
    out = collections.Counter()
    for k, v in tt.items():
        if k[0] != "~":
            out[(norm(k[0]), k[2])] += v
    return out


FRAME = re.compile(r"^(.*) \((.*)\)$")


def austin_shares(path):
    out = collections.Counter()
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, value = line.rpartition(" ")
            if not stack or not value.isdigit():
                continue
            frames = [m.groups() for m in (FRAME.match(p) for p in stack.split(";")) if m]
            if not frames or not any(name in ROOTS for name, _ in frames):
                continue
            name, filename = frames[-1]
            out[(norm(filename), name)] += int(value)
    return out


CFRAME = re.compile(r"^(.*) \((.*):\d+\)$")


def collapsed_shares(path):
    """pyuprof --collapsed: "name (file:line);... self_us" per call path. On 3.11+ a frame
    is named by its co_qualname ("Walker.visit", "f.<locals>.g"): its last part is the
    co_name every other source names it by."""
    out = collections.Counter()
    with open(path, errors="replace") as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            frames = [m.groups() for m in (CFRAME.match(p) for p in stack.split(";")) if m]
            frames = [(name.rsplit(".", 1)[-1], filename) for name, filename in frames]
            if not frames or not any(name in ROOTS for name, _ in frames):
                continue
            name, filename = frames[-1]
            out[(norm(filename), name)] += int(value)
    return out


def sample_shares(path):
    out = collections.Counter()
    with open(path) as f:
        for line in f:
            n, filename, name = line.rstrip("\n").split("\t")
            out[(norm(filename), name)] += int(n)
    return out


def truth_shares(path):
    """A workload's own truth (known.py --truth): [filename, name, seconds] per function."""
    import json

    out = collections.Counter()
    with open(path) as f:
        for filename, name, seconds in json.load(f):
            out[(norm(filename), name)] += seconds
    return out


def shares(path):
    if path.endswith(".truth"):
        return truth_shares(path)
    if path.endswith(".austin"):
        return austin_shares(path)
    if path.endswith(".samples"):
        return sample_shares(path)
    if path.endswith(".collapsed"):
        return collapsed_shares(path)
    return prof_shares(path)


def main():
    if sys.argv[1] == "total":
        stats = load_prof(sys.argv[2])
        ct = [v[3] for k, v in stats.items() if k[2] == "section"]
        print("%.6f" % max(ct) if ct else "-")
        return 0
    a, b = shares(sys.argv[2]), shares(sys.argv[3])
    sa, sb = sum(a.values()), sum(b.values())
    if sa <= 0 or sb <= 0:
        print("-")
        return 0
    keys = set(a) | set(b)
    print("%.3f" % (0.5 * sum(abs(a[k] / sa - b[k] / sb) for k in keys)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
