// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where a probe costs one trap (user/probe_site.h). */
#include <capstone/capstone.h>
#include <stdlib.h>
#include "probe_site.h"
#include "x86_regs.h"

#define MOVE_INSNS 8 /* instructions a probe moves over at most */

bool probe_site__emulated(const uint8_t *b, size_t len)
{
	/* the encodings arch/x86/kernel/uprobes.c emulates (branch_setup_xol_ops,
	 * push_setup_xol_ops), prefixes left out. Multi-byte nops are left out too: 6.18 emulates
	 * them (0.4 us a hit here, as a one-byte nop), kernels without that single-step them. */
	switch (len) {
	case 1:
		return b[0] == 0x90 || (b[0] >= 0x50 && b[0] <= 0x57); /* nop; push reg */
	case 2:
		return b[0] == 0xeb || (b[0] >= 0x70 && b[0] <= 0x7f) || /* jmp, jcc rel8 */
		       (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57);	 /* push r8-r15 */
	case 5:
		return b[0] == 0xe8 || b[0] == 0xe9; /* call, jmp rel32 */
	case 6:
		return b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f; /* jcc rel32 */
	}
	return false;
}

/* Whether a direct jump of the function [lo, hi) lands in (from, to] (a short one can only
 * come from near by). A function that does not decode whole cannot be vouched for: as if one
 * did. */
static bool jumped_into(csh cs, const uint8_t *code, uint64_t lo, uint64_t hi, uint64_t from,
			uint64_t to)
{
	size_t left = hi - lo;
	uint64_t addr = lo;
	cs_insn *insn = cs_malloc(cs);
	bool hit = false;

	if (!insn)
		return true;
	while (left && !hit) {
		const cs_x86 *x = &insn->detail->x86;

		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			hit = true;
			break;
		}
		if ((cs_insn_group(cs, insn, CS_GRP_JUMP) || cs_insn_group(cs, insn, CS_GRP_CALL)) &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			hit = (uint64_t)x->operands[0].imm > from &&
			      (uint64_t)x->operands[0].imm <= to;
	}
	cs_free(insn, 1);
	return hit;
}

/* Whether insn, on the way, keeps the probe's view: no branch, none of keep changed. */
static bool passes(csh cs, const cs_insn *insn, const unsigned *keep, size_t nkeep)
{
	if (cs_insn_group(cs, insn, CS_GRP_JUMP) || cs_insn_group(cs, insn, CS_GRP_CALL) ||
	    cs_insn_group(cs, insn, CS_GRP_RET) || cs_insn_group(cs, insn, CS_GRP_INT) ||
	    cs_insn_group(cs, insn, CS_GRP_IRET) || insn->id == X86_INS_SYSCALL ||
	    insn->id == X86_INS_UD2)
		return false;
	for (size_t i = 0; i < nkeep; i++)
		if (x86_writes(cs, insn, keep[i]) || x86_stores_through(insn, keep[i]))
			return false;
	return true;
}

uint64_t probe_site__move(struct elf_file *ef, uint64_t lo, uint64_t hi, uint64_t site,
			  const unsigned *keep, size_t nkeep, const uint64_t *targets,
			  size_t ntargets)
{
	uint64_t moved = 0, addr = site;
	uint8_t *code = NULL;
	const uint8_t *p;
	cs_insn *insn = NULL;
	size_t left;
	csh cs;

	/* bench/inline_probes.sh: the sites as they were, to measure both in one run */
	if (getenv("PYUPROF_BENCH_SINGLE_STEP") || site < lo || site >= hi ||
	    hi - lo > (64u << 20) || !(code = malloc(hi - lo)))
		return site;
	if (elf_file__read(ef, lo, code, hi - lo) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(code);
		return site;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	p = code + (site - lo);
	left = hi - site;
	for (int i = 0; insn && i < MOVE_INSNS && cs_disasm_iter(cs, &p, &left, &addr, insn); i++) {
		if (probe_site__emulated(insn->bytes, insn->size)) {
			moved = insn->address;
			break;
		}
		if (!passes(cs, insn, keep, nkeep))
			break;
	}
	if (moved > site) {
		for (size_t i = 0; i < ntargets; i++)
			if (targets[i] > site && targets[i] <= moved)
				moved = 0;
		/* a long jump may come from anywhere: a part the compiler split off the function */
		if (moved && (jumped_into(cs, code, lo, hi, site, moved) ||
			      elf_file__rel32_into(ef, site, moved)))
			moved = 0;
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	free(code);
	return moved ? moved : site;
}
