# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check a Chrome trace written by pyuprof, the way its consumers read it.

    chrome_check.py TRACE [--pid N] [--count NAME=N]... [--thread TID=NAME]...
                    [--min-us X] [--left-out N] [--prof FILE.prof]

Used by tests/unit/test_chrome.c and tests/trace.bats. Always checked: TRACE (gunzipped
when its name ends in .gz, and then it must be gzip) is strict UTF-8 JSON in the object
form (traceEvents, displayTimeUnit, otherData with pyuprof_calls_left_out and
pyuprof_min_us); every complete event has exactly name, cat, ph, ts, dur, pid, tid and args,
with ts and dur written with three decimals; one process_name event; every thread with
events has one thread_name; per thread the events are well nested (sorted by begin,
longest first, each lies within the enclosing one), compared exactly (decimal, not float);
and an event never comes after a shorter non-empty one that begins at the same ts (its
child: chrome://tracing nests such ties in file order; an empty event may be a sibling).

--count: the number of events named NAME ("func (file:line)", func the qualified name
where the interpreter has one, file the base name); when given, no other name may appear.
Every event's args are {"file", "line"}: the path of the file its name ends with, the line;
a C function's event (cat "C") is named "{...}" as pstats prints it, its args ("~", 0), the
.prof's key ('~', 0, "<...>"). --process: the process name.
--thread: TID's thread name. --min-us and --left-out: the otherData values (and no event
shorter than min_us). --prof: the per-function call counts of a pstats file written in
the same run (its co_name keys matched to the events' qualified names); with min_us 0
each function's events equal its calls, otherwise they are at most its calls and events
+ left out = all calls.
Names and expected values are taken as the bytes of argv decoded as UTF-8 with U+FFFD
for invalid bytes, whatever the locale. Prints "events N left_out N threads N" and exits
0 if all holds, else exits 1 with the reasons on stderr.
"""
import argparse
import collections
import decimal
import gzip
import json
import os
import sys


def arg_str(s):
    """The argument's bytes as UTF-8, invalid sequences replaced (as pyuprof does)."""
    return os.fsencode(s).decode("utf-8", "replace")


def split_pair(s):
    key, sep, value = arg_str(s).rpartition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected KEY=VALUE: %r" % s)
    return key, value


def is_milli(v):
    return isinstance(v, decimal.Decimal) and v.as_tuple().exponent == -3


def check_nesting(events, problems):
    """events: one thread's complete events. Sorted by begin, longest first, an event must
    end at or before the enclosing one; what ended at or before its begin is closed."""
    stack = []
    for ev in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        begin, end = ev["ts"], ev["ts"] + ev["dur"]
        while stack and stack[-1][1] <= begin:
            stack.pop()
        if stack and end > stack[-1][1]:
            problems.append("tid %s: %r [%s, %s] overlaps %r [%s, %s]" % (
                ev["tid"], ev["name"], begin, end, stack[-1][2], stack[-1][0], stack[-1][1]))
            if len(problems) > 20:
                return
        stack.append((begin, end, ev["name"]))


def base(path):
    return path.rpartition("/")[2]


def prof_calls(path):
    """The .prof's call counts by "name (file:line)", and its names by (file, line)."""
    import pstats
    stats = pstats.Stats(path).stats
    calls, names = {}, collections.defaultdict(list)
    for (filename, line, name), value in stats.items():
        if value[1]:
            calls["%s (%s:%d)" % (name, filename, line)] = value[1]
            names[(filename, line)].append(name)
    return calls, names


def is_c(ev):
    """A C function's event: cat C, named "{...}", at ("~", 0)."""
    return (ev.get("cat") == "C" and isinstance(ev.get("name"), str)
            and ev["name"].startswith("{") and ev["name"].endswith("}")
            and ev.get("args") == {"file": "~", "line": 0})


def prof_key(ev, names):
    """The .prof's "name (file:line)" of an event named by its qualified name (3.11+): the
    .prof keeps co_name, which ends the qualified name."""
    if is_c(ev):
        return "<%s> (~:0)" % ev["name"][1:-1]
    label = ev["name"][:-len(" (%s:%d)" % (base(ev["args"]["file"]), ev["args"]["line"]))]
    for name in names.get((ev["args"]["file"], ev["args"]["line"]), []):
        if label == name or label.endswith("." + name):
            return "%s (%s:%d)" % (name, ev["args"]["file"], ev["args"]["line"])
    return ev["name"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--count", type=split_pair, action="append", default=[])
    ap.add_argument("--thread", type=split_pair, action="append", default=[])
    ap.add_argument("--min-us", type=decimal.Decimal)
    ap.add_argument("--left-out", type=int)
    ap.add_argument("--prof")
    ap.add_argument("--process", type=arg_str)
    args = ap.parse_args()
    problems = []

    with open(args.trace, "rb") as f:
        data = f.read()
    if args.trace.endswith(".gz"):
        if data[:2] != b"\x1f\x8b":
            sys.exit("%s: not gzip" % args.trace)
        data = gzip.decompress(data)
    elif data[:2] == b"\x1f\x8b":
        sys.exit("%s: gzip, but the name does not end in .gz" % args.trace)
    try:
        doc = json.loads(data.decode("utf-8"), parse_float=decimal.Decimal)
    except ValueError as e:
        sys.exit("%s: not UTF-8 JSON: %s" % (args.trace, e))

    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        sys.exit("not the object form with a traceEvents array")
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        problems.append("displayTimeUnit %r" % doc.get("displayTimeUnit"))
    other = doc.get("otherData")
    if not isinstance(other, dict) or not isinstance(other.get("pyuprof_calls_left_out"), int) \
            or not is_milli(other.get("pyuprof_min_us")):
        sys.exit("bad otherData: %r" % (other,))
    left_out, min_us = other["pyuprof_calls_left_out"], other["pyuprof_min_us"]

    by_tid = collections.defaultdict(list)
    thread_names, process_names, pids = {}, [], set()
    shortest = {}  # (tid, ts) -> the shortest non-empty event so far that begins there
    for ev in doc["traceEvents"]:
        ph = ev.get("ph") if isinstance(ev, dict) else None
        if ph == "X":
            if set(ev) != {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}:
                problems.append("bad keys: %r" % (ev,))
            elif not is_c(ev) and not (isinstance(ev["args"], dict) and set(ev["args"]) == {"file", "line"}
                      and isinstance(ev["args"]["file"], str)
                      and isinstance(ev["args"]["line"], int)
                      and isinstance(ev["name"], str) and ev["name"].endswith(
                          " (%s:%d)" % (base(ev["args"]["file"]), ev["args"]["line"]))):
                problems.append("args do not say the name's file and line: %r" % (ev,))
            elif not (isinstance(ev["name"], str) and ev["cat"] in ("python", "C")
                      and is_milli(ev["ts"]) and is_milli(ev["dur"]) and ev["dur"] >= 0
                      and isinstance(ev["pid"], int) and isinstance(ev["tid"], int)):
                problems.append("bad event: %r" % (ev,))
            else:
                by_tid[ev["tid"]].append(ev)
                pids.add(ev["pid"])
                key = (ev["tid"], ev["ts"])
                if key in shortest and ev["dur"] > shortest[key]:
                    problems.append("tid %s: an event at ts %s comes after a shorter one with "
                                    "that ts (chrome://tracing would not nest them)" % key)
                if ev["dur"] > 0:
                    shortest[key] = min(ev["dur"], shortest.get(key, ev["dur"]))
                if ev["dur"] < min_us:
                    problems.append("shorter than min_us %s: %r" % (min_us, ev))
        elif ph == "M" and ev.get("name") in ("thread_name", "process_name"):
            name = ev.get("args", {}).get("name")
            if not isinstance(name, str) or not name:
                problems.append("bad metadata: %r" % (ev,))
            elif ev["name"] == "process_name":
                process_names.append(name)
                pids.add(ev.get("pid"))
            elif ev.get("tid") in thread_names:
                problems.append("two names for tid %r" % ev.get("tid"))
            else:
                thread_names[ev.get("tid")] = name
                pids.add(ev.get("pid"))
        else:
            problems.append("unexpected event: %r" % (ev,))
    if len(process_names) != 1:
        problems.append("%d process_name events" % len(process_names))
    elif args.process is not None and process_names[0] != args.process:
        problems.append("process named %r, not %r" % (process_names[0], args.process))
    if len(pids) > 1 or (args.pid is not None and pids - {args.pid}):
        problems.append("pids %r" % sorted(pids))
    for tid in by_tid:
        if tid not in thread_names:
            problems.append("no thread_name for tid %r" % tid)
    for tid, name in args.thread:
        if thread_names.get(int(tid)) != name:
            problems.append("tid %s named %r, not %r" % (tid, thread_names.get(int(tid)), name))
    for events in by_tid.values():
        check_nesting(events, problems)

    counts = collections.Counter(ev["name"] for evs in by_tid.values() for ev in evs)
    if args.count:
        want = {name: int(n) for name, n in args.count}
        for name in sorted(set(want) | set(counts)):
            if counts.get(name, 0) != want.get(name, 0):
                problems.append("%r: %d events, expected %d" % (
                    name, counts.get(name, 0), want.get(name, 0)))
    if args.min_us is not None and min_us != args.min_us:
        problems.append("pyuprof_min_us %s, expected %s" % (min_us, args.min_us))
    if args.left_out is not None and left_out != args.left_out:
        problems.append("pyuprof_calls_left_out %d, expected %d" % (left_out, args.left_out))
    if args.prof:
        calls, names = prof_calls(args.prof)
        counts = collections.Counter(prof_key(ev, names) for evs in by_tid.values()
                                     for ev in evs)
        for name in sorted(set(calls) | set(counts)):
            n, c = counts.get(name, 0), calls.get(name, 0)
            if n != c if min_us == 0 else n > c:
                problems.append("%r: %d events, %d calls in the .prof" % (name, n, c))
        if sum(counts.values()) + left_out != sum(calls.values()):
            problems.append("%d events + %d left out != %d calls in the .prof" % (
                sum(counts.values()), left_out, sum(calls.values())))

    if problems:
        for p in problems[:40]:
            print(p, file=sys.stderr)
        sys.exit(1)
    print("events %d left_out %d threads %d" % (sum(counts.values()), left_out, len(by_tid)))


if __name__ == "__main__":
    main()
