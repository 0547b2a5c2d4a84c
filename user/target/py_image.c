// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Is a freshly exec'd image a Python interpreter, and is its libpython mapped yet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/proc.h"
#include "target/elf_syms.h"
#include "target/py_image.h"

enum py_image_kind py_image__kind(pid_t pid)
{
	char path[64];
	struct elf_file *ef;
	enum py_image_kind kind = IMAGE_OTHER;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ef = elf_file__open(path);
	if (!ef)
		return IMAGE_OTHER;
	if (elf_file__has_sym(ef, "PyEval_EvalFrameEx"))
		kind = IMAGE_HAS_PYTHON;
	else if (elf_file__needs(ef, "libpython"))
		kind = IMAGE_NEEDS_LIBPYTHON;
	elf_file__close(ef);
	return kind;
}

bool py_image__libpython_mapped(pid_t pid)
{
	struct mapping *maps;
	int n = proc__maps(pid, &maps), i;
	bool found = false;

	for (i = 0; i < n && !found; i++) {
		const char *base = strrchr(maps[i].path, '/');

		found = base && !strncmp(base + 1, "libpython", 9) && maps[i].perms[1] == 'w';
	}
	if (n > 0)
		free(maps);
	return found;
}
