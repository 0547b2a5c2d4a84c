/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPython runtime inside a target process: which ELF object holds the interpreter, its
 * version (from the ELF and memory, never by running it), the layout table that fits, and the
 * file offsets and addresses the probes need.
 */
#ifndef __PYUPROF_PY_TARGET_H
#define __PYUPROF_PY_TARGET_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include "target/elf_syms.h"
#include "target/inline_paths.h"
#include "target/inline_subscr.h"
#include "target/py_layouts.h"
#include "target/thread_block.h"

#define PERF_CHECKS_MAX 4 /* copies of _PyPerfTrampoline_Init's check found, at most */

struct py_target {
	pid_t pid;
	char path[PATH_MAX + 32]; /* how we open the interpreter object (proc_root.h): the
				   * mapping in /proc/PID/map_files, or /proc/PID/root/... */
	char shown[PATH_MAX + 32]; /* what messages call it (proc_root__describe) */
	uint64_t bias;		  /* load bias: runtime address = bias + vaddr */
	unsigned major, minor, patch;
	char version[32];
	const struct py_offsets_entry *offsets;

	uint64_t eval_offset;	 /* file offset of _PyEval_EvalFrameDefault */
	uint64_t eval_addr;	 /* its runtime address */
	uint8_t eval_head[16];	 /* its first bytes, as in the file */
	uint64_t *ret_offsets;	 /* file offsets of its ret instructions */
	int nret;
	uint64_t setter_offset;	 /* _PyInterpreterState_SetEvalFrameFunc, 0 if none */
	uint64_t *setter_ret_offsets; /* its ret instructions */
	int nsetter_ret;
	uint64_t runtime_addr;	 /* &_PyRuntime at run time */
	/* 3.11+: the main interpreter, embedded in _PyRuntime: its offset there (3.13+: as the
	 * build publishes it, _Py_DebugOffsets; before, the table's), 0 before 3.11 */
	uint64_t main_interp_off;
	uint64_t none_addr;	 /* &_Py_NoneStruct at run time (None), 0 if not found */
	/* the types a C function's callable is told by (include/cfuncs.h), at run time: 0 if
	 * not found */
	uint64_t cfunction_type, cmethod_type, methoddescr_type, unicode_type, type_type;
	uint64_t module_type, code_type;
	uint64_t object_type, function_type; /* 3.13's class calls (tramp_code.S: .Lcf_init) */
	uint64_t missing_addr; /* 3.12+: sys.monitoring.MISSING (.symtab only), 0 if not found */
	/* 3.12+: the C API the page's sys.monitoring tool is taken and given back with
	 * (inject/tramp_cfuncs.h), at run time; 0 if not found */
	struct {
		uint64_t sys_getobject, getattr, long_from, vectorcall, decref, get_exc, set_exc;
		uint64_t intern, type_lookup; /* 3.13's class calls (.Lcf_init) */
	} api;
	uint64_t perf_init_offset; /* _PyPerfTrampoline_Init (3.12+, .symtab only), 0 if none */
	uint64_t *perf_ret_offsets;
	int nperf_ret;
	/* without that symbol (a stripped 3.12+): the entries of its copies (py_target.c's
	 * find_perf_checks) */
	uint64_t perf_check_offsets[PERF_CHECKS_MAX];
	int nperf_check;
	uint64_t inline_init_offset; /* 3.13's inline __init__: the object's making, or 0 */
	uint32_t inline_init_reg;     /* the frame's register there (enum frame_reg; inline_init.h) */
	uint64_t inline_getitem_offset; /* 3.11's inline __getitem__ (inline_subscr.h), or 0 */
	uint32_t inline_getitem_reg;	/* the frame's register there (enum frame_reg) */
	struct usdt_probe exit_probe; /* 3.11 python:function__return, used instead of ret sites */
	struct inline_paths paths; /* 3.12+: the calls whose C budget the trampoline hands back */
	/* what the trampoline's guard of the C stack reads (tramp.h) */
	uint64_t seterr_addr;	 /* PyErr_SetString at run time, 0 if not found */
	uint64_t recursion_error_addr; /* &PyExc_RecursionError at run time, 0 if not found */
	uint64_t main_stack_low, main_stack_span; /* thread_block__main_stack; 0: not known */
	enum libc_kind libc;	 /* thread_block__libc */
	/* glibc's thread blocks may be read in it: its libc is glibc (and, attached, each
	 * thread's block checked out: thread_block__check); set by its recording */
	bool thread_blocks;
};

/*
 * Finds the interpreter in pid. Returns 0, or -errno with a one-line reason in why:
 * -ESRCH no such process, -ENOEXEC not a Python process (no interpreter mapped yet),
 * -ENOTSUP a Python version outside the table, -EINVAL layout cross-checks failed.
 */
int py_target__find(pid_t pid, struct py_target *t, char *why, size_t why_len);
void py_target__free(struct py_target *t);

/*
 * Attach mode, before tracing: the code objects of the frames running in the target's threads,
 * read through the table, must be code objects. Returns 0 (also when no frame could be read),
 * or -EINVAL with why set when the layout does not fit this process.
 */
/* The frame the thread state tstate is running (read from the target), or 0. */
uint64_t py_target__current_frame(const struct py_target *t, uint64_t tstate);

/* The code object (or None) frame runs, read from the target: 0 when unreadable. 3.14+ store
 * it as a _PyStackRef, whose tag bits are cleared here. */
uint64_t py_target__frame_code(const struct py_target *t, uint64_t frame);

/*
 * A str's characters, raw, as the BPF side copies them (copy_str in pyuprof.bpf.c): up to cap
 * bytes into dst, its length in characters into *len_out. Returns the STR_* kind, or
 * STR_UNREADABLE.
 */
uint8_t py_target__read_str(const struct py_target *t, uint64_t str, char *dst, size_t cap,
			    uint32_t *len_out);

int py_target__check_live(const struct py_target *t, char *why, size_t why_len);

#endif /* __PYUPROF_PY_TARGET_H */
