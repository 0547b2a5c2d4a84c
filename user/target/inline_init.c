// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where CPython 3.13 runs a class's __init__ inline (user/target/inline_init.h). The eval loop
 * dispatches through a table of label addresses (computed gotos); CALL_ALLOC_AND_ENTER_INIT's
 * entry leads to its code. Its C (3.13 generated_cases.c.h) stores the instruction pointer
 * into the running frame (frame->instr_ptr = next_instr), checks that the call may take the
 * fast path (DEOPT_IF, each failed check leaving to one place: the generic CALL), reads the
 * class's cached __init__ (cls->_spec_cache.init) and makes the object
 * (_PyType_NewManagedObject(tp)), then pushes the frames and runs __init__ inline. The
 * compiler keeps `frame` in one callee-saved register throughout; the site is the call that
 * makes the object, with the type as its first argument. A compiler that inlined
 * _PyType_NewManagedObject (Debian's 3.13.18: GCC with LTO) calls what it allocates through
 * there instead; either is that instruction's own call.
 *
 * Where the build has _PyType_NewManagedObject's symbol, the call found must be to it.
 * Debian's build has the eval loop's instructions, dispatch table's targets included, in a
 * part split off the function (its .cold, which its symbol's range does not cover): the parts
 * are found by the jumps that lead into them and the call frame information. Each step is
 * checked on the instructions themselves (Capstone), or nothing is probed.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "pyuprof.h"
#include "target/inline_init.h"
#include "target/x86_regs.h"

#define OPCODES 256
#define INIT_OPCODE 162	  /* CALL_ALLOC_AND_ENTER_INIT on every 3.13 (one bytecode magic) */
#define INSTR_PTR_OFF 56  /* gdb: offsetof(_PyInterpreterFrame, instr_ptr), 3.13 */
#define MIN_CHECKS 3	  /* DEOPT_IFs before the call: 8 in 3.13.0 and Debian's 3.13.18 */
#define MAX_PARTS 8	  /* the function's own range and the parts split off it */
#define WALK_INSNS 200	  /* the path is ~50 instructions in both */
#define WALK_JUMPS 4	  /* unconditional jumps followed (blocks the compiler moved) */
#define WINDOW 512	  /* bytes decoded at a time */
#define ENTRY_CFA 8	  /* a function's entry: the return address alone on the stack */

struct span {
	uint64_t lo, hi;
};

static int in_spans(const struct span *s, int n, uint64_t pc)
{
	for (int i = 0; i < n; i++)
		if (pc >= s[i].lo && pc < s[i].hi)
			return i;
	return -1;
}

/*
 * The eval function's parts: [eval, eval + size) and each range of the call frame information
 * its direct jumps lead into that is no function of its own (a function's range starts with
 * the return address alone on the stack: a jump there is a tail call). Returns how many.
 */
static int eval_parts(struct elf_file *ef, uint64_t eval, uint64_t size, struct span *parts)
{
	uint64_t *at = NULL, *dest = NULL, lo, hi;
	int n = 1, k = elf_file__jumps(ef, eval, size, &at, &dest);
	int64_t cfa;

	parts[0] = (struct span){ eval, eval + size };
	for (int i = 0; i < k && n < MAX_PARTS; i++) {
		if (!dest[i] || in_spans(parts, n, dest[i]) >= 0 ||
		    elf_file__func_range(ef, dest[i], &lo, &hi) ||
		    (!elf_file__cfa_offset(ef, lo, &cfa) && cfa == ENTRY_CFA))
			continue;
		parts[n++] = (struct span){ lo, hi };
	}
	free(at);
	free(dest);
	return n;
}

/* insn is `mov qword ptr [base + disp], reg`: its base (64-bit id). */
static bool store64(const cs_insn *insn, int64_t disp, unsigned *base)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_MEM ||
	    x->operands[1].type != X86_OP_REG || x->operands[0].size != 8 ||
	    x->operands[0].mem.index != X86_REG_INVALID || x->operands[0].mem.disp != disp ||
	    x->operands[0].mem.segment != X86_REG_INVALID)
		return false;
	*base = x86_reg64(x->operands[0].mem.base);
	return true;
}

/* insn is `mov reg, qword ptr [base + disp]`: its base (64-bit id). */
static bool load64(const cs_insn *insn, int64_t disp, unsigned *base)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_MEM || x->operands[0].size != 8 ||
	    x->operands[1].mem.index != X86_REG_INVALID || x->operands[1].mem.disp != disp ||
	    x->operands[1].mem.segment != X86_REG_INVALID ||
	    x->operands[1].mem.base == X86_REG_RIP)
		return false;
	*base = x86_reg64(x->operands[1].mem.base);
	return true;
}

/* insn is `mov dst, src` between 64-bit registers. */
static bool move64(const cs_insn *insn, unsigned *dst, unsigned *src)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_REG || x->operands[0].size != 8)
		return false;
	*dst = x86_reg64(x->operands[0].reg);
	*src = x86_reg64(x->operands[1].reg);
	return true;
}

/* What a path has seen so far. */
struct path {
	unsigned frame;		     /* the frame's register, once instr_ptr is stored through it */
	bool init_read;		     /* cls->_spec_cache.init loaded */
	bool type[X86_REG_ENDING];   /* the registers that hold the type since */
	uint64_t deopt;		     /* where every check leaves to, once the first is met */
	int checks;
};

/* The registers insn writes no longer hold the type; a move copies whether one does. */
static void follow_type(csh cs, const cs_insn *insn, struct path *p)
{
	unsigned dst, src;
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (move64(insn, &dst, &src)) {
		p->type[dst] = p->type[src];
		return;
	}
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr)) {
		memset(p->type, 0, sizeof(p->type));
		return;
	}
	for (uint8_t i = 0; i < nwr; i++)
		p->type[x86_reg64(wr[i])] = false;
}

/*
 * Walks the path from the handler at pc to the call. At the first check the path may go
 * either way (which one is the generic CALL is not known yet): first_taken says which this
 * walk tries; after it, each check must leave to the same place. Returns 0 with s filled, or
 * -ENOENT.
 */
static int walk(csh cs, cs_insn *insn, struct elf_file *ef, const struct span *parts, int nparts,
		uint64_t pc, bool first_taken, uint32_t spec_cache_init, struct inline_init *s)
{
	struct path *p = calloc(1, sizeof(*p));
	int insns = 0, jumps = 0, err = -ENOENT;
	uint8_t buf[WINDOW];
	unsigned base;

	if (!p)
		return -ENOMEM;
	while (insns < WALK_INSNS) {
		int part = in_spans(parts, nparts, pc);
		const uint8_t *code = buf;
		size_t left;
		uint64_t addr = pc;
		bool moved = false;

		if (part < 0)
			goto out;
		left = parts[part].hi - pc < sizeof(buf) ? parts[part].hi - pc : sizeof(buf);
		if (elf_file__read(ef, pc, buf, left))
			goto out;
		while (!moved && insns++ < WALK_INSNS && cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			const cs_x86 *x = &insn->detail->x86;
			uint64_t next = insn->address + insn->size, to;

			pc = next;
			/* fallen into the generic CALL: not the fast path */
			if (p->deopt && insn->address == p->deopt)
				goto out;
			if (insn->id == X86_INS_CALL) {
				/* the first call: the object's making, type in rdi (known as such from
				 * its cached __init__'s read), the checks before it */
				if (!p->frame || p->checks < MIN_CHECKS ||
				    x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
				    !p->type[X86_REG_RDI])
					goto out;
				s->vaddr = insn->address;
				s->callee = (uint64_t)x->operands[0].imm;
				s->reg = x86_frame_reg(p->frame);
				err = 0;
				goto out;
			}
			/* a way out of the path that is no check: not the path this reads */
			if (cs_insn_group(cs, insn, CS_GRP_RET) || cs_insn_group(cs, insn, CS_GRP_INT) ||
			    cs_insn_group(cs, insn, CS_GRP_IRET) || insn->id == X86_INS_UD2 ||
			    insn->id == X86_INS_SYSCALL || insn->id == X86_INS_HLT)
				goto out;
			if (cs_insn_group(cs, insn, CS_GRP_JUMP)) {
				if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
					goto out; /* through a register: a dispatch, not the path */
				to = (uint64_t)x->operands[0].imm;
				if (insn->id == X86_INS_JMP) {
					if (to == p->deopt || ++jumps > WALK_JUMPS)
						goto out;
					pc = to;
					moved = true;
					continue;
				}
				/* a check: one way is the generic CALL, the other the path */
				if (!p->frame || to == next)
					goto out;
				if (!p->deopt) {
					p->deopt = first_taken ? next : to;
					moved = first_taken;
				} else if (next == p->deopt) {
					moved = true;
				} else if (to != p->deopt) {
					goto out;
				}
				p->checks++;
				if (moved)
					pc = to;
				continue;
			}
			if (!p->frame) { /* frame->instr_ptr = next_instr */
				if (store64(insn, INSTR_PTR_OFF, &base) && x86_frame_reg(base))
					p->frame = base;
				continue;
			}
			if (x86_writes(cs, insn, p->frame))
				goto out;
			follow_type(cs, insn, p);
			/* PyFunctionObject *init = cls->_spec_cache.init */
			if (!p->init_read && load64(insn, spec_cache_init, &base) &&
			    x86_reg64(x->operands[0].reg) != base) {
				p->init_read = true;
				p->type[base] = true;
			}
		}
		/* the window's end: go on after its last whole instruction; nothing decoded at
		 * its start: out of step with the code, refused */
		if (!moved && code == buf)
			goto out;
	}
out:
	free(p);
	return err;
}

int inline_init__find(struct elf_file *ef, uint64_t eval, uint64_t size, uint32_t spec_cache_init,
		      struct inline_init *s)
{
	struct inline_init way[2] = { 0 };
	struct span parts[MAX_PARTS];
	uint64_t table = 0, t, handler;
	int nparts, found = 0, err[2];
	cs_insn *insn;
	csh cs;

	memset(s, 0, sizeof(*s));
	if (!spec_cache_init)
		return -ENOENT;
	/* the dispatch table: most of its 256 entries lead into one part (the rest: its
	 * unknown-opcode code, which the compiler may move out of it) */
	nparts = eval_parts(ef, eval, size, parts);
	for (int i = 0; i < nparts; i++)
		if (!elf_file__code_table(ef, parts[i].lo, parts[i].hi, OPCODES, OPCODES / 2, &t) &&
		    found++ == 0)
			table = t;
	if (found != 1 || elf_file__read(ef, table + INIT_OPCODE * 8, &handler, sizeof(handler)) ||
	    in_spans(parts, nparts, handler) < 0)
		return -ENOENT;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOENT;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	if (!insn) {
		cs_close(&cs);
		return -ENOMEM;
	}
	for (int i = 0; i < 2; i++)
		err[i] = walk(cs, insn, ef, parts, nparts, handler, i, spec_cache_init, &way[i]);
	cs_free(insn, 1);
	cs_close(&cs);
	if (err[0] == -ENOMEM || err[1] == -ENOMEM)
		return -ENOMEM;
	/* one way only: both ways finding a call would be a path this does not know */
	if (!err[0] == !err[1])
		return -ENOENT;
	*s = err[0] ? way[1] : way[0];
	/* where the build has the function's symbol (pyenv's), the call must be to it */
	if (!elf_file__sym(ef, "_PyType_NewManagedObject", &t, NULL) && t != s->callee) {
		memset(s, 0, sizeof(*s));
		return -ENOENT;
	}
	return 0;
}
