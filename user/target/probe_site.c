// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where a probe costs one trap (user/target/probe_site.h). */
#include <capstone/capstone.h>
#include <stdlib.h>
#include "target/probe_site.h"
#include "target/x86_regs.h"

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

/* Whether a jump of the function [lo, hi) lands in (from, to] (a short one can only come from
 * near by), or one of targets[0..n) does. A function that does not decode whole cannot be
 * vouched for: as if one did. */
static bool jumped_into(struct elf_file *ef, uint64_t lo, uint64_t hi, uint64_t from, uint64_t to,
			const uint64_t *targets, size_t n)
{
	uint64_t *at = NULL, *dest = NULL;
	int k = elf_file__jumps(ef, lo, hi - lo, &at, &dest);
	bool hit = k < 0;

	for (int i = 0; i < k && !hit; i++)
		hit = dest[i] > from && dest[i] <= to;
	for (size_t i = 0; i < n && !hit; i++)
		hit = targets[i] > from && targets[i] <= to;
	free(at);
	free(dest);
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
	uint8_t code[MOVE_INSNS * 15]; /* (15: the longest x86 instruction) */
	uint64_t moved = 0, addr = site;
	const uint8_t *p = code;
	size_t left = hi - site < sizeof(code) ? hi - site : sizeof(code);
	cs_insn *insn;
	csh cs;

	/* bench/inline_probes.sh: the sites as they were, to measure both in one run */
	if (getenv("PYUPROF_BENCH_SINGLE_STEP") || site < lo || site >= hi ||
	    elf_file__read(ef, site, code, left) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return site;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	for (int i = 0; insn && i < MOVE_INSNS && cs_disasm_iter(cs, &p, &left, &addr, insn); i++) {
		if (probe_site__emulated(insn->bytes, insn->size)) {
			moved = insn->address;
			break;
		}
		if (!passes(cs, insn, keep, nkeep))
			break;
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	/* a long jump may come from anywhere: a part the compiler split off the function */
	if (moved > site && (jumped_into(ef, lo, hi, site, moved, targets, ntargets) ||
			     elf_file__rel32_into(ef, site, moved)))
		moved = 0;
	return moved ? moved : site;
}
