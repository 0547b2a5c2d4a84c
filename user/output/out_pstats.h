/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The profile as cProfile's dump_stats writes it: marshal of the pstats dict. */
#ifndef __PYUPROF_OUT_PSTATS_H
#define __PYUPROF_OUT_PSTATS_H

#include "output/marshal.h"
#include "profile/profile.h"

/*
 * {(filename, firstlineno, funcname): (cc, nc, tt, ct, {caller key: (nc, cc, tt, ct)})}, with
 * every function that appears as a caller also a key. Returns 0, -ENOMEM, or -ENODATA when
 * there is nothing to write (pstats refuses an empty profile).
 */
int pstats__encode(const struct profile *p, struct marshal_buf *b);

#endif /* __PYUPROF_OUT_PSTATS_H */
