/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether the program a process has just exec'd runs Python, read from its ELF file (never by
 * running it), and whether its libpython is mapped yet: launch and the following of child
 * processes both start recording a new image at that point, before its interpreter starts.
 */
#ifndef __PYUPROF_PY_IMAGE_H
#define __PYUPROF_PY_IMAGE_H

#include <stdbool.h>
#include <sys/types.h>

enum py_image_kind {
	IMAGE_OTHER,		/* no interpreter (a shell, a wrapper): may exec one later */
	IMAGE_HAS_PYTHON,	/* the executable holds the interpreter (a static build) */
	IMAGE_NEEDS_LIBPYTHON,	/* the interpreter comes with a libpython the loader maps */
};

enum py_image_kind py_image__kind(pid_t pid);
/* True once the loader has mapped libpython's data segment (its last mapping): the
 * eval_frame switch can be written there before the interpreter starts. */
bool py_image__libpython_mapped(pid_t pid);

#endif /* __PYUPROF_PY_IMAGE_H */
