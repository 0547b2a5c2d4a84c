/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What an x86-64 instruction (decoded by Capstone with details on) does to the general
 * registers: the code readers that check a path register by register (user/target/inline_subscr.c,
 * user/target/inline_init.c, user/target/probe_site.c) share these.
 */
#ifndef __PYUPROF_X86_REGS_H
#define __PYUPROF_X86_REGS_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdint.h>

/* The 64-bit general register a register id is part of (eax, ax, al: rax), or reg itself. */
unsigned x86_reg64(unsigned reg);

/* Whether insn writes the 64-bit register reg or a part of it (unknown: as if it did). */
bool x86_writes(csh cs, const cs_insn *insn, unsigned reg);

/* Whether insn stores to memory addressed through reg (as base or index). */
bool x86_stores_through(const cs_insn *insn, unsigned reg);

/* The callee-saved register a 64-bit register id is, as enum frame_reg (pyuprof.h), or 0. */
uint32_t x86_frame_reg(unsigned reg);

#endif /* __PYUPROF_X86_REGS_H */
