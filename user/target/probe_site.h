/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a probe costs one trap. The kernel runs the instruction under a uprobe one of two
 * ways: it emulates it (a direct call, a direct jump or conditional jump, a push of a
 * register, a one-byte nop: arch/x86/kernel/uprobes.c) or it copies it out of line and
 * single-steps it there, which is a second exception. On the test VM (kernel 6.18) a hit costs
 * 0.4-0.5 us emulated and 14-15 us single-stepped (bench/RESULTS.md). A probe whose program
 * reads only some registers at its site fires the same one instruction later, or a few, as
 * long as nothing on the way changes them, leaves the way, or is jumped into from elsewhere.
 */
#ifndef __PYUPROF_PROBE_SITE_H
#define __PYUPROF_PROBE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "target/elf_syms.h"

/* Whether the kernel emulates the instruction encoded in insn[0..len) under a uprobe. */
bool probe_site__emulated(const uint8_t *insn, size_t len);

/*
 * The first instruction at or after site (a vaddr in the function [lo, hi)) that the kernel
 * emulates, when a probe may move there: no instruction on the way branches, writes one of
 * the registers keep[0..nkeep) (Capstone ids of 64-bit registers) or stores through one, and
 * none after site is the target of a direct jump of the function or one of targets[0..ntargets)
 * (a dispatch table's entries). Otherwise site itself, which is never wrong, only dearer
 * (and always with PYUPROF_BENCH_SINGLE_STEP set: bench/inline_probes.sh).
 */
uint64_t probe_site__move(struct elf_file *ef, uint64_t lo, uint64_t hi, uint64_t site,
			  const unsigned *keep, size_t nkeep, const uint64_t *targets,
			  size_t ntargets);

#endif /* __PYUPROF_PROBE_SITE_H */
