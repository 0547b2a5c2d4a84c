/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ELF files through libelf: symbol lookup (.symtab, then .dynsym: Debian's python3.11 is stripped),
 * virtual address to file offset (uprobes take file offsets), reads of initialised data, the
 * ret and call instructions of a function (Capstone), and the size of a function's frame at a
 * given instruction (the call frame information, through libdw). Implemented in elf_syms.c and,
 * for what reads the code as instructions, elf_code.c.
 */
#ifndef __PYUPROF_ELF_SYMS_H
#define __PYUPROF_ELF_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

/* Returns NULL with errno set (ENOEXEC: not an ELF file). */
struct elf_file *elf_file__open(const char *path);
void elf_file__close(struct elf_file *ef);

/* Finds a defined symbol. Returns 0 or -ENOENT. */
int elf_file__sym(struct elf_file *ef, const char *name, uint64_t *vaddr, uint64_t *size);
bool elf_file__has_sym(struct elf_file *ef, const char *name);

/* Returns 0 or -ENOENT when vaddr is in no PT_LOAD segment. */
int elf_file__vaddr_to_offset(struct elf_file *ef, uint64_t vaddr, uint64_t *off);

/* Reads len bytes at vaddr from the file (initialised data only). Returns 0 or -errno. */
int elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

/* Lowest PT_LOAD vaddr, rounded down to its alignment: the load bias is start - this. */
uint64_t elf_file__base_vaddr(struct elf_file *ef);

/* True if a DT_NEEDED entry starts with prefix (e.g. "libpython"). */
bool elf_file__needs(struct elf_file *ef, const char *prefix);

/*
 * A table of n code addresses in the file's initialised data (a computed-goto dispatch table,
 * as a build without relocations holds it), at least inside of them in [lo, hi). Returns 0
 * with its vaddr in *table, or -ENOENT when no such table, or more than one, is found.
 */
int elf_file__code_table(struct elf_file *ef, uint64_t lo, uint64_t hi, size_t n, size_t inside,
			 uint64_t *table);

/* A SystemTap (USDT) probe: where it is and its semaphore, as file offsets (0: none). */
struct usdt_probe {
	uint64_t offset;
	uint64_t semaphore_offset;
};

/* Finds USDT probe provider:name. Returns 0, -ENOENT, or -errno. */
int elf_file__usdt(struct elf_file *ef, const char *provider, const char *name,
		   struct usdt_probe *out);

/*
 * File offsets of every ret instruction of the function [vaddr, vaddr + size), found by
 * disassembling it. Returns the count (>= 0) or -errno; *offs is malloc'd.
 */
int elf_file__ret_sites(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t **offs);

/* The return address (vaddr) of every call instruction of the function [vaddr, vaddr + size),
 * and its target (0 for a call through a register or memory). Returns the count (>= 0) or
 * -errno; *ras and *targets are malloc'd. */
int elf_file__calls(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t **ras,
		    uint64_t **targets);

/* The same for every jump and conditional jump of the function: where each is, and its target
 * (0 for a jump through a register or memory). */
int elf_file__jumps(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t **at,
		    uint64_t **targets);

/* Whether any executable section holds bytes that, read as a direct call, jump or conditional
 * jump with a 32-bit displacement, land in (from, to]: every byte position is read so, which
 * finds each real one and, rarely, a false one (the caller's answer is then the careful one). */
bool elf_file__rel32_into(struct elf_file *ef, uint64_t from, uint64_t to);

/* How far above rsp the canonical frame address is at instruction pc (vaddr), by the file's
 * call frame information. Returns 0, or -ENOENT if it gives none in the form CFA = rsp + k. */
int elf_file__cfa_offset(struct elf_file *ef, uint64_t pc, int64_t *off);

/*
 * The range [*start, *end) of the call frame information entry (FDE) that covers pc: a
 * function, or a part split off one (a .cold part), in a file stripped of its symbols too;
 * from .eh_frame_hdr. 0, -ENOENT, or -ENOTSUP (a table encoding not read here).
 */
int elf_file__func_range(struct elf_file *ef, uint64_t pc, uint64_t *start, uint64_t *end);

/*
 * The instructions that load the address of the string s (whole, NUL-terminated, in read-only
 * data): a rip-relative lea, or a mov of a 32-bit immediate (non-PIE executables). Up to max
 * into at; returns how many (every byte position is read as one: a false one is possible, and
 * the caller checks what it finds around each).
 */
int elf_file__string_refs(struct elf_file *ef, const char *s, uint64_t *at, int max);

/*
 * The 8-byte loads `mov disp(%reg),%reg` (no index; base neither rip nor rsp) in the code
 * [vaddr, vaddr + size): their vaddrs, malloc'd into *at. Returns the count or -errno.
 */
int elf_file__loads(struct elf_file *ef, uint64_t vaddr, uint64_t size, int64_t disp,
		    uint64_t **at);

#endif /* __PYUPROF_ELF_SYMS_H */
