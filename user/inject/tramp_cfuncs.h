/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * 3.12+: the trampoline page's sys.monitoring tool (include/cfuncs.h), taken and given back by
 * tramp_cfuncs.c, which runs in the target. struct cf_page is part of the page's parameters
 * (tramp_code.S's tramp_cf_page, filled in by tramp_build.c); the assembler reads the fields it
 * needs through the CF_PAGE_* offsets.
 */
#ifndef __PYUPROF_TRAMP_CFUNCS_H
#define __PYUPROF_TRAMP_CFUNCS_H

#define CF_OP_INSTALL 1 /* take a tool: its id, or -1 */
#define CF_OP_REMOVE 2	/* give every tool holding the page's callbacks back */
#define CF_OP_MUTE 3	/* other tools' C_RETURN, C_RAISE callbacks out (stage.h: STAGE_CF_MUTE) */
#define CF_OP_UNMUTE 4	/* and back */

#define CF_PAGE_INTERP 0 /* offsets in struct cf_page, for the assembler */
#define CF_PAGE_CALLABLES 8
#define CF_PAGE_NAMES 12
#define CF_PAGE_MONITORS 16
#define CF_PAGE_NEVENTS 20
#define CF_PAGE_OBJ_CALL 24
#define CF_PAGE_VECTORCALL 64
#define CF_PAGE_GET_EXC 80
#define CF_PAGE_SET_EXC 88
#define CF_PAGE_SIZE 144

#ifndef __ASSEMBLER__
#include <stddef.h>

struct cf_page {
	char *interp; /* the main interpreter (the one whose calls the page stages) */
	unsigned int callables_off, names_off, monitors_off; /* PyInterpreterState's */
	/* the version's sys.monitoring: its events (a tool's row of callbacks), those the
	 * interpreter keeps per tool (C_RETURN and C_RAISE go with CALL), C_RETURN and C_RAISE */
	unsigned char nevents, ungrouped, ev_c_return, ev_c_raise;
	void *obj_call, *obj_ret; /* the page's callbacks: immortal PyCFunction objects */
	/* CPython's C API, at its addresses in the target */
	void *(*sys_getobject)(const char *name);
	void *(*getattr)(void *obj, const char *name);
	void *(*long_from)(long v);
	void *(*vectorcall)(void *callable, void *const *args, size_t nargsf, void *kwnames);
	void (*decref)(void *obj);
	void *(*get_exc)(void);
	void (*set_exc)(void *exc);
	void *module_type, *cfunction_type;
	char s_monitoring[16], s_set_events[16]; /* "monitoring", "set_events" */
};
_Static_assert(offsetof(struct cf_page, interp) == CF_PAGE_INTERP, "cf_page layout");
_Static_assert(offsetof(struct cf_page, callables_off) == CF_PAGE_CALLABLES, "cf_page layout");
_Static_assert(offsetof(struct cf_page, names_off) == CF_PAGE_NAMES, "cf_page layout");
_Static_assert(offsetof(struct cf_page, monitors_off) == CF_PAGE_MONITORS, "cf_page layout");
_Static_assert(offsetof(struct cf_page, nevents) == CF_PAGE_NEVENTS, "cf_page layout");
_Static_assert(offsetof(struct cf_page, obj_call) == CF_PAGE_OBJ_CALL, "cf_page layout");
_Static_assert(offsetof(struct cf_page, vectorcall) == CF_PAGE_VECTORCALL, "cf_page layout");
_Static_assert(offsetof(struct cf_page, get_exc) == CF_PAGE_GET_EXC, "cf_page layout");
_Static_assert(offsetof(struct cf_page, set_exc) == CF_PAGE_SET_EXC, "cf_page layout");
_Static_assert(sizeof(struct cf_page) == CF_PAGE_SIZE, "cf_page layout");

/* op CF_OP_* (CF_OP_INSTALL: a tool's id, or -1; else 0); name: a str the tool is lent while its
 * events are set, if it has no name; stage: the staging area (the muted callbacks), or NULL */
int tramp_cf_mon(const struct cf_page *pg, int op, void *name, char *stage);
#endif

#endif /* __PYUPROF_TRAMP_CFUNCS_H */
