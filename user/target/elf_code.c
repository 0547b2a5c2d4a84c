// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The file's code, read as instructions: the ret, call and jump instructions of a function and
 * the loads of a given form (Capstone), and byte scans for what may be a call into a range, a
 * reference to a string or a table of code addresses. */
#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include "target/elf_file.h"
#include "target/elf_syms.h"

/* The file's executable sections (up to 16): where a code address may point. */
struct code_spans {
	uint64_t start[16], size[16];
	size_t n;
};

static void code_spans(struct elf_file *ef, struct code_spans *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	c->n = 0;
	while ((scn = elf_nextscn(ef->elf, scn)) && c->n < 16)
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size) {
			c->start[c->n] = sh.sh_addr;
			c->size[c->n++] = sh.sh_size;
		}
}

static bool in_code(const struct code_spans *c, uint64_t vaddr)
{
	for (size_t i = 0; i < c->n; i++)
		if (vaddr - c->start[i] < c->size[i])
			return true;
	return false;
}

int elf_file__code_table(struct elf_file *ef, uint64_t lo, uint64_t hi, size_t n, size_t inside,
			 uint64_t *table)
{
	struct code_spans code;
	Elf_Scn *scn = NULL;
	size_t found = 0;
	GElf_Shdr sh;

	code_spans(ef, &code);
	while ((scn = elf_nextscn(ef->elf, scn))) {
		size_t i, run = 0, in = 0, count;
		const uint64_t *v;
		Elf_Data *data;

		/* initialised data the code does not run: .rodata, .data.rel.ro, .data */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR) ||
		    (sh.sh_addr & 7) || !(data = elf_getdata(scn, NULL)) || !data->d_buf ||
		    data->d_size < n * 8)
			continue;
		v = data->d_buf;
		count = data->d_size / 8;
		/* runs of pointers into code, windows of n of them with enough inside [lo, hi) */
		for (i = 0; i < count; i++) {
			if (in_code(&code, v[i])) {
				in += v[i] - lo < hi - lo;
				if (++run > n)
					in -= v[i - n] - lo < hi - lo;
				if (run >= n && in >= inside && found++ == 0)
					*table = sh.sh_addr + (i + 1 - n) * 8;
			} else {
				run = in = 0;
			}
		}
	}
	return found == 1 ? 0 : -ENOENT;
}

bool elf_file__rel32_into(struct elf_file *ef, uint64_t from, uint64_t to)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		const uint8_t *b;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		b = data->d_buf;
		/* every byte position, as if an instruction started there: more than the real
		 * instructions, never fewer */
		for (size_t i = 0; i + 5 <= data->d_size; i++) {
			size_t len = b[i] == 0xe8 || b[i] == 0xe9 ? 5 :
				     b[i] == 0x0f && i + 6 <= data->d_size &&
						     (b[i + 1] & 0xf0) == 0x80 ?
								6 :
								0;
			int32_t disp;
			uint64_t target;

			if (!len)
				continue;
			memcpy(&disp, b + i + len - 4, 4);
			target = sh.sh_addr + i + len + (int64_t)disp;
			if (target > from && target <= to)
				return true;
		}
	}
	return false;
}

/*
 * The addresses (vaddrs) of every instruction id of the function [vaddr, vaddr + size) (every
 * jump or conditional jump for X86_INS_INVALID), or with after, of the instruction that follows
 * each (a call's return address). Returns the count (>= 0) or -errno; *out is malloc'd.
 */
static int sweep(struct elf_file *ef, uint64_t vaddr, uint64_t size, unsigned id, bool after,
		 uint64_t **out, uint64_t **targets)
{
	uint64_t *found = NULL, *to = NULL, *grown, addr;
	size_t n = 0, cap = 0, left;
	const uint8_t *code;
	uint8_t *bytes;
	cs_insn *insn;
	csh cs;
	int err;

	if (!size || size > (64u << 20))
		return -EINVAL;
	bytes = malloc(size);
	if (!bytes)
		return -ENOMEM;
	err = elf_file__read(ef, vaddr, bytes, size);
	if (err)
		goto out_free;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		err = -EINVAL;
		goto out_free;
	}
	if (targets || id == X86_INS_INVALID)
		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	if (!insn) {
		cs_close(&cs);
		err = -ENOMEM;
		goto out_free;
	}
	code = bytes;
	left = size;
	addr = vaddr;
	/*
	 * Linear sweep of the whole function. A byte Capstone cannot decode means the sweep is
	 * out of step with the instructions (data in the code, or a decoder gap); carrying on
	 * could take the middle of an instruction for a ret and put a breakpoint inside a real
	 * instruction of the target: refused instead.
	 */
	while (left) {
		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			err = -EILSEQ;
			break;
		}
		if (id != X86_INS_INVALID ? insn->id != id : !cs_insn_group(cs, insn, CS_GRP_JUMP))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(found, cap * sizeof(*found));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			found = grown;
			grown = targets ? realloc(to, cap * sizeof(*to)) : NULL;
			if (targets && !grown) {
				err = -ENOMEM;
				break;
			}
			to = grown;
		}
		if (targets) /* a direct call's target; 0 for one through a register or memory */
			to[n] = insn->detail && insn->detail->x86.op_count == 1 &&
					insn->detail->x86.operands[0].type == X86_OP_IMM ?
				(uint64_t)insn->detail->x86.operands[0].imm : 0;
		found[n++] = insn->address + (after ? insn->size : 0);
	}
	cs_free(insn, 1);
	cs_close(&cs);
	if (!err) {
		*out = found;
		found = NULL;
		if (targets) {
			*targets = to;
			to = NULL;
		}
		err = (int)n;
	}
out_free:
	free(found);
	free(to);
	free(bytes);
	return err;
}

int elf_file__ret_sites(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t **offs)
{
	uint64_t file_off;
	int n, i, err = elf_file__vaddr_to_offset(ef, vaddr, &file_off);

	if (err)
		return err;
	n = sweep(ef, vaddr, size, X86_INS_RET, false, offs, NULL);
	for (i = 0; i < n; i++)
		(*offs)[i] = (*offs)[i] - vaddr + file_off;
	return n;
}

int elf_file__calls(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t **ras,
		    uint64_t **targets)
{
	return sweep(ef, vaddr, size, X86_INS_CALL, true, ras, targets);
}

int elf_file__jumps(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t **at,
		    uint64_t **targets)
{
	return sweep(ef, vaddr, size, X86_INS_INVALID, false, at, targets);
}

int elf_file__string_refs(struct elf_file *ef, const char *s, uint64_t *at, int max)
{
	size_t len = strlen(s) + 1, i, n = 0;
	Elf_Scn *scn = NULL;
	uint64_t str = 0;
	GElf_Shdr sh;

	/* the string, NUL-terminated, in a section of initialised read-only data */
	while (!str && (scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *d;
		const char *p, *end;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		/* at each string's start: after a NUL (tail-merged strings end others) */
		for (p = d->d_buf, end = p + d->d_size; p + len <= end; p++) {
			if (!memcmp(p, s, len)) {
				str = sh.sh_addr + (uint64_t)(p - (const char *)d->d_buf);
				break;
			}
			p = memchr(p, 0, (size_t)(end - p));
			if (!p)
				break;
		}
	}
	if (!str)
		return -ENOENT;
	/* the instructions that load its address: lea disp32(%rip) (REX.W 8d, ModRM 00 reg 101),
	 * or, in a non-PIE executable, mov $imm32 into a 32-bit register (b8+r, 41 b8+r) */
	scn = NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const uint8_t *b;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		b = d->d_buf;
		for (i = 0; i + 7 <= d->d_size; i++) {
			uint64_t pc = sh.sh_addr + i, found = 0;
			int32_t disp;
			uint32_t imm;

			if ((b[i] & 0xf8) == 0x48 && b[i + 1] == 0x8d && (b[i + 2] & 0xc7) == 0x05) {
				memcpy(&disp, b + i + 3, 4);
				if (pc + 7 + (uint64_t)(int64_t)disp == str)
					found = pc;
			} else if ((b[i] & 0xf8) == 0xb8 || (b[i] == 0x41 && (b[i + 1] & 0xf8) == 0xb8)) {
				memcpy(&imm, b + i + 1 + (b[i] == 0x41), 4);
				if (imm == str)
					found = pc;
			}
			if (found && (int)n < max)
				at[n++] = found;
		}
	}
	return (int)n;
}

int elf_file__loads(struct elf_file *ef, uint64_t vaddr, uint64_t size, int64_t disp,
		    uint64_t **at)
{
	uint64_t *found = NULL, *grown, addr = vaddr;
	size_t n = 0, cap = 0, left = size;
	const uint8_t *code;
	uint8_t *bytes;
	cs_insn *insn;
	csh cs;
	int err = 0;

	if (!size || size > (1u << 20))
		return -EINVAL;
	bytes = malloc(size);
	if (!bytes)
		return -ENOMEM;
	if (elf_file__read(ef, vaddr, bytes, size) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(bytes);
		return -EINVAL;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	code = bytes;
	while (insn && left && !err) {
		const cs_x86 *x;

		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			err = -EILSEQ; /* out of step with the instructions: refused (sweep) */
			break;
		}
		x = &insn->detail->x86;
		if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
		    x->operands[1].type != X86_OP_MEM || x->operands[1].size != 8 ||
		    x->operands[1].mem.disp != disp || x->operands[1].mem.index != X86_REG_INVALID ||
		    x->operands[1].mem.base == X86_REG_RIP || x->operands[1].mem.base == X86_REG_RSP)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			grown = realloc(found, cap * sizeof(*found));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			found = grown;
		}
		found[n++] = insn->address;
	}
	if (insn)
		cs_free(insn, 1);
	else
		err = -ENOMEM;
	cs_close(&cs);
	free(bytes);
	if (err) {
		free(found);
		return err;
	}
	*at = found;
	return (int)n;
}