// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libelf symbol tables and program headers; Capstone for finding ret and call instructions;
 * libdw for the call frame information (how large a function's frame is at a call). */
#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/elf_syms.h"

struct elf_file {
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi; /* read at the first CFA asked for; NULL if the file has none */
	bool cfi_read;
};

struct elf_file *elf_file__open(const char *path)
{
	struct elf_file *ef;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		err = errno;
		free(ef);
		errno = err;
		return NULL;
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		elf_file__close(ef);
		errno = ENOEXEC;
		return NULL;
	}
	return ef;
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->cfi)
		dwarf_cfi_end(ef->cfi);
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef);
}

static int find_in(struct elf_file *ef, Elf64_Word type, const char *name, uint64_t *vaddr,
		   uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(ef->elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*vaddr = sym.st_value;
				if (size)
					*size = sym.st_size;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int elf_file__sym(struct elf_file *ef, const char *name, uint64_t *vaddr, uint64_t *size)
{
	if (!find_in(ef, SHT_SYMTAB, name, vaddr, size))
		return 0;
	return find_in(ef, SHT_DYNSYM, name, vaddr, size);
}

bool elf_file__has_sym(struct elf_file *ef, const char *name)
{
	uint64_t v;

	return elf_file__sym(ef, name, &v, NULL) == 0;
}

static int load_segment(struct elf_file *ef, uint64_t vaddr, GElf_Phdr *out)
{
	size_t i, n;

	if (elf_getphdrnum(ef->elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*out = ph;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_file__vaddr_to_offset(struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	GElf_Phdr ph;
	int err = load_segment(ef, vaddr, &ph);

	if (err)
		return err;
	*off = vaddr - ph.p_vaddr + ph.p_offset;
	return 0;
}

int elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	GElf_Phdr ph;
	ssize_t n;
	int err = load_segment(ef, vaddr, &ph);

	if (err)
		return err;
	if (vaddr + len > ph.p_vaddr + ph.p_filesz)
		return -ENODATA; /* .bss: only in memory */
	n = pread(ef->fd, buf, len, (off_t)(vaddr - ph.p_vaddr + ph.p_offset));
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

uint64_t elf_file__base_vaddr(struct elf_file *ef)
{
	uint64_t base = UINT64_MAX;
	size_t i, n;

	if (elf_getphdrnum(ef->elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < base)
			base = ph.p_vaddr & ~(ph.p_align ? ph.p_align - 1 : 0);
	}
	return base == UINT64_MAX ? 0 : base;
}

bool elf_file__needs(struct elf_file *ef, const char *prefix)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			s = elf_strptr(ef->elf, sh.sh_link, dyn.d_un.d_val);
			if (s && !strncmp(s, prefix, strlen(prefix)))
				return true;
		}
	}
	return false;
}

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

/* The address of a section by name, or 0. */
static uint64_t section_addr(struct elf_file *ef, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return sh.sh_addr;
	}
	return 0;
}

int elf_file__usdt(struct elf_file *ef, const char *provider, const char *name,
		   struct usdt_probe *out)
{
	uint64_t base_now = section_addr(ef, ".stapsdt.base");
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *d = (const char *)data->d_buf + desc_off, *prov, *pname;
			uint64_t pc, base, sem;

			/* NT_STAPSDT (3), owner "stapsdt": pc, base, semaphore, then strings */
			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) ||
			    nh.n_descsz < 3 * 8 + 2)
				continue;
			memcpy(&pc, d, 8);
			memcpy(&base, d + 8, 8);
			memcpy(&sem, d + 16, 8);
			prov = d + 24;
			pname = prov + strnlen(prov, nh.n_descsz - 24) + 1;
			/* both strings end inside the descriptor (a crafted file may not say so) */
			if (pname >= d + nh.n_descsz ||
			    !memchr(pname, 0, (size_t)(d + nh.n_descsz - pname)) ||
			    strcmp(prov, provider) || strcmp(pname, name))
				continue;
			/* a prelinked file moved .stapsdt.base; the note keeps the old address */
			if (base_now && base)
				pc += base_now - base;
			memset(out, 0, sizeof(*out));
			if (elf_file__vaddr_to_offset(ef, pc, &out->offset))
				return -ENOENT;
			if (sem && elf_file__vaddr_to_offset(ef, sem, &out->semaphore_offset))
				return -ENOENT;
			return 0;
		}
	}
	return -ENOENT;
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

int elf_file__cfa_offset(struct elf_file *ef, uint64_t pc, int64_t *off)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;
	int err = -ENOENT;

	if (!ef->cfi_read) {
		ef->cfi = dwarf_getcfi_elf(ef->elf); /* .eh_frame (or .debug_frame) */
		ef->cfi_read = true;
	}
	if (!ef->cfi || dwarf_cfi_addrframe(ef->cfi, pc, &frame))
		return -ENOENT;
	/* the usual rule without a frame pointer: CFA = rsp + offset */
	if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 && ops[0].atom == DW_OP_bregx &&
	    ops[0].number == 7 /* rsp */) {
		*off = (int64_t)ops[0].number2;
		err = 0;
	} else if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 &&
		   ops[0].atom == DW_OP_breg7) {
		*off = (int64_t)ops[0].number;
		err = 0;
	}
	free(frame);
	return err;
}

/* The data of the section named name, and its vaddr; NULL if the file has none. */
static Elf_Data *section_named(struct elf_file *ef, const char *name, uint64_t *vaddr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(ef->elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		*vaddr = sh.sh_addr;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/*
 * The FDE that covers pc, found in .eh_frame_hdr's search table (initial locations, sorted):
 * the encodings GCC and LLVM write on x86-64 only (the table: data-relative signed 4-byte
 * pairs; the FDE's own initial location pc-relative and its range 4 bytes, as its CIE
 * says by 'zR' 0x1b, which is checked by the location matching the table's).
 */
int elf_file__func_range(struct elf_file *ef, uint64_t pc, uint64_t *start, uint64_t *end)
{
	uint64_t hdr, fde;
	const uint8_t *h;
	uint32_t count, len, range;
	int32_t loc, at, begin;
	size_t lo, hi, mid;
	Elf_Data *d = section_named(ef, ".eh_frame_hdr", &hdr);

	if (!d || !d->d_buf || d->d_size < 12)
		return -ENOENT;
	h = d->d_buf;
	/* version 1; eh_frame_ptr any 4-byte form; count udata4; table datarel|sdata4 */
	if (h[0] != 1 || (h[1] & 0x0f) != 0x0b || h[2] != 0x03 || h[3] != 0x3b)
		return -ENOTSUP;
	memcpy(&count, h + 8, 4);
	if (!count || 12 + (size_t)count * 8 > d->d_size)
		return -ENOENT;
	/* the last entry whose initial location is at or below pc */
	lo = 0;
	hi = count;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		memcpy(&loc, h + 12 + mid * 8, 4);
		if (hdr + (uint64_t)(int64_t)loc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(&loc, h + 12 + lo * 8, 4);
	memcpy(&at, h + 12 + lo * 8 + 4, 4);
	fde = hdr + (uint64_t)(int64_t)at;
	if (hdr + (uint64_t)(int64_t)loc > pc || elf_file__read(ef, fde, &len, 4) ||
	    elf_file__read(ef, fde + 8, &begin, 4) || elf_file__read(ef, fde + 12, &range, 4) ||
	    len < 12 || len == 0xffffffff)
		return -ENOENT;
	*start = fde + 8 + (uint64_t)(int64_t)begin;
	*end = *start + range;
	if (*start != hdr + (uint64_t)(int64_t)loc || pc >= *end)
		return -ENOENT;
	return 0;
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
