// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The call sites of CPython's call machinery, read from the interpreter's file: each function's
 * calls (Capstone) and its frame size at each (the call frame information, as a debugger
 * unwinds). Which functions are the machinery, and what budget each holds across its calls, is
 * CPython's code: checked against native runs by tests/harm.bats for each version.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "target/inline_paths.h"

#define EVAL_SYM "_PyEval_EvalFrameDefault"

/*
 * 3.12 and 3.13: how a call CPython runs inline without a hook goes once a hook is set.
 * CALL: PyObject_Vectorcall -> _PyFunction_Vectorcall -> _PyEval_Vector -> the hook;
 * CALL_FUNCTION_EX: PyObject_Call -> _PyObject_Call -> _PyVectorcall_Call -> ...;
 * FOR_ITER, SEND over a generator: gen_iternext -> gen_send_ex2 -> the hook; an await (SEND
 * with a coroutine): PyObject_VectorcallMethod -> method_vectorcall_O, which holds one unit
 * (_Py_EnterRecursiveCallTstate) -> gen_send -> gen_send_ex -> the hook; a Python __getitem__
 * (BINARY_SUBSCR): PyObject_GetItem -> slot_mp_subscript -> vectorcall_method -> the hook. A
 * property's getter is left out: natively it runs inline only once its LOAD_ATTR is
 * specialised, and before that it spends the budget as any C path does. The compiler inlines
 * or tail-calls some of these (then they have no frame and are simply not met). Static ones are
 * in .symtab only: a build stripped of it loses those paths, and those calls keep spending the
 * budget as through any hook.
 */
static const struct machinery {
	const char *name;
	uint32_t held;
} machinery[] = {
	/* the walk scans the sites in this order at each level: the paths most calls take first
	 * (a Python call: _PyEval_Vector, then _PyFunction_Vectorcall; a resumption:
	 * gen_send_ex2, then gen_iternext or gen_send) */
	{ "_PyEval_Vector", 0 },	     { "_PyFunction_Vectorcall", 0 },
	{ "gen_send_ex2", 0 },		     { "gen_iternext", 0 },
	{ "gen_send_ex", 0 },		     { "gen_send", 0 },
	{ "PyObject_Vectorcall", 0 },	     { "_PyObject_VectorcallTstate", 0 },
	{ "PyObject_Call", 0 },		     { "_PyObject_Call", 0 },
	{ "_PyVectorcall_Call", 0 },	     { "PyVectorcall_Call", 0 },
	{ "PyIter_Send", 0 },		     { "PyObject_VectorcallMethod", 0 },
	{ "method_vectorcall_O", 1 },	     { "PyObject_GetItem", 0 },
	{ "slot_mp_subscript", 0 },	     { "vectorcall_method", 0 },
	{ "vectorcall_unbound", 0 },
};

#define NMACHINERY (sizeof(machinery) / sizeof(machinery[0]))

/* Where each machinery function is in the file (size 0: not in it). */
struct span {
	uint64_t vaddr, size;
};

/* Whether a direct call to target stays in the machinery (a call elsewhere, such as raising
 * an error, does not lead to the hook). */
static bool into_machinery(const struct span *spans, uint64_t target)
{
	for (size_t i = 0; i < NMACHINERY; i++)
		if (target - spans[i].vaddr < spans[i].size)
			return true;
	return false;
}

/* Adds the call sites of one function that can lead to the hook: through a pointer (the
 * callable's vectorcall, the hook itself) or into the machinery. False if the table is full. */
static bool add_function(struct elf_file *ef, uint64_t bias, const struct span *spans, size_t k,
			 struct inline_paths *p)
{
	uint64_t *ras = NULL, *to = NULL;
	int64_t cfa;
	int i, n;
	bool room = true;

	n = spans[k].size ? elf_file__calls(ef, spans[k].vaddr, spans[k].size, &ras, &to) : 0;
	for (i = 0; i < n && room; i++) {
		if (to[i] && !into_machinery(spans, to[i]))
			continue;
		/* the row of the call instruction itself (the one before the return address) */
		if (elf_file__cfa_offset(ef, ras[i] - 1, &cfa) || cfa < 8 || cfa > (1 << 16))
			continue;
		room = p->n < INLINE_SITES_MAX;
		if (room)
			p->site[p->n++] = (struct inline_site){ .ra = bias + ras[i],
								.step = (uint32_t)cfa,
								.held = machinery[k].held };
	}
	free(ras);
	free(to);
	return room;
}

int inline_paths__find(struct elf_file *ef, unsigned minor, uint64_t bias,
		       struct inline_paths *p)
{
	struct span spans[NMACHINERY];
	uint64_t vaddr, size;
	size_t i;

	memset(p, 0, sizeof(*p));
	if (minor < 12 || elf_file__sym(ef, EVAL_SYM, &vaddr, &size))
		return 0;
	p->eval_start = bias + vaddr;
	p->eval_len = size;
	if (!elf_file__sym(ef, EVAL_SYM ".cold", &vaddr, &size)) {
		p->cold_start = bias + vaddr;
		p->cold_len = size;
	}
	for (i = 0; i < NMACHINERY; i++)
		if (elf_file__sym(ef, machinery[i].name, &spans[i].vaddr, &spans[i].size))
			spans[i].size = 0;
	for (i = 0; i < NMACHINERY; i++)
		if (!add_function(ef, bias, spans, i, p)) {
			/* a partial table would hand back for some paths and not others */
			memset(p->site, 0, sizeof(p->site));
			p->n = 0;
			return -E2BIG;
		}
	return 0;
}
