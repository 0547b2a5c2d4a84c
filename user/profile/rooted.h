/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The profile of the calls made under one function (the call graph's --root). */
#ifndef __PYUPROF_ROOTED_H
#define __PYUPROF_ROOTED_H

#include "profile/profile.h"

/*
 * Fills q with p's functions and caller->callee pairs (their strings are p's; q's tables are its
 * own), each with its numbers for the calls made under the functions named root: a function's
 * name or qualified name, or FILE:NAME with FILE the end of its file's path, at a '/'. q's
 * n.calls counts those calls; its call tree, maps and threads are empty (nthreads is p's).
 * Returns 0, -ENOMEM, or -ESRCH when no function is named root (q is then empty).
 */
int profile__rooted(const struct profile *p, const char *root, struct profile *q);
void profile__rooted_free(struct profile *q);

#endif /* __PYUPROF_ROOTED_H */
