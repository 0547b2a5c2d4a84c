/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A profile's tables as the stacks (stacks.c) use them at every event; profile.c keeps them.
 * The two lookups made at every call keep their quick path inline here: the thread of the
 * last event, and a call path's edge already known.
 */
#ifndef __PYUPROF_PROFILE_TABLES_H
#define __PYUPROF_PROFILE_TABLES_H

#include <stdint.h>
#include "profile/profile.h"

/* The function of a code object; one named "<unknown code object>" if its identity was lost. */
uint32_t profile__func_of_code(struct profile *p, uint64_t code);
/* The function of a C function's key; one named "<unknown C function>" if its identity was
 * lost. NO_ID on ENOMEM. */
uint32_t profile__func_of_cfunc(struct profile *p, uint64_t key);
/* The edge caller->callee, remembered for call path node. NO_ID on ENOMEM. */
uint32_t profile__node_edge_add(struct profile *p, uint32_t node, uint32_t caller,
				uint32_t callee);

/* events come in runs from one thread: the lookup is skipped while it lasts */
static inline struct thread *thread_of(struct profile *p, uint32_t tid)
{
	if (p->last_thread && p->last_thread->tid == tid)
		return p->last_thread;
	return profile__thread(p, tid);
}

/*
 * The edge of a call on call path node, from caller to callee: a node's parent is the call
 * path of its caller, so the edge is the node's, remembered in an array by node rather than
 * looked up by the pair at every call (a cache miss per call on a program of many functions).
 */
static inline uint32_t profile__node_edge(struct profile *p, uint32_t node, uint32_t caller,
					  uint32_t callee)
{
	if (node < p->node_edge_cap && p->node_edge[node] != NO_ID)
		return p->node_edge[node];
	return profile__node_edge_add(p, node, caller, callee);
}

#endif /* __PYUPROF_PROFILE_TABLES_H */
