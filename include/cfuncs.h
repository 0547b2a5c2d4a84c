/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * C functions in the profile, as cProfile counts them with builtins=True: every call of a
 * builtin function or method (a PyCFunction, or a method descriptor CPython calls with its
 * object), made from Python code. The trampoline page runs the code that sees them, in the
 * target, with the GIL held, and stages a record per call and per return in the batch mode's
 * staging area (include/stage.h: STAGE_TAG_CCALL, _CRET, _CSYNC); the BPF side reads a C
 * function's names once, at the flush that sends its identity (bpf/cfuncs.bpf.h), and user
 * space names it as cProfile does (user/cfunc_name.c).
 *
 * How the page hears of C calls (docs/how-it-works.md, "C functions", has the why):
 *  - <= 3.11 (CF_PROFILE): a profile function of the page's in the thread's profile slot
 *    (PyThreadState.c_profilefunc), the slot sys.setprofile and cProfile use. The page takes
 *    it at a thread's first staged call, only if it is empty, writing the slot and CPython's
 *    tracing flag as _PyEval_SetProfile does (no audit event: nothing of the program's runs).
 *    The function gives the slot back (NULL) at the first event it gets once pyuprof does not
 *    record C functions (STAGE_CFUNCS or STAGE_ON 0: a stop, pyuprof killed, a forked child),
 *    and CPython turns its tracing off as the function returns.
 *  - 3.12+ (CF_MONITOR): the C-call events (CALL, with C_RETURN and C_RAISE) of sys.monitoring's
 *    tool 7, sys.settrace's, which takes none of them and which no program reaches through
 *    sys.monitoring (ids 0-5); its callbacks are objects of the page's (immortal PyCFunction
 *    objects whose vectorcall is the page's code). user/inject/tramp_cfuncs.c takes and
 *    gives them back.
 */
#ifndef __PYUPROF_CFUNCS_H
#define __PYUPROF_CFUNCS_H

/* b_cf_mode (tramp_code.S) */
#define CF_NONE 0
#define CF_PROFILE 1
#define CF_MONITOR 2

/* PyCFunctionObject (3.8+): its PyMethodDef, the object it is bound to, __module__ */
#define CF_M_ML 16
#define CF_M_SELF 24
#define CF_M_MODULE 32
#define CF_M_VECTORCALL 48 /* (a method descriptor's too) */
/* PyMethodDescrObject: the type that defines it, its PyMethodDef */
#define CF_D_TYPE 16
#define CF_D_METHOD 40
/* PyMethodDef: the name (a C string), its flags (METH_*) */
#define CF_ML_NAME 0
#define CF_ML_FLAGS 16
#define CF_METH_KEYWORDS 0x2
#define CF_METH_O 0x8
#define CF_METH_FASTCALL 0x80
#define CF_ML_SIZE 32
/* PyTypeObject (a public struct, the same 3.8-3.13): tp_methods, tp_mro */
#define CF_TP_FLAGS 168
#define CF_TP_METHODS 232
#define CF_TP_MRO 344
/* PyTupleObject: ob_size, ob_item */
#define CF_TUPLE_SIZE 16
#define CF_TUPLE_ITEMS 24
/* 3.13: PyTypeObject's tp_alloc, tp_new, tp_vectorcall; its flags Py_TPFLAGS_INLINE_VALUES,
 * _IMMUTABLETYPE, _HEAPTYPE; PyFunctionObject's func_code; PyCodeObject's co_argcount,
 * co_kwonlyargcount, co_framesize (words) and flags (CO_OPTIMIZED, CO_VARARGS,
 * CO_VARKEYWORDS); PyThreadState's datastack_top and _limit; the words of the shim frame
 * CPython pushes below __init__'s (_Py_InitCleanup.co_framesize): .Lcf_init, .Lcfw_shim */
#define CF_TP_ALLOC 304
#define CF_TP_NEW 312
#define CF_TP_VECTORCALL 400
#define CF_TPFLAGS_INLINE_VALUES (1 << 2)
#define CF_TPFLAGS_IMMUTABLE (1 << 8)
#define CF_TPFLAGS_HEAP (1 << 9)
#define CF_FUNC_CODE 48
#define CF_CO_ARGCOUNT 52
#define CF_CO_KWONLYARGCOUNT 60
#define CF_CO_FRAMESIZE 76
#define CF_CO_OPTIMIZED 0x1
#define CF_CO_VARARGS 0x4
#define CF_CO_VARKEYWORDS 0x8
#define CF_TS_DATASTACK_TOP 240
#define CF_TS_DATASTACK_LIMIT 248
#define CF_SHIM_WORDS 11
/* Py_TPFLAGS_TYPE_SUBCLASS: the object is a type */
#define CF_TPFLAGS_TYPE (1UL << 31)

/* What the page makes of a C function by its name (tramp_code.S: .Lcf_risky), kept in the low
 * bits of its word in the staging area's table (stage.h: STAGE_CTABLE): one that may start a
 * profiler, whose call is wrapped (its return event kept from that profiler); 3.12+, one of
 * sys.monitoring's that read the interpreter's table of events, called with the page's event
 * out of it. */
#define CF_RISKY_STARTS 1
#define CF_RISKY_READS 2

/* What the page's wrap of one C call does (tramp_code.S: .Lcf_swap, .Lcf_wrap), in the low bits
 * of the callable in its ring entry (stage.h: STAGE_CF_SWAPS): keeps its table-reading from the
 * page's event (CF_RISKY_READS); gives back the recursion unit its generic path takes where
 * CPython's specialised one does not (3.11-3.13); keeps a profiler it starts from its return
 * event (CF_RISKY_STARTS). */
#define CF_SWAP_READS 1
#define CF_SWAP_UNIT 2
#define CF_SWAP_STARTS 4
#define CF_SWAP_INIT 8 /* 3.13: a class call CPython runs inline natively (.Lcf_init) */
/* b_unit_flags: a builtin of METH_FASTCALL | METH_KEYWORDS called with keywords is not
 * specialised (3.13: CALL_KW) */
#define CF_UNIT_KW_BUILTIN 1

/* <= 3.11: the events a profile function gets (Include/cpython/pystate.h) */
#define CF_PYTRACE_C_CALL 4
#define CF_PYTRACE_C_EXCEPTION 5
#define CF_PYTRACE_C_RETURN 6

/* 3.12+: sys.monitoring's CALL event and its tools (Include/cpython/monitoring.h); the
 * numbers of its other events and how many there are change with the version (3.14 added
 * BRANCH_LEFT, BRANCH_RIGHT): struct cf_page (user/inject/tramp_cfuncs.h) has them */
#define CF_EV_CALL 4
#define CF_TOOLS 8 /* PY_MONITORING_TOOL_IDS */

#endif /* __PYUPROF_CFUNCS_H */
