// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Call-path tree: nodes in an array, children linked in first-seen order, a hash for lookup. */
#include <stdlib.h>
#include <string.h>
#include "profile/calltree.h"

/*
 * The exact key of (parent, func), a root's (CT_NONE, thread): both fit in 64 bits, so a
 * match needs no look at the node (a cache miss of its own on a tree of many functions).
 * Never 0, which the map keeps for empty slots: parent is CT_NONE only with a thread index.
 */
static uint64_t key(uint32_t parent, uint32_t func)
{
	return ((uint64_t)parent << 32 | func) + 1;
}

static uint32_t add(struct calltree *ct, uint32_t parent, uint32_t func, uint32_t thread)
{
	struct ct_node *n;

	if (array_grow((void **)&ct->nodes, &ct->cap, sizeof(*n), ct->n + 1))
		return CT_NONE;
	n = &ct->nodes[ct->n];
	memset(n, 0, sizeof(*n));
	n->func = func;
	n->parent = parent;
	n->first_child = n->last_child = n->next_sibling = CT_NONE;
	n->thread = thread;
	if (parent != CT_NONE) {
		/* append, so that children keep the order they first ran in */
		struct ct_node *up = &ct->nodes[parent];

		if (up->last_child == CT_NONE)
			up->first_child = ct->n;
		else
			ct->nodes[up->last_child].next_sibling = ct->n;
		up->last_child = ct->n;
	}
	return ct->n++;
}

/* Looks (parent, func) up, a root by (CT_NONE, thread), and adds it if new. */
static uint32_t find_or_add(struct calltree *ct, uint32_t parent, uint32_t func,
			    uint32_t thread)
{
	uint64_t k = key(parent, parent == CT_NONE ? thread : func);
	uint64_t *slot = u64_map__upsert(&ct->index, k);
	uint32_t id;

	if (!slot)
		return CT_NONE;
	if (*slot)
		return (uint32_t)(*slot - 1);
	id = add(ct, parent, func, thread);
	if (id == CT_NONE) {
		u64_map__del(&ct->index, k);
		return CT_NONE;
	}
	*slot = (uint64_t)id + 1;
	return id;
}

uint32_t calltree__root(struct calltree *ct, uint32_t thread)
{
	return find_or_add(ct, CT_NONE, CT_NONE, thread);
}

/*
 * Most functions are called from one or two call paths: the child found last for func is
 * remembered, in an array by func that the next call of func reads without a hash lookup (on
 * a program of many functions, the index is a cache miss per call; the array is read in the
 * order the functions run).
 */
uint32_t calltree__child(struct calltree *ct, uint32_t parent, uint32_t func)
{
	uint32_t old = ct->last_cap, id;

	if (func < old && ct->last[func].parent == parent)
		return ct->last[func].node;
	id = find_or_add(ct, parent, func, ct->nodes[parent].thread);
	if (id == CT_NONE)
		return CT_NONE;
	if (func >= old) {
		if (array_grow((void **)&ct->last, &ct->last_cap, sizeof(*ct->last), func + 1))
			return id; /* (only the lookup is slower) */
		memset(ct->last + old, 0xff, (size_t)(ct->last_cap - old) * sizeof(*ct->last));
	}
	ct->last[func].parent = parent;
	ct->last[func].node = id;
	return id;
}

void calltree__finish(struct calltree *ct)
{
	uint32_t i;

	/* children come after their parents in the array: one backward pass suffices */
	for (i = ct->n; i-- > 0;) {
		struct ct_node *n = &ct->nodes[i];
		uint64_t sum = 0;
		uint32_t c;

		for (c = n->first_child; c != CT_NONE; c = ct->nodes[c].next_sibling)
			sum += ct->nodes[c].total_ns;
		if (n->total_ns < sum)
			n->total_ns = sum;
	}
}

void calltree__free(struct calltree *ct)
{
	free(ct->nodes);
	free(ct->last);
	u64_map__free(&ct->index);
	memset(ct, 0, sizeof(*ct));
}
