// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * C functions (include/cfuncs.h), the trampoline page's part, run for real in this process:
 * a batch page built for 3.10's layout (its profile function in each thread's profile slot)
 * and for 3.12.1's (a sys.monitoring tool of its own), in front of a small function that
 * starts as _PyEval_EvalFrameDefault does; fake thread states, frames, code objects, C
 * functions and a fake interpreter's monitoring tables; the flush nop jumps to a shim that logs
 * its registers. Checked, <= 3.11: the empty slot taken at a staged call, CPython's tracing
 * flag set as _PyEval_SetProfile sets it, a sync staged then and while the program's own
 * function holds the slot (which stays), a C call's record with its key and frame, the
 * function's identity flushed once (its callable, object and key), its return's record, the
 * slot given back at any event once C functions are not recorded, and a profiler a C call
 * starts kept from that call's return (the callable wrapped for that call alone). 3.12+:
 * tramp_cfuncs.c takes tool 7's C-call events (its callbacks, its CALL event in the
 * interpreter's table) and has the running code instrumented through set_events of a free
 * tool of the program's (4, else 3, 5, 2, 1, 0) with CALL and then nothing, lent a name for
 * those calls; gives it all back the same way; leaves a tool 7 with someone else's C-call
 * callback alone; takes the other tools' C_RETURN callbacks out and back; the page's
 * callbacks stage a C call of a PyCFunction and of a method descriptor with its object, none
 * of a Python function or a descriptor with no arguments; its next staged call takes tool 7's
 * CALL again once sys.settrace set that tool's events to its own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cfuncs.h"
#include "inject/tramp.h"
#include "inject/tramp_cfuncs.h"
#include "stage.h"
#include "target/py_layouts.h"
#include "test.h"

/* the eval function: returns its frame argument (rsi), starting with push %r15 */
extern uint64_t frame_id(uint64_t tstate, uint64_t frame, uint64_t throwflag);
/* the flush nop's stand-in: logs rdi, rsi, rdx, rcx, r8, r9, rax; clobbers rax and rcx only */
extern void flush_shim(void);
extern uint64_t flush_n, flush_log[64][8];
__asm__(".text\n"
	".globl frame_id\n frame_id:\n push %r15\n mov %rsi,%rax\n pop %r15\n ret\n"
	".globl flush_shim\n flush_shim:\n push %rcx\n push %rax\n mov flush_n(%rip),%rax\n"
	" and $63,%rax\n shl $6,%rax\n lea flush_log(%rip),%rcx\n add %rax,%rcx\n"
	" mov %rdi,(%rcx)\n mov %rsi,8(%rcx)\n mov %rdx,16(%rcx)\n pop %rax\n mov %rax,48(%rcx)\n"
	" pop %rax\n mov %rax,24(%rcx)\n mov %r8,32(%rcx)\n mov %r9,40(%rcx)\n"
	" incq flush_n(%rip)\n ret\n"
	".data\n .globl flush_n, flush_log\n .balign 8\n flush_n: .quad 0\n"
	" flush_log: .zero 64 * 64\n .text\n");

extern const uint8_t tramp_code[], tramp_batch[], tramp_cprof[], tramp_mon_call[],
	tramp_mon_ret[];

#define OBJ 512
/* the fake objects. interp is also 3.12's _PyRuntime's main interpreter; cfunc a PyCFunction
 * (m_ml: def, m_self: self), descr a method descriptor of the same def, pyfunc an object of
 * another type */
struct world {
	uint8_t tstate[OBJ], interp[OBJ], cframe[OBJ], frame[OBJ], caller[OBJ], code[OBJ];
	uint8_t name[OBJ], file[OBJ], runtime[OBJ];
	uint8_t cfunc[OBJ], descr[OBJ], self[OBJ], pyfunc[OBJ];
	uint8_t def[64], risky_def[64], risky[OBJ];
	/* the types (PyCFunction, method descriptor, module, code, a Python function's) */
	uint8_t cfunction_type[OBJ], methoddescr_type[OBJ], module_type[OBJ], code_type[OBJ];
	uint8_t function_type[OBJ], missing[OBJ], none[OBJ], gil[OBJ];
	/* 3.12: the interpreter's monitoring tables, found at its offsets in interp (big) */
} __attribute__((aligned(64)));

static void put64(uint8_t *obj, uint32_t off, uint64_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

static uint64_t get64(const uint8_t *obj, uint32_t off)
{
	uint64_t v;

	memcpy(&v, obj + off, sizeof(v));
	return v;
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

struct rig {
	const struct py_offsets_entry *o;
	struct world *w;
	uint8_t *interp; /* 3.12: the interpreter, big enough for its monitoring tables */
	uint8_t *stage, *page;
};

static uint64_t rig_tstate_cur; /* <= 3.11: the GIL holder's thread state */

/* Fake C API for tramp_cfuncs.c (3.12+): set_events calls through it are logged. */
static struct {
	int n;
	long tool[8], events[8];
	void *name[8]; /* the tool's name during the call */
	uint8_t *interp;
	unsigned names_off, monitors_off;
	int fail;
} api;
static uint8_t fake_module[64], fake_set_events[64], fake_long[16][64];
static int nlong;

static void *f_sys_getobject(const char *name)
{
	return strcmp(name, "monitoring") ? NULL : fake_module;
}

static void *f_getattr(void *obj, const char *name)
{
	return obj == fake_module && !strcmp(name, "set_events") ? fake_set_events : NULL;
}

static void *f_long_from(long v)
{
	uint8_t *o = fake_long[nlong++ % 16];

	put64(o, 16, (uint64_t)v);
	return o;
}

static void *f_vectorcall(void *callable, void *const *args, size_t nargsf, void *kwnames)
{
	long tool = (long)get64(args[0], 16), events = (long)get64(args[1], 16);
	uint8_t *m = api.interp + api.monitors_off;
	int e;

	(void)kwnames;
	if (callable != fake_set_events || nargsf != 2 || api.fail || api.n >= 8)
		return NULL;
	api.tool[api.n] = tool;
	api.events[api.n] = events;
	api.name[api.n] = ((void **)(api.interp + api.names_off))[tool];
	api.n++;
	for (e = 0; e < 15; e++) /* (3.12: C_RETURN, C_RAISE go with CALL) */
		m[e] = (uint8_t)((m[e] & ~(1u << tool)) | ((events >> e & 1) << tool));
	return fake_module; /* (a result: not NULL) */
}

static void f_decref(void *obj)
{
	(void)obj;
}

static void *saved_exc;
static void *f_get_exc(void)
{
	return saved_exc;
}

static void f_set_exc(void *exc)
{
	saved_exc = exc;
}

/* The world, a staging area (on, empty, C functions recorded) and a batch page for minor
 * (10 or 12) whose flush nop jumps to flush_shim through an island after it. */
static int rig_up(struct rig *r, unsigned minor)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const struct py_offsets *b;
	struct py_target t;
	uint8_t *island;
	char why[256];
	uint64_t shim = addr(flush_shim);
	int32_t rel;

	memset(r, 0, sizeof(*r));
	r->o = py_layouts__find(3, minor, 1);
	if (!r->o)
		return -1;
	b = &r->o->bpf;
	r->w = aligned_alloc(64, sizeof(*r->w));
	r->interp = aligned_alloc(64, 1 << 20);
	r->stage = aligned_alloc(4096, STAGE_SIZE);
	r->page = mmap(NULL, 2 * TRAMP_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (!r->w || !r->interp || !r->stage || r->page == MAP_FAILED)
		return -1;
	memset(r->w, 0, sizeof(*r->w));
	memset(r->interp, 0, 1 << 20);
	memset(r->stage, 0, STAGE_SIZE);
	memset(&t, 0, sizeof(t));
	t.major = 3;
	t.minor = minor;
	t.offsets = r->o;
	t.eval_addr = addr(frame_id);
	memcpy(t.eval_head, (void *)frame_id, sizeof(t.eval_head));
	t.cfunction_type = addr(r->w->cfunction_type);
	t.methoddescr_type = addr(r->w->methoddescr_type);
	t.module_type = addr(r->w->module_type);
	t.code_type = addr(r->w->code_type);
	t.missing_addr = addr(r->w->missing);
	t.none_addr = addr(r->w->none);
	if (minor <= 11) {
		/* _PyRuntime.gilstate.tstate_current: a variable of ours */
		t.runtime_addr = addr(&rig_tstate_cur) - r->o->PyRuntime_tstate_current;
		rig_tstate_cur = addr(r->w->tstate);
	} else {
		t.main_interp_off = r->o->PyRuntime_main_interpreter;
		t.runtime_addr = addr(r->interp) - t.main_interp_off;
		t.api.sys_getobject = addr(f_sys_getobject);
		t.api.getattr = addr(f_getattr);
		t.api.long_from = addr(f_long_from);
		t.api.vectorcall = addr(f_vectorcall);
		t.api.decref = addr(f_decref);
		t.api.get_exc = addr(f_get_exc);
		t.api.set_exc = addr(f_set_exc);
		put64(fake_module, 8, addr(r->w->module_type));
		put64(fake_set_events, 8, addr(r->w->cfunction_type));
		memset(&api, 0, sizeof(api));
		api.interp = r->interp;
		api.names_off = r->o->PyInterpreterState_monitoring_tool_names;
		api.monitors_off = r->o->PyInterpreterState_monitors;
	}
	if (tramp__build(&t, TRAMP_BATCH, addr(r->stage), addr(r->page), r->page, why, sizeof(why)))
		return -1;
	if (memcmp(r->page + tramp__flush_offset(), nop5, sizeof(nop5)))
		return -1;
	island = r->page + TRAMP_PAGE;
	island[0] = 0x50;
	island[1] = 0x48;
	island[2] = 0xb8;
	memcpy(island + 3, &shim, 8);
	memcpy(island + 11, "\x48\x87\x04\x24\xc3", 5);
	r->page[tramp__flush_offset()] = 0xe9;
	rel = (int32_t)(TRAMP_PAGE - (tramp__flush_offset() + 5));
	memcpy(r->page + tramp__flush_offset() + 1, &rel, sizeof(rel));
	if (mprotect(r->page, 2 * TRAMP_PAGE, PROT_READ | PROT_EXEC))
		return -1;
	/* a frame called by caller, running code; a C function "len" bound to self */
	put64(r->w->frame, b->frame_code, addr(r->w->code));
	put64(r->w->frame, b->frame_back, addr(r->w->caller));
	put64(r->w->caller, b->frame_code, addr(r->w->code));
	if (minor <= 11) {
		put64(r->w->tstate, r->o->PyThreadState_trace_cframe, addr(r->w->cframe));
	} else {
		put64(r->w->tstate, b->PyThreadState_interp, addr(r->interp));
		put64(r->w->tstate, b->PyThreadState_cframe, addr(r->w->cframe));
		put64(r->w->cframe, b->PyCFrame_current_frame, addr(r->w->caller));
		/* the GIL, held by the thread: its callbacks' frame is the caller */
		put64(r->interp, r->o->PyInterpreterState_ceval_gil, addr(r->w->gil));
		put64(r->w->gil, r->o->gil_last_holder, addr(r->w->tstate));
	}
	put64(r->w->name, b->PyUnicode_length, 4);
	memcpy(r->w->name + b->PyASCIIObject_size, "leaf", 5);
	put64(r->w->code, b->PyCodeObject_co_name, addr(r->w->name));
	put64(r->w->code, b->PyCodeObject_co_filename, addr(r->w->name));
	put64(r->w->code, 8, addr(r->w->code_type));
	put64(r->w->def, CF_ML_NAME, addr("len"));
	put64(r->w->cfunc, 8, addr(r->w->cfunction_type));
	put64(r->w->cfunc, CF_M_ML, addr(r->w->def));
	put64(r->w->cfunc, CF_M_SELF, addr(r->w->self));
	put64(r->w->descr, 8, addr(r->w->methoddescr_type));
	put64(r->w->descr, CF_D_METHOD, addr(r->w->def));
	put64(r->w->pyfunc, 8, addr(r->w->function_type));
	*(uint32_t *)(r->stage + STAGE_ON) = 1;
	*(uint32_t *)(r->stage + STAGE_CFUNCS) = 1;
	*(uint64_t *)(r->stage + STAGE_BOUND) = UINT64_MAX;
	flush_n = 0;
	return 0;
}

static void rig_down(struct rig *r)
{
	munmap(r->page, 2 * TRAMP_PAGE);
	free(r->stage);
	free(r->interp);
	free(r->w);
}

static uint64_t *staged(struct rig *r, uint64_t at)
{
	return (uint64_t *)(r->stage + STAGE_BUF + at);
}

static uint64_t staged_bytes(struct rig *r)
{
	return *(uint64_t *)(r->stage + STAGE_W);
}

static void *in_page(struct rig *r, const uint8_t *sym)
{
	return r->page + (sym - tramp_code);
}

/* One staged call through the batch path. */
static uint64_t call(struct rig *r)
{
	uint64_t (*f)(uint64_t, uint64_t, uint64_t) = in_page(r, tramp_batch);

	return f(addr(r->w->tstate), addr(r->w->frame), 0);
}

/* <= 3.11: the page's profile function, as CPython calls it */
static int prof(struct rig *r, int what, void *arg)
{
	int (*f)(void *, void *, int, void *) = in_page(r, tramp_cprof);

	return f(NULL, r->w->frame, what, arg);
}

static uint64_t slot(struct rig *r)
{
	return get64(r->w->tstate, r->o->PyThreadState_c_profilefunc);
}

/* the first record of kind tag at or after *at; its offset in *at */
static uint64_t *find_rec(struct rig *r, uint64_t tag, uint64_t *at)
{
	while (*at < staged_bytes(r)) {
		uint64_t *w = staged(r, *at);

		if (STAGE_TAG(w[0]) == tag)
			return w;
		if (!stage_rec_bytes(w[0]))
			return NULL;
		*at += stage_rec_bytes(w[0]);
	}
	return NULL;
}

TEST(profile_slot_taken_c_calls_staged_given_back)
{
	struct rig r;
	uint64_t at = 0, *c;
	unsigned n;

	REQUIRE(!rig_up(&r, 10));
	CHECK(call(&r) == addr(r.w->frame));
	/* the empty slot is the page's function now, tracing on (3.10: cframe's int) */
	CHECK(slot(&r) == addr(in_page(&r, tramp_cprof)));
	CHECK(*(int32_t *)r.w->cframe == 1);
	c = find_rec(&r, STAGE_TAG_CSYNC, &at);
	CHECK(c != NULL);
	/* a C call: its record (key, calling frame), its identity flushed with it */
	n = (unsigned)flush_n;
	CHECK(prof(&r, CF_PYTRACE_C_CALL, r.w->cfunc) == 0);
	REQUIRE(flush_n == n + 1);
	CHECK(flush_log[n][2] == STAGE_FLUSH_CFUNC);
	CHECK(flush_log[n][3] == addr(r.w->cfunc) && flush_log[n][4] == addr(r.w->self) &&
	      flush_log[n][5] == addr(r.w->def));
	at = 0;
	c = find_rec(&r, STAGE_TAG_CCALL, &at);
	REQUIRE(c);
	CHECK(c[1] == addr(r.w->def) && c[2] == addr(r.w->frame));
	CHECK(prof(&r, CF_PYTRACE_C_RETURN, r.w->cfunc) == 0);
	c = find_rec(&r, STAGE_TAG_CRET, &at);
	CHECK(c && c[1] == addr(r.w->frame)); /* (its calling frame: greenlet's stacks) */
	CHECK(flush_n == n + 1); /* (a young batch: no flush) */
	/* again: no identity flush; an exception ends a call as a return does */
	CHECK(prof(&r, CF_PYTRACE_C_CALL, r.w->cfunc) == 0);
	CHECK(prof(&r, CF_PYTRACE_C_EXCEPTION, r.w->cfunc) == 0);
	CHECK(flush_n == n + 1);
	at += STAGE_CRET_BYTES;
	CHECK(find_rec(&r, STAGE_TAG_CCALL, &at) && find_rec(&r, STAGE_TAG_CRET, &at));
	/* Python calls and returns: nothing */
	n = (unsigned)staged_bytes(&r);
	CHECK(prof(&r, 0, NULL) == 0 && prof(&r, 3, NULL) == 0);
	CHECK(staged_bytes(&r) == n);
	/* not recording C functions: the next event gives the slot back */
	*(uint32_t *)(r.stage + STAGE_CFUNCS) = 0;
	CHECK(prof(&r, 0, NULL) == 0);
	CHECK(slot(&r) == 0);
	/* nor is it taken again */
	call(&r);
	CHECK(slot(&r) == 0);
	rig_down(&r);
}

TEST(the_programs_own_profile_function_stays)
{
	struct rig r;
	uint64_t at = 0;

	REQUIRE(!rig_up(&r, 10));
	put64(r.w->tstate, r.o->PyThreadState_c_profilefunc, 0x1234);
	call(&r);
	CHECK(slot(&r) == 0x1234);
	/* its C calls are not the page's: a sync ends those the records hold open */
	CHECK(find_rec(&r, STAGE_TAG_CSYNC, &at) != NULL);
	/* staging off (pyuprof gone): the program's function stays */
	*(uint32_t *)(r.stage + STAGE_ON) = 0;
	CHECK(prof(&r, 0, NULL) == 0);
	CHECK(slot(&r) == 0x1234);
	rig_down(&r);
}

/* A sys.setprofile stand-in: puts a profile function and its object in the thread's slot. */
static const struct py_offsets_entry *setter_layout;
static uint8_t *setter_tstate;
static void *fake_setprofile(void *callable, void *const *args, size_t nargsf, void *kwnames)
{
	(void)args, (void)nargsf, (void)kwnames;
	put64(setter_tstate, setter_layout->PyThreadState_c_profilefunc, 0x5678);
	put64(setter_tstate, setter_layout->PyThreadState_c_profileobj, 0x9abc);
	return callable;
}

TEST(a_profiler_started_in_a_c_call_gets_not_its_return)
{
	struct rig r;
	void *(*vc)(void *, void *const *, size_t, void *);

	REQUIRE(!rig_up(&r, 10));
	setter_layout = r.o;
	setter_tstate = r.w->tstate;
	put64(r.w->risky_def, CF_ML_NAME, addr("setprofile"));
	put64(r.w->risky, 8, addr(r.w->cfunction_type));
	put64(r.w->risky, CF_M_ML, addr(r.w->risky_def));
	put64(r.w->risky, CF_M_VECTORCALL, addr(fake_setprofile));
	call(&r);
	REQUIRE(slot(&r) == addr(in_page(&r, tramp_cprof)));
	/* its C call: the callable calls the page's wrapper, for this call */
	CHECK(prof(&r, CF_PYTRACE_C_CALL, r.w->risky) == 0);
	vc = (void *)(uintptr_t)get64(r.w->risky, CF_M_VECTORCALL);
	CHECK(vc != (void *)fake_setprofile);
	/* CPython calls it: the callable is its own again, the call runs, and the slot is the
	 * page's until the return event */
	CHECK(vc(r.w->risky, NULL, 1, NULL) == r.w->risky);
	CHECK(get64(r.w->risky, CF_M_VECTORCALL) == addr(fake_setprofile));
	CHECK(slot(&r) == addr(in_page(&r, tramp_cprof)));
	CHECK(get64(r.w->tstate, r.o->PyThreadState_c_profileobj) == 0);
	/* the return event comes to the page; then the slot holds what the call put there */
	CHECK(prof(&r, CF_PYTRACE_C_RETURN, r.w->risky) == 0);
	CHECK(slot(&r) == 0x5678);
	CHECK(get64(r.w->tstate, r.o->PyThreadState_c_profileobj) == 0x9abc);
	/* a function of another name is not wrapped */
	put64(r.w->tstate, r.o->PyThreadState_c_profilefunc, addr(in_page(&r, tramp_cprof)));
	CHECK(prof(&r, CF_PYTRACE_C_CALL, r.w->cfunc) == 0);
	CHECK(get64(r.w->cfunc, CF_M_VECTORCALL) == 0);
	rig_down(&r);
}

/* 3.12+: the interpreter's tables, as tramp_cfuncs.c reads them */
static void **callables(struct rig *r, int tool)
{
	/* (17 events a tool before 3.14, 19 from 3.14) */
	return (void **)(r->interp + r->o->PyInterpreterState_monitoring_callables) +
	       tool * (r->o->major > 3 || r->o->minor >= 14 ? 19 : 17);
}

static void **names(struct rig *r)
{
	return (void **)(r->interp + r->o->PyInterpreterState_monitoring_tool_names);
}

static const struct cf_page *cf_page(struct rig *r)
{
	extern const uint8_t tramp_cf_page[];

	return in_page(r, tramp_cf_page);
}

TEST(a_tool_taken_without_a_name_and_given_back)
{
	struct rig r;
	const struct cf_page *pg;
	uint8_t name[8], *m;
	int tool;

	REQUIRE(!rig_up(&r, 12));
	pg = cf_page(&r);
	m = r.interp + r.o->PyInterpreterState_monitors;
	REQUIRE(pg->nevents == 17 && pg->ev_c_return == 15 && pg->ev_c_raise == 16);
	/* tool 7's C-call callbacks and its CALL event; the code instrumented through 4's
	 * set_events, CALL then nothing, with a name lent for those calls alone */
	tool = tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL);
	CHECK(tool == 7);
	CHECK(callables(&r, 7)[CF_EV_CALL] == pg->obj_call &&
	      callables(&r, 7)[15] == pg->obj_ret && callables(&r, 7)[16] == pg->obj_ret);
	CHECK(m[CF_EV_CALL] == 1 << 7);
	REQUIRE(api.n == 2);
	CHECK(api.tool[0] == 4 && api.events[0] == 1 << CF_EV_CALL && api.name[0] == name);
	CHECK(api.tool[1] == 4 && api.events[1] == 0 && api.name[1] == name);
	CHECK(names(&r)[4] == NULL && !callables(&r, 4)[CF_EV_CALL]);
	/* taken again (a later recording, or sys.settrace took its CALL event): the same */
	m[CF_EV_CALL] = 0;
	CHECK(tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL) == 7);
	CHECK(m[CF_EV_CALL] == 1 << 7);
	/* the other tools' return callbacks out, and back (6: sys.setprofile's) */
	callables(&r, 1)[15] = (void *)0x111;
	callables(&r, 6)[16] = (void *)0x666;
	*(uint32_t *)(r.stage + STAGE_CF_TOOL) = 8;
	tramp_cf_mon(pg, CF_OP_MUTE, NULL, (char *)r.stage);
	CHECK(!callables(&r, 1)[15] && !callables(&r, 6)[16] && callables(&r, 7)[15]);
	CHECK(*(uint32_t *)(r.stage + STAGE_CF_MUTED) ==
	      (1 << 1 | 1 << 6 | 1u << STAGE_CF_MUTED_FRESH));
	tramp_cf_mon(pg, CF_OP_UNMUTE, NULL, (char *)r.stage);
	CHECK(callables(&r, 1)[15] == (void *)0x111 && callables(&r, 6)[16] == (void *)0x666);
	CHECK(*(uint32_t *)(r.stage + STAGE_CF_MUTED) == 0);
	callables(&r, 1)[15] = callables(&r, 6)[16] = NULL;
	/* given back: no callback of the page's, its CALL event off, the code instrumented
	 * again; sys.settrace's events on tool 7 stay */
	m[5] |= 1 << 7;
	api.n = 0;
	tramp_cf_mon(pg, CF_OP_REMOVE, name, NULL);
	CHECK(!callables(&r, 7)[CF_EV_CALL] && !callables(&r, 7)[15] && !callables(&r, 7)[16]);
	CHECK(m[CF_EV_CALL] == 0 && m[5] == 1 << 7);
	CHECK(api.n == 2 && api.tool[1] == 4 && api.events[1] == 0);
	m[5] = 0;
	/* 4 held by the program (named): instrumented through 3; with no free tool, none */
	names(&r)[4] = (void *)0x44;
	api.n = 0;
	CHECK(tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL) == 7);
	CHECK(api.n == 2 && api.tool[0] == 3);
	tramp_cf_mon(pg, CF_OP_REMOVE, name, NULL);
	for (tool = 0; tool < 6; tool++)
		names(&r)[tool] = (void *)0x44;
	CHECK(tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL) == -1);
	CHECK(!callables(&r, 7)[CF_EV_CALL] && m[CF_EV_CALL] == 0);
	for (tool = 0; tool < 6; tool++)
		names(&r)[tool] = NULL;
	/* someone else's C-call callback on tool 7: left alone */
	callables(&r, 7)[15] = (void *)0x777;
	CHECK(tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL) == -1);
	CHECK(!callables(&r, 7)[CF_EV_CALL] && callables(&r, 7)[15] == (void *)0x777);
	callables(&r, 7)[15] = NULL;
	/* set_events failing: nothing left behind */
	api.fail = 1;
	CHECK(tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL) == -1);
	CHECK(!callables(&r, 7)[CF_EV_CALL] && m[CF_EV_CALL] == 0);
	rig_down(&r);
}

/* 3.14 numbers sys.monitoring's events anew (BRANCH_LEFT, BRANCH_RIGHT): C_RETURN 16,
 * C_RAISE 17, 19 a tool */
TEST(events_numbered_as_the_version_numbers_them)
{
	struct rig r;
	const struct cf_page *pg;
	uint8_t name[8], *m;

	REQUIRE(!rig_up(&r, 14));
	pg = cf_page(&r);
	m = r.interp + r.o->PyInterpreterState_monitors;
	CHECK(pg->nevents == 19 && pg->ungrouped == 16 && pg->ev_c_return == 16 &&
	      pg->ev_c_raise == 17);
	CHECK(tramp_cf_mon(pg, CF_OP_INSTALL, name, NULL) == 7);
	CHECK(callables(&r, 7)[CF_EV_CALL] == pg->obj_call && callables(&r, 7)[16] == pg->obj_ret &&
	      callables(&r, 7)[17] == pg->obj_ret && !callables(&r, 7)[15]);
	CHECK(m[CF_EV_CALL] == 1 << 7);
	tramp_cf_mon(pg, CF_OP_REMOVE, name, NULL);
	CHECK(!callables(&r, 7)[16] && !callables(&r, 7)[17] && !m[CF_EV_CALL]);
	rig_down(&r);
}

/* 3.12+: one of the page's callbacks, as CPython calls it (code, offset, callable, arg0) */
static void *event(struct rig *r, const uint8_t *cb, void *callable, void *arg0)
{
	void *(*f)(void *, void *const *, size_t, void *) = in_page(r, cb);
	void *args[5] = { NULL, r->w->code, (void *)1, callable, arg0 };

	return f(NULL, args + 1, 4 | 1ul << 63, NULL);
}

TEST(the_tools_callbacks_stage_c_calls)
{
	struct rig r;
	uint64_t at = 0, *c, n;
	uint8_t *m;

	REQUIRE(!rig_up(&r, 12));
	call(&r);
	/* the staged call took tool 7 */
	CHECK(*(uint32_t *)(r.stage + STAGE_CF_TOOL) == 8);
	CHECK(callables(&r, 7)[CF_EV_CALL] == cf_page(&r)->obj_call);
	/* a PyCFunction: its record; its return's */
	CHECK(event(&r, tramp_mon_call, r.w->cfunc, r.w->missing) == r.w->none);
	c = find_rec(&r, STAGE_TAG_CCALL, &at);
	REQUIRE(c);
	/* (the calling frame: the running frame of the thread holding the GIL) */
	CHECK(c[1] == addr(r.w->def) && c[2] == addr(r.w->caller));
	CHECK(event(&r, tramp_mon_ret, r.w->cfunc, r.w->missing) == r.w->none);
	c = find_rec(&r, STAGE_TAG_CRET, &at);
	CHECK(c && c[1] == addr(r.w->caller));
	/* a method descriptor with its object: the same function */
	event(&r, tramp_mon_call, r.w->descr, r.w->self);
	at += STAGE_CRET_BYTES;
	c = find_rec(&r, STAGE_TAG_CCALL, &at);
	CHECK(c && c[1] == addr(r.w->def));
	/* no record for a Python function, nor a descriptor with no arguments */
	n = staged_bytes(&r);
	event(&r, tramp_mon_call, r.w->pyfunc, r.w->self);
	event(&r, tramp_mon_call, r.w->descr, r.w->missing);
	CHECK(staged_bytes(&r) == n);
	/* a wrapped call's return: the other tools' return callbacks stay out through its event
	 * (theirs come after the page's), and go back at the page's next one */
	callables(&r, 6)[15] = (void *)0x666;
	tramp_cf_mon(cf_page(&r), CF_OP_MUTE, NULL, (char *)r.stage);
	event(&r, tramp_mon_ret, r.w->cfunc, r.w->missing);
	CHECK(!callables(&r, 6)[15] && *(uint32_t *)(r.stage + STAGE_CF_MUTED) == 1 << 6);
	event(&r, tramp_mon_call, r.w->cfunc, r.w->missing);
	CHECK(callables(&r, 6)[15] == (void *)0x666 && !*(uint32_t *)(r.stage + STAGE_CF_MUTED));
	callables(&r, 6)[15] = NULL;
	/* sys.settrace set tool 7's events to its own: the next staged call takes CALL again */
	m = r.interp + r.o->PyInterpreterState_monitors;
	m[CF_EV_CALL] = 0;
	m[0] = 1 << 7;
	api.n = 0;
	call(&r);
	CHECK(m[CF_EV_CALL] == 1 << 7 && m[0] == 1 << 7 && api.n == 2);
	CHECK(*(uint32_t *)(r.stage + STAGE_CF_TOOL) == 8);
	/* while it holds them, a staged call changes nothing */
	api.n = 0;
	call(&r);
	CHECK(api.n == 0);
	/* staging off (pyuprof gone): the next event gives the tool back */
	*(uint32_t *)(r.stage + STAGE_ON) = 0;
	event(&r, tramp_mon_call, r.w->cfunc, r.w->missing);
	CHECK(!callables(&r, 7)[CF_EV_CALL] && m[CF_EV_CALL] == 0 && m[0] == 1 << 7);
	rig_down(&r);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(profile_slot_taken_c_calls_staged_given_back),
		TEST_CASE(the_programs_own_profile_function_stays),
		TEST_CASE(a_profiler_started_in_a_c_call_gets_not_its_return),
		TEST_CASE(a_tool_taken_without_a_name_and_given_back),
		TEST_CASE(the_tools_callbacks_stage_c_calls),
		TEST_CASE(events_numbered_as_the_version_numbers_them),
	};

	return test_run(cases, TEST_COUNT(cases));
}
