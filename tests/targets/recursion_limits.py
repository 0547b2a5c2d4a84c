"""Where recursion stops: the same numbers natively and recorded (tests/harm.bats).

    python recursion_limits.py            print one JSON line of results and exit
    python recursion_limits.py --serve    print "ready", then one line per line read on stdin
                                          ("quit" ends it)
    python recursion_limits.py --pep523   the same as the first under a bare PEP 523 hook
                                          (tests/targets/ext/pep523hook.c, built by the test
                                          into $PEP523_DIR): what any hook changes
    python recursion_limits.py --ccalls   the same under a watcher of C calls that does
                                          nothing (tests/targets/ext/ccall_watch.c, there
                                          too): what CPython changes for anyone who watches
                                          them (3.11-3.13: calls it no longer specialises),
                                          which pyuprof's page gives back and cProfile's
                                          builtins=True does not (--pep523 --ccalls: both)

How deep each kind of recursion gets at the default limit (and a plain one at 3000): kinds
that CPython 3.11+ runs inline (calls of every form, generators driven by for and yield from,
awaits, a Python __getitem__), which take none of 3.12+'s per-thread C recursion budget
natively, and kinds that go through C (a builtin calling back, a class call, __call__,
lru_cache), which do; builtins that 3.11+ call through a specialised instruction that takes
no unit of the budget (next, len, isinstance, sorted's key, list.sort), and 3.13's inline
class call (__init__), whose budgets move for any watcher of C calls. Whether compiling a deeply nested expression raises RecursionError
(CPython's own test_compile/test_ast cases: C recursion under that budget), and a recursion
that never enters a Python frame (test_descr's __call__ loop), which must raise RecursionError,
never crash. A property's getter is left out: natively its LOAD_ATTR runs it through C until
specialised and inline after, so where it stops depends on the specialiser's warm-up.

The kinds (recursion_kinds.py) are compiled anew for every answer: where a recursion stops
depends on whether CPython has specialised the instructions it runs, and their state is kept in
the code object. After any PEP 523 hook has been set for a while, 3.12 falls back to the generic
FOR_ITER for generators and backs off from specialising it again, so for a while a recursion of
generators spends C budget it does not in a fresh process (shown without pyuprof by
bench/hook_aftereffect.py). Fresh code measures the process's own limits, which must not move.
"""
import json
import os
import sys

KINDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recursion_kinds.py")


def compiles(n):
    try:
        compile("a" + "()" * n, "<nested>", "exec")
        return "ok"
    except RecursionError:
        return "RecursionError"


def c_only():
    class A:
        pass

    A.__call__ = A()
    try:
        A()()
    except RecursionError:
        return "RecursionError"
    return "returned"


def results():
    with open(KINDS) as f:
        kinds = {}
        exec(compile(f.read(), KINDS, "exec"), kinds)
    depth = kinds["depth"]
    out = {name[2:]: depth(kind) for name, kind in sorted(kinds.items())
           if name.startswith("k_")}
    out["call_3000"] = depth(kinds["k_call"], 3000)
    # (3.12, 3.13: where the C recursion budget, not the limit, stops it)
    out["next_5000"] = depth(kinds["k_next"], 5000)
    out["compile"] = [compiles(n) for n in (1000, 2900, 3100, 5000, 20000)]
    out["c_only"] = c_only()
    return out


if set(sys.argv[1:]) & {"--pep523", "--ccalls"}:
    sys.path.insert(0, os.environ["PEP523_DIR"])
    if "--pep523" in sys.argv:
        import pep523hook  # noqa: E402

        pep523hook.enable()
    if "--ccalls" in sys.argv:
        import ccall_watch  # noqa: E402

        ccall_watch.enable()
    print(json.dumps(results()))
elif len(sys.argv) > 1 and sys.argv[1] == "--serve":
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        print(json.dumps(results()), flush=True)
else:
    print(json.dumps(results()))
