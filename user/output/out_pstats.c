// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pstats writer: knows cProfile's dict shape; the encoding itself is marshal.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/out_pstats.h"

static void put_key(struct marshal_buf *b, const struct func *f)
{
	marshal__tuple_begin(b, 3);
	marshal__str(b, f->filename, strlen(f->filename));
	marshal__int(b, f->firstlineno);
	marshal__str(b, f->name, strlen(f->name));
}

static int by_callee(const void *a, const void *b, void *arg)
{
	const struct edge *edges = arg;
	uint32_t x = edges[*(const uint32_t *)a].callee, y = edges[*(const uint32_t *)b].callee;

	return (x > y) - (x < y);
}

int pstats__encode(const struct profile *p, struct marshal_buf *b)
{
	uint32_t *order, *first, i, j, nkeys = 0;
	bool *is_caller;

	order = malloc(((size_t)p->nedges + 1) * sizeof(*order));
	first = malloc(((size_t)p->nfuncs + 1) * sizeof(*first));
	is_caller = calloc((size_t)p->nfuncs + 1, sizeof(*is_caller));
	if (!order || !first || !is_caller) {
		free(order);
		free(first);
		free(is_caller);
		return -ENOMEM;
	}
	/* group edges by callee: first[f] .. first[f + 1] index order[] */
	for (i = 0; i < p->nedges; i++) {
		order[i] = i;
		is_caller[p->edges[i].caller] |= p->edges[i].st.calls > 0;
	}
	qsort_r(order, p->nedges, sizeof(*order), by_callee, p->edges);
	for (i = 0, j = 0; i <= p->nfuncs; i++) {
		while (j < p->nedges && p->edges[order[j]].callee < i)
			j++;
		first[i] = j;
	}

	marshal__dict_begin(b);
	for (i = 0; i < p->nfuncs; i++) {
		const struct func *f = &p->funcs[i];

		if (!f->st.calls && !is_caller[i])
			continue;
		nkeys++;
		put_key(b, f);
		marshal__tuple_begin(b, 5);
		marshal__int(b, (int64_t)(f->st.calls - f->st.rec_calls));
		marshal__int(b, (int64_t)f->st.calls);
		marshal__float(b, f->st.inline_ns / 1e9);
		marshal__float(b, f->st.total_ns / 1e9);
		marshal__dict_begin(b);
		for (j = first[i]; j < first[i + 1]; j++) {
			const struct edge *e = &p->edges[order[j]];

			if (!e->st.calls)
				continue;
			put_key(b, &p->funcs[e->caller]);
			/* note the order: callers hold (nc, cc, tt, ct), functions (cc, nc, ...) */
			marshal__tuple_begin(b, 4);
			marshal__int(b, (int64_t)e->st.calls);
			marshal__int(b, (int64_t)(e->st.calls - e->st.rec_calls));
			marshal__float(b, e->st.inline_ns / 1e9);
			marshal__float(b, e->st.total_ns / 1e9);
		}
		marshal__dict_end(b);
	}
	marshal__dict_end(b);
	free(order);
	free(first);
	free(is_caller);
	if (b->err)
		return b->err;
	return nkeys ? 0 : -ENODATA;
}
