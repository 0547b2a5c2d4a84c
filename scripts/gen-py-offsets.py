#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Regenerates and checks the CPython layout table of user/target/py_layouts.c.

Reads the DWARF of the pyenv builds ($(pyenv root)/versions/3.{8..13}.*) through
`gdb -batch -ex 'ptype /o ...'`, cross-checks every offset with a second gdb expression, and
prints the table entries. 3.14 and 3.15 come from Debian's builds in the sid root that
scripts/install-sid-root.sh makes, whose debug symbols are in no archive this machine reaches:
their DWARF is that of an object compiled here from the same packages' internal headers
(libpython3.X-dev), with the release build's pyconfig.h. Builds without DWARF (Debian's
/usr/bin/python3.11, and the 3.14 and 3.15 executables and libpython of the sid root) are checked
from their machine code (the exported one-line accessors, cpython-internals.md 3 and 8.4), from
their static data (PyCode_Type.tp_name, the deep-frozen code objects of 3.11/3.12) and, 3.13+,
from the offsets the interpreter publishes itself (_Py_DebugOffsets, whose positions in
py_layouts.c are checked against the DWARF too). The same machine-code checks also run on the
pyenv builds, where DWARF says what they must find.

    gen-py-offsets.py              print the table array
    gen-py-offsets.py --update     rewrite the table array in user/target/py_layouts.c
    gen-py-offsets.py --check      compare user/target/py_layouts.c with the builds; exit 1 on mismatch
    gen-py-offsets.py --check --binary /path/python3.X   also check that DWARF-less build

Standard library only; runs on python3 >= 3.8. Needs gdb on PATH, and gcc for 3.14 and 3.15.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap

MINORS = range(8, 16)
# Minors read from a sid root's headers rather than a pyenv build's DWARF (see above)
HEADER_MINORS = (14, 15)
DEFAULT_BINARIES = ["/usr/bin/python3.11"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE_FILE = os.path.join(REPO, "user", "target", "py_layouts.c")
LAYOUTS_H = os.path.join(REPO, "user", "target", "py_layouts.h")
SID_ROOT = os.environ.get("PYUPROF_SID_ROOT") or os.path.join(
    os.environ.get("PYUPROF_ROOTS") or "/var/lib/pyuprof/roots", "sid")


CALLER_FROM_F_BACK, CALLER_FROM_CFRAME, CALLER_FROM_TSTATE = 0, 1, 2
CALLER_MODE_NAMES = {0: "CALLER_FROM_F_BACK", 1: "CALLER_FROM_CFRAME", 2: "CALLER_FROM_TSTATE"}

IFRAME = "struct _PyInterpreterFrame"

# Offset fields: (entry field, in struct py_offsets?, {first minor: (type, member path)}, why 0).
# The mapping applies from its key up to the next key; (None, None) means "not in the table",
# for the reason given last (None, reason): for this one.
OFFSETS = [
    ("frame_code", True, {8: ("PyFrameObject", "f_code"), 11: (IFRAME, "f_code"),
                          13: (IFRAME, "f_executable")}, None),
    ("frame_back", True, {8: ("PyFrameObject", "f_back"), 11: (IFRAME, "previous")}, None),
    ("frame_owner", True, {8: (None, None), 11: (IFRAME, "owner")},
     "no _PyInterpreterFrame before 3.11"),
    ("PyCodeObject_co_flags", True, {8: ("PyCodeObject", "co_flags")}, None),
    ("PyCodeObject_co_firstlineno", True, {8: ("PyCodeObject", "co_firstlineno")}, None),
    ("PyCodeObject_co_filename", True, {8: ("PyCodeObject", "co_filename")}, None),
    ("PyCodeObject_co_name", True, {8: ("PyCodeObject", "co_name")}, None),
    # 3.11: where the next frame pushed on the thread's data stack starts (next_frame)
    ("PyCodeObject_co_nlocalsplus", True,
     {8: (None, None), 11: ("PyCodeObject", "co_nlocalsplus"), 12: (None, None)},
     "used on 3.11 only (next_frame)"),
    ("PyCodeObject_co_stacksize", True,
     {8: (None, None), 11: ("PyCodeObject", "co_stacksize"), 12: (None, None)},
     "used on 3.11 only (next_frame)"),
    ("PyUnicode_length", True, {8: ("PyASCIIObject", "length")}, None),
    ("PyUnicode_state", True, {8: ("PyASCIIObject", "state")}, None),
    ("PyASCIIObject_size", True, {8: ("PyASCIIObject", "sizeof")}, None),
    ("PyCompactUnicodeObject_size", True, {8: ("PyCompactUnicodeObject", "sizeof")}, None),
    ("PyThreadState_interp", True, {8: ("PyThreadState", "interp")}, None),
    ("PyThreadState_cframe", True, {8: (None, None), 11: ("PyThreadState", "cframe"),
                                    13: (None, None)},
     "frames hang off cframe in 3.11 and 3.12 only"),
    ("PyCFrame_current_frame", True, {8: (None, None), 11: ("struct _PyCFrame", "current_frame"),
                                      13: (None, None)},
     "_PyCFrame holds the frame in 3.11 and 3.12 only"),
    ("PyThreadState_current_frame", True, {8: (None, None),
                                           13: ("PyThreadState", "current_frame")},
     "tstate->current_frame is 3.13+"),
    ("PyInterpreterState_eval_frame", True, {8: (None, None),
                                             11: ("PyInterpreterState", "eval_frame")},
     "never written: no inlining, so no deopt, before 3.11"),
    ("PyInterpreterState_hook", False, {8: ("PyInterpreterState", "eval_frame")},
     "the same slot on every version: where the probe trampoline is set"),
    ("PyObject_ob_type", False, {8: ("PyObject", "ob_type")}, None),
    ("PyTypeObject_tp_name", False, {8: ("PyTypeObject", "tp_name")}, None),
    ("PyRuntime_interpreters_head", False, {8: ("_PyRuntimeState", "interpreters.head")}, None),
    ("PyRuntime_main_interpreter", False, {8: (None, None),
                                           11: ("_PyRuntimeState", "_main_interpreter")},
     "the main interpreter is a heap object before 3.11"),
    ("PyInterpreterState_next", False, {8: ("PyInterpreterState", "next")}, None),
    ("PyInterpreterState_threads_head", False, {8: ("PyInterpreterState", "tstate_head"),
                                                11: ("PyInterpreterState", "threads.head")},
     None),
    ("PyThreadState_next", False, {8: ("PyThreadState", "next")}, None),
    ("PyThreadState_native_thread_id", False, {8: (None, None),
                                               11: ("PyThreadState", "native_thread_id")},
     "no native_thread_id before 3.11"),
    ("PyThreadState_frame", False, {8: ("PyThreadState", "frame"), 11: (None, None)},
     "no tstate->frame since 3.11"),
    ("PyInterpreterFrame_size", False, {8: (None, None), 11: (IFRAME, "sizeof")},
     "no _PyInterpreterFrame before 3.11"),
    ("PyCodeObject_co_qualname", False, {8: (None, None), 11: ("PyCodeObject", "co_qualname")},
     "no co_qualname before 3.11"),
    ("PyThreadState_thread_id", False, {8: ("PyThreadState", "thread_id")}, None),
    # 3.13's specialised class call (CALL_ALLOC_AND_ENTER_INIT) runs __init__ inline
    ("PyHeapTypeObject_spec_cache_init", False,
     {8: (None, None), 13: ("PyHeapTypeObject", "_spec_cache.init"),
      14: (None, "3.14+ check for a hook before a class call's __init__ inline (_CHECK_PEP_523)")},
     "no inlined class call before 3.13"),
    ("PyFunctionObject_func_code", False,
     {8: (None, None), 13: ("PyFunctionObject", "func_code"),
      14: (None, "only needed for the 3.13 class-call hole")},
     "only needed for the 3.13 class-call hole"),
    # 3.12+: a number each code object gets at its creation from a counter that only grows
    # (0 once it wrapped), which tells a code object from an earlier one at its address
    # (tramp_code.S's .Lslot)
    ("PyCodeObject_co_version", False,
     {8: (None, None), 12: ("PyCodeObject", "co_version")}, "no co_version before 3.12"),
    # 3.12+: the C recursion budget each activation of the eval function takes, and the
    # Python depth, which the trampoline reads to hand that budget back (tramp.c)
    ("PyThreadState_py_recursion_remaining", False,
     {8: (None, None), 12: ("PyThreadState", "py_recursion_remaining"),
      14: (None, "no C recursion budget since 3.14 (the C stack is checked by its address)")},
     "no C recursion budget before 3.12"),
    ("PyThreadState_py_recursion_limit", False,
     {8: (None, None), 12: ("PyThreadState", "py_recursion_limit"),
      14: (None, "no C recursion budget since 3.14 (the C stack is checked by its address)")},
     "no C recursion budget before 3.12"),
    ("PyThreadState_c_recursion_remaining", False,
     {8: (None, None), 12: ("PyThreadState", "c_recursion_remaining"),
      14: (None, "no C recursion budget since 3.14 (the C stack is checked by its address)")},
     "no C recursion budget before 3.12"),
    # 3.12+: a generator's frame state, read where its frame returns (the await returns that
    # cost more under any hook: tramp.c)
    ("PyGenObject_gi_frame_state", False,
     {8: (None, None), 12: ("PyGenObject", "gi_frame_state")},
     "used on 3.12+ only (an await's return)"),
    ("PyGenObject_gi_iframe", False, {8: (None, None), 12: ("PyGenObject", "gi_iframe")},
     "used on 3.12+ only (an await's return)"),
    # C functions (include/cfuncs.h). <= 3.11: the page's profile function in each thread's
    # profile slot, the flag that turns CPython's tracing on (the thread state's, or from 3.10
    # the running activation's frame of C, whose first member it is), the thread holding the
    # GIL, and the interpreter frame behind a frame object (3.11)
    ("PyThreadState_c_profilefunc", False,
     {8: ("PyThreadState", "c_profilefunc"), 12: (None, None)},
     "3.12+: C calls come from a sys.monitoring tool"),
    ("PyThreadState_c_profileobj", False,
     {8: ("PyThreadState", "c_profileobj"), 12: (None, None)},
     "3.12+: C calls come from a sys.monitoring tool"),
    ("PyThreadState_use_tracing", False,
     {8: ("PyThreadState", "use_tracing"), 10: (None, None)},
     "in the thread's cframe from 3.10"),
    ("PyThreadState_trace_cframe", False,
     {8: (None, None), 10: ("PyThreadState", "cframe"), 12: (None, None)},
     "use_tracing is the thread state's before 3.10, gone in 3.12"),
    ("PyRuntime_tstate_current", False,
     {8: ("_PyRuntimeState", "gilstate.tstate_current"), 12: (None, None)},
     "3.12+: a thread-local"),
    ("PyFrameObject_f_frame", False,
     {8: (None, None), 11: ("PyFrameObject", "f_frame"), 12: (None, None)},
     "a frame object is the frame before 3.11; unused from 3.12"),
    # 3.12+: the page's sys.monitoring tool: the events each tool gets, their callbacks, and the
    # tools' names
    ("PyInterpreterState_monitors", False,
     {8: (None, None), 12: ("PyInterpreterState", "monitors")}, "no sys.monitoring before 3.12"),
    ("PyInterpreterState_monitoring_callables", False,
     {8: (None, None), 12: ("PyInterpreterState", "monitoring_callables")},
     "no sys.monitoring before 3.12"),
    ("PyInterpreterState_monitoring_tool_names", False,
     {8: (None, None), 12: ("PyInterpreterState", "monitoring_tool_names")},
     "no sys.monitoring before 3.12"),
    # 3.12+: the thread whose callback runs (the page's callbacks get no thread state): the
    # one holding the interpreter's GIL, its last holder
    ("PyInterpreterState_ceval_gil", False,
     {8: (None, None), 12: ("PyInterpreterState", "ceval.gil")},
     "used on 3.12+ only (sys.monitoring's callbacks)"),
    ("gil_last_holder", False,
     {8: (None, None), 12: ("struct _gil_runtime_state", "last_holder")},
     "used on 3.12+ only (sys.monitoring's callbacks)"),
    # A threading.Thread's name (thread_name.c): self in its _bootstrap frame, then `_name` in
    # the instance's attribute table (a dict, or 3.11+ values keyed by the type's shared keys)
    ("PyFrame_localsplus", False, {8: ("PyFrameObject", "f_localsplus"),
                                   11: (IFRAME, "localsplus")}, None),
    ("PyTypeObject_tp_basicsize", False, {8: ("PyTypeObject", "tp_basicsize")}, None),
    ("PyTypeObject_tp_dictoffset", False, {8: ("PyTypeObject", "tp_dictoffset")}, None),
    ("PyTypeObject_tp_flags", False, {8: ("PyTypeObject", "tp_flags")}, None),
    ("PyHeapTypeObject_ht_cached_keys", False,
     {8: (None, None), 11: ("PyHeapTypeObject", "ht_cached_keys")},
     "instance dicts are found through tp_dictoffset before 3.11"),
    ("PyDictObject_ma_keys", False, {8: ("PyDictObject", "ma_keys")}, None),
    ("PyDictObject_ma_values", False, {8: ("PyDictObject", "ma_values")}, None),
    ("PyDictKeysObject_dk_size", False, {8: ("PyDictKeysObject", "dk_size"), 11: (None, None)},
     "dk_log2_index_bytes since 3.11"),
    ("PyDictKeysObject_dk_log2_index_bytes", False,
     {8: (None, None), 11: ("PyDictKeysObject", "dk_log2_index_bytes")},
     "dk_size before 3.11"),
    ("PyDictKeysObject_dk_kind", False, {8: (None, None), 11: ("PyDictKeysObject", "dk_kind")},
     "one entry layout before 3.11"),
    ("PyDictKeysObject_dk_nentries", False, {8: ("PyDictKeysObject", "dk_nentries")}, None),
    ("PyDictKeysObject_dk_indices", False, {8: ("PyDictKeysObject", "dk_indices")}, None),
    ("PyDictKeyEntry_size", False, {8: ("PyDictKeyEntry", "sizeof")}, None),
    ("PyDictKeyEntry_me_key", False, {8: ("PyDictKeyEntry", "me_key")}, None),
    ("PyDictKeyEntry_me_value", False, {8: ("PyDictKeyEntry", "me_value")}, None),
    ("PyDictUnicodeEntry_size", False, {8: (None, None), 11: ("PyDictUnicodeEntry", "sizeof")},
     "no str-only entries before 3.11"),
    ("PyDictUnicodeEntry_me_key", False,
     {8: (None, None), 11: ("PyDictUnicodeEntry", "me_key")}, "no str-only entries before 3.11"),
    ("PyDictUnicodeEntry_me_value", False,
     {8: (None, None), 11: ("PyDictUnicodeEntry", "me_value")},
     "no str-only entries before 3.11"),
    ("PyDictValues_values", False, {8: (None, None), 11: ("PyDictValues", "values")},
     "ma_values is a plain PyObject ** before 3.11"),
]

DICT_KIND_NAMES = {0: "DICT_AT_OFFSET", 1: "DICT_MANAGED", 2: "DICT_OR_VALUES",
                   3: "DICT_INLINE_VALUES"}

# Output order: the order of the fields in the two headers.
BPF_ORDER = ["eval_frame_arg", "interp_frame", "caller_mode", "has_tstate_arg", "frame_code",
             "frame_back", "frame_owner", "stackref_tags", "PyCodeObject_co_flags", "PyCodeObject_co_firstlineno",
             "PyCodeObject_co_filename", "PyCodeObject_co_name", "PyCodeObject_co_nlocalsplus",
             "PyCodeObject_co_stacksize", "PyUnicode_length",
             "PyUnicode_state", "PyASCIIObject_size", "PyCompactUnicodeObject_size",
             "PyThreadState_interp", "PyThreadState_cframe", "PyCFrame_current_frame",
             "PyThreadState_current_frame", "PyInterpreterState_eval_frame"]
USER_ORDER = ["PyInterpreterState_hook", "PyObject_ob_type", "PyTypeObject_tp_name", "PyRuntime_interpreters_head",
              "PyRuntime_main_interpreter", "PyInterpreterState_next",
              "PyInterpreterState_threads_head", "PyThreadState_next",
              "PyThreadState_native_thread_id", "PyThreadState_thread_id", "PyThreadState_frame",
              "PyInterpreterFrame_size",
              "PyCodeObject_co_qualname", "PyHeapTypeObject_spec_cache_init",
              "PyFunctionObject_func_code", "PyCodeObject_co_version",
              "PyThreadState_py_recursion_remaining",
              "PyThreadState_py_recursion_limit", "PyThreadState_c_recursion_remaining",
              "eval_c_units", "PyGenObject_gi_frame_state", "PyGenObject_gi_iframe",
              "PyGenObject_finished_state", "dict_kind",
              "PyFrame_localsplus", "PyTypeObject_tp_basicsize", "PyTypeObject_tp_dictoffset",
              "PyTypeObject_tp_flags", "PyHeapTypeObject_ht_cached_keys", "PyDictObject_ma_keys",
              "PyDictObject_ma_values",
              "PyDictKeysObject_dk_size", "PyDictKeysObject_dk_log2_index_bytes",
              "PyDictKeysObject_dk_kind", "PyDictKeysObject_dk_nentries",
              "PyDictKeysObject_dk_indices", "PyDictKeyEntry_size", "PyDictKeyEntry_me_key",
              "PyDictKeyEntry_me_value", "PyDictUnicodeEntry_size", "PyDictUnicodeEntry_me_key",
              "PyDictUnicodeEntry_me_value", "PyDictValues_values",
              "PyThreadState_c_profilefunc", "PyThreadState_c_profileobj",
              "PyThreadState_use_tracing",
              "PyThreadState_trace_cframe", "PyRuntime_tstate_current", "PyFrameObject_f_frame",
              "PyInterpreterState_monitors", "PyInterpreterState_monitoring_callables",
              "PyInterpreterState_monitoring_tool_names", "PyInterpreterState_ceval_gil",
              "gil_last_holder"]


class CheckError(Exception):
    pass


def pick(by_minor, minor):
    return by_minor[max(k for k in by_minor if k <= minor)]


def short_type(t):
    return t[len("struct "):] if t.startswith("struct ") else t


# ----------------------------------------------------------------------------------------------
# gdb


def gdb_run(binary, commands):
    """Runs gdb once over binary; returns {label: output} for the (label, command) pairs."""
    args = ["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off",
            "-ex", "set max-value-size unlimited", "-ex", "set width 0",
            "-ex", "set print asm-demangle off"]
    for label, cmd in commands:
        args += ["-ex", "echo \\n@@@ %s\\n" % label, "-ex", cmd]
    args.append(binary)
    res = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    out, cur = {}, None
    for line in res.stdout.splitlines():
        if line.startswith("@@@ "):
            cur = line[4:]
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


# "/* offset[: bit] | size */ decl"; members of a union print no offset (it is the union's).
PTYPE_LINE = re.compile(r"^/\*\s*(?:(\d+)(?::\s*\d+)?\s*\|)?\s*(\d+)\s*\*/\s*(.*)$")


def member_name(decl):
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
    if m:
        return m.group(1)
    decl = decl.rstrip(";").strip()
    decl = re.sub(r"\s*:\s*\d+$", "", decl)      # bitfield width
    decl = re.sub(r"(\[[^\]]*\])+$", "", decl)   # array dimensions
    return re.findall(r"\w+", decl)[-1]


def parse_ptype(text):
    """Parses `ptype /o` output into ({member path: (offset, size)}, total size)."""
    stack = [[]]
    opens = []
    total = None
    lines = text.splitlines()
    started = False
    for line in lines:
        s = line.strip()
        if not started:
            if "type = " in s and s.endswith("{"):
                started = True
            continue
        if s.startswith("/* XXX"):
            continue
        m = re.match(r"/\* total size \(bytes\):\s*(\d+) \*/", s)
        if m:
            total = int(m.group(1))
            continue
        m = PTYPE_LINE.match(s)
        if m:
            off = int(m.group(1)) if m.group(1) else opens[-1][0]
            size, decl = int(m.group(2)), m.group(3)
            if decl.endswith("{"):
                stack.append([])
                opens.append((off, size))
            else:
                stack[-1].append((member_name(decl), off, size))
            continue
        m = re.match(r"^\}\s*(\w*)\s*(?:\[[^\]]*\])*\s*;$", s)
        if m:
            inner = stack.pop()
            off, size = opens.pop()
            name = m.group(1)
            if name:
                stack[-1].append((name, off, size))
                stack[-1].extend((name + "." + p, o, sz) for p, o, sz in inner)
            else:                               # anonymous struct/union: members are the parent's
                stack[-1].extend(inner)
            continue
        if s == "}":
            break
    if not started or total is None:
        raise CheckError("cannot parse ptype output: %s" % text.strip()[:200])
    return {p: (o, sz) for p, o, sz in stack[0]}, total


class Dwarf:
    """The layout facts of one build with DWARF, each read twice (ptype /o and an expression)."""

    def __init__(self, lib, minor):
        self.lib, self.minor = lib, minor
        types = sorted({t for _, _, by, _ in OFFSETS for t, _ in by.values() if t}
                       | {"PyThreadState", "struct _PyCFrame"})
        cmds = [("ptype " + t, "ptype /o " + t) for t in types]
        cmds.append(("proto", "whatis _PyEval_EvalFrameDefault"))
        cmds.append(("proto_ptr", "whatis *pyuprof_eval"))  # a layout object: a declaration
        cmds.append(("dorv", "whatis PyDictOrValues"))
        cmds.append(("fexec", "whatis ((%s *)0)->f_executable" % IFRAME))
        cmds.append(("tagbits", "print/d pyuprof_tag_bits"))
        cmds.append(("owners", "ptype enum _frameowner"))
        for state in ("FRAME_COMPLETED", "FRAME_CLEARED"):
            cmds.append((state, "print/d (int)" + state))
        out = gdb_run(lib, cmds)
        self.has_dorv = "type = " in out.get("dorv", "")
        self.stackref_exec = re.search(r"type = _PyStackRef\s*$", out.get("fexec", ""), re.M)
        self.tag_bits = self.number(out.get("tagbits", ""))
        self.states = {k: self.number(out.get(k, "")) for k in ("FRAME_COMPLETED",
                                                                 "FRAME_CLEARED")}
        m = re.search(r"type = enum _frameowner \{(.*)\}", out.get("owners", ""))
        self.owners = self.enum_values(m.group(1)) if m else {}
        self.layouts = {}
        for t in types:
            try:
                self.layouts[t] = parse_ptype(out.get("ptype " + t, ""))
            except CheckError:
                self.layouts[t] = None      # e.g. no _PyInterpreterFrame in 3.8
        self.proto = out.get("proto", "")
        if "type = " not in self.proto:
            self.proto = out.get("proto_ptr", "")
        self._exprs = {}

    @staticmethod
    def number(text):
        m = re.search(r"\$\d+ = (-?\d+)", text)
        return int(m.group(1)) if m else None

    @staticmethod
    def enum_values(body):
        """{name: value} of a gdb enum body: `A, B = 5, C` (implicit values count on)."""
        out, nxt = {}, 0
        for item in body.split(","):
            name, _, val = item.strip().partition(" = ")
            nxt = int(val) if val else nxt
            out[name] = nxt
            nxt += 1
        return out

    def has(self, t, path):
        lay = self.layouts.get(t)
        return lay is not None and (path == "sizeof" or path in lay[0])

    def get(self, t, path):
        lay = self.layouts.get(t)
        if lay is None:
            raise CheckError("%s: no type %s in DWARF" % (self.lib, t))
        if path == "sizeof":
            return lay[1]
        if path not in lay[0]:
            raise CheckError("%s: %s has no member %s" % (self.lib, t, path))
        return lay[0][path][0]

    def cross_check(self, wanted):
        """Re-reads every (type, path) in wanted with gdb's own address arithmetic."""
        cmds = []
        for t, path in wanted:
            expr = ("sizeof(%s)" % t if path == "sizeof"
                    else "(long)&((%s *)0)->%s" % (t, path))
            cmds.append(("%s|%s" % (t, path), "print/d " + expr))
        out = gdb_run(self.lib, cmds)
        for t, path in wanted:
            m = re.search(r"\$\d+ = (-?\d+)", out.get("%s|%s" % (t, path), ""))
            if not m or int(m.group(1)) != self.get(t, path):
                raise CheckError("%s: ptype /o and print disagree on %s.%s" % (self.lib, t, path))

    def params(self):
        m = re.search(r"type = .*?\((.*)\)\s*$", self.proto, re.M)
        if not m:
            raise CheckError("%s: no prototype for _PyEval_EvalFrameDefault" % self.lib)
        return [p.strip() for p in m.group(1).split(",")]


def derive_entry(dw, units):
    """The table entry for one minor from DWARF: {field: (value, provenance)}."""
    minor, e, wanted = dw.minor, {}, []
    params = dw.params()
    frame_arg = [i for i, p in enumerate(params) if "_PyInterpreterFrame" in p
                 or "PyFrameObject" in p or "struct _frame" in p]
    if len(frame_arg) != 1:
        raise CheckError("%s: cannot find the frame in %s" % (dw.lib, params))
    e["eval_frame_arg"] = (frame_arg[0], "gdb: whatis _PyEval_EvalFrameDefault: frame is arg%d"
                           % frame_arg[0])
    iframe = int("_PyInterpreterFrame" in params[frame_arg[0]])
    e["interp_frame"] = (iframe, "gdb: the frame arg is %s" % params[frame_arg[0]])
    tst = int("PyThreadState" in params[0] or "struct _ts" in params[0])
    e["has_tstate_arg"] = (tst, "gdb: arg0 is %s" % params[0])
    if not iframe:
        mode, why = CALLER_FROM_F_BACK, "PyFrameObject: f_back is set before the call"
    elif dw.has("PyThreadState", "cframe") and dw.has("struct _PyCFrame", "current_frame"):
        mode, why = CALLER_FROM_CFRAME, "gdb: PyThreadState has cframe->current_frame"
    elif dw.has("PyThreadState", "current_frame"):
        mode, why = CALLER_FROM_TSTATE, "gdb: PyThreadState has current_frame"
    else:
        raise CheckError("%s: no way to find the caller frame" % dw.lib)
    e["caller_mode"] = (mode, why)

    # Where an instance keeps its attributes (the word positions come from CPython's inline
    # accessors, which DWARF does not describe; checked in live 3.11.2/3.11.7/3.12.1/3.13.0)
    if not dw.has("PyDictValues", "sizeof"):
        kind, why = 0, "gdb: no PyDictValues: the dict is at tp_dictoffset"
    elif dw.has("PyDictValues", "embedded"):
        kind, why = 3, "gdb: PyDictValues.embedded: values inline after tp_basicsize"
    elif dw.has_dorv:
        kind, why = 2, "gdb: PyDictOrValues: one tagged word 3 words before the object"
    else:
        kind, why = 1, "gdb: PyDictValues, no PyDictOrValues: values/dict 4/3 words before"
    e["dict_kind"] = (kind, why)

    for field, _, by, why0 in OFFSETS:
        t, path = pick(by, minor)
        if t is None:
            e[field] = (0, path or why0)    # (None, reason): why not from this minor on
            continue
        wanted.append((t, path))
        what = ("sizeof(%s)" % short_type(t) if path == "sizeof"
                else "offsetof(%s, %s)" % (short_type(t), path))
        e[field] = (dw.get(t, path), "gdb: " + what)

    # 3.14+: f_executable (and every local) is a _PyStackRef, a pointer whose low bits are tags:
    # the -dev headers' Py_TAG_BITS, compiled into the layout object (a macro has no DWARF)
    if dw.stackref_exec:
        if dw.tag_bits is None:
            raise CheckError("%s: f_executable is a _PyStackRef, but its tag bits are unknown "
                             "(no pyuprof_tag_bits: not a layout object made from headers)" %
                             dw.lib)
        e["stackref_tags"] = (dw.tag_bits, "gdb: f_executable is a _PyStackRef; Py_TAG_BITS "
                              "of the -dev headers")
    else:
        e["stackref_tags"] = (0, "f_executable/f_code is a plain pointer before 3.14")

    # 3.12+: the lowest gi_frame_state of a generator that returned rather than yielded
    # (tramp_code.S): FRAME_COMPLETED, which 3.15 dropped (a returned frame is FRAME_CLEARED)
    if minor < 12:
        e["PyGenObject_finished_state"] = (0, "used on 3.12+ only (an await's return)")
    elif dw.states["FRAME_COMPLETED"] is not None:
        e["PyGenObject_finished_state"] = (dw.states["FRAME_COMPLETED"],
                                           "gdb: print (int)FRAME_COMPLETED")
    elif dw.states["FRAME_CLEARED"] is not None:
        e["PyGenObject_finished_state"] = (dw.states["FRAME_CLEARED"],
                                           "gdb: print (int)FRAME_CLEARED (no FRAME_COMPLETED)")
    else:
        raise CheckError("%s: no FRAME_COMPLETED or FRAME_CLEARED in DWARF" % dw.lib)

    # 3.11+: the BPF programs and the trampoline take owner 1 for a generator's frame and 3
    # and above for frames that run no Python code (entry shims, the C stack's)
    if iframe:
        o = dw.owners
        if o.get("FRAME_OWNED_BY_THREAD") != 0 or o.get("FRAME_OWNED_BY_GENERATOR") != 1 or \
                o.get("FRAME_OWNED_BY_FRAME_OBJECT") != 2 or \
                any(v < 3 for k, v in o.items() if k not in (
                    "FRAME_OWNED_BY_THREAD", "FRAME_OWNED_BY_GENERATOR",
                    "FRAME_OWNED_BY_FRAME_OBJECT")):
            raise CheckError("%s: enum _frameowner is %s: not the owners the BPF programs and "
                             "the trampoline know" % (dw.lib, o))

    # The units of C budget an activation of the eval function takes (PY_EVAL_C_STACK_UNITS),
    # read from its machine code: the DWARF has no trace of a macro.
    e["eval_c_units"] = ((units, "_PyEval_EvalFrameDefault: lea -%d(...) stored to "
                          "c_recursion_remaining" % units) if units
                         else (0, "no C recursion budget before 3.12" if minor < 12 else
                               "no C recursion budget since 3.14 (the C stack is checked by "
                               "its address)"))
    dw.cross_check(wanted)
    return e


# ----------------------------------------------------------------------------------------------
# ELF (ELF64 little-endian only: x86-64 is the only target)


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise CheckError("%s: not a little-endian ELF64 file" % path)
        (self.e_type,) = struct.unpack_from("<H", d, 0x10)
        phoff, shoff = struct.unpack_from("<QQ", d, 0x20)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", d, 0x36)
        self.loads = []
        for i in range(phnum):
            p = struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize)
            if p[0] == 1:   # PT_LOAD: (offset, vaddr, filesz, memsz)
                self.loads.append((p[2], p[3], p[5], p[6]))
        self.sections = []
        for i in range(shnum):
            s = struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
            self.sections.append(s)
        strtab = self.sections[shstrndx]
        self.secnames = [self.cstr_at(strtab[4] + s[0]) for s in self.sections]
        self.syms = {}
        self._symlists = {}
        for idx, s in enumerate(self.sections):
            if s[1] in (2, 11):     # SHT_SYMTAB, SHT_DYNSYM
                self._symlists[idx] = self._read_syms(s)
                for name, value, size, shndx in self._symlists[idx]:
                    if name and shndx != 0 and name not in self.syms:
                        self.syms[name] = (value, size)
        self._relocs = None

    def cstr_at(self, off):
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("latin-1")

    def _read_syms(self, sec):
        strsec = self.sections[sec[6]]
        out = []
        for off in range(sec[4], sec[4] + sec[5], 24):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", self.data, off)
            out.append((self.cstr_at(strsec[4] + name), value, size, shndx))
        return out

    def relocs(self):
        """{vaddr: (value, symbol name)} for the data relocations of a shared object."""
        if self._relocs is None:
            self._relocs = {}
            # ET_EXEC (Debian's python3.11): the file holds final addresses; only copies and
            # imports are relocated.
            for s in self.sections if self.e_type == 3 else []:
                if s[1] != 4:       # SHT_RELA
                    continue
                syms = self._symlists.get(s[6], [])
                for off in range(s[4], s[4] + s[5], 24):
                    where, info, addend = struct.unpack_from("<QQq", self.data, off)
                    typ, symi = info & 0xffffffff, info >> 32
                    name, value = (syms[symi][0], syms[symi][1]) if symi < len(syms) else ("", 0)
                    if typ == 8:        # R_X86_64_RELATIVE
                        self._relocs[where] = (addend, "")
                    elif typ in (1, 6):  # R_X86_64_64, R_X86_64_GLOB_DAT
                        self._relocs[where] = (value + addend if value else 0, name)
        return self._relocs

    def file_offset(self, vaddr):
        for off, va, filesz, memsz in self.loads:
            if va <= vaddr < va + memsz:
                return off + vaddr - va if vaddr < va + filesz else None
        raise CheckError("%s: address 0x%x is not mapped" % (self.path, vaddr))

    def read(self, vaddr, n):
        off = self.file_offset(vaddr)
        return b"\0" * n if off is None else self.data[off:off + n]

    def u32(self, vaddr):
        return struct.unpack("<I", self.read(vaddr, 4))[0]

    def i32(self, vaddr):
        return struct.unpack("<i", self.read(vaddr, 4))[0]

    def i64(self, vaddr):
        return struct.unpack("<q", self.read(vaddr, 8))[0]

    def ptr(self, vaddr):
        r = self.relocs().get(vaddr)
        return r[0] if r else struct.unpack("<Q", self.read(vaddr, 8))[0]

    def cstr(self, vaddr, limit=256):
        b = self.read(vaddr, limit)
        return b.split(b"\0", 1)[0].decode("latin-1")

    def version(self):
        """(major, minor, patch) from Py_Version (3.11+), else from the file name."""
        if "Py_Version" in self.syms:
            v = struct.unpack("<Q", self.read(self.syms["Py_Version"][0], 8))[0]
            return (v >> 24) & 0xff, (v >> 16) & 0xff, (v >> 8) & 0xff
        m = re.search(r"python(\d)\.(\d+)", os.path.basename(self.path))
        if not m:
            raise CheckError("%s: cannot tell the Python version" % self.path)
        return int(m.group(1)), int(m.group(2)), None


# ----------------------------------------------------------------------------------------------
# Machine code (AT&T syntax as printed by gdb) and static data of a build


INSN = re.compile(r"^\s*(?:=>\s*)?0x([0-9a-f]+)(?:\s+<[^>]*>)?:\s*(\S+)\s*(.*?)\s*$")
MEM = re.compile(r"^(-?0x[0-9a-f]+|-?\d+)?\((%\w+)\)$")


def split_operands(ops):
    out, depth, cur = [], 0, ""
    for ch in ops:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_disasm(text):
    insns = []
    for line in text.splitlines():
        m = INSN.match(line)
        if not m:
            continue
        if m.group(2) == "endbr64":     # (3.14+ builds with CET: a nop here)
            continue
        ops, comment = m.group(3), ""
        if "#" in ops:
            ops, comment = ops.split("#", 1)
        insns.append((int(m.group(1), 16), m.group(2), split_operands(ops.strip()),
                      comment.strip()))
    return insns


def mem(op):
    """(displacement, base register) of a plain memory operand, else None."""
    m = MEM.match(op)
    if not m:
        return None
    return (int(m.group(1), 0) if m.group(1) else 0), m.group(2)


def load(insn, base=None, dest=None):
    """Displacement of `mov disp(%base),%dest`, else None."""
    _, mnem, ops, _ = insn
    if mnem not in ("mov", "movq") or len(ops) != 2 or not ops[1].startswith("%r"):
        return None
    m = mem(ops[0])
    if not m or m[1] == "%rip" or (base and m[1] != base) or (dest and ops[1] != dest):
        return None
    return m[0]


class Binary:
    """Disassembles the accessors once and answers questions about their displacements."""

    FUNCS = ["_PyInterpreterState_GetEvalFrameFunc", "PyInterpreterState_Head",
             "PyInterpreterState_Next", "PyInterpreterState_ThreadHead", "PyThreadState_Next",
             "PyThreadState_GetInterpreter", "PyThreadState_GetFrame", "PyFrame_GetCode",
             "PyFrame_GetBack", "PyThreadState_New", "_PyThreadState_New", "_PyThreadState_Bind",
             "PyInterpreterState_New", "_PyInterpreterState_New", "_PyThreadState_NewBound"]

    def __init__(self, path):
        self.path, self.elf = path, Elf(path)
        self.expect = {}    # the entry under test: the data checks read objects with it
        present = [f for f in self.FUNCS if f in self.elf.syms]
        out = gdb_run(path, [(f, "disassemble " + f) for f in present])
        self.code = {f: parse_disasm(out.get(f, "")) for f in present}
        # PyThreadState_New may call a local helper that holds the initialisation (Debian).
        callees = []
        for insn in self.code.get("PyThreadState_New", []):
            if insn[1] == "call" and re.match(r"^0x[0-9a-f]+$", insn[2][0] if insn[2] else ""):
                callees.append(insn[2][0])
        if callees:
            out = gdb_run(path, [("c%d" % i, "disassemble %s,+1536" % a)
                                 for i, a in enumerate(callees)])
            self.code["PyThreadState_New callees"] = [i for k in sorted(out)
                                                      for i in parse_disasm(out[k])]

    def first_load(self, func, base="%rdi"):
        for insn in self.code.get(func, [])[:3]:
            d = load(insn, base)
            if d is not None:
                return d
        return None

    def facts(self, minor):
        """[(field, value, how)] found in machine code and data for a build of 3.minor."""
        out = []

        def add(field, value, how):
            if value is None:
                raise CheckError("%s: could not read %s from %s" % (self.path, field, how))
            out.append((field, value, how))

        if minor >= 11:
            # Starts with mov disp32(%rdi),%rax in every build (internals 8.4).
            add("PyInterpreterState_eval_frame",
                self.first_load("_PyInterpreterState_GetEvalFrameFunc"),
                "_PyInterpreterState_GetEvalFrameFunc")
        add("PyRuntime_interpreters_head", self.interpreters_head(), "PyInterpreterState_Head")
        add("PyInterpreterState_next", self.first_load("PyInterpreterState_Next"),
            "PyInterpreterState_Next")
        add("PyInterpreterState_threads_head", self.first_load("PyInterpreterState_ThreadHead"),
            "PyInterpreterState_ThreadHead")
        add("PyThreadState_next", self.first_load("PyThreadState_Next"), "PyThreadState_Next")
        if minor >= 9:
            add("PyThreadState_interp", self.first_load("PyThreadState_GetInterpreter"),
                "PyThreadState_GetInterpreter")
        if minor in (9, 10):
            add("PyThreadState_frame", self.first_load("PyThreadState_GetFrame"),
                "PyThreadState_GetFrame")
            add("frame_back", self.first_load("PyFrame_GetBack"), "PyFrame_GetBack")
            add("frame_code", self.first_load("PyFrame_GetCode"), "PyFrame_GetCode")
        if minor >= 11:
            add("PyRuntime_main_interpreter", self.main_interpreter(),
                "PyInterpreterState_New: interpreters.main = &_PyRuntime._main_interpreter")
            self.frame_facts(minor, add)
            add("PyThreadState_native_thread_id", self.native_tid_store(),
                "store after PyThread_get_thread_native_id()")
        self.type_name_facts(add)
        if minor in (11, 12):
            self.code_object_facts(add)
        return out

    def interpreters_head(self):
        ins = self.code.get("PyInterpreterState_Head", [])
        if not ins or ins[0][1] != "mov":
            return None
        m = re.search(r"<_PyRuntime\+(\d+)>", ins[0][3])
        if m:                       # non-PIC executable: rip-relative load of the field itself
            return int(m.group(1))
        m = re.match(r"^0x([0-9a-f]+)$", ins[0][3])
        if m and len(ins) > 1:      # PIC: load &_PyRuntime from the GOT, then the field
            got = int(m.group(1), 16)
            if self.elf.relocs().get(got, (0, ""))[1] != "_PyRuntime":
                return None
            return load(ins[1], "%rax")
        return None

    def main_interpreter(self):
        """3.11+: the first interpreter is the one embedded in _PyRuntime; New stores its address
        into interpreters.main, which follows interpreters.head."""
        main = self.expect["PyRuntime_interpreters_head"] + 8
        runtime = self.elf.syms["_PyRuntime"][0]
        for f in ("PyInterpreterState_New", "_PyInterpreterState_New"):
            ins = self.code.get(f, [])
            for j, (_, mnem, ops, comment) in enumerate(ins):
                # non-PIC: movq $&_PyRuntime._main_interpreter, _PyRuntime+main(%rip)
                if mnem == "movq" and len(ops) == 2 and ops[0].startswith("$") and \
                        "<_PyRuntime+%d>" % main in comment:
                    return int(ops[0][1:], 0) - runtime
                # PIC: lea D(%rB),%rX; ... mov %rX,main(%rB), with %rB = &_PyRuntime
                m = mem(ops[0]) if mnem == "lea" and len(ops) == 2 else None
                if not m or m[1] in ("%rip", "%rsp"):
                    continue
                for nxt in ins[j + 1:j + 5]:
                    if nxt[1] == "mov" and len(nxt[2]) == 2 and nxt[2][0] == ops[1] and \
                            mem(nxt[2][1]) == (main, m[1]):
                        return m[0]
        return None

    def frame_facts(self, minor, add):
        ins = [i for i in self.code.get("PyThreadState_GetFrame", []) if i[1] != "push"]
        i = 0
        if minor <= 12 and len(ins) > 2:    # tstate->cframe->current_frame
            add("PyThreadState_cframe", load(ins[0], "%rdi", "%rax"), "PyThreadState_GetFrame")
            add("PyCFrame_current_frame", load(ins[1], "%rax", "%rdi"), "PyThreadState_GetFrame")
            i = 2
        elif len(ins) > 1:                  # tstate->current_frame, into any register
            add("PyThreadState_current_frame", load(ins[0], "%rdi"), "PyThreadState_GetFrame")
            i = 1
        freg = ins[i - 1][2][1] if i else "%rdi"   # the register that holds the frame
        # The skip-incomplete-frames loop tests frame->owner first (a byte), then reads the code.
        owner = code_at = None
        for j in range(i, len(ins)):
            _, mnem, ops, _ = ins[j]
            if mnem not in ("cmpb", "movzbl") or len(ops) != 2:
                continue
            m = mem(ops[1] if mnem == "cmpb" else ops[0])
            if m and m[1] == freg:
                owner, code_at = m[0], j + 1
                break
        add("frame_owner", owner, "PyThreadState_GetFrame (owner test)")
        fc = None
        for insn in ins[code_at or len(ins):]:
            d = load(insn, freg)
            if d is not None and insn[2][1] != freg:
                fc = d
                break
        add("frame_code", fc, "PyThreadState_GetFrame (code of an incomplete frame)")
        # PyFrame_GetCode: f->f_frame, then the code pointer in it.
        ins = self.code.get("PyFrame_GetCode", [])
        reg = ins[0][2][1] if ins and load(ins[0], "%rdi") is not None else None
        add("frame_code", load(ins[1], reg) if reg else None, "PyFrame_GetCode")
        # PyFrame_GetBack: f->f_frame->previous when f->f_back is not set.
        prev = None
        ins = self.code.get("PyFrame_GetBack", [])
        for a, b in zip(ins, ins[1:]):
            if load(a, "%rdi") is not None and load(b, a[2][1], "%rdi") is not None:
                prev = load(b, a[2][1], "%rdi")
                break
        add("frame_back", prev, "PyFrame_GetBack")

    def native_tid_store(self):
        for f in ("PyThreadState_New", "PyThreadState_New callees", "_PyThreadState_Bind",
                  "_PyThreadState_NewBound"):
            ins = self.code.get(f, [])
            for j, insn in enumerate(ins):
                if insn[1] == "call" and "<PyThread_get_thread_native_id" in " ".join(insn[2]):
                    for nxt in ins[j + 1:j + 8]:
                        if nxt[1] == "mov" and len(nxt[2]) == 2 and nxt[2][0] == "%rax":
                            m = mem(nxt[2][1])
                            if m and m[1] != "%rsp":
                                return m[0]
        return None

    def eval_c_units(self, offset):
        """The units of C recursion budget the eval function takes at its entry: the N of its
        first `lea -N(%rA),%rB` stored to tstate->c_recursion_remaining (PY_EVAL_C_STACK_UNITS)."""
        out = gdb_run(self.path, [("e", "disassemble _PyEval_EvalFrameDefault,+512")])
        ins = parse_disasm(out.get("e", ""))
        for j, (_, mnem, ops, _) in enumerate(ins):
            m = mem(ops[0]) if mnem == "lea" and len(ops) == 2 else None
            if not m or m[0] >= 0 or m[1] in ("%rip", "%rsp"):
                continue
            for nxt in ins[j + 1:j + 12]:
                if nxt[1] == "mov" and len(nxt[2]) == 2 and nxt[2][0] == ops[1] and \
                        mem(nxt[2][1]) and mem(nxt[2][1])[0] == offset and \
                        mem(nxt[2][1])[1] != "%rsp":
                    return -m[0]
        return None

    def type_name_facts(self, add):
        elf, tp = self.elf, self.expect["PyTypeObject_tp_name"]
        names = [elf.cstr(elf.ptr(elf.syms[t][0] + tp)) for t in ("PyCode_Type", "PyUnicode_Type")]
        add("PyTypeObject_tp_name", tp if names == ["code", "str"] else None,
            "tp_name of PyCode_Type, PyUnicode_Type in .data")

    def code_object_facts(self, add):
        """3.11, 3.12: the deep-frozen code objects (static data) read with the table's offsets."""
        elf, e = self.elf, self.expect
        code_t = elf.syms["PyCode_Type"][0]
        str_t = elf.syms["PyUnicode_Type"][0]
        cands = self.objects_of_type(code_t, e["PyObject_ob_type"])
        # Pointer arrays that hold &PyCode_Type match too; real objects share one immortal refcnt.
        refcnts = [elf.i64(c) for c in cands]
        immortal = max(set(refcnts), key=refcnts.count) if refcnts else None
        cands = [c for c, r in zip(cands, refcnts) if r == immortal]
        bad = []
        for c in cands:
            try:
                self.check_code(c, str_t)
            except CheckError as err:
                bad.append(str(err))
        if len(cands) < 100 or bad:
            add("PyCodeObject_co_name", None, "%d static code objects, %d unreadable (%s)" %
                (len(cands), len(bad), "; ".join(bad[:3])))
        how = "%d deep-frozen code objects, refcnt %d" % (len(cands), immortal)
        for f in ("PyObject_ob_type", "PyCodeObject_co_flags", "PyCodeObject_co_firstlineno",
                  "PyCodeObject_co_filename", "PyCodeObject_co_name", "PyCodeObject_co_qualname",
                  "PyUnicode_length", "PyUnicode_state", "PyASCIIObject_size"):
            add(f, e[f], how)

    def objects_of_type(self, type_addr, ob_type):
        relocs = self.elf.relocs()
        if relocs:
            return sorted(a - ob_type for a, (v, _) in relocs.items() if v == type_addr)
        out = []
        for s, name in zip(self.elf.sections, self.elf.secnames):
            if name != ".data":
                continue
            base, blob = s[3], self.elf.data[s[4]:s[4] + s[5]]
            for i, (v,) in enumerate(struct.iter_unpack("<Q", blob[:len(blob) & ~7])):
                if v == type_addr and i * 8 >= ob_type:
                    out.append(base + i * 8 - ob_type)
        return out

    def read_str(self, addr, str_t):
        elf, e = self.elf, self.expect
        if elf.ptr(addr + e["PyObject_ob_type"]) != str_t:
            raise CheckError("0x%x is not a str" % addr)
        state = elf.u32(addr + e["PyUnicode_state"])
        n = elf.i64(addr + e["PyUnicode_length"])
        if (state >> 2) & 7 != 1 or not state & 0x20 or not state & 0x40 or not 0 < n < 4096:
            raise CheckError("str at 0x%x: state 0x%x length %d" % (addr, state, n))
        b = elf.read(addr + e["PyASCIIObject_size"], n + 1)
        if b[n] != 0 or not all(0x20 <= c < 0x7f for c in b[:n]):
            raise CheckError("str at 0x%x: %r" % (addr, b))
        return b[:n].decode()

    def check_code(self, c, str_t):
        elf, e = self.elf, self.expect
        name = self.read_str(elf.ptr(c + e["PyCodeObject_co_name"]), str_t)
        qual = self.read_str(elf.ptr(c + e["PyCodeObject_co_qualname"]), str_t)
        fname = self.read_str(elf.ptr(c + e["PyCodeObject_co_filename"]), str_t)
        line = elf.i32(c + e["PyCodeObject_co_firstlineno"])
        flags = elf.i32(c + e["PyCodeObject_co_flags"])
        if not qual.endswith(name) or not fname.startswith("<frozen ") or not 0 < line < 100000:
            raise CheckError("code at 0x%x: %s %s %s:%d" % (c, name, qual, fname, line))
        # Module and class bodies have no CO_OPTIMIZED|CO_NEWLOCALS; functions have both.
        body = name == "<module>" or flags & 3 == 0
        if flags & ~0x3ff or (name == "<module>" and flags) or (not body and flags & 3 != 3):
            raise CheckError("code at 0x%x (%s): flags 0x%x" % (c, qual, flags))


_binaries = {}


def binary(path):
    if path not in _binaries:
        _binaries[path] = Binary(path)
    return _binaries[path]


def check_binary(path, expect, log):
    """Checks one build's machine code and data against expect ({field: value}); returns errors."""
    b = binary(path)
    major, minor, patch = b.elf.version()
    b.expect = expect
    errors = []
    try:
        facts = b.facts(minor)
    except CheckError as err:
        return [str(err)]
    for field, value, how in facts:
        ok = expect.get(field, 0) == value
        log("  %-32s %6d  %s  (%s)" % (field, value, "ok" if ok else
                                        "TABLE SAYS %s" % expect.get(field, 0), how))
        if not ok:
            errors.append("%s: %s is %d in machine code/data (%s), table says %s" %
                          (path, field, value, how, expect.get(field, 0)))
    return errors


# ----------------------------------------------------------------------------------------------
# Builds, table text, and the committed table


def pyenv_root(arg):
    if arg:
        return arg
    if os.environ.get("PYENV_ROOT"):
        return os.environ["PYENV_ROOT"]
    if shutil.which("pyenv"):
        r = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, universal_newlines=True)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    return os.path.expanduser("~/.pyenv")


def pyenv_builds(root):
    """{minor: (version string, libpython path)}: the newest pyenv build of each 3.minor."""
    found = {}
    vdir = os.path.join(root, "versions")
    for v in os.listdir(vdir) if os.path.isdir(vdir) else []:
        m = re.match(r"^3\.(\d+)\.(\d+)$", v)
        if not m or int(m.group(1)) not in MINORS:
            continue
        minor, patch = int(m.group(1)), int(m.group(2))
        lib = os.path.join(vdir, v, "lib", "libpython3.%d.so.1.0" % minor)
        if os.path.exists(lib) and (minor not in found or patch > found[minor][0]):
            found[minor] = (patch, v, lib)
    return {k: (v, lib) for k, (_, v, lib) in found.items()}


# The layout object of a 3.14+ build: its -dev headers compiled with DWARF for every type, and
# what gdb cannot read from a header otherwise (a macro's value, the eval function's prototype).
LAYOUT_C = r"""
#define Py_BUILD_CORE 1
#include "Python.h"
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_dict.h"
#include "internal/pycore_genobject.h"
#include "internal/pycore_ceval.h"
#if __has_include("internal/pycore_debug_offsets.h")  /* 3.14+; 3.13: in pycore_runtime.h */
#include "internal/pycore_debug_offsets.h"
#endif
#ifdef Py_TAG_BITS
const unsigned long pyuprof_tag_bits = Py_TAG_BITS;
#endif
__typeof__(_PyEval_EvalFrameDefault) *pyuprof_eval = _PyEval_EvalFrameDefault;
"""


def sid_builds(root, minor):
    """(the executable, libpython) of Debian's 3.minor in the sid root."""
    return [os.path.join(root, "usr", "bin", "python3.%d" % minor),
            os.path.join(root, "usr", "lib", "x86_64-linux-gnu", "libpython3.%d.so.1.0" % minor)]


def header_object(root, minor, workdir):
    """The layout object of 3.minor from the sid root's headers: (version string, path)."""
    inc = os.path.join(root, "usr", "include", "python3.%d" % minor)
    exe = sid_builds(root, minor)[0]
    if not os.path.isdir(os.path.join(inc, "internal")) or not os.path.exists(exe):
        raise CheckError("no python3.%d and its internal headers (libpython3.%d-dev) in %s: "
                         "make it with scripts/install-sid-root.sh" % (minor, minor, root))
    if not shutil.which("gcc"):
        raise CheckError("gcc not found (it compiles the 3.%d headers)" % minor)
    src = os.path.join(workdir, "layout3%d.c" % minor)
    obj = os.path.join(workdir, "layout3%d.o" % minor)
    with open(src, "w") as f:
        f.write(LAYOUT_C)
    # the root's pyconfig.h (<x86_64-linux-gnu/python3.X/pyconfig.h>) after this machine's own
    # C library headers: only the layout is wanted, not the root's libc
    res = subprocess.run(["gcc", "-g", "-O0", "-fno-eliminate-unused-debug-types", "-w", "-c",
                          "-I", inc, "-idirafter", os.path.join(root, "usr", "include"),
                          "-o", obj, src], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    if res.returncode:
        raise CheckError("compiling the 3.%d headers failed:\n%s" % (minor, res.stdout[-2000:]))
    major, mn, patch = Elf(exe).version()
    if (major, mn) != (3, minor):
        raise CheckError("%s is Python %d.%d" % (exe, major, mn))
    return "3.%d.%d" % (minor, patch), obj


def build_entries(root, sid_root, workdir, log):
    builds = pyenv_builds(root)
    for minor in HEADER_MINORS:
        builds[minor] = header_object(sid_root, minor, workdir)
    missing = [m for m in MINORS if m not in builds]
    if missing:
        raise CheckError("no pyenv build for 3.%s under %s" %
                         (", 3.".join(map(str, missing)), root))
    entries = {}
    for minor in MINORS:
        version, lib = builds[minor]
        log("reading DWARF of %s" % lib)
        dw = Dwarf(lib, minor)
        units = None
        if dw.has("PyThreadState", "c_recursion_remaining"):
            units = binary(lib).eval_c_units(dw.get("PyThreadState", "c_recursion_remaining"))
            if units is None:
                raise CheckError("%s: no C recursion budget taken at the entry of "
                                 "_PyEval_EvalFrameDefault" % lib)
        entries[minor] = (version, lib, derive_entry(dw, units))
    return entries


def format_block(indent, items):
    """`.name = value,` lines with their provenance comment: after them, or above if too long."""
    tabs = "\t" * indent
    lines = []
    for k, v, why in items:
        assign, comment = ".%s = %s," % (k, v), "/* %s */" % why
        if indent * 8 + len(assign) + 1 + len(comment) <= 100:
            lines.append(tabs + assign + " " + comment)
        else:
            lines += [tabs + comment, tabs + assign]
    return lines


def format_table(entries, binary_notes):
    out = ["static const struct py_offsets_entry table[] = {"]
    for minor in MINORS:
        version, lib, e = entries[minor]
        out.append("\t{")
        out.append("\t\t/* 3.%d: DWARF of %s */" % (minor, "Debian %s's -dev headers" % version
                                                    if minor in HEADER_MINORS
                                                    else "pyenv " + version))
        for note in binary_notes.get(minor, []):
            # (wrapped to the 100 columns of the rest, a tab counted as 8)
            lines = textwrap.wrap(note, 100 - 16 - 6)
            out += ["\t\t%s %s%s" % ("/*" if i == 0 else " *", line,
                                       " */" if i == len(lines) - 1 else "")
                    for i, line in enumerate(lines)]
        out.append("\t\t.major = 3, .minor = %d, .patch_min = 0, .patch_max = 255," % minor)
        out.append("\t\t.bpf = {")
        bpf = []
        for k in BPF_ORDER:
            v, why = e[k]
            bpf.append((k, CALLER_MODE_NAMES[v] if k == "caller_mode" else v, why))
        out += format_block(3, bpf)
        out.append("\t\t},")
        out += format_block(2, [(k, DICT_KIND_NAMES[e[k][0]] if k == "dict_kind" else e[k][0],
                                 e[k][1]) for k in USER_ORDER])
        out.append("\t},")
    out.append("};")
    return "\n".join(out)


def strip_c_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def parse_table(path):
    """{minor: {field: value}} from the table array of user/target/py_layouts.c."""
    enum = {}
    for header in (os.path.join(REPO, "include", "py_offsets.h"),
                   LAYOUTS_H):
        with open(header) as f:
            enum.update({k: int(v) for k, v in re.findall(r"((?:CALLER|DICT)_\w+)\s*=\s*(\d+)",
                                                          strip_c_comments(f.read()))})
    with open(path) as f:
        text = strip_c_comments(f.read())
    m = re.search(r"struct\s+py_offsets_entry\s+\w+\s*\[\s*\]\s*=\s*(\{.*?\n\});", text, re.S)
    if not m:
        raise CheckError("%s: no py_offsets_entry array" % path)
    toks = re.findall(r"\{|\}|\.\w+\s*=|,|[^\s,{}]+", m.group(1))

    def value(tok):
        return enum[tok] if tok in enum else int(tok, 0)

    def parse(i):
        d, i = {}, i + 1
        while toks[i] != "}":
            if toks[i] == ",":
                i += 1
                continue
            if not toks[i].startswith("."):
                raise CheckError("%s: unexpected %r in the table" % (path, toks[i]))
            key = toks[i][1:-1].strip()
            if toks[i + 1] == "{":
                v, i = parse(i + 1)
            else:
                v, i = value(toks[i + 1]), i + 2
            d[key] = v
        return d, i + 1

    entries, i = [], 1
    while toks[i] != "}":
        if toks[i] == ",":
            i += 1
            continue
        d, i = parse(i)
        flat = dict(d.pop("bpf", {}))
        flat.update(d)
        entries.append(flat)
    return entries


def compare_table(entries, table, path):
    errors = []
    by_minor = {}
    for t in table:
        if t.get("major") != 3 or t.get("minor") not in MINORS:
            errors.append("%s: unexpected entry %d.%d" % (path, t.get("major"), t.get("minor")))
            continue
        by_minor.setdefault(t["minor"], []).append(t)
    for minor in MINORS:
        rows = by_minor.get(minor, [])
        if not rows:
            errors.append("%s: no entry for 3.%d" % (path, minor))
        for t in rows:
            want = entries[minor][2]
            for k in BPF_ORDER + USER_ORDER:
                if t.get(k, 0) != want[k][0]:
                    errors.append("%s: 3.%d.%d-%d %s = %s, DWARF of %s says %d (%s)" %
                                  (path, minor, t.get("patch_min", 0), t.get("patch_max", 0), k,
                                   t.get(k, 0), entries[minor][0], want[k][0], want[k][1]))
    return errors


TABLE_RE = re.compile(r"^static const struct py_offsets_entry table\[\] = \{\n.*?^\};\n",
                      re.M | re.S)


def update_file(path, text):
    """Replaces the table array of path with text (the rest of the file is hand-written)."""
    with open(path) as f:
        old = f.read()
    if len(TABLE_RE.findall(old)) != 1:
        raise CheckError("%s: cannot find the one table array to replace" % path)
    new = TABLE_RE.sub(lambda m: text + "\n", old)
    if new != old:
        with open(path + ".tmp", "w") as f:
            f.write(new)
        os.replace(path + ".tmp", path)
    return new != old


# _Py_DebugOffsets (3.13+): the positions py_layouts.c reads its fields at, checked against the
# DWARF of each minor's build, and the values a build publishes there against its table entry.
DEBUG_FIELDS_RE = re.compile(r"debug_fields_3(\d+)\[\]\s*=\s*\{(.*?)\n\};", re.S)
DEBUG_FIELD_RE = re.compile(r'\{\s*"([\w.]+)",\s*(\d+),\s*([EB])\((\w+)\)\s*\}')
DEBUG_LAYOUT_RE = re.compile(r"\{\s*3,\s*(\d+),\s*(\d+),\s*debug_fields_3\d+,")


def parse_debug_fields(path):
    """{minor: (size, [(name, position, entry field)])} from py_layouts.c's lists."""
    with open(path) as f:
        text = strip_c_comments(f.read())
    sizes = {int(m): int(sz) for m, sz in DEBUG_LAYOUT_RE.findall(text)}
    out = {}
    for minor, body in DEBUG_FIELDS_RE.findall(text):
        fields = [(n, int(pos), f) for n, pos, _, f in DEBUG_FIELD_RE.findall(body)]
        out[int(minor)] = (sizes.get(int(minor)), fields)
    return out


def check_debug_offsets(path, entries, table, builds, log):
    """Errors of the _Py_DebugOffsets positions in path and of the values builds publish."""
    errors = []
    lists = parse_debug_fields(path)
    for minor in (m for m in MINORS if m >= 13):
        if minor not in lists:
            errors.append("%s: no _Py_DebugOffsets fields for 3.%d" % (path, minor))
            continue
        size, fields = lists[minor]
        lib = entries[minor][1]
        out = gdb_run(lib, [("d", "ptype /o struct _Py_DebugOffsets")])
        lay, total = parse_ptype(out.get("d", ""))
        if size != total:
            errors.append("%s: _Py_DebugOffsets of 3.%d is %s bytes, DWARF of %s says %d" %
                          (path, minor, size, lib, total))
        for name, pos, field in fields:
            if lay.get(name, (None,))[0] != pos:
                errors.append("%s: 3.%d %s at %d, DWARF of %s says %s" %
                              (path, minor, name, pos, lib, lay.get(name, ("nothing",))[0]))
        log("  _Py_DebugOffsets of 3.%d: %d fields at the positions DWARF gives" %
            (minor, len(fields)))
        for b in builds.get(minor, []):
            elf = Elf(b)
            rt = elf.syms.get("_PyRuntime")
            blob = elf.read(rt[0], total) if rt else b""
            if blob[:8] != b"xdebugpy":
                errors.append("%s: _PyRuntime does not start with xdebugpy" % b)
                continue
            version, free = struct.unpack_from("<QQ", blob, 8)
            expect = entry_for(table, minor, (version >> 8) & 0xff)
            if (version >> 16) != 0x300 + minor or free:
                errors.append("%s: _Py_DebugOffsets say version 0x%x, free-threaded %d" %
                              (b, version, free))
                continue
            bad = [(n, v, expect.get(f, 0)) for n, p, f in fields
                   for v in struct.unpack_from("<Q", blob, p) if v != expect.get(f, 0)]
            errors += ["%s: its _Py_DebugOffsets say %s = %d, the table says %d" % (b, n, v, w)
                       for n, v, w in bad]
            log("  _Py_DebugOffsets of %s: %d fields agree with the table" %
                (b, len(fields) - len(bad)))
    return errors


def entry_for(table, minor, patch):
    """The parsed entry of 3.minor whose patch range holds patch (None: any)."""
    for t in table:
        if t.get("major") == 3 and t.get("minor") == minor and (
                patch is None or t.get("patch_min", 0) <= patch <= t.get("patch_max", 0)):
            return t
    raise CheckError("the table has no entry for 3.%d.%s" % (minor, patch))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pyenv-root", help="default: $PYENV_ROOT, `pyenv root`, ~/.pyenv")
    ap.add_argument("--check", nargs="?", const=TABLE_FILE, metavar="FILE",
                    help="compare FILE (default user/target/py_layouts.c) with the builds; exit 1 if "
                    "they disagree")
    ap.add_argument("--update", nargs="?", const=TABLE_FILE, metavar="FILE",
                    help="write the table into FILE (default user/target/py_layouts.c) instead of stdout")
    ap.add_argument("--binary", action="append", metavar="PATH",
                    help="a build without DWARF to check from machine code and data "
                    "(default: %s, if present)" % ", ".join(DEFAULT_BINARIES))
    ap.add_argument("--sid-root", default=SID_ROOT,
                    help="the sid root with Debian's 3.14 and 3.15 (default $PYUPROF_SID_ROOT, "
                    "or %(default)s)")
    ap.add_argument("-v", "--verbose", action="store_true", help="show every check")
    args = ap.parse_args()

    def log(msg):
        if args.verbose:
            print(msg, file=sys.stderr)

    if not shutil.which("gdb"):
        print("gen-py-offsets: gdb not found", file=sys.stderr)
        return 2
    binaries = args.binary if args.binary else [b for b in DEFAULT_BINARIES if os.path.exists(b)]
    errors = []
    workdir = tempfile.mkdtemp(prefix="gen-py-offsets.")
    try:
        entries = build_entries(pyenv_root(args.pyenv_root), args.sid_root, workdir, log)
        table = [dict([("major", 3), ("minor", m), ("patch_min", 0), ("patch_max", 255)] +
                      [(k, v) for k, (v, _) in entries[m][2].items()]) for m in MINORS]
        if args.check:
            table = parse_table(args.check)
            errors += compare_table(entries, table, args.check)
        # The machine-code checks must agree with DWARF (or the file) on every pyenv build ...
        debug_builds = {}
        for minor in MINORS:
            version, lib, _ = entries[minor]
            if minor in HEADER_MINORS:
                continue
            log("machine code and data of %s:" % lib)
            errors += check_binary(lib, entry_for(table, minor, int(version.split(".")[2])), log)
            debug_builds.setdefault(minor, []).append(lib)
        # ... and on the builds that have no DWARF: the sid root's, and those named.
        notes = {}
        for path in [b for m in HEADER_MINORS for b in sid_builds(args.sid_root, m)] + binaries:
            major, minor, patch = Elf(path).version()
            if major != 3 or minor not in MINORS:
                errors.append("%s: Python %d.%d is not in the table" % (path, major, minor))
                continue
            log("machine code and data of %s (%d.%d.%s, no DWARF):" % (path, major, minor, patch))
            errs = check_binary(path, entry_for(table, minor, patch), log)
            errors += errs
            debug_builds.setdefault(minor, []).append(path)
            if not errs:
                shown = ("%s of the sid root" % path[len(args.sid_root.rstrip("/")):]
                         if path.startswith(args.sid_root.rstrip("/") + "/") else path)
                notes.setdefault(minor, []).append("machine code and data of %s (%d.%d.%s) agree"
                                                   % (shown, major, minor, patch))
        if args.check:
            errors += check_debug_offsets(args.check, entries, table, debug_builds, log)
    except (CheckError, OSError) as err:
        errors.append(str(err))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for e in errors:
        print("gen-py-offsets: %s" % e, file=sys.stderr)
    if errors:
        return 1
    if args.check:
        print("gen-py-offsets: %s agrees with the DWARF and machine code of pyenv %s, the "
              "headers of Debian %s, and the machine code, data and _Py_DebugOffsets of %s" %
              (os.path.relpath(args.check),
               ", ".join(entries[m][0] for m in MINORS if m not in HEADER_MINORS),
               ", ".join(entries[m][0] for m in HEADER_MINORS),
               ", ".join(p for m in sorted(debug_builds) for p in debug_builds[m]
                         if m in HEADER_MINORS or p in binaries) or "no other build"),
              file=sys.stderr)
    elif args.update:
        changed = update_file(args.update, format_table(entries, notes))
        print("gen-py-offsets: %s %s" % (os.path.relpath(args.update),
                                          "updated" if changed else "unchanged"), file=sys.stderr)
    else:
        print(format_table(entries, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
