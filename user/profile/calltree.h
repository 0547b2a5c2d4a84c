/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The exact recorded stacks, aggregated: one node per distinct call path, under one root per
 * thread. Flame graphs and collapsed stacks are drawn from it. Built by profile.c as calls end.
 */
#ifndef __PYUPROF_CALLTREE_H
#define __PYUPROF_CALLTREE_H

#include <stdint.h>
#include "base/hashmap.h"

#define CT_NONE UINT32_MAX

struct ct_node {
	uint32_t func;	       /* index into profile->funcs; CT_NONE for a thread's root */
	uint32_t parent;       /* CT_NONE for a root */
	uint32_t first_child;  /* children in order of first appearance, CT_NONE-terminated */
	uint32_t last_child;   /* (appended in O(1): a dispatcher may have thousands) */
	uint32_t next_sibling;
	uint32_t thread;       /* index into profile->threads of the root above */
	uint64_t total_ns;     /* wall time of the calls on this path, their callees included */
	uint64_t self_ns;      /* the part not spent in callees (Python ones: C time is self) */
	uint64_t calls;
};

/* The last child looked up for a function, under which parent. */
struct ct_last {
	uint32_t parent, node;
};

struct calltree {
	struct ct_node *nodes;
	uint32_t n, cap;
	struct u64_map index; /* (parent, func) -> node + 1 */
	struct ct_last *last; /* indexed by func; parent CT_NONE: none yet */
	uint32_t last_cap;
};

/* The root of thread (an index into profile->threads); CT_NONE on ENOMEM. */
uint32_t calltree__root(struct calltree *ct, uint32_t thread);
/* The child of parent for func, added if new; CT_NONE on ENOMEM. */
uint32_t calltree__child(struct calltree *ct, uint32_t parent, uint32_t func);
/* Once all is recorded: every node at least as wide as its children (frames that began
 * before recording have no time of their own), roots the sum of theirs. */
void calltree__finish(struct calltree *ct);
void calltree__free(struct calltree *ct);

#endif /* __PYUPROF_CALLTREE_H */
