// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The file through libelf: its symbol tables, program headers, initialised data and USDT notes;
 * and through libdw its call frame information (how large a function's frame is at a call, and
 * which function a code address is in, stripped or not). Its instructions: elf_code.c. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/elf_file.h"
#include "target/elf_syms.h"

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
