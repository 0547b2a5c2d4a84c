// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Building the trampoline page, finding it again in a target, or placing it there through
 * system calls made by the target: an anonymous page for the name and the bytes, memfd_create,
 * pwrite, mmap (private, read+execute), close, munmap. Each call is its own injection, so the
 * thread stands with its own registers between two of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/log.h"
#include "base/proc.h"
#include "cfuncs.h"
#include "inject/staging.h"
#include "inject/tramp.h"
#include "target/thread_block.h"
#include "inject/tramp_cfuncs.h"
#include "stage.h"

/* the page's identity, one more whenever what a page and its staging area mean to each other
 * changes (3: the batch's generation and STAGE_TOP; 4: records by their first word's tag; 5:
 * STAGE_ON_PERCALL, the resume record, STAGE_TOP put back only if it was the caller): a
 * staging area is shared only with a page of the same identity (find_stage) */
#define IDENT "pyuprof-tramp 5"
/* the scratch area: our `syscall; ud2` stub, the memfd's name, the page's bytes; the page is
 * mapped right after it, in address space reserved with it (its address goes into the page's
 * bytes: tramp__build) */
#define SCRATCH_STUB 0
#define SCRATCH_NAME 16
#define SCRATCH_PAGE 64
#define SCRATCH_LEN ((SCRATCH_PAGE + TRAMP_PAGE + 4095) / 4096 * 4096)

/* tramp_code.S: the code and parameters copied into the page (never run in pyuprof) */
extern const uint8_t tramp_code[], tramp_code_end[], tramp_head_push[], tramp_head_call[],
	tramp_return_nop[], tramp_body_budget[], tramp_body_plain[], tramp_replay[], tramp_params[],
	tramp_batch[], tramp_batch_call[], tramp_batch_budget[], tramp_flush[], tramp_guard[],
	tramp_stack_nop[], tramp_mon_call[], tramp_mon_ret[], tramp_mon_obj_call[],
	tramp_mon_obj_ret[], tramp_mon_def[], tramp_mon_name[], tramp_mon_meth[];

/* tramp_code.S's parameter block, field for field */
struct tramp_params {
	uint64_t slot;
	uint64_t eval_start, eval_len, cold_start, cold_len;
	uint32_t units, c_off, limit_off, remaining_off, depth_cap, pad;
	char ident[16];
	uint64_t ident_eval;
	uint64_t pad2;
	/* the stack guard's, the hook's */
	uint64_t margin, main_floor, main_room, main_low, main_span, exc, seterr, hook_unset;
	uint32_t blk_off, stk_mode, hook_interp_off, hook_slot;
	char msg[40];
	/* the batch path's (TRAMP_BATCH) */
	uint64_t stage, main_interp, none, code_mask;
	uint32_t interp_off, frame_arg, tid_off, code_off, back_off, owner_off, mode, cframe_off,
		cfcur_off, cur_off, flags_off, name_off, file_off, line_off, hash_off, len_off,
		data_off, chains;
	int32_t gen_state;
	uint32_t version_off, gen_done;
	/* C functions (include/cfuncs.h) */
	uint32_t cf_mode, pfunc_off, use_mode, use_off, fframe_off, pobj_off;
	uint64_t tstate_cur;
	uint64_t cfunction_type, cmethod_type, methoddescr_type, missing, code_type;
	uint32_t gil_off, holder_off;
	uint32_t unit_off, unit_flags, ip_off;
	int32_t kw_at;
	uint32_t kw_op, warm_mode, call_op, init_on;
	uint64_t module_type, unicode_type, type_type, object_type, function_type, intern,
		type_lookup, shim_words;
	uint32_t ds_top_off, ds_limit_off;
	struct cf_page cf;
	/* (tramp_params is 64-aligned, p_walk 16-aligned in tramp_code.S) */
	struct inline_site walk[INLINE_SITES_MAX + 1] __attribute__((aligned(16)));
};

/*
 * Length of a first instruction that means the same wherever it runs: push of a register,
 * endbr64, mov %rsp,%rbp. Anything else (a rip-relative operand, a branch) is refused rather
 * than decoded: every build here starts with push %r15.
 */
static int replayable(const uint8_t *b)
{
	if (b[0] >= 0x50 && b[0] <= 0x57)
		return 1;
	if (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return 2;
	if (b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xe5)
		return 3;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		return 4;
	return 0;
}

static size_t at(const uint8_t *sym)
{
	return (size_t)(sym - tramp_code);
}

bool tramp__wanted(const struct py_target *t, enum tramp_kind kind)
{
	return kind != TRAMP_PASS || (t->offsets && t->offsets->eval_c_units);
}

uint64_t tramp__hook_offset(enum tramp_kind kind)
{
	return kind == TRAMP_BATCH ? at(tramp_batch) : at(tramp_guard);
}

uint64_t tramp__flush_offset(void)
{
	return at(tramp_flush);
}

uint64_t tramp__stack_offset(void)
{
	return at(tramp_stack_nop);
}

enum tramp_stack_mode tramp__stack_mode(const struct py_target *t, const char **why)
{
	const struct py_offsets_entry *o = t->offsets;

	*why = NULL;
	if (!o)
		return TRAMP_STACK_NONE;
	if (t->major > 3 || t->minor >= 14) {
		*why = "CPython checks its C stack itself";
		return TRAMP_STACK_NONE;
	}
	if (!t->main_stack_span && !t->thread_blocks) {
		*why = "no thread's stack bounds are known";
		return TRAMP_STACK_NONE;
	}
	if (o->eval_c_units)
		return TRAMP_STACK_BUDGET;
	if (!t->seterr_addr || !t->recursion_error_addr) {
		*why = "PyErr_SetString or PyExc_RecursionError is not in its symbols";
		return TRAMP_STACK_NONE;
	}
	return TRAMP_STACK_RAISE;
}

/* The stack guard's parameters (tramp.h), and the hook's, which the page puts back once
 * pyuprof is gone (never for a pass-through page: nothing probes it). */
static void guard_params(const struct py_target *t, enum tramp_kind kind, struct tramp_params *p)
{
	const struct py_offsets_entry *o = t->offsets;
	const char *why;

	p->stk_mode = tramp__stack_mode(t, &why);
	/* no guard: every stack pointer has room, in one compare; but where a budget is handed
	 * back (3.12, 3.13), one whose stack's bounds are not known is told so (the hand-back's
	 * depth bound) */
	if (p->stk_mode == TRAMP_STACK_NONE && !(o && o->eval_c_units))
		p->main_room = ~0ULL;
	if (p->stk_mode != TRAMP_STACK_NONE) {
		p->margin = TRAMP_STACK_MARGIN;
		p->main_low = t->main_stack_low;
		p->main_span = t->main_stack_span;
		if (p->main_span > p->margin) {
			p->main_floor = p->main_low + p->margin;
			p->main_room = p->main_span - p->margin;
		}
		p->blk_off = t->thread_blocks ? thread_block__own()->stack_off : 0;
		p->exc = t->recursion_error_addr;
		p->seterr = t->seterr_addr;
		snprintf(p->msg, sizeof(p->msg), "maximum recursion depth exceeded");
	}
	/* 3.9+: the thread state is the hook's first argument */
	if (o && kind != TRAMP_PASS && o->bpf.has_tstate_arg && o->PyInterpreterState_hook) {
		p->hook_interp_off = o->bpf.PyThreadState_interp;
		p->hook_slot = o->PyInterpreterState_hook;
		p->hook_unset = o->bpf.PyInterpreterState_eval_frame ? 0 : t->eval_addr;
	}
}

/* The batch path's parameters: where it reads the target (include/py_offsets.h's fields). */
/*
 * C functions, 3.12+ (include/cfuncs.h): the page's tool and its callbacks, two PyCFunction
 * objects in the page; addr is the page's address in the target (0: not known, the objects
 * are left empty).
 */
static void monitor_params(const struct py_target *t, uint64_t addr, uint8_t *page,
			   struct tramp_params *p)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t v;

	p->cf_mode = CF_MONITOR;
	p->cfunction_type = t->cfunction_type;
	p->cmethod_type = t->cmethod_type;
	p->methoddescr_type = t->methoddescr_type;
	p->missing = t->missing_addr;
	p->code_type = t->code_type;
	p->none = t->none_addr;
	p->cf.interp = (char *)(uintptr_t)(t->runtime_addr + t->main_interp_off);
	p->cf.callables_off = o->PyInterpreterState_monitoring_callables;
	p->cf.names_off = o->PyInterpreterState_monitoring_tool_names;
	p->cf.monitors_off = o->PyInterpreterState_monitors;
	/* the thread a callback runs in: the GIL's last holder (0: its C calls name no frame) */
	if (o->PyInterpreterState_ceval_gil && o->gil_last_holder) {
		p->gil_off = o->PyInterpreterState_ceval_gil;
		p->holder_off = o->gil_last_holder;
	}
	/* 3.14 numbers its events anew (BRANCH_LEFT, BRANCH_RIGHT: Include/cpython/monitoring.h) */
	if (t->major == 3 && t->minor < 14) {
		p->cf.nevents = 17;
		p->cf.ungrouped = 15;
		p->cf.ev_c_return = 15;
		p->cf.ev_c_raise = 16;
	} else {
		p->cf.nevents = 19;
		p->cf.ungrouped = 16;
		p->cf.ev_c_return = 16;
		p->cf.ev_c_raise = 17;
	}
	p->cf.sys_getobject = (void *)(uintptr_t)t->api.sys_getobject;
	p->cf.getattr = (void *)(uintptr_t)t->api.getattr;
	p->cf.long_from = (void *)(uintptr_t)t->api.long_from;
	p->cf.vectorcall = (void *)(uintptr_t)t->api.vectorcall;
	p->cf.decref = (void *)(uintptr_t)t->api.decref;
	p->cf.get_exc = (void *)(uintptr_t)t->api.get_exc;
	p->cf.set_exc = (void *)(uintptr_t)t->api.set_exc;
	p->cf.module_type = (void *)(uintptr_t)t->module_type;
	p->cf.cfunction_type = (void *)(uintptr_t)t->cfunction_type;
	memcpy(p->cf.s_monitoring, "monitoring", sizeof("monitoring"));
	memcpy(p->cf.s_set_events, "set_events", sizeof("set_events"));
	if (!addr)
		return;
	p->cf.obj_call = (void *)(uintptr_t)(addr + at(tramp_mon_obj_call));
	p->cf.obj_ret = (void *)(uintptr_t)(addr + at(tramp_mon_obj_ret));
	/* each object: type, m_ml, and its vectorcall (words 1, 2 and 6); the method's name and
	 * meth */
#define PUT(sym, word, value) (v = (value), memcpy(page + at(sym) + 8 * (word), &v, 8))
	PUT(tramp_mon_obj_call, 1, t->cfunction_type);
	PUT(tramp_mon_obj_call, 2, addr + at(tramp_mon_def));
	PUT(tramp_mon_obj_call, 6, addr + at(tramp_mon_call));
	PUT(tramp_mon_obj_ret, 1, t->cfunction_type);
	PUT(tramp_mon_obj_ret, 2, addr + at(tramp_mon_def));
	PUT(tramp_mon_obj_ret, 6, addr + at(tramp_mon_ret));
	PUT(tramp_mon_def, 0, addr + at(tramp_mon_name));
	PUT(tramp_mon_def, 1, addr + at(tramp_mon_meth));
#undef PUT
}

/*
 * 3.11-3.13: the unit of recursion budget that CPython's specialised call of a C function does
 * not take and its generic path, which watching C calls forces, does (tramp_code.S:
 * .Lcf_units): where it comes from (3.11: PyThreadState.recursion_remaining, the one budget of
 * Python and C calls; 3.12, 3.13: c_recursion_remaining), and how the page tells a call with
 * keywords from its instruction (_PyInterpreterFrame.prev_instr, 3.13 instr_ptr: 3.11's
 * KW_NAMES is three code units before the CALL, past PRECALL and its cache; 3.12's just before
 * it; 3.13's CALL_KW is its own instruction, instrumented). The offsets and opcodes are the
 * same in every build of a version (Include/cpython/pystate.h, pycore_frame.h, opcode.h; read
 * from pyenv's 3.11.7, 3.12.1 and 3.13.0 with gdb, 2026-11-28). 3.8-3.10 specialise nothing,
 * 3.14+ check the C stack by its address: no unit to give there.
 */
static void unit_params(const struct py_target *t, struct tramp_params *p)
{
	const struct py_offsets_entry *o = t->offsets;

	if (t->major != 3 || t->minor < 11 || t->minor > 13 || !p->cf_mode)
		return;
	p->ip_off = 56;
	p->cfunction_type = t->cfunction_type; /* (3.12+: monitor_params' too) */
	p->module_type = t->module_type;
	p->unicode_type = t->unicode_type;
	if (t->minor == 11) {
		/* recursion_remaining: 32 bytes before c_profilefunc (checked: the layout's) */
		if (o->PyThreadState_c_profilefunc != 64)
			return;
		p->unit_off = 32;
		p->kw_at = -6;
		p->kw_op = 172; /* KW_NAMES */
		p->warm_mode = 1;
	} else {
		p->unit_off = o->PyThreadState_c_recursion_remaining;
		p->kw_at = t->minor == 12 ? -2 : 0;
		p->kw_op = t->minor == 12 ? 172 : 245; /* KW_NAMES, INSTRUMENTED_CALL_KW */
		p->unit_flags = t->minor == 13 ? CF_UNIT_KW_BUILTIN : 0;
		p->warm_mode = 2;
		p->call_op = t->minor == 12 ? 241 : 244; /* INSTRUMENTED_CALL */
	}
	/* 3.13: a class call CPython runs inline (.Lcf_init); the offsets in include/cfuncs.h,
	 * read from pyenv's 3.13.0 with gdb (public structs, the same in every 3.13 build) */
	if (t->minor == 13 && t->type_type && t->object_type && t->function_type &&
	    t->api.intern && t->api.type_lookup && o->eval_c_units &&
	    o->PyThreadState_py_recursion_remaining && p->cf_mode == CF_MONITOR) {
		p->init_on = 1;
		p->type_type = t->type_type;
		p->object_type = t->object_type;
		p->function_type = t->function_type;
		p->intern = t->api.intern;
		p->type_lookup = t->api.type_lookup;
		p->shim_words = CF_SHIM_WORDS;
		p->ds_top_off = CF_TS_DATASTACK_TOP;
		p->ds_limit_off = CF_TS_DATASTACK_LIMIT;
	}
	if (!p->cfunction_type || !p->module_type || !p->unicode_type)
		p->unit_off = 0;
}

/* Whether t has what the page's sys.monitoring tool needs (3.12+). */
static bool monitor_possible(const struct py_target *t)
{
	const struct py_offsets_entry *o = t->offsets;

	return o->PyInterpreterState_monitoring_callables && o->PyInterpreterState_monitors &&
	       o->PyInterpreterState_monitoring_tool_names && t->main_interp_off &&
	       t->runtime_addr && t->none_addr && t->cfunction_type && t->methoddescr_type &&
	       t->module_type && t->code_type && t->api.sys_getobject && t->api.getattr &&
	       t->api.long_from && t->api.vectorcall && t->api.decref && t->api.get_exc &&
	       t->api.set_exc;
}

static void batch_params(const struct py_target *t, uint64_t stage, uint64_t addr,
			 uint8_t *page, struct tramp_params *p)
{
	const struct py_offsets_entry *o = t->offsets;
	const struct py_offsets *b = &o->bpf;

	p->stage = stage;
	p->tid_off = thread_block__own()->tid_off;
	/* 3.12+: an interpreter may have a GIL of its own; only the main one stages */
	if (t->major == 3 && t->minor >= 12) {
		p->interp_off = b->PyThreadState_interp;
		p->main_interp = t->runtime_addr + t->main_interp_off;
	}
	p->frame_arg = b->eval_frame_arg;
	p->code_off = b->frame_code;
	p->code_mask = ~(uint64_t)b->stackref_tags;
	p->back_off = b->frame_back;
	p->owner_off = b->interp_frame ? b->frame_owner : 0;
	p->mode = b->caller_mode;
	p->cframe_off = b->PyThreadState_cframe;
	p->cfcur_off = b->PyCFrame_current_frame;
	p->cur_off = b->PyThreadState_current_frame;
	p->flags_off = b->PyCodeObject_co_flags;
	p->name_off = b->PyCodeObject_co_name;
	p->file_off = b->PyCodeObject_co_filename;
	p->line_off = b->PyCodeObject_co_firstlineno;
	p->hash_off = b->PyUnicode_length + 8; /* str: length, then hash, in every version */
	p->len_off = b->PyUnicode_length;
	p->data_off = b->PyASCIIObject_size;
	p->version_off = o->PyCodeObject_co_version;
	/* 3.11+ runs some frames inline, unseen, whose code objects a chain may name */
	p->chains = t->major > 3 || t->minor >= 11;
	/* 3.12+: an await or yield from whose generator returns is dearer under any hook than
	 * natively (bench/hook_kinds.py), and the compensation must know which exits those are:
	 * the state byte before a generator's frame (PyCoroObject and PyAsyncGenObject share the
	 * head of PyGenObject) */
	if (o->PyGenObject_gi_iframe && t->none_addr) {
		p->gen_state = (int32_t)o->PyGenObject_gi_frame_state - (int32_t)o->PyGenObject_gi_iframe;
		p->gen_done = o->PyGenObject_finished_state;
		p->none = t->none_addr;
	}
	/* C functions: <= 3.11, a profile function in each thread's slot (include/cfuncs.h) */
	if (t->major == 3 && t->minor <= 11 && o->PyThreadState_c_profilefunc &&
	    o->PyRuntime_tstate_current && t->runtime_addr) {
		p->cf_mode = CF_PROFILE;
		p->pfunc_off = o->PyThreadState_c_profilefunc;
		/* tracing's flag: an int in the thread state; the first member of its cframe, an
		 * int (3.10) or a byte set to 255 (3.11) */
		p->use_mode = o->PyThreadState_use_tracing ? 1 : t->minor == 10 ? 2 : 3;
		p->use_off = o->PyThreadState_use_tracing ? o->PyThreadState_use_tracing
							 : o->PyThreadState_trace_cframe;
		p->fframe_off = o->PyFrameObject_f_frame;
		p->pobj_off = o->PyThreadState_c_profileobj;
		p->tstate_cur = t->runtime_addr + o->PyRuntime_tstate_current;
	}
	/* 3.12+: a sys.monitoring tool of the page's */
	if ((t->major > 3 || t->minor >= 12) && monitor_possible(t))
		monitor_params(t, addr, page, p);
	unit_params(t, p);
}

int tramp__build(const struct py_target *t, enum tramp_kind kind, uint64_t stage, uint64_t addr,
		 uint8_t page[TRAMP_PAGE], char *why, size_t why_len)
{
	const struct py_offsets_entry *o = t->offsets;
	int len = kind != TRAMP_PASS ? replayable(t->eval_head) : 0;
	size_t size = at(tramp_code_end), call = at(tramp_head_call) + 1;
	struct tramp_params p;
	int32_t rel;

	if (kind != TRAMP_PASS && !len) {
		snprintf(why, why_len,
			 "_PyEval_EvalFrameDefault starts with %02x %02x %02x %02x, which the "
			 "trampoline does not replay",
			 t->eval_head[0], t->eval_head[1], t->eval_head[2], t->eval_head[3]);
		return -ENOTSUP;
	}
	/* the probes' offsets are fixed (probes.c), the parameters are tramp_code.S's */
	if (kind == TRAMP_BATCH && !thread_block__own()->tid_off) {
		snprintf(why, why_len, "no thread key for the batch path (glibc's thread block "
				       "does not hold the thread's tid where pyuprof looks)");
		return -ENOTSUP;
	}
	if (kind == TRAMP_BATCH && !stage) {
		snprintf(why, why_len, "a batch page without its staging area");
		return -EINVAL;
	}
	if (at(tramp_return_nop) != TRAMP_RETURN_OFFSET || size > TRAMP_PAGE ||
	    size - at(tramp_params) != sizeof(p)) {
		snprintf(why, why_len, "the trampoline's template does not have its layout");
		return -ENOTSUP;
	}
	memset(page, 0xcc, TRAMP_PAGE); /* int3 wherever nothing should run */
	memcpy(page, tramp_code, size);
	/* the head calls the hand-back (3.12+) or the function directly */
	if (o && o->eval_c_units) {
		rel = (int32_t)(at(tramp_body_budget) - (call + 4));
		memcpy(page + call, &rel, sizeof(rel));
		/* the batch path's call becomes a jmp to its own hand-back (same length) */
		call = at(tramp_batch_call);
		page[call] = 0xe9;
		rel = (int32_t)(at(tramp_batch_budget) - (call + 5));
		memcpy(page + call + 1, &rel, sizeof(rel));
	}
	/* 3.8: the frame is the hook's first argument */
	if (o && !o->bpf.eval_frame_arg)
		page[at(tramp_head_push)] = 0x57; /* push %rdi */
	memcpy(page + at(tramp_replay), t->eval_head, (size_t)len); /* nops after it */
	memset(&p, 0, sizeof(p));
	p.slot = t->eval_addr + (uint64_t)len;
	if (o && o->eval_c_units) {
		p.eval_start = t->paths.eval_start;
		p.eval_len = t->paths.eval_len;
		p.cold_start = t->paths.cold_start;
		p.cold_len = t->paths.cold_len;
		p.units = o->eval_c_units;
		p.c_off = o->PyThreadState_c_recursion_remaining;
		p.limit_off = o->PyThreadState_py_recursion_limit;
		p.remaining_off = o->PyThreadState_py_recursion_remaining;
		p.depth_cap = TRAMP_HANDBACK_DEPTH;
		memcpy(p.walk, t->paths.site, (size_t)t->paths.n * sizeof(p.walk[0]));
	}
	memcpy(p.ident, IDENT, sizeof(IDENT));
	p.ident_eval = t->eval_addr;
	guard_params(t, kind, &p);
	if (kind == TRAMP_BATCH)
		batch_params(t, stage, addr, page, &p);
	/* make bench: a flush nop the kernel cannot turn into a call (4 + 1 bytes), whose probe
	 * traps as on kernels before 6.18 */
	if (kind == TRAMP_BATCH && getenv("PYUPROF_BENCH_FLUSH_TRAP"))
		memcpy(page + at(tramp_flush), "\x0f\x1f\x40\x00\x90", 5);
	memcpy(page + at(tramp_params), &p, sizeof(p));
	return 0;
}

/* One trampoline mapping of pid: its start and the path of the file behind it. */
struct page_ref {
	uint64_t start;
	char path[96];
};

/* Reads the page from the file behind it (not as memory: the kernel rewrites probed nops in
 * the process's copy). Returns 0 or -errno. */
static int read_file(const char *path, uint8_t *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, buf, TRAMP_PAGE, 0) != TRAMP_PAGE)
		err = -EIO;
	close(fd);
	return err;
}

/*
 * The mappings of ours in pid: read+execute, private, at file offset 0 of a memfd named
 * pyuprof-tramp (placed by any version of pyuprof). Returns how many are in refs (at most max),
 * or -errno.
 */
static int list_pages(pid_t pid, struct page_ref *refs, int max)
{
	char path[64], line[512];
	unsigned long long s, e, off;
	char perms[8];
	int pos, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4 ||
		    !pos || strncmp(line + pos, "/memfd:" TRAMP_NAME " ", 7 + strlen(TRAMP_NAME) + 1) ||
		    strcmp(perms, "r-xp") || off || e - s != TRAMP_PAGE)
			continue;
		refs[n].start = s;
		snprintf(refs[n++].path, sizeof(refs[0].path), "/proc/%d/map_files/%llx-%llx", pid,
			 s, e);
	}
	fclose(f);
	return n;
}

#define MAX_PAGES 16 /* pages of ours looked at in one process */

/* A mapping of ours in pid (at only, if not 0) whose file holds the page built for t, kind
 * and stage at its address. */
static int find_placed(pid_t pid, const struct py_target *t, enum tramp_kind kind,
		       uint64_t stage, uint64_t only, struct tramp *out)
{
	struct page_ref refs[MAX_PAGES];
	uint8_t *got = malloc(TRAMP_PAGE), *want = malloc(TRAMP_PAGE);
	int i, n = list_pages(pid, refs, MAX_PAGES), err = n < 0 ? n : -ENOENT;
	char why[256];

	for (i = 0; got && want && i < n && err; i++) {
		if ((only && refs[i].start != only) || read_file(refs[i].path, got) ||
		    tramp__build(t, kind, stage, refs[i].start, want, why, sizeof(why)) ||
		    memcmp(got, want, TRAMP_PAGE))
			continue;
		out->addr = refs[i].start;
		snprintf(out->path, sizeof(out->path), "%s", refs[i].path);
		err = 0;
	}
	free(want);
	free(got);
	return got && want ? err : -ENOMEM;
}

int tramp__restore(pid_t pid)
{
	struct page_ref refs[MAX_PAGES];
	uint8_t *file = malloc(TRAMP_PAGE), *mem = malloc(TRAMP_PAGE);
	int i, n = list_pages(pid, refs, MAX_PAGES), fixed = 0, err = n < 0 ? n : 0;
	size_t at, len;

	if (!file || !mem)
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		err = read_file(refs[i].path, file);
		if (!err)
			err = proc__read(pid, refs[i].start, mem, TRAMP_PAGE);
		/* each run of differing bytes is written back as one */
		for (at = 0; !err && at < TRAMP_PAGE; at += len) {
			for (len = 0; at + len < TRAMP_PAGE && mem[at + len] != file[at + len]; len++)
				;
			if (!len) {
				len = 1;
				continue;
			}
			err = proc__poke(pid, refs[i].start + at, file + at, len);
			fixed += (int)len;
		}
	}
	free(file);
	free(mem);
	return err ? err : fixed;
}

static int call(tramp_run_fn run, void *ctx, uint64_t via, long nr, uint64_t a0, uint64_t a1,
		uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret)
{
	struct inject_call c = { .nr = nr, .args = { a0, a1, a2, a3, a4, a5 }, .via = via };
	int err = run(ctx, &c);

	if (err)
		return err;
	*ret = c.ret;
	return c.ret < 0 && c.ret > -4096 ? (int)c.ret : 0;
}

/*
 * Maps the page (built here, for t, kind and the address it goes to) into pid; *addr where. A
 * batch page with no
 * staging area yet (*stage 0) gets one first, wiped in every child the target forks: a child
 * must start with staging off, never with a copy of its parent's batch. Returns 0 or -errno
 * with why set.
 *
 * The scratch page is executable, so that every call after the first runs from its own
 * `syscall; ud2`: a thread let go in one of them by pyuprof's death (SIGKILL) dies of SIGILL
 * there rather than running on (inject.c). A kernel that refuses writable code leaves them on
 * the vDSO's instruction, guarded by the stack pointer alone.
 */
static int place(pid_t pid, const struct py_target *t, enum tramp_kind kind, uint64_t *stage,
		 uint8_t *page, tramp_run_fn run, void *ctx, uint64_t *addr, char *why,
		 size_t why_len)
{
	static const uint8_t stub[] = { 0x0f, 0x05, 0x0f, 0x0b }; /* syscall; ud2 */
	char name[SCRATCH_PAGE - SCRATCH_NAME] = TRAMP_NAME;
	int64_t scratch = 0, fd = -1, n, r, area = 0;
	const char *step = "mmap";
	uint64_t via = 0;
	int err;

	err = call(run, ctx, 0, SYS_mmap, 0, SCRATCH_LEN + TRAMP_PAGE,
		   PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0,
		   &scratch);
	if (err == -EACCES || err == -EPERM)
		err = call(run, ctx, 0, SYS_mmap, 0, SCRATCH_LEN + TRAMP_PAGE,
			   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0,
			   &scratch);
	else if (!err)
		via = (uint64_t)scratch + SCRATCH_STUB;
	if (err)
		goto fail;
	step = "writing the page";
	err = via ? proc__write(pid, via, stub, sizeof(stub)) : 0;
	if (err)
		goto undo;
	if (kind == TRAMP_BATCH && !*stage) {
		step = "mapping its staging area";
		err = call(run, ctx, via, SYS_mmap, 0, STAGE_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0, &area);
		if (err)
			goto undo;
		step = "madvise(MADV_WIPEONFORK)";
		err = call(run, ctx, via, SYS_madvise, (uint64_t)area, STAGE_SIZE, MADV_WIPEONFORK, 0,
			   0, 0, &r);
		if (err)
			goto undo;
		*stage = (uint64_t)area;
	}
	err = tramp__build(t, kind, *stage, (uint64_t)scratch + SCRATCH_LEN, page, why, why_len);
	if (err) {
		step = NULL;
		goto undo;
	}
	step = "writing the page";
	err = proc__write(pid, (uint64_t)scratch + SCRATCH_NAME, name, sizeof(name));
	if (!err)
		err = proc__write(pid, (uint64_t)scratch + SCRATCH_PAGE, page, TRAMP_PAGE);
	if (err)
		goto undo;
	step = "memfd_create";
	err = call(run, ctx, via, SYS_memfd_create, (uint64_t)scratch + SCRATCH_NAME, MFD_CLOEXEC,
		   0, 0, 0, 0, &fd);
	if (err)
		goto undo;
	step = "pwrite";
	err = call(run, ctx, via, SYS_pwrite64, (uint64_t)fd, (uint64_t)scratch + SCRATCH_PAGE,
		   TRAMP_PAGE, 0, 0, 0, &n);
	if (!err && n != TRAMP_PAGE)
		err = -EIO;
	if (err)
		goto undo;
	step = "mmap";
	err = call(run, ctx, via, SYS_mmap, (uint64_t)scratch + SCRATCH_LEN, TRAMP_PAGE,
		   PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, (uint64_t)fd, 0, &r);
	if (!err && (uint64_t)r != (uint64_t)scratch + SCRATCH_LEN)
		err = -EFAULT;
	if (!err)
		*addr = (uint64_t)r;
undo:
	if (err && area > 0) {
		call(run, ctx, via, SYS_munmap, (uint64_t)area, STAGE_SIZE, 0, 0, 0, 0, &n);
		*stage = 0;
	}
	/* the target keeps no descriptor and no scratch page of ours (munmap runs from the stub
	 * it unmaps: the thread is given its own registers back before it runs again) */
	if (fd >= 0)
		call(run, ctx, via, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &n);
	if (scratch > 0)
		call(run, ctx, via, SYS_munmap, (uint64_t)scratch,
		     *addr ? SCRATCH_LEN : SCRATCH_LEN + TRAMP_PAGE, 0, 0, 0, 0, &n);
fail:
	if (err == -EAGAIN && !scratch)
		snprintf(why, why_len, "no thread of it can make system calls for us now (each is "
				       "stopped by job control, under seccomp, or waiting in vfork)");
	else if (err && step)
		snprintf(why, why_len, "%s in the target failed: %s", step, strerror(-err));
	return err;
}

/* Whether pid has a private anonymous read+write mapping of exactly [start, start + len). */
static bool anon_mapping(pid_t pid, uint64_t start, uint64_t len)
{
	unsigned long long s, e, ino;
	char path[64], line[512], perms[8];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %7s %*s %*s %llu", &s, &e, perms, &ino) == 4 &&
			s == start && e - s == len && !strcmp(perms, "rw-p") && !ino;
	fclose(f);
	return found;
}

/* The staging area a batch page of ours in pid writes (left by an earlier recording, or
 * inherited from the parent, wiped), or 0. */
static uint64_t find_stage(pid_t pid)
{
	struct page_ref refs[MAX_PAGES];
	uint8_t *got = malloc(TRAMP_PAGE);
	int i, n = list_pages(pid, refs, MAX_PAGES);
	struct tramp_params p;
	uint64_t stage = 0;

	for (i = 0; got && i < n && !stage; i++) {
		if (read_file(refs[i].path, got))
			continue;
		memcpy(&p, got + at(tramp_params), sizeof(p));
		if (p.stage && !memcmp(p.ident, IDENT, sizeof(IDENT)) &&
		    anon_mapping(pid, p.stage, STAGE_SIZE))
			stage = p.stage;
	}
	free(got);
	return stage;
}

int tramp__get(pid_t pid, const struct py_target *t, enum tramp_kind kind, tramp_run_fn run,
	       void *ctx, struct tramp *out, char *why, size_t why_len)
{
	uint8_t *page = malloc(TRAMP_PAGE);
	uint64_t addr = 0, stage = 0;
	int err, fixed;

	memset(out, 0, sizeof(*out));
	if (!page)
		return -ENOMEM;
	/* a batch page writes the staging area it was placed with (or its child inherited); a
	 * new one's address is known once it is mapped (place): until then 1 stands for it, so
	 * that a page that cannot be built is refused before the target makes any call */
	if (kind == TRAMP_BATCH)
		stage = find_stage(pid);
	err = tramp__build(t, kind, stage ? stage : 1, 0, page, why, why_len);
	if (err)
		goto out;
	/* a page found in place is reused as it is in memory, not only as its file says: what an
	 * earlier recording's probes left there (pyuprof killed at the wrong moment, a kernel that
	 * restored part of an instruction) is put back first */
	fixed = tramp__restore(pid);
	if (fixed > 0)
		wlog("pid %d: %d bytes of a trampoline page left by an earlier recording were not "
		     "its own code: put back", pid, fixed);
	if ((kind != TRAMP_BATCH || stage) && !find_placed(pid, t, kind, stage, 0, out)) {
		out->reused = true;
		goto found;
	}
	err = place(pid, t, kind, &stage, page, run, ctx, &addr, why, why_len);
	if (err)
		goto out;
	/* what is mapped there now must be what we wrote, or nothing is pointed at it */
	err = find_placed(pid, t, kind, stage, addr, out);
	if (err) {
		snprintf(why, why_len, "the trampoline mapped at 0x%llx does not read back",
			 (unsigned long long)addr);
		goto out;
	}
found:
	out->stage = stage;
	out->hook = out->addr + tramp__hook_offset(kind);
out:
	free(page);
	return err;
}
