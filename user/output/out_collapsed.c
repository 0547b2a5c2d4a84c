/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Folded stacks, and the folded tree under them: the profile's call tree merged across threads
 * by function path (or one node per thread), children sorted by frame text.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/out_collapsed.h"
#include "output/strbuf.h"

static uint64_t child_key(uint32_t parent, uint32_t func)
{
	/* never 0, which the map keeps for empty slots; collisions probe on odd steps */
	return hash_u64(((uint64_t)parent << 32 | func) + 1) | 1;
}

static uint32_t fold_add(struct fold *f, uint32_t parent, uint32_t func, uint32_t thread)
{
	struct fold_node *n;

	if (array_grow((void **)&f->nodes, &f->cap, sizeof(*n), f->n + 1))
		return CT_NONE;
	n = &f->nodes[f->n];
	memset(n, 0, sizeof(*n));
	n->func = func;
	n->thread = thread;
	n->parent = parent;
	n->first_child = n->next_sibling = CT_NONE;
	if (parent != CT_NONE) {
		/* prepended: the order is set by sort_children() anyway */
		n->depth = f->nodes[parent].depth + 1;
		n->next_sibling = f->nodes[parent].first_child;
		f->nodes[parent].first_child = f->n;
	}
	return f->n++;
}

/* The child of parent for func, added if new; CT_NONE on ENOMEM. */
static uint32_t fold_child(struct fold *f, struct u64_map *index, uint32_t parent, uint32_t func)
{
	uint64_t k = child_key(parent, func), *slot;
	uint32_t id;

	for (;; k += 2) {
		slot = u64_map__get(index, k);
		if (!slot)
			break;
		id = (uint32_t)(*slot - 1);
		if (f->nodes[id].parent == parent && f->nodes[id].func == func)
			return id;
	}
	id = fold_add(f, parent, func, CT_NONE);
	if (id == CT_NONE)
		return CT_NONE;
	slot = u64_map__upsert(index, k);
	if (!slot)
		return CT_NONE;
	*slot = (uint64_t)id + 1;
	return id;
}

static int by_frame_text(const void *a, const void *b, void *arg)
{
	const struct func *funcs = arg;
	const struct func *x = &funcs[*(const uint32_t *)a], *y = &funcs[*(const uint32_t *)b];
	int c = strcmp(func__label(x), func__label(y));

	if (!c)
		c = strcmp(x->filename, y->filename);
	if (!c)
		c = (x->firstlineno > y->firstlineno) - (x->firstlineno < y->firstlineno);
	return c;
}

struct sort_ctx {
	const struct fold *f;
	const uint32_t *rank;
};

static int by_rank(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *s = arg;
	const struct fold_node *x = &s->f->nodes[*(const uint32_t *)a];
	const struct fold_node *y = &s->f->nodes[*(const uint32_t *)b];
	uint32_t kx, ky;

	/* thread nodes keep the order the threads were first seen in */
	if (x->func == CT_NONE || y->func == CT_NONE) {
		kx = x->thread;
		ky = y->thread;
	} else {
		kx = s->rank[x->func];
		ky = s->rank[y->func];
	}
	return (kx > ky) - (kx < ky);
}

static int sort_children(const struct profile *p, struct fold *f)
{
	uint32_t *order = malloc(((size_t)p->nfuncs + 1) * sizeof(*order));
	uint32_t *rank = malloc(((size_t)p->nfuncs + 1) * sizeof(*rank));
	uint32_t *kids = malloc((size_t)f->n * sizeof(*kids));
	struct sort_ctx s = { f, rank };
	uint32_t i, j, k, c;

	if (!order || !rank || !kids) {
		free(order);
		free(rank);
		free(kids);
		return -ENOMEM;
	}
	/* rank functions once by (name, file, line): a node compare is then two loads */
	for (i = 0; i < p->nfuncs; i++)
		order[i] = i;
	qsort_r(order, p->nfuncs, sizeof(*order), by_frame_text, p->funcs);
	for (i = 0; i < p->nfuncs; i++)
		rank[order[i]] = i;

	for (i = 0; i < f->n; i++) {
		k = 0;
		for (c = f->nodes[i].first_child; c != CT_NONE; c = f->nodes[c].next_sibling)
			kids[k++] = c;
		if (k < 2)
			continue;
		qsort_r(kids, k, sizeof(*kids), by_rank, &s);
		f->nodes[i].first_child = kids[0];
		for (j = 0; j + 1 < k; j++)
			f->nodes[kids[j]].next_sibling = kids[j + 1];
		f->nodes[kids[k - 1]].next_sibling = CT_NONE;
	}
	free(order);
	free(rank);
	free(kids);
	return 0;
}

int fold__build(const struct profile *p, bool per_thread, struct fold *f)
{
	const struct calltree *ct = &p->tree;
	struct u64_map index;
	uint32_t *map, i;
	int err = -ENOMEM;

	memset(f, 0, sizeof(*f));
	u64_map__init(&index);
	map = malloc(((size_t)ct->n + 1) * sizeof(*map));
	if (!map || fold_add(f, CT_NONE, CT_NONE, CT_NONE) == CT_NONE)
		goto out;
	/* parents come before their children in the call tree's array: one forward pass */
	for (i = 0; i < ct->n; i++) {
		const struct ct_node *n = &ct->nodes[i];
		uint32_t to;

		if (n->parent == CT_NONE) {
			to = per_thread ? fold_add(f, 0, CT_NONE, n->thread) : 0;
			if (to == CT_NONE)
				goto out;
			/* the root spans every thread; in merged mode it is where roots land */
			if (per_thread)
				f->nodes[0].total_ns += n->total_ns;
		} else {
			to = fold_child(f, &index, map[n->parent], n->func);
			if (to == CT_NONE)
				goto out;
		}
		map[i] = to;
		f->nodes[to].total_ns += n->total_ns;
		f->nodes[to].self_ns += n->self_ns;
		f->nodes[to].calls += n->calls;
	}
	err = sort_children(p, f);
out:
	free(map);
	u64_map__free(&index);
	if (err)
		fold__free(f);
	return err;
}

void fold__free(struct fold *f)
{
	free(f->nodes);
	memset(f, 0, sizeof(*f));
}

uint32_t fold__next(const struct fold *f, uint32_t i)
{
	if (f->nodes[i].first_child != CT_NONE)
		return f->nodes[i].first_child;
	for (; i != CT_NONE; i = f->nodes[i].parent)
		if (f->nodes[i].next_sibling != CT_NONE)
			return f->nodes[i].next_sibling;
	return CT_NONE;
}

static void base_label(const struct thread *t, char *buf, size_t len)
{
	if (t->name[0])
		snprintf(buf, len, "%.*s", (int)sizeof(t->name), t->name);
	else
		snprintf(buf, len, "thread-%" PRIu32, t->tid);
}

int fold__thread_label(const struct profile *p, uint32_t thread, char *buf, size_t len)
{
	const struct thread *t = p->threads[thread];
	char mine[THREAD_NAME_LEN + 16], other[THREAD_NAME_LEN + 16];
	uint32_t i;

	base_label(t, mine, sizeof(mine));
	for (i = 0; i < p->nthreads; i++) {
		if (i == thread)
			continue;
		base_label(p->threads[i], other, sizeof(other));
		if (!strcmp(mine, other))
			return snprintf(buf, len, "%s (%" PRIu32 ")", mine, t->tid);
	}
	return snprintf(buf, len, "%s", mine);
}

/* Appends s with what would break the format made harmless: ';' splits frames, a line break
 * ends the record. */
static void sb_frame_text(struct strbuf *b, const char *s)
{
	size_t n = strlen(s), i;

	strbuf__reserve(b, n);
	if (b->err)
		return;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		b->s[b->len++] = c == ';' ? ',' : c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	b->s[b->len] = '\0';
}

int collapsed__write(const struct profile *p, bool per_thread, struct outfile *out)
{
	struct strbuf path = { 0 }, buf = { .out = out };
	uint64_t cum_ns = 0, written_us = 0, v;
	size_t *off = NULL; /* off[d]: length of the path down to depth d */
	uint32_t i, maxd = 0;
	struct fold f;
	int err;

	err = fold__build(p, per_thread, &f);
	if (err)
		return err;
	for (i = 0; i < f.n; i++)
		maxd = f.nodes[i].depth > maxd ? f.nodes[i].depth : maxd;
	off = calloc((size_t)maxd + 1, sizeof(*off));
	if (!off) {
		err = -ENOMEM;
		goto out;
	}
	for (i = fold__next(&f, 0); i != CT_NONE && !err; i = fold__next(&f, i)) {
		const struct fold_node *n = &f.nodes[i];

		path.len = n->depth > 1 ? off[n->depth - 1] : 0;
		if (n->depth > 1)
			strbuf__printf(&path, ";");
		if (n->func == CT_NONE) {
			char label[THREAD_NAME_LEN + 32];

			fold__thread_label(p, n->thread, label, sizeof(label));
			sb_frame_text(&path, label);
		} else {
			const struct func *fn = &p->funcs[n->func];

			sb_frame_text(&path, func__label(fn));
			/* (a C function has no file: its label says what it is) */
			if (!fn->cfunc) {
				strbuf__printf(&path, " (");
				sb_frame_text(&path, fn->filename);
				strbuf__printf(&path, ":%d)", fn->firstlineno);
			}
		}
		if (path.err) {
			err = path.err;
			break;
		}
		off[n->depth] = path.len;
		if (!n->self_ns)
			continue;
		/* rounded on the running sum: the file adds up to the total, rounded once */
		cum_ns += n->self_ns;
		v = (cum_ns + 500) / 1000 - written_us;
		if (!v)
			continue;
		written_us += v;
		strbuf__printf(&buf, "%.*s %" PRIu64 "\n", (int)path.len, path.s, v);
		err = strbuf__flush(&buf, 1 << 16);
	}
	if (!err)
		err = strbuf__flush(&buf, 0);
out:
	free(off);
	free(path.s);
	free(buf.s);
	fold__free(&f);
	return err;
}
