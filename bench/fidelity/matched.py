# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Of bench/fidelity.sh's log (its stderr; one row or more): each recording's compensated
section over the median of the plain runs made at the same speed (their call-free loop within
12% of the recording's, on the CPU), times as measured, without the bench's scaling (its loop
slows 1.8x on the test VM's slow vCPU where fib slows 1.4-1.6x). Per row: how many recordings
had two such plain runs or more, their median, range, how many within the budget, and of those
off it how many were off the CPU; then those on the row's fast vCPU (loop within 15% of the
fastest). The control, the truth's own noise: each plain run on the CPU over the median of the
other plain runs at its speed (two or more), counted the same way.

    matched.py LOG...
"""
import re
import statistics
import sys

PLAIN = re.compile(r"bench-fidelity: (\S+) (\S+) plain run \d+: ([0-9.]+) s, loop ([0-9.]+) s, "
                   r"off CPU ([0-9.]+)")
RECORDED = re.compile(r"bench-fidelity: (\S+) (\S+) recorded run \d+: comp ([0-9.]+) s, "
                      r"loop ([0-9.]+) s, off CPU ([0-9.]+)")
BUDGET = {"fib": 0.30, "cdense": 0.30, "compile": 0.15, "generators": 0.15}


def main():
    rows = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                for kind, pat in (("plain", PLAIN), ("rec", RECORDED)):
                    m = pat.search(line)
                    if m:
                        row = rows.setdefault((path, m.group(1), m.group(2)),
                                              {"plain": [], "rec": []})
                        row[kind].append(tuple(float(m.group(i)) for i in (3, 4, 5)))
    print("| log | py | workload | matched | median | range | within budget | off budget (off CPU) "
          "| fast vCPU: n, median | native vs native: matched, within budget, range |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (path, py, w), row in rows.items():
        if not row["rec"] or not row["plain"]:
            continue
        fastest = min(x[1] for x in row["plain"] + row["rec"])
        budget = BUDGET.get(w, 0)
        got = []
        for comp, loop, off in row["rec"]:
            same = [t for t, l, o in row["plain"] if o <= 0.10 and abs(l / loop - 1) <= 0.12]
            if len(same) >= 2:
                got.append((comp / statistics.median(same), off, loop / fastest))
        if not got:
            continue
        ctrl = []
        for i, (t0, l0, o0) in enumerate(row["plain"]):
            same = [t for j, (t, l, o) in enumerate(row["plain"])
                    if j != i and o <= 0.10 and abs(l / l0 - 1) <= 0.12]
            if o0 <= 0.10 and len(same) >= 2:
                ctrl.append(t0 / statistics.median(same))
        control = ("%d of %d, %s, %.2f-%.2f" % (
            len(ctrl), len(row["plain"]),
            sum(1 for c in ctrl if abs(c - 1) <= budget) if budget else "-",
            min(ctrl), max(ctrl)) if ctrl else "-")
        ratios = sorted(g[0] for g in got)
        off_budget = [g for g in got if budget and abs(g[0] - 1) > budget]
        fast = [g[0] for g in got if g[2] <= 1.15]
        print("| %s | %s | %s | %d of %d | %.2f | %.2f-%.2f | %s | %s | %s | %s |" % (
            path, py, w, len(got), len(row["rec"]), statistics.median(ratios), ratios[0],
            ratios[-1],
            len(got) - len(off_budget) if budget else "-",
            ("%d (%d)" % (len(off_budget), sum(1 for g in off_budget if g[1] > 0.10))
             if budget else "-"),
            "%d, %.2f" % (len(fast), statistics.median(fast)) if fast else "0", control))
    return 0


if __name__ == "__main__":
    sys.exit(main())
