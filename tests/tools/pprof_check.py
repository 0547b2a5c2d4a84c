# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check a pprof file with its real consumer against the .prof of the same recording.

    pprof_check.py FILE.pb.gz FILE.prof [--pid PID]... [--thread NAME]...

Runs `go tool pprof -raw` and `go tool pprof -top` on FILE.pb.gz (both must load it) and
compares with pstats.Stats(FILE.prof), loaded by the Python running this script:
  - the sum of the samples' calls equals the sum of nc over the .prof's entries;
  - the sum of the samples' self wall time equals the sum of tt (within 1 us per entry,
    pstats keeping seconds as floats);
  - the functions the samples name are the .prof's functions with calls (by name, file and
    first line);
  - each --pid is the pid label of some sample, each --thread the thread label of some.
Exit 0 if all holds, 1 otherwise (with the reason on stderr).
"""
import argparse
import os
import pstats
import re
import subprocess
import sys


def go_pprof(*args):
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), PPROF_BINARY_PATH="/nonexistent")
    r = subprocess.run(["go", "tool", "pprof"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env)
    if r.returncode:
        sys.exit("go tool pprof %s failed: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def parse_raw(text):
    """Samples [(calls, ns, [loc ids], labels)], locations {id: "name file:line s=line"}."""
    samples, locs, section = [], {}, None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            m = re.match(r"^\s+(\d+)\s+(\d+): ([\d ]+)$", line)
            if m:
                ids = [int(x) for x in m.group(3).split()]
                samples.append([int(m.group(1)), int(m.group(2)), ids, {}])
                continue
            for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                if samples:
                    samples[-1][3][k] = v
        elif section == "Locations":
            # "ID: 0x0 M=1 NAME FILE:LINE s=START(SYSTEM_NAME)"; names and files may hold
            # spaces: the text is kept whole and matched against the .prof's keys
            m = re.match(r"^\s+(\d+): 0x0 M=\d+ (.*?)(\(\))?$", line)
            if m:
                locs[int(m.group(1))] = m.group(2)
    return samples, locs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pprof")
    ap.add_argument("prof")
    ap.add_argument("--pid", action="append", default=[])
    ap.add_argument("--thread", action="append", default=[])
    a = ap.parse_args()

    samples, locs = parse_raw(go_pprof("-raw", a.pprof))
    top = go_pprof("-top", a.pprof)
    if "Showing nodes accounting for" not in top:
        sys.exit("go tool pprof -top printed no table:\n" + top)
    if not samples:
        sys.exit("no samples in %s" % a.pprof)
    stats = pstats.Stats(a.prof).stats
    calls = sum(v[1] for v in stats.values())
    tt = sum(v[2] for v in stats.values())
    s_calls = sum(s[0] for s in samples)
    s_ns = sum(s[1] for s in samples)
    bad = []
    if s_calls != calls:
        bad.append("calls: pprof %d, .prof %d" % (s_calls, calls))
    if abs(s_ns - tt * 1e9) > 1000 * len(stats) + 1:
        bad.append("self time: pprof %d ns, .prof %.0f ns" % (s_ns, tt * 1e9))
    by_text = {"%s %s:%d s=%d" % (n, f, l, l): (f, l, n) for (f, l, n) in stats}
    named, unknown = set(), set()
    for s in samples:
        for i in s[2]:
            if locs.get(i) not in by_text:
                unknown.add(locs.get(i, i))
            else:
                named.add(by_text[locs[i]])
    if unknown:
        bad.append("samples name locations that are no .prof function: %s"
                   % sorted(map(str, unknown))[:5])
    with_calls = {(f, l, n) for (f, l, n), v in stats.items() if v[1]}
    if not with_calls <= named:
        bad.append("functions with calls missing from the samples: %s"
                   % sorted(with_calls - named)[:5])
    pids = {s[3].get("pid") for s in samples}
    threads = {s[3].get("thread") for s in samples}
    for p in a.pid:
        if p not in pids:
            bad.append("no sample has pid %s (pids: %s)" % (p, sorted(x for x in pids if x)))
    for t in a.thread:
        if t not in threads:
            bad.append("no sample has thread %s (threads: %s)"
                       % (t, sorted(x for x in threads if x)))
    if bad:
        sys.exit("\n".join(bad))
    print("pprof: %d samples, %d calls, %d ns self time, %d functions: as the .prof"
          % (len(samples), s_calls, s_ns, len(named)))


main()
