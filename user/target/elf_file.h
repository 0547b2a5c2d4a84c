/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * struct elf_file, for the two files that read one: elf_syms.c (symbols, segments, notes, frame
 * information) and elf_code.c (the code's instructions). Everyone else holds it opaque
 * (elf_syms.h).
 */
#ifndef __PYUPROF_ELF_FILE_H
#define __PYUPROF_ELF_FILE_H

#include <stdbool.h>
#include <elfutils/libdw.h>
#include <libelf.h>

struct elf_file {
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi; /* read at the first CFA asked for; NULL if the file has none */
	bool cfi_read;
};

#endif /* __PYUPROF_ELF_FILE_H */
