// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where CPython 3.11 runs a Python __getitem__ inline (user/target/inline_subscr.h). The eval loop
 * dispatches through a table of label addresses (computed gotos); BINARY_SUBSCR_GETITEM's entry
 * leads to its code. Its C (3.11 ceval.c) stores the instruction pointer into the running frame
 * (INSTRUCTION_START: frame->prev_instr = next_instr), checks the cache (each failed check
 * leaves the path), pushes the new frame, links it (new_frame->previous = frame) and makes it
 * the running one (frame = cframe.current_frame = new_frame; goto start_frame). The compiler
 * keeps `frame` in one callee-saved register throughout; the site is the instruction after it
 * takes the new frame, or the first one on from there that a probe costs one trap on
 * (user/target/probe_site.h). Each step is checked on the instructions themselves (Capstone), or
 * nothing is probed.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <string.h>
#include "pyuprof.h"
#include "target/inline_subscr.h"
#include "target/probe_site.h"
#include "target/x86_regs.h"

#define OPCODES 256
#define GETITEM_OPCODE 19    /* BINARY_SUBSCR_GETITEM on every 3.11 (dis._all_opmap) */
#define PREV_INSTR_OFF 56    /* gdb: offsetof(_PyInterpreterFrame, prev_instr), 3.11 */
#define WALK_INSNS 200	     /* the path is ~60 instructions in Debian's 3.11.2 */
#define WALK_JUMPS 4	     /* unconditional jumps followed (blocks the compiler moved) */
#define WINDOW 512	     /* bytes decoded at a time */

/* insn is `mov qword ptr [base + disp], reg`: its base and source registers (64-bit ids). */
static bool store64(const cs_insn *insn, int64_t disp, unsigned *base, unsigned *src)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_MEM ||
	    x->operands[1].type != X86_OP_REG || x->operands[0].size != 8 ||
	    x->operands[0].mem.index != X86_REG_INVALID || x->operands[0].mem.disp != disp ||
	    x->operands[0].mem.segment != X86_REG_INVALID)
		return false;
	*base = x->operands[0].mem.base;
	*src = x->operands[1].reg;
	return true;
}

/* insn is `mov dst, src` between 64-bit registers. */
static bool move64(const cs_insn *insn, unsigned *dst, unsigned *src)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_REG || x->operands[0].size != 8)
		return false;
	*dst = x->operands[0].reg;
	*src = x->operands[1].reg;
	return true;
}

/* The path's states, in order: what the walk waits for next. */
enum step { FIND_FRAME, FIND_LINK, FIND_SWITCH };

/* Walks the path from the handler at pc to the site. Returns 0 with s filled, or -ENOENT. */
static int walk(csh cs, cs_insn *insn, struct elf_file *ef, uint64_t pc, uint64_t lo,
		uint64_t hi, uint32_t frame_back, struct inline_subscr *s, unsigned *frame)
{
	unsigned fr = 0, fresh = 0, base, src, dst;
	enum step step = FIND_FRAME;
	int insns = 0, jumps = 0;
	uint8_t buf[WINDOW];

	while (insns < WALK_INSNS) {
		const uint8_t *code = buf;
		size_t left = hi - pc < sizeof(buf) ? hi - pc : sizeof(buf);
		uint64_t addr = pc;
		bool moved = false;

		if (pc < lo || pc >= hi || elf_file__read(ef, pc, buf, left))
			return -ENOENT;
		while (!moved && insns++ < WALK_INSNS && cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			const cs_x86 *x = &insn->detail->x86;

			pc = insn->address + insn->size;
			/* a way out of the path that is no check: not the path this reads */
			if (insn->id == X86_INS_RET || insn->id == X86_INS_CALL ||
			    insn->id == X86_INS_INT3 || insn->id == X86_INS_UD2)
				return -ENOENT;
			if (insn->id == X86_INS_JMP) {
				if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
				    ++jumps > WALK_JUMPS)
					return -ENOENT;
				pc = (uint64_t)x->operands[0].imm;
				moved = true;
				continue;
			}
			switch (step) {
			case FIND_FRAME: /* INSTRUCTION_START: frame->prev_instr = next_instr */
				if (store64(insn, PREV_INSTR_OFF, &base, &src) &&
				    x86_frame_reg(x86_reg64(base))) {
					fr = x86_reg64(base);
					step = FIND_LINK;
				}
				break;
			case FIND_LINK: /* new_frame->previous = frame */
				if (x86_writes(cs, insn, fr))
					return -ENOENT;
				if (store64(insn, frame_back, &base, &src) && x86_reg64(src) == fr &&
				    x86_reg64(base) != fr) {
					fresh = x86_reg64(base);
					step = FIND_SWITCH;
				}
				break;
			case FIND_SWITCH: /* frame = new_frame: the site is the next instruction */
				if (move64(insn, &dst, &src) && x86_reg64(dst) == fr &&
				    x86_reg64(src) == fresh) {
					s->vaddr = pc;
					s->reg = x86_frame_reg(fr);
					*frame = fr;
					return 0;
				}
				if (x86_writes(cs, insn, fr) || x86_writes(cs, insn, fresh))
					return -ENOENT;
				break;
			}
		}
		/* the window's end: go on after its last whole instruction; nothing decoded at
		 * its start: out of step with the code, refused */
		if (!moved && code == buf)
			return -ENOENT;
	}
	return -ENOENT;
}

int inline_subscr__find(struct elf_file *ef, uint64_t eval, uint64_t size, uint32_t frame_back,
			struct inline_subscr *s)
{
	uint64_t table, handler, handlers[OPCODES];
	unsigned frame = 0;
	cs_insn *insn;
	csh cs;
	int err;

	memset(s, 0, sizeof(*s));
	/* most of the 256 entries lead into the eval function (the rest: its unknown-opcode
	 * code, which the compiler may move out of it) */
	err = elf_file__code_table(ef, eval, eval + size, OPCODES, OPCODES / 2, &table);
	if (!err)
		err = elf_file__read(ef, table + GETITEM_OPCODE * 8, &handler, sizeof(handler));
	if (err || handler - eval >= size)
		return -ENOENT;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOENT;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	err = insn ? walk(cs, insn, ef, handler, eval, eval + size, frame_back, s, &frame) :
		     -ENOMEM;
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	/* a probe there is single-stepped (Debian's 3.11.2: an lea), a second exception a hit;
	 * its program reads only the frame register, so it fires as well at the first
	 * instruction on the way that the kernel emulates (there: the branch of start_frame's
	 * recursion check, three instructions on). Every opcode's handler is a jump target. */
	if (!err && !elf_file__read(ef, table, handlers, sizeof(handlers)))
		s->vaddr = probe_site__move(ef, eval, eval + size, s->vaddr, &frame, 1, handlers,
					    OPCODES);
	return err;
}
