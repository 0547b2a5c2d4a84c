// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The profile of the calls made under one function (the call graph's --root), from the exact
 * stacks: the call tree holds every call's time and count by its path. Each function's and each
 * caller->callee pair's numbers are summed over the paths below the outermost calls of the
 * function, with _lsprof's rule for nested calls taken on the path from there (a total counted
 * at the outermost call of the function, or of the pair; the calls below it are recursive), so
 * that the root's total time is the whole, and a function called both under it and elsewhere
 * shows its part under it alone, which the .prof's sums cannot tell (gprof2dot's --root keeps
 * such a function whole).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "profile/rooted.h"

struct rooted_walk {
	const struct profile *p;
	struct profile *q;
	const bool *is_root;
	uint32_t *func_level, *edge_level;
	uint32_t top; /* the node of the root's outermost call the walk is under, or CT_NONE */
};

static void root_account(struct call_stats *st, uint32_t level, const struct ct_node *n)
{
	st->calls += n->calls;
	st->inline_ns += n->self_ns;
	if (level == 1)
		st->total_ns += n->total_ns;
	else
		st->rec_calls += n->calls;
}

static uint32_t edge_id(const struct profile *p, uint32_t caller, uint32_t callee)
{
	uint64_t *slot = u64_map__get(&p->edge_by_pair, ((uint64_t)caller + 1) << 32 | callee);

	return slot && *slot ? (uint32_t)(*slot - 1) : NO_ID;
}

/* Node i of the call tree on the way down; up: on the way back, its levels undone */
static void root_step(struct rooted_walk *w, uint32_t i, bool up)
{
	const struct ct_node *n = &w->p->tree.nodes[i], *parent;
	uint32_t f = n->func, e;

	if (f == CT_NONE || f >= w->p->nfuncs)
		return; /* a thread's root */
	if (w->top == CT_NONE) {
		if (!w->is_root[f] || up)
			return;
		w->top = i;
	}
	if (up) {
		w->func_level[f]--;
	} else {
		w->func_level[f]++;
		root_account(&w->q->funcs[f].st, w->func_level[f], n);
		w->q->n.calls += n->calls;
	}
	parent = i == w->top ? NULL : &w->p->tree.nodes[n->parent];
	e = parent ? edge_id(w->p, parent->func, f) : NO_ID;
	if (e != NO_ID && up) {
		w->edge_level[e]--;
	} else if (e != NO_ID) {
		w->edge_level[e]++;
		root_account(&w->q->edges[e].st, w->edge_level[e], n);
	}
	if (up && i == w->top)
		w->top = CT_NONE;
}

/* Whether f is named root: its name or qualified name, or PATH:NAME with its file's path ending
 * in PATH (at a '/'), to tell apart functions of one name (compile_torch.py:main) */
static bool named(const struct func *f, const char *root)
{
	const char *colon = strrchr(root, ':');
	size_t plen, flen;

	if (!strcmp(f->name, root) || !strcmp(func__label(f), root))
		return true;
	if (!colon || f->cfunc || (strcmp(f->name, colon + 1) && strcmp(func__label(f), colon + 1)))
		return false;
	plen = (size_t)(colon - root);
	flen = strlen(f->filename);
	return plen && plen <= flen && !memcmp(f->filename + flen - plen, root, plen) &&
	       (plen == flen || f->filename[flen - plen - 1] == '/');
}

int profile__rooted(const struct profile *p, const char *root, struct profile *q)
{
	const struct calltree *ct = &p->tree;
	struct rooted_walk w = { p, q, NULL, NULL, NULL, CT_NONE };
	uint32_t i, r, nroots = 0;
	bool *is_root;
	int err = 0;

	memset(q, 0, sizeof(*q));
	q->nfuncs = p->nfuncs;
	q->nedges = p->nedges;
	q->nthreads = p->nthreads;
	q->funcs = malloc(((size_t)p->nfuncs + 1) * sizeof(*q->funcs));
	q->edges = malloc(((size_t)p->nedges + 1) * sizeof(*q->edges));
	is_root = calloc((size_t)p->nfuncs + 1, sizeof(*is_root));
	w.func_level = calloc((size_t)p->nfuncs + 1, sizeof(*w.func_level));
	w.edge_level = calloc((size_t)p->nedges + 1, sizeof(*w.edge_level));
	w.is_root = is_root;
	if (!q->funcs || !q->edges || !is_root || !w.func_level || !w.edge_level) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nfuncs; i++) {
		const struct func *f = &p->funcs[i];

		q->funcs[i] = *f;
		memset(&q->funcs[i].st, 0, sizeof(q->funcs[i].st));
		is_root[i] = named(f, root);
		nroots += is_root[i];
	}
	for (i = 0; i < p->nedges; i++) {
		q->edges[i] = p->edges[i];
		memset(&q->edges[i].st, 0, sizeof(q->edges[i].st));
	}
	if (!nroots) {
		err = -ESRCH;
		goto out;
	}
	/* depth first through each thread's tree, without recursion: stacks run deep */
	for (r = 0; r < ct->n; r++) {
		if (ct->nodes[r].parent != CT_NONE)
			continue;
		i = r;
		root_step(&w, i, false);
		for (;;) {
			if (ct->nodes[i].first_child != CT_NONE) {
				i = ct->nodes[i].first_child;
				root_step(&w, i, false);
				continue;
			}
			while (i != r && ct->nodes[i].next_sibling == CT_NONE) {
				root_step(&w, i, true);
				i = ct->nodes[i].parent;
			}
			root_step(&w, i, true);
			if (i == r)
				break;
			i = ct->nodes[i].next_sibling;
			root_step(&w, i, false);
		}
	}
out:
	free(is_root);
	free(w.func_level);
	free(w.edge_level);
	if (err)
		profile__rooted_free(q);
	return err;
}

void profile__rooted_free(struct profile *q)
{
	free(q->funcs);
	free(q->edges);
	q->funcs = NULL;
	q->edges = NULL;
}
