# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A compiler-shaped demo workload for pyuprof (pure Python, standard library only, 3.8-3.13).

Reads a fixed, sorted list of the standard library's own modules and runs each through a small
pipeline of passes: tokenize, parse, analyse (a NodeVisitor subclass that recurses over the AST),
build symbol tables (local/free/global names per scope), fold constant expressions (a recursive
evaluator fed by a recursive generator), compile, and measure the bytecode (a recursive walk over
nested code objects). The passes form a class hierarchy and feed each other through
generators, so a profile shows several layers of user functions, recursion and generator resumes.
"""

import argparse
import ast
import io
import operator
import os
import sys
import time
import tokenize
import warnings

# Present in every CPython 3.8-3.13 (checked); sorted so the selection is deterministic.
MODULES = sorted([
    "_pydecimal", "_pyio", "argparse", "ast", "calendar", "collections/__init__",
    "configparser", "dataclasses", "datetime", "difflib", "doctest",
    "email/_header_value_parser", "email/message", "enum", "fractions", "ftplib", "gettext",
    "http/client", "http/cookiejar", "imaplib", "inspect", "ipaddress", "logging/__init__",
    "logging/handlers", "mailbox", "optparse", "pickle", "pickletools", "pydoc", "shutil",
    "statistics", "subprocess", "tarfile", "typing", "unittest/case", "urllib/parse",
    "urllib/request",
])


def stdlib_dir():
    # os.py sits at the top of the pure-Python standard library on every layout we run on
    # (pyenv builds and Debian's /usr/lib/python3.X alike).
    return os.path.dirname(os.__file__)


def iter_sources(count):
    """Yields (name, path) for the first count modules of MODULES that exist here."""
    base = stdlib_dir()
    found = 0
    for name in MODULES:
        if found >= count:
            return
        path = os.path.join(base, name + ".py")
        if os.path.isfile(path):
            found += 1
            yield name, path


class SourceUnit:
    """One module as it moves through the pipeline; passes fill in the fields."""

    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.data = b""
        self.text = ""
        self.tree = None
        self.code = None
        self.stats = {}

    def add(self, key, value=1):
        self.stats[key] = self.stats.get(key, 0) + value


class Pass:
    """A pipeline stage. Subclasses implement run(); process() adds the bookkeeping."""

    name = "pass"

    def __init__(self):
        self.seconds = 0.0

    def process(self, unit):
        # Timed natively, so the profile's cumulative times can be compared with these.
        start = time.perf_counter()
        self.run(unit)
        self.seconds += time.perf_counter() - start

    def run(self, unit):
        raise NotImplementedError


class ReadPass(Pass):
    name = "read"

    def run(self, unit):
        with open(unit.path, "rb") as f:
            unit.data = f.read()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(unit.data).readline)
        unit.text = unit.data.decode(encoding)
        unit.add("lines", unit.text.count("\n"))


class TokenPass(Pass):
    name = "tokenize"
    SKIP = frozenset([tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                      tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER])

    def tokens(self, unit):
        """Generator: the tokens a parser would care about."""
        for tok in tokenize.tokenize(io.BytesIO(unit.data).readline):
            if tok.type not in self.SKIP:
                yield tok

    def run(self, unit):
        depth = max_depth = 0
        for tok in self.tokens(unit):
            unit.add("tokens")
            if tok.type == tokenize.NAME:
                unit.add("names")
            elif tok.type == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                    max_depth = max(max_depth, depth)
                elif tok.string in ")]}":
                    depth -= 1
        unit.add("bracket_depth", max_depth)


class ParsePass(Pass):
    name = "parse"

    def run(self, unit):
        unit.tree = ast.parse(unit.text, filename=unit.path)


class StatsVisitor(ast.NodeVisitor):
    """Counts definitions, calls and nesting; recursion comes from generic_visit."""

    def __init__(self, unit):
        self.unit = unit
        self.depth = 0
        self.max_depth = 0
        self.scopes = []

    def generic_visit(self, node):
        self.depth += 1
        if self.depth > self.max_depth:
            self.max_depth = self.depth
        super().generic_visit(node)
        self.depth -= 1

    def define(self, name):
        self.unit.add("defined")
        if self.scopes:
            self.unit.add("nested_defs")

    def visit_scope(self, node):
        self.define(node.name)
        self.scopes.append(node.name)
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = visit_scope
    visit_AsyncFunctionDef = visit_scope
    visit_ClassDef = visit_scope

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self.define(node.id)

    def visit_Call(self, node):
        self.unit.add("calls")
        if isinstance(node.func, ast.Attribute):
            self.unit.add("method_calls")
        self.generic_visit(node)


class AnalysisPass(Pass):
    name = "analyse"

    def run(self, unit):
        visitor = StatsVisitor(unit)
        visitor.visit(unit.tree)
        unit.add("max_nesting", visitor.max_depth)


class NotConstant(Exception):
    pass


class ConstantFolder:
    """Evaluates small constant expressions recursively, the way a peephole optimiser would."""

    BINOPS = {
        ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
        ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_,
        ast.BitAnd: operator.and_, ast.BitXor: operator.xor, ast.Div: operator.truediv,
    }
    UNARYOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
                ast.Not: operator.not_}

    def fold(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp):
            return self.fold_binop(node)
        if isinstance(node, ast.UnaryOp):
            op = self.UNARYOPS.get(type(node.op))
            if op is None:
                raise NotConstant
            return op(self.fold(node.operand))
        if isinstance(node, ast.Tuple):
            return tuple(self.fold(elt) for elt in node.elts)
        raise NotConstant

    def fold_binop(self, node):
        op = self.BINOPS.get(type(node.op))
        if op is None:
            raise NotConstant
        left = self.fold(node.left)
        right = self.fold(node.right)
        self.check_size(node.op, left, right)
        return op(left, right)

    @staticmethod
    def check_size(op, left, right):
        # Refuse what could blow up, as CPython's own optimiser does for 2**10**9 or "x" * 10**9.
        if isinstance(op, (ast.Pow, ast.LShift)) and isinstance(right, int) and right > 128:
            raise NotConstant
        if isinstance(op, ast.Mult) and isinstance(left, (str, bytes, tuple)) and right > 4096:
            raise NotConstant


class FoldPass(Pass):
    name = "fold"

    def __init__(self):
        super().__init__()
        self.folder = ConstantFolder()

    def candidates(self, node, in_expr=False):
        """Recursive generator: outermost BinOp/UnaryOp nodes (their operands fold with them)."""
        for child in ast.iter_child_nodes(node):
            is_expr = isinstance(child, (ast.BinOp, ast.UnaryOp))
            if is_expr and not in_expr:
                yield child
            yield from self.candidates(child, is_expr)

    def run(self, unit):
        for node in self.candidates(unit.tree):
            unit.add("expressions")
            try:
                self.folder.fold(node)
            except (NotConstant, ArithmeticError, TypeError, ValueError):
                continue
            unit.add("folded")


class Scope:
    """A symbol table entry: names bound here and names looked up here."""

    kind = "scope"

    def __init__(self, name, parent):
        self.name = name
        self.parent = parent
        self.bound = set()
        self.used = set()
        self.declared_global = set()

    def bind(self, name):
        self.bound.add(name)

    def use(self, name):
        self.used.add(name)

    def visible(self):
        """Names a nested function can see from here."""
        return self.bound

    def resolve(self, name):
        """Where a name used in this scope comes from: 'local', 'free' or 'global'."""
        if name in self.declared_global:
            return "global"
        if name in self.bound:
            return "local"
        scope = self.parent
        while scope is not None and scope.kind != "module":
            if name in scope.visible():
                return "free"
            scope = scope.parent
        return "global"


class ModuleScope(Scope):
    kind = "module"

    def resolve(self, name):
        return "global"


class FunctionScope(Scope):
    kind = "function"


class ClassScope(Scope):
    kind = "class"

    def visible(self):
        # Class bodies do not form closures: methods cannot see class-level names.
        return ()


class SymbolVisitor(ast.NodeVisitor):
    """Builds Scope objects the way CPython's symtable pass does, in miniature."""

    def __init__(self):
        self.scope = ModuleScope("<module>", None)
        self.scopes = [self.scope]

    def enter(self, cls, name, parts):
        outer = self.scope
        self.scope = cls(name, outer)
        self.scopes.append(self.scope)
        for part in parts:
            if isinstance(part, list):
                for node in part:
                    self.visit(node)
            else:
                self.visit(part)
        self.scope = outer

    def visit_FunctionDef(self, node):
        # Decorators and defaults run in the enclosing scope; arguments and body in the new one.
        self.scope.bind(node.name)
        self.visit_outer(node.decorator_list, node.args.defaults, node.args.kw_defaults)
        self.enter(FunctionScope, node.name, [node.args.posonlyargs, node.args.args,
                                              node.args.kwonlyargs, node.body])

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit_outer(node.args.defaults, node.args.kw_defaults)
        self.enter(FunctionScope, "<lambda>", [node.args.posonlyargs, node.args.args,
                                               node.args.kwonlyargs, node.body])

    def visit_ClassDef(self, node):
        self.scope.bind(node.name)
        self.visit_outer(node.decorator_list, node.bases, node.keywords)
        self.enter(ClassScope, node.name, [node.body])

    def visit_outer(self, *lists):
        for nodes in lists:
            for node in nodes:
                if node is not None:  # kw_defaults holds None for keyword-only args without one
                    self.visit(node)

    def visit_arg(self, node):
        self.scope.bind(node.arg)

    def visit_Global(self, node):
        self.scope.declared_global.update(node.names)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.scope.use(node.id)
        else:
            self.scope.bind(node.id)

    def visit_alias(self, node):
        self.scope.bind((node.asname or node.name).partition(".")[0])


class ScopePass(Pass):
    name = "symtable"

    def run(self, unit):
        visitor = SymbolVisitor()
        visitor.visit(unit.tree)
        for scope in visitor.scopes:
            unit.add("scopes")
            for name in sorted(scope.used):
                unit.add("refs_" + scope.resolve(name))


class CompilePass(Pass):
    name = "compile"

    def run(self, unit):
        with warnings.catch_warnings():
            # Some modules trip version-specific SyntaxWarnings; they are not our concern.
            warnings.simplefilter("ignore")
            unit.code = compile(unit.tree, unit.path, "exec")
            # What -OO would save: asserts and docstrings go, from the source this time.
            stripped = compile(unit.text, unit.path, "exec", optimize=2)
        size, count = self.measure(unit.code)
        unit.add("code_objects", count)
        unit.add("bytecode", size)
        unit.add("bytecode_oo", self.measure(stripped)[0])

    def measure(self, code):
        """Recursive: (bytes of bytecode, number of code objects) for code and its children."""
        size, count = len(code.co_code), 1
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                s, c = self.measure(const)
                size += s
                count += c
        return size, count


class Pipeline:
    def __init__(self, passes):
        self.passes = passes

    def run(self, sources):
        units = []
        for name, path in sources:
            unit = SourceUnit(name, path)
            for p in self.passes:
                p.process(unit)
            units.append(unit)
        return units


def summarise(units):
    total = {}
    for unit in units:
        for key, value in unit.stats.items():
            if key in ("max_nesting", "bracket_depth"):
                total[key] = max(total.get(key, 0), value)
            else:
                total[key] = total.get(key, 0) + value
    return total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=30, help="modules per round (default 30)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    args = ap.parse_args(argv)
    if args.files < 1 or args.repeat < 1:
        ap.error("--files and --repeat must be at least 1")

    start = time.perf_counter()
    pipeline = Pipeline([ReadPass(), TokenPass(), ParsePass(), AnalysisPass(), ScopePass(),
                         FoldPass(), CompilePass()])
    units = []
    for _ in range(args.repeat):
        units = pipeline.run(iter_sources(args.files))
    total = summarise(units)
    elapsed = time.perf_counter() - start

    print("compiled %d modules from %s, %d round(s), Python %s" % (
        len(units), stdlib_dir(), args.repeat, sys.version.split()[0]))
    print("  %d lines, %d tokens, %d definitions, %d calls (%d method calls)" % (
        total["lines"], total["tokens"], total["defined"], total["calls"],
        total["method_calls"]))
    print("  max AST nesting %d, max bracket depth %d, %d of %d expressions folded" % (
        total["max_nesting"], total["bracket_depth"], total.get("folded", 0),
        total.get("expressions", 0)))
    print("  %d scopes; names resolve %d local, %d free, %d global" % (
        total["scopes"], total.get("refs_local", 0), total.get("refs_free", 0),
        total.get("refs_global", 0)))
    print("  %d code objects, %d bytes of bytecode (%d with -OO), %.2f s" % (
        total["code_objects"], total["bytecode"], total["bytecode_oo"], elapsed))
    print("  passes: " + ", ".join("%s %.2f s" % (p.name, p.seconds) for p in pipeline.passes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
