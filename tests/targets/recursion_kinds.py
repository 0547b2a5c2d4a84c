"""The kinds of recursion tests/targets/recursion_limits.py measures (compiled anew each time)."""
import functools
import sys

# 3.15 checks no recursion limit on a call through f(*args) that it runs inline: natively such
# a recursion goes on until memory runs out. k_star stops itself past this depth, and depth()
# reports it as "unbounded".
UNBOUNDED = 100000


class Unbounded(Exception):
    pass


def depth(kind, limit=None):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit or old)
    reached = [0]
    try:
        kind(reached)
    except RecursionError:
        pass
    except Unbounded:
        return "unbounded"
    finally:
        sys.setrecursionlimit(old)
    return reached[0]


def k_call(d):
    def r(n):
        d[0] = n
        r(n + 1)
    r(1)


def k_star(d):
    def r(n):
        d[0] = n
        if n > UNBOUNDED:
            raise Unbounded
        r(*(n + 1,))
    r(1)


def k_kw(d):
    def r(n=0):
        d[0] = n
        r(n=n + 1)
    r(1)


def k_method(d):
    class A:
        def r(self, n):
            d[0] = n
            self.r(n + 1)
    A().r(1)


def k_genfor(d):
    def g(n):
        d[0] = n
        for x in g(n + 1):
            yield x
        yield n
    list(g(1))


def k_yieldfrom(d):
    def g(n):
        d[0] = n
        yield from g(n + 1)
        yield n
    list(g(1))


def k_await(d):
    async def c(n):
        d[0] = n
        await c(n + 1)
    try:
        c(1).send(None)
    except StopIteration:
        pass


def k_getitem(d):
    class A:
        def __getitem__(self, n):
            d[0] = n
            return self[n + 1]
    A()[1]


def k_init(d):
    class A:
        def __init__(self, n):
            d[0] = n
            A(n + 1)
    A(1)


def k_call_slot(d):
    class A:
        def __call__(self, n):
            d[0] = n
            self(n + 1)
    A()(1)


def k_map(d):
    def r(n):
        d[0] = n
        return list(map(r, [n + 1]))
    r(1)


def k_sorted(d):
    def r(n):
        d[0] = n
        return sorted([n + 1], key=r)
    r(1)


def k_lru(d):
    @functools.lru_cache(None)
    def r(n):
        d[0] = n
        return r(n + 1)
    r(1)


def k_partial(d):
    def r(n):
        d[0] = n
        return functools.partial(r, n + 1)()
    r(1)


# Builtins that CPython 3.11+ calls through a specialised instruction (Python/specialize.c)
# that takes no unit of recursion budget, where its generic call, which watching C calls
# forces, takes one (tramp_code.S: .Lcf_units): a builtin of METH_FASTCALL, len(),
# isinstance(), a method descriptor of METH_FASTCALL | METH_KEYWORDS called without keywords.
def k_next(d):
    class It:
        n = 0

        def __next__(self):
            self.n += 1
            d[0] = self.n
            return next(self)
    next(It())


def k_len(d):
    class A:
        n = 0

        def __len__(self):
            self.n += 1
            d[0] = self.n
            return len(self)
    len(A())


def k_isinstance(d):
    class M(type):
        n = 0

        def __instancecheck__(cls, obj):
            M.n += 1
            d[0] = M.n
            return isinstance(obj, cls)
    isinstance(1, M("A", (), {}))


def k_sort_method(d):
    class A:
        n = 0

        def __lt__(self, other):
            A.n += 1
            d[0] = A.n
            [self, other].sort()
            return False
    [A(), A()].sort()
