// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: the ELF reader (user/target/elf_syms.c, elf_code.c) on mutated ELF files,
 * as pyuprof runs it as root on an interpreter it is given: open, the symbols and USDT probes it
 * looks up, vaddr -> file offset, data reads, DT_NEEDED, and the ret sites of the eval function.
 * Seeds: tests/fuzz/corpus/fuzz_elf (tests/fuzz/seeds/make_elf_seeds.sh).
 */
#include <errno.h>
#include <stdbool.h>
#include "target/elf_syms.h"
#include <linux/types.h>
#include "fuzz.h"

static const char *const names[] = {
	"_PyEval_EvalFrameDefault", "_PyRuntime", "Py_Version", "_PyEval_Vector",
	"Py_BytesMain", "PyThreadState_Get", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *ef;
	struct usdt_probe probe;
	uint64_t vaddr, len, off, *offs;
	unsigned char buf[64];
	char path[64];
	int fd, n;

	fd = fuzz_memfile(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	ef = elf_file__open(path);
	if (!ef) {
		close(fd);
		return 0;
	}
	(void)elf_file__base_vaddr(ef);
	(void)elf_file__needs(ef, "libpython");
	(void)elf_file__usdt(ef, "python", "function__entry", &probe);
	(void)elf_file__usdt(ef, "python", "function__return", &probe);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		(void)elf_file__has_sym(ef, names[i]);
		if (elf_file__sym(ef, names[i], &vaddr, &len))
			continue;
		(void)elf_file__vaddr_to_offset(ef, vaddr, &off);
		(void)elf_file__read(ef, vaddr, buf, sizeof(buf) < len ? sizeof(buf) : len ? len : 1);
		/* the sweep is costly on a huge claimed size: the real function is small */
		if (len && len <= 65536) {
			n = elf_file__ret_sites(ef, vaddr, len, &offs);
			if (n >= 0)
				free(offs);
		}
	}
	/* addresses the file does not vouch for */
	if (size >= 8) {
		memcpy(&vaddr, data + size - 8, sizeof(vaddr));
		(void)elf_file__vaddr_to_offset(ef, vaddr, &off);
		(void)elf_file__read(ef, vaddr, buf, 16);
	}
	elf_file__close(ef);
	close(fd);
	return 0;
}
