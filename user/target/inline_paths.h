/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How CPython 3.12+ reaches the eval_frame hook for a call it would have run inline without one
 * (a Python-to-Python call, a generator resumed by for or yield from, an await): from the eval
 * loop, through its own call machinery only (PyObject_Vectorcall, gen_iternext, ...). Natively
 * such a call takes none of the thread's C recursion budget; through a hook it takes what an
 * activation of the eval function takes, and what the machinery in between holds. The
 * trampoline tells these calls from the rest (a C function calling back into Python, which
 * spends the budget natively too) by walking the return addresses above it through the call
 * sites listed here, and hands that budget back for them alone (tramp.h).
 */
#ifndef __PYUPROF_INLINE_PATHS_H
#define __PYUPROF_INLINE_PATHS_H

#include <stdint.h>
#include "target/elf_syms.h"

#define INLINE_SITES_MAX 63 /* the trampoline's table holds these and an end mark */

/* A call site of the call machinery, as the trampoline reads it (tramp_code.S's p_walk). */
struct inline_site {
	uint64_t ra;	/* the call's return address, at run time */
	uint32_t step;	/* from that return address's slot to its function's own (its frame) */
	uint32_t held;	/* the budget its function holds across the call */
};

struct inline_paths {
	uint64_t eval_start, eval_len; /* _PyEval_EvalFrameDefault at run time */
	uint64_t cold_start, cold_len; /* its .cold part, if the file names it */
	struct inline_site site[INLINE_SITES_MAX];
	int n; /* 0: no call is known to come from the eval loop: nothing is handed back */
};

/*
 * Fills p for CPython 3.minor in ef, loaded with bias. Returns 0 (p->n may be 0: a build
 * without the symbols or frame information, where no budget is handed back), or -errno.
 */
int inline_paths__find(struct elf_file *ef, unsigned minor, uint64_t bias,
		       struct inline_paths *p);

#endif /* __PYUPROF_INLINE_PATHS_H */
