// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * 3.12+: the trampoline page's sys.monitoring tool (include/cfuncs.h), taken and given back.
 * Compiled twice: into the page, where it runs in the target with the GIL held (the Makefile
 * builds it without relocations, calls or data of its own: everything it uses comes through
 * struct cf_page, in the page's parameters), and into libpyuprof for the unit tests.
 *
 * The tool is 7, PY_MONITORING_SYS_TRACE_ID: the one sys.settrace's legacy tracing runs on,
 * which takes none of the C-call events (CALL, C_RETURN, C_RAISE) there, and which no program
 * reaches through sys.monitoring (its functions take 0-5 only: get_events, get_tool and
 * use_tool_id of any id a program can name say what they say natively). The page writes its
 * callbacks into the interpreter's table, as _PyMonitoring_RegisterCallback does
 * (register_callback raises an audit event a program's audit hook would see), and its CALL
 * event into the interpreter's table of events; then CPython must instrument the code already
 * running for it, which only _PyMonitoring_SetEvents does (not exported): sys.monitoring's
 * set_events of a free tool (0-5) with some event, then with none, runs it twice, the second
 * time with the page's event alone; that tool is lent a name for those calls (set_events
 * wants one) and has none, nor events, after. sys.settrace sets tool 7's events to its own
 * (the page's CALL goes): the page's next staged call takes it again (.Lmon_check).
 */
#include "cfuncs.h"
#include "inject/tramp_cfuncs.h"
#include "stage.h"

#define TOOLS_USER 6 /* 0-5 are the programs' (sys.monitoring.use_tool_id) */
#define TOOL_PAGE 7  /* PY_MONITORING_SYS_TRACE_ID */

static void **callables(const struct cf_page *pg, int tool)
{
	return (void **)(pg->interp + pg->callables_off) + tool * pg->nevents;
}

static void **names(const struct cf_page *pg)
{
	return (void **)(pg->interp + pg->names_off);
}

static unsigned char *monitors(const struct cf_page *pg)
{
	return (unsigned char *)(pg->interp + pg->monitors_off);
}

static void *type_of(const void *obj)
{
	return ((void *const *)obj)[1];
}

static int ours(const struct cf_page *pg, const void *cb)
{
	return cb && (cb == pg->obj_call || cb == pg->obj_ret);
}

/* The events tool gets (those the interpreter keeps: CALL stands for C_RETURN and C_RAISE). */
static unsigned long events_of(const struct cf_page *pg, int tool)
{
	const unsigned char *m = monitors(pg);
	unsigned long ev = 0;
	int e;

	for (e = 0; e < pg->ungrouped; e++)
		if (m[e] & (1u << tool))
			ev |= 1ul << e;
	return ev;
}

/* Nobody's: no name, no callback, no event. */
static int free_tool(const struct cf_page *pg, int tool)
{
	void **cb = callables(pg, tool);
	int e;

	if (names(pg)[tool] || events_of(pg, tool))
		return 0;
	for (e = 0; e < pg->nevents; e++)
		if (cb[e])
			return 0;
	return 1;
}

/*
 * sys.monitoring.set_events(tool, events), through the module's own function, with name lent
 * to the tool if it has none. The thread's exception, if one is set (a generator resumed by a
 * throw), is as it was after. Returns 1 if it was done.
 */
static int set_events(const struct cf_page *pg, int tool, unsigned long events, void *name)
{
	void *exc = pg->get_exc(), *mod, *f = 0, *args[2] = { 0, 0 }, *r = 0;
	void **slot = &names(pg)[tool];
	int lent = 0;

	mod = pg->sys_getobject(pg->s_monitoring);
	if (mod && type_of(mod) == pg->module_type)
		f = pg->getattr(mod, pg->s_set_events);
	/* (the module's C function: nothing of the program's runs) */
	if (f && type_of(f) == pg->cfunction_type) {
		args[0] = pg->long_from((long)tool);
		args[1] = pg->long_from((long)events);
		if (args[0] && args[1] && (*slot || name)) {
			if (!*slot) {
				*slot = name;
				lent = 1;
			}
			r = pg->vectorcall(f, args, 2, 0);
			if (lent)
				*slot = 0;
		}
	}
	if (r)
		pg->decref(r);
	if (args[1])
		pg->decref(args[1]);
	if (args[0])
		pg->decref(args[0]);
	if (f)
		pg->decref(f);
	pg->set_exc(exc); /* (whatever the call raised goes: the thread's own is back) */
	return r != 0;
}

/*
 * CPython instruments again every code object running in the interpreter for the events its
 * table says (which the caller changed): through set_events of a free tool of the program's
 * ids, with an event and then with none (the tool as it was after). Returns 1 if it was done.
 */
static int instrument(const struct cf_page *pg, void *name)
{
	int i, t, tool = -1, ok;

	/* 4, 3, 5, 2, 1, 0: the ids least used first (0, 1, 2 and 5 are the debugger's,
	 * coverage's, profilers' and optimizers'; the page's copy has no table of its own) */
	for (i = 0; i < TOOLS_USER && tool < 0; i++) {
		t = i < 2 ? 4 - i : i == 2 ? 5 : 5 - i;
		if (free_tool(pg, t))
			tool = t;
	}
	if (tool < 0)
		return 0;
	ok = set_events(pg, tool, 1ul << CF_EV_CALL, name);
	if (ok)
		ok = set_events(pg, tool, 0, name);
	else
		set_events(pg, tool, 0, name);
	return ok;
}

/* Takes tool 7's C-call events: its callbacks, and its CALL event. Returns 7, or -1 (someone
 * else's callback there, or no free tool to instrument through). */
static int install(const struct cf_page *pg, void *name)
{
	void **cb = callables(pg, TOOL_PAGE);
	unsigned char *m = monitors(pg);

	if ((cb[CF_EV_CALL] && !ours(pg, cb[CF_EV_CALL])) ||
	    (cb[pg->ev_c_return] && !ours(pg, cb[pg->ev_c_return])) ||
	    (cb[pg->ev_c_raise] && !ours(pg, cb[pg->ev_c_raise])))
		return -1;
	cb[CF_EV_CALL] = pg->obj_call;
	cb[pg->ev_c_return] = pg->obj_ret;
	cb[pg->ev_c_raise] = pg->obj_ret;
	m[CF_EV_CALL] |= 1u << TOOL_PAGE;
	if (instrument(pg, name))
		return TOOL_PAGE;
	m[CF_EV_CALL] &= ~(1u << TOOL_PAGE);
	cb[CF_EV_CALL] = cb[pg->ev_c_return] = cb[pg->ev_c_raise] = 0;
	return -1;
}

/* Gives tool 7's C-call events back: its callbacks, its CALL event, and the code instrumented
 * without it (with no free tool to do that through, the code keeps calling into the tool's
 * empty callbacks, which CPython skips, until the next set_events of anyone's). */
static void remove_all(const struct cf_page *pg, void *name)
{
	void **cb = callables(pg, TOOL_PAGE);
	unsigned char *m = monitors(pg);
	int call = ours(pg, cb[CF_EV_CALL]);

	if (call)
		cb[CF_EV_CALL] = 0;
	if (ours(pg, cb[pg->ev_c_return]))
		cb[pg->ev_c_return] = 0;
	if (ours(pg, cb[pg->ev_c_raise]))
		cb[pg->ev_c_raise] = 0;
	if (call && (m[CF_EV_CALL] & 1u << TOOL_PAGE)) {
		m[CF_EV_CALL] &= ~(1u << TOOL_PAGE);
		instrument(pg, name);
	}
}

/*
 * A call only the page's tool saw returns, and a tool started in it must not get its return
 * event (natively no tool saw it begin: no event follows): the C_RETURN and C_RAISE callbacks
 * of every other tool go out of the interpreter's table into the staging area until mute_end.
 */
static void mute(const struct cf_page *pg, char *stage)
{
	unsigned int *muted = (unsigned int *)(stage + STAGE_CF_MUTED);
	void **saved = (void **)(stage + STAGE_CF_MUTE), **cb;
	int tool, ours = *(unsigned int *)(stage + STAGE_CF_TOOL) - 1;

	for (tool = 0; tool < CF_TOOLS; tool++) {
		cb = callables(pg, tool);
		if (tool == ours || (!cb[pg->ev_c_return] && !cb[pg->ev_c_raise]) || (*muted & 1u << tool))
			continue;
		saved[2 * tool] = cb[pg->ev_c_return];
		saved[2 * tool + 1] = cb[pg->ev_c_raise];
		cb[pg->ev_c_return] = cb[pg->ev_c_raise] = 0;
		*muted |= 1u << tool;
	}
	if (*muted) /* (until the return's event: the other tools' callbacks come after the page's) */
		*muted |= 1u << STAGE_CF_MUTED_FRESH;
}

/* The page's event after the wrapped call's return's: the callbacks mute took out go back
 * (where nothing took their place). */
static void mute_end(const struct cf_page *pg, char *stage)
{
	unsigned int *muted = (unsigned int *)(stage + STAGE_CF_MUTED);
	void **saved = (void **)(stage + STAGE_CF_MUTE), **cb;
	int tool;

	for (tool = 0; tool < CF_TOOLS; tool++) {
		if (!(*muted & 1u << tool))
			continue;
		cb = callables(pg, tool);
		if (!cb[pg->ev_c_return])
			cb[pg->ev_c_return] = saved[2 * tool];
		if (!cb[pg->ev_c_raise])
			cb[pg->ev_c_raise] = saved[2 * tool + 1];
	}
	*muted = 0;
}

int tramp_cf_mon(const struct cf_page *pg, int op, void *name, char *stage)
{
	switch (op) {
	case CF_OP_INSTALL:
		return install(pg, name);
	case CF_OP_MUTE:
		mute(pg, stage);
		return 0;
	case CF_OP_UNMUTE:
		mute_end(pg, stage);
		return 0;
	default:
		if (stage)
			mute_end(pg, stage);
		remove_all(pg, name);
		return 0;
	}
}
