"""The thread names a fixture wrote against those an output of pyuprof's gives
(tests/thread_names.bats)."""
import json


def fixture_threads(path):
    """{tid: name} from the fixture's "thread TID NAME" lines in path."""
    want = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("thread "):
                _, tid, name = line.rstrip("\n").split(" ", 2)
                want[int(tid)] = name
    return want


def trace_mismatches(path, want):
    """What the Chrome trace at path names otherwise than want, one line each."""
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    got = {e["tid"]: e["args"]["name"] for e in events
           if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return ["trace: tid %d is %r, not %r" % (t, got.get(t), n) for t, n in want.items()
            if got.get(t) != n]
