# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check the names pyuprof's pictures and trace give a fixture's functions.

    qualnames_check.py PROF FIXTURE.py --collapsed C.txt --svg G.svg --flamegraph F.svg
                       --trace T.json

Run it with the interpreter that ran the fixture. The truth comes from that interpreter's
own compiler: FIXTURE.py compiled, its code objects walked, each (first line, co_name) mapped
to co_qualname (3.11+) or, before 3.11, to co_name (pyuprof shows co_name there). Checked:
the .prof keeps co_name for every fixture function (cProfile's key); every frame, box and
event of a fixture function carries the expected name, in the collapsed stacks, the call
graph, the flame graph and the trace; on 3.11+ at least one name shown is qualified (else the
fixture proves nothing). Prints "checked N names (Q qualified)"; exits 1 with the reasons.
"""
import argparse
import json
import os
import pstats
import re
import sys
import xml.etree.ElementTree as ET

S = "{http://www.w3.org/2000/svg}"


def truth(path):
    """(firstlineno, co_name) -> the name pyuprof should show"""
    names = {}
    todo = [compile(open(path, encoding="utf-8").read(), path, "exec")]
    while todo:
        code = todo.pop()
        names[(code.co_firstlineno, code.co_name)] = getattr(code, "co_qualname", code.co_name)
        todo += [c for c in code.co_consts if hasattr(c, "co_code")]
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prof")
    ap.add_argument("fixture")
    ap.add_argument("--collapsed", required=True)
    ap.add_argument("--svg", required=True)
    ap.add_argument("--flamegraph", required=True)
    ap.add_argument("--trace", required=True)
    args = ap.parse_args()
    fixture = os.path.abspath(args.fixture)
    want = truth(fixture)
    problems, shown = [], []

    # the .prof: cProfile's keys, co_name
    by_line = {}
    for (f, line, name), v in pstats.Stats(args.prof).stats.items():
        if f != fixture:
            continue
        if (line, name) not in want:
            problems.append(".prof: %s:%d %r is no code object's co_name" % (f, line, name))
        by_line.setdefault(line, set()).add(want.get((line, name), name))
    if not by_line:
        sys.exit("no function of %s in %s" % (fixture, args.prof))

    seen = dict.fromkeys(("collapsed", "call graph", "flame graph", "trace"), 0)

    def expect(where, line, label):
        shown.append(label)
        seen[where] += 1
        if label not in by_line.get(line, ()):
            problems.append("%s: line %d shown as %r, expected one of %r"
                            % (where, line, label, sorted(by_line.get(line, ()))))

    frame_re = re.compile(r"(.*) \((.*):(-?[0-9]+)\)")
    for text in open(args.collapsed, encoding="utf-8"):
        for frame in text.rsplit(" ", 1)[0].split(";"):
            m = frame_re.fullmatch(frame)
            if m and m.group(2) == fixture:
                expect("collapsed", int(m.group(3)), m.group(1))

    base = os.path.basename(fixture)
    for g in ET.parse(args.svg).getroot().iter(S + "g"):
        texts = [t.text or "" for t in g.iter(S + "text")]
        if g.get("class") == "node" and len(texts) == 6 and texts[1].startswith(base + ":"):
            expect("call graph", int(texts[1].rsplit(":", 1)[1]), texts[0])

    for g in ET.parse(args.flamegraph).getroot().iter(S + "g"):
        title = g.find(S + "title")
        if g.get("data-d") is None or title is None or g.get("class") == "r":
            continue
        lines = title.text.split("\n")
        if lines[1].rsplit(":", 1)[0] == fixture:
            expect("flame graph", int(lines[1].rsplit(":", 1)[1]), lines[0])

    with open(args.trace, encoding="utf-8") as f:
        for ev in json.load(f)["traceEvents"]:
            if ev.get("ph") == "X" and ev["args"]["file"] == fixture:
                suffix = " (%s:%d)" % (os.path.basename(fixture), ev["args"]["line"])
                if not ev["name"].endswith(suffix):
                    problems.append("trace: %r does not end in %r" % (ev["name"], suffix))
                expect("trace", ev["args"]["line"], ev["name"][:-len(suffix)])

    qualified = [s for s in shown if "." in s]
    if sys.version_info >= (3, 11) and not qualified:
        problems.append("no qualified name shown: the fixture proves nothing")
    if sys.version_info < (3, 11) and qualified:
        problems.append("qualified names before 3.11: %r" % sorted(set(qualified)))
    problems += ["%s: no function of the fixture" % w for w, n in seen.items() if not n]
    for p in problems[:40]:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("checked %d names (%d qualified)" % (len(shown), len(qualified)))


if __name__ == "__main__":
    main()
