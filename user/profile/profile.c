// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A profile's tables: its functions (by key and by code object), the edges between them, its
 * threads, and two profiles merged into one. The stacks that fill their statistics in, event
 * by event with cProfile's rules, are stacks.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "profile/profile_tables.h"

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(struct profile));

	/* looked up at every call: code objects are allocated, and often called, in order */
	if (p) {
		p->func_by_code.by_address = true;
		p->func_by_cfunc.by_address = true;
	}
	return p;
}

void profile__free(struct profile *p)
{
	uint32_t i;

	if (!p)
		return;
	for (i = 0; i < p->nfuncs; i++) {
		free(p->funcs[i].filename);
		free(p->funcs[i].name);
		free(p->funcs[i].qualname);
	}
	for (i = 0; i < p->nthreads; i++) {
		struct thread *t = p->threads[i];

		for (uint32_t j = 0; j < t->nparked; j++) {
			free(t->parked[j].stack);
			free(t->parked[j].func_level);
			free(t->parked[j].edge_level);
		}
		free(t->parked);
		u64_map__free(&t->parked_top);
		free(t->stack);
		free(t->func_level);
		free(t->edge_level);
		free(t);
	}
	free(p->funcs);
	free(p->edges);
	free(p->node_edge);
	free(p->threads);
	calltree__free(&p->tree);
	u64_map__free(&p->func_by_key);
	u64_map__free(&p->func_by_code);
	u64_map__free(&p->func_by_cfunc);
	u64_map__free(&p->edge_by_pair);
	u64_map__free(&p->thread_by_tid);
	free(p);
}

static uint64_t key_hash(const char *filename, const char *name, int line)
{
	uint64_t h = hash_bytes(filename, strlen(filename), (uint64_t)line);

	h = hash_bytes(name, strlen(name), h);
	return h ? h : 1;
}

/* Looks up (or adds) the function for a key; returns its id or NO_ID on ENOMEM. */
static uint32_t profile__func(struct profile *p, const char *filename, const char *name,
			      int firstlineno)
{
	uint64_t h = key_hash(filename, name, firstlineno), *slot;
	struct func *f;

	/* probe past the (astronomically rare) hash collisions of different keys */
	for (;; h = h + 1 ? h + 1 : 1) {
		slot = u64_map__get(&p->func_by_key, h);
		if (!slot)
			break;
		f = &p->funcs[*slot - 1];
		if (f->firstlineno == firstlineno && !strcmp(f->name, name) &&
		    !strcmp(f->filename, filename))
			return (uint32_t)(*slot - 1);
	}
	if (array_grow((void **)&p->funcs, &p->funcs_cap, sizeof(*p->funcs), p->nfuncs + 1))
		return NO_ID;
	f = &p->funcs[p->nfuncs];
	memset(f, 0, sizeof(*f));
	f->filename = strdup(filename);
	f->name = strdup(name);
	f->firstlineno = firstlineno;
	/* the frame 3.13's specialised class call pushes below an inlined __init__ */
	f->shim = !strcmp(filename, "__init__") && !strcmp(name, "__init__");
	slot = u64_map__upsert(&p->func_by_key, h);
	if (!f->filename || !f->name || !slot) {
		free(f->filename);
		free(f->name);
		return NO_ID;
	}
	*slot = ++p->nfuncs;
	return p->nfuncs - 1;
}

int profile__code(struct profile *p, uint64_t code, const char *filename, const char *name,
		  int firstlineno)
{
	uint32_t id = profile__func(p, filename, name, firstlineno);
	uint64_t *slot;

	if (id == NO_ID)
		return -ENOMEM;
	slot = u64_map__upsert(&p->func_by_code, code);
	if (!slot)
		return -ENOMEM;
	*slot = (uint64_t)id + 1;
	return 0;
}

/* Sets f's qualname (kept only where it says more than its name). Returns 0 or -ENOMEM. */
static int set_qualname(struct func *f, const char *qualname)
{
	if (!qualname || !*qualname || !strcmp(qualname, f->name) ||
	    (f->qualname && !strcmp(f->qualname, qualname)))
		return 0;
	free(f->qualname);
	f->qualname = strdup(qualname);
	return f->qualname ? 0 : -ENOMEM;
}

int profile__code_flags(struct profile *p, uint64_t code, uint32_t co_flags)
{
	uint64_t *slot = u64_map__get(&p->func_by_code, code);

	if (!slot)
		return -ENOENT;
	p->funcs[*slot - 1].co_flags = co_flags;
	return 0;
}

int profile__qualname(struct profile *p, uint64_t code, const char *qualname)
{
	uint64_t *slot = u64_map__get(&p->func_by_code, code);

	if (!slot)
		return -ENOENT;
	return set_qualname(&p->funcs[*slot - 1], qualname);
}

uint32_t profile__func_of_code(struct profile *p, uint64_t code)
{
	uint64_t *slot = u64_map__get(&p->func_by_code, code);

	if (slot)
		return (uint32_t)(*slot - 1);
	/* its identity was lost (ring buffer full): keep the call, under a name that says so */
	p->n.unknown_code++;
	return profile__func(p, "~", "<unknown code object>", 0);
}

/* A C function's label (func__label): its name as pstats prints it, "{...}" for "<...>". */
static int set_c_label(struct func *f)
{
	size_t n = strlen(f->name);
	char *s;

	if (f->qualname || n < 2 || f->name[0] != '<' || f->name[n - 1] != '>')
		return 0;
	s = strdup(f->name);
	if (!s)
		return -ENOMEM;
	s[0] = '{';
	s[n - 1] = '}';
	f->qualname = s;
	return 0;
}

int profile__cfunc(struct profile *p, uint64_t key, const char *name)
{
	uint64_t *slot = u64_map__upsert(&p->func_by_cfunc, key);
	uint32_t id;

	if (!slot)
		return -ENOMEM;
	if (*slot)
		return 0; /* (named by the first) */
	id = profile__func(p, "~", name, 0);
	if (id == NO_ID) {
		u64_map__del(&p->func_by_cfunc, key);
		return -ENOMEM;
	}
	p->funcs[id].cfunc = true;
	*slot = (uint64_t)id + 1;
	return set_c_label(&p->funcs[id]);
}

uint32_t profile__func_of_cfunc(struct profile *p, uint64_t key)
{
	uint64_t *slot = u64_map__get(&p->func_by_cfunc, key);
	uint32_t id;

	if (slot)
		return (uint32_t)(*slot - 1);
	/* its identity was lost (ring buffer full) */
	p->n.c_unknown++;
	id = profile__func(p, "~", "<unknown C function>", 0);
	if (id != NO_ID) {
		p->funcs[id].cfunc = true;
		set_c_label(&p->funcs[id]); /* (ENOMEM: its name stands) */
	}
	return id;
}

/* Key of an edge in edge_by_pair: never 0, which the map keeps for empty slots. */
static uint64_t edge_key(uint32_t caller, uint32_t callee)
{
	return ((uint64_t)caller + 1) << 32 | callee;
}

static uint32_t edge_of(struct profile *p, uint32_t caller, uint32_t callee)
{
	uint64_t *slot = u64_map__upsert(&p->edge_by_pair, edge_key(caller, callee));
	struct edge *e;

	if (!slot)
		return NO_ID;
	if (*slot)
		return (uint32_t)(*slot - 1);
	if (array_grow((void **)&p->edges, &p->edges_cap, sizeof(*p->edges), p->nedges + 1)) {
		u64_map__del(&p->edge_by_pair, edge_key(caller, callee));
		return NO_ID;
	}
	e = &p->edges[p->nedges];
	memset(e, 0, sizeof(*e));
	e->caller = caller;
	e->callee = callee;
	*slot = ++p->nedges;
	return p->nedges - 1;
}

/* A call path node's edge, not yet remembered (profile_tables.h) */
uint32_t profile__node_edge_add(struct profile *p, uint32_t node, uint32_t caller, uint32_t callee)
{
	uint32_t old = p->node_edge_cap, edge;

	edge = edge_of(p, caller, callee);
	if (edge == NO_ID)
		return NO_ID;
	if (node >= old) {
		if (array_grow((void **)&p->node_edge, &p->node_edge_cap, sizeof(*p->node_edge),
			       node + 1))
			return edge; /* (only the next lookup is slower) */
		memset(p->node_edge + old, 0xff,
		       (size_t)(p->node_edge_cap - old) * sizeof(*p->node_edge));
	}
	p->node_edge[node] = edge;
	return edge;
}

/* Key of a thread in thread_by_tid: never 0, which the map keeps for empty slots. */
static uint64_t tid_key(uint32_t tid)
{
	return tid ? tid : UINT32_MAX + 1ULL;
}

bool profile__has_thread(const struct profile *p, uint32_t tid)
{
	return u64_map__get(&p->thread_by_tid, tid_key(tid)) != NULL;
}

/* A thread for tid in *slot (which held old: 0, or the thread the tid was before). */
static struct thread *thread_add(struct profile *p, uint64_t *slot, uint64_t old, uint32_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));

	if (!t || array_grow((void **)&p->threads, &p->threads_cap, sizeof(*p->threads),
			     p->nthreads + 1)) {
		free(t);
		if (old)
			*slot = old;
		else
			u64_map__del(&p->thread_by_tid, tid_key(tid));
		return NULL;
	}
	t->tid = tid;
	t->root = calltree__root(&p->tree, p->nthreads);
	p->threads[p->nthreads] = t;
	*slot = ++p->nthreads;
	if (t->root == CT_NONE)
		return NULL;
	return p->last_thread = t;
}

struct thread *profile__thread(struct profile *p, uint32_t tid)
{
	uint64_t *slot;

	if (p->last_thread && p->last_thread->tid == tid)
		return p->last_thread;
	slot = u64_map__upsert(&p->thread_by_tid, tid_key(tid));
	if (!slot)
		return NULL;
	if (*slot)
		return p->last_thread = p->threads[*slot - 1];
	return thread_add(p, slot, 0, tid);
}

struct thread *profile__thread_new(struct profile *p, uint32_t tid)
{
	uint64_t *slot = u64_map__upsert(&p->thread_by_tid, tid_key(tid));

	if (!slot)
		return NULL;
	return thread_add(p, slot, *slot, tid);
}

bool thread__lived(const struct thread *t)
{
	return t->last_ns && !t->depth && !t->nparked;
}

static void add_stats(struct call_stats *dst, const struct call_stats *src)
{
	dst->calls += src->calls;
	dst->rec_calls += src->rec_calls;
	dst->inline_ns += src->inline_ns;
	dst->total_ns += src->total_ns;
}

int profile__merge(struct profile *dst, const struct profile *src)
{
	uint32_t *fmap = calloc(src->nfuncs + 1, sizeof(*fmap));
	uint32_t *tmap = calloc(src->nthreads + 1, sizeof(*tmap));
	uint32_t *nmap = calloc(src->tree.n + 1, sizeof(*nmap));
	uint32_t i, e;
	int err = -ENOMEM;

	if (!fmap || !tmap || !nmap)
		goto out;
	for (i = 0; i < src->nfuncs; i++) {
		const struct func *f = &src->funcs[i];

		fmap[i] = profile__func(dst, f->filename, f->name, f->firstlineno);
		if (fmap[i] == NO_ID || set_qualname(&dst->funcs[fmap[i]], f->qualname))
			goto out;
		dst->funcs[fmap[i]].cfunc |= f->cfunc;
		add_stats(&dst->funcs[fmap[i]].st, &f->st);
	}
	for (i = 0; i < src->nedges; i++) {
		e = edge_of(dst, fmap[src->edges[i].caller], fmap[src->edges[i].callee]);
		if (e == NO_ID)
			goto out;
		add_stats(&dst->edges[e].st, &src->edges[i].st);
	}
	for (i = 0; i < src->nthreads; i++) {
		const struct thread *s = src->threads[i];
		uint32_t pid = s->pid ? s->pid : src->pid;
		struct thread *t = NULL;
		const uint64_t *slot = u64_map__get(&dst->thread_by_tid, tid_key(s->tid));

		/* a tid the kernel gave again (after its thread ended, here or in another
		 * process) is another thread */
		if (slot) {
			t = dst->threads[*slot - 1];
			for (e = 0; e < i && t; e++)
				if (src->threads[e]->tid == s->tid)
					t = NULL;
			if (t && (t->pid ? t->pid : dst->pid) != pid)
				t = NULL;
		}
		t = t ? t : slot ? profile__thread_new(dst, s->tid) : profile__thread(dst, s->tid);
		if (!t)
			goto out;
		if (!t->name[0])
			memcpy(t->name, s->name, sizeof(t->name));
		if (!t->pid)
			t->pid = pid;
		tmap[i] = (uint32_t)u64_map__get(&dst->thread_by_tid, tid_key(t->tid))[0] - 1;
	}
	/* a node comes after its parent: map them in order */
	for (i = 0; i < src->tree.n; i++) {
		const struct ct_node *s = &src->tree.nodes[i];
		struct ct_node *d;

		nmap[i] = s->parent == CT_NONE ? dst->threads[tmap[s->thread]]->root
					       : calltree__child(&dst->tree, nmap[s->parent],
								 fmap[s->func]);
		if (nmap[i] == CT_NONE)
			goto out;
		d = &dst->tree.nodes[nmap[i]];
		d->total_ns += s->total_ns;
		d->self_ns += s->self_ns;
		d->calls += s->calls;
	}
	dst->n.calls += src->n.calls;
	dst->n.recovered += src->n.recovered;
	dst->n.inline_calls += src->n.inline_calls;
	dst->n.closed_unseen += src->n.closed_unseen;
	dst->n.unmatched_returns += src->n.unmatched_returns;
	dst->n.unknown_code += src->n.unknown_code;
	dst->n.not_calls += src->n.not_calls;
	dst->n.open_at_stop += src->n.open_at_stop;
	dst->n.seeded += src->n.seeded;
	dst->n.no_return += src->n.no_return;
	dst->n.switches += src->n.switches;
	if (src->n.most_parked > dst->n.most_parked)
		dst->n.most_parked = src->n.most_parked;
	dst->n.c_calls += src->n.c_calls;
	dst->n.c_closed += src->n.c_closed;
	dst->n.c_unmatched += src->n.c_unmatched;
	dst->n.c_unknown += src->n.c_unknown;
	if (src->first_ns && (!dst->first_ns || src->first_ns < dst->first_ns))
		dst->first_ns = src->first_ns;
	if (src->last_ns > dst->last_ns)
		dst->last_ns = src->last_ns;
	err = 0;
out:
	free(fmap);
	free(tmap);
	free(nmap);
	return err;
}
