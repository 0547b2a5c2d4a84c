# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check `pyuprof dump --json` and its text form against what the target says of itself.

    dump_check.py DUMP.json DUMP.txt FIXTURE.json

FIXTURE.json is what tests/targets/dump_blocked.py wrote: per kernel tid its threading name
and its stack from traceback.extract_stack() (outermost first), taken on the line it then
blocks on. For every such thread the dump must have the thread (same tid), its name, and
its frames, read outermost first, must start with exactly that stack (name, file, line),
with the Event.wait frames of threading.py above it. The text form must show the same
threads and frames the way py-spy dump prints them. Exit 0 if all holds, 1 otherwise.
"""
import json
import sys


def main():
    dump = json.load(open(sys.argv[1]))
    text = open(sys.argv[2]).read()
    truth = json.load(open(sys.argv[3]))
    bad = []
    by_tid = {t["os_thread_id"]: t for t in dump}
    for tid, want in truth["threads"].items():
        t = by_tid.get(int(tid))
        if t is None:
            bad.append("thread %s (%s) is not in the dump" % (tid, want["name"]))
            continue
        if t["pid"] != truth["pid"]:
            bad.append("thread %s: pid %s, not %s" % (tid, t["pid"], truth["pid"]))
        if t["thread_name"] != want["name"]:
            bad.append("thread %s: named %r, not %r" % (tid, t["thread_name"], want["name"]))
        got = [[f["name"], f["filename"], f["line"]] for f in reversed(t["frames"])]
        n = len(want["stack"])
        if got[:n] != want["stack"]:
            bad.append("thread %s (%s): frames\n  %s\nnot\n  %s"
                       % (tid, want["name"], got, want["stack"]))
        above = got[n:]
        if not above or any(f[0] != "wait" or not f[1].endswith("threading.py")
                            for f in above):
            bad.append("thread %s: above its own frames %s, not Event.wait's" % (tid, above))
        header = 'Thread %s (%s): "%s"\n' % (
            tid, ("active" if t["active"] else "idle") + ("+gil" if t["owns_gil"] else ""),
            want["name"])
        lines = "".join("    %s (%s:%d)\n" % (f["name"], f["filename"], f["line"])
                        for f in t["frames"])
        if header + lines not in text:
            bad.append("thread %s: the text form lacks\n%s%s" % (tid, header, lines))
    if bad:
        sys.exit("\n".join(bad))
    print("dump: %d threads as they say themselves" % len(truth["threads"]))


main()
