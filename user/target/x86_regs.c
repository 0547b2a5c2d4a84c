// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What an x86-64 instruction does to the general registers (user/x86_regs.h). */
#include <linux/types.h>
#include "pyuprof.h"
#include "target/x86_regs.h"

unsigned x86_reg64(unsigned reg)
{
	static const unsigned part[][5] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_SIL },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_DIL },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, X86_REG_BPL },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, X86_REG_SPL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, X86_REG_R8B },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, X86_REG_R15B },
	};

	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		for (size_t j = 0; j < 5; j++)
			if (part[i][j] == reg)
				return part[i][0];
	return reg;
}

bool x86_writes(csh cs, const cs_insn *insn, unsigned reg)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr))
		return true;
	for (uint8_t i = 0; i < nwr; i++)
		if (x86_reg64(wr[i]) == reg)
			return true;
	return false;
}

bool x86_stores_through(const cs_insn *insn, unsigned reg)
{
	const cs_x86 *x = &insn->detail->x86;

	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE) &&
		    (x86_reg64(x->operands[i].mem.base) == reg ||
		     x86_reg64(x->operands[i].mem.index) == reg))
			return true;
	return false;
}

uint32_t x86_frame_reg(unsigned reg)
{
	switch (reg) {
	case X86_REG_RBX:
		return FRAME_REG_BX;
	case X86_REG_RBP:
		return FRAME_REG_BP;
	case X86_REG_R12:
		return FRAME_REG_R12;
	case X86_REG_R13:
		return FRAME_REG_R13;
	case X86_REG_R14:
		return FRAME_REG_R14;
	case X86_REG_R15:
		return FRAME_REG_R15;
	}
	return 0;
}
