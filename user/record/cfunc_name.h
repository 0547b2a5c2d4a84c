/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A C function's name as cProfile gives it (include/cfuncs.h), from what the BPF side read. */
#ifndef __PYUPROF_CFUNC_NAME_H
#define __PYUPROF_CFUNC_NAME_H

#include <linux/types.h>
#include <stddef.h>
#include "pyuprof.h"

/*
 * cProfile's name for the C function e describes (_lsprof.c's normalizeUserObj: the repr of
 * what its object's type finds under its name, else its module and name), NUL-terminated UTF-8
 * in out: "<built-in method builtins.len>", "<method 'append' of 'list' objects>". Returns
 * its length.
 */
size_t cfunc_name__format(const struct ev_cfunc *e, char *out, size_t len);

#endif /* __PYUPROF_CFUNC_NAME_H */
