// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Building the trampoline page for a target: tramp_code.S's bytes, the first instruction of
 * the eval function replayed, and the parameter block filled in from the target's layout
 * (tramp_layout.h). tramp.c places the result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/tramp.h"
#include "inject/tramp_layout.h"
#include "target/thread_block.h"

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
