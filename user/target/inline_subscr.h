/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython 3.11's inline __getitem__ (BINARY_SUBSCR_GETITEM): early 3.11 builds, Debian's
 * 3.11.2 among them, run a Python __getitem__ reached by obj[i] inline whatever the eval_frame
 * hook says, so no hook sees the call. Its only trace is its own path through the eval loop;
 * this finds the instruction on that path just after the new frame became the running one
 * (or the first one on from there that the kernel emulates under a probe), and the register
 * holding it there, read from the interpreter's file (no symbol needed).
 */
#ifndef __PYUPROF_INLINE_SUBSCR_H
#define __PYUPROF_INLINE_SUBSCR_H

#include <stdint.h>
#include "target/elf_syms.h"

struct inline_subscr {
	uint64_t vaddr; /* the probe site, 0 if none */
	uint32_t reg;	/* enum frame_reg (pyuprof.h): where the new frame is there */
};

/*
 * Looks in the eval function [eval, eval + size) of a 3.11 build; frame_back is
 * offsetof(_PyInterpreterFrame, previous). Returns 0 with s filled, or -ENOENT when the build
 * does not show the path as expected (its dispatch table relocated at load time, another
 * compiler's layout): then no probe, and the calls stay unseen, as said where they matter.
 */
int inline_subscr__find(struct elf_file *ef, uint64_t eval, uint64_t size, uint32_t frame_back,
			struct inline_subscr *s);

#endif /* __PYUPROF_INLINE_SUBSCR_H */
