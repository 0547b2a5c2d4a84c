/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython 3.13's inline __init__ (CALL_ALLOC_AND_ENTER_INIT): a specialised class call makes
 * the object, then runs the class's Python __init__ inline whatever the eval_frame hook says,
 * so no hook sees the call (3.14 checks for a hook there). Its trace is the instruction's own
 * path through the eval loop; this finds that path's call that allocates the object (the
 * call of _PyType_NewManagedObject, or in a build that inlined it, of what it allocates
 * through) and the register that holds the running frame there, read from the interpreter's
 * file: no symbol needed, Debian's stripped 3.13 has none of them.
 */
#ifndef __PYUPROF_INLINE_INIT_H
#define __PYUPROF_INLINE_INIT_H

#include <stdint.h>
#include "target/elf_syms.h"

struct inline_init {
	uint64_t vaddr;	 /* the call instruction (a direct call: the kernel emulates it) */
	uint64_t callee; /* what it calls */
	uint32_t reg;	 /* enum frame_reg (pyuprof.h): where the running frame is there */
};

/*
 * Looks in the eval function [eval, eval + size) of a 3.13 build and the parts the compiler
 * split off it; spec_cache_init is offsetof(PyHeapTypeObject, _spec_cache.init). Returns 0
 * with s filled (at the call, the type is in rdi, the first argument), or -ENOENT when the
 * build does not show the path as expected: then no probe.
 */
int inline_init__find(struct elf_file *ef, uint64_t eval, uint64_t size, uint32_t spec_cache_init,
		      struct inline_init *s);

#endif /* __PYUPROF_INLINE_INIT_H */
