// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Mirrors pstats' print_stats/print_line so the summary reads like what users already know. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

static int by_cumtime(const void *a, const void *b, void *arg)
{
	const struct func *funcs = arg;
	const struct func *x = &funcs[*(const uint32_t *)a], *y = &funcs[*(const uint32_t *)b];
	int c = (x->st.total_ns < y->st.total_ns) - (x->st.total_ns > y->st.total_ns);

	if (c)
		return c;
	c = strcmp(x->filename, y->filename);
	return c ? c : (x->firstlineno > y->firstlineno) - (x->firstlineno < y->firstlineno);
}

static void print_time(FILE *f, double v, bool blank)
{
	if (blank)
		fprintf(f, "%8s ", "");
	else
		fprintf(f, "%8.3f ", v);
}

int report_print(FILE *f, const struct profile *p, unsigned top)
{
	uint64_t total_calls = 0, prim_calls = 0, total_ns = 0;
	uint32_t *order, n = 0, i;

	order = malloc(((size_t)p->nfuncs + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < p->nfuncs; i++) {
		const struct func *fn = &p->funcs[i];

		if (!fn->st.calls)
			continue;
		order[n++] = i;
		total_calls += fn->st.calls;
		prim_calls += fn->st.calls - fn->st.rec_calls;
		total_ns += fn->st.inline_ns;
	}
	qsort_r(order, n, sizeof(*order), by_cumtime, p->funcs);

	fprintf(f, "         %llu function calls ", (unsigned long long)total_calls);
	if (total_calls != prim_calls)
		fprintf(f, "(%llu primitive calls) ", (unsigned long long)prim_calls);
	fprintf(f, "in %.3f seconds\n\n   Ordered by: cumulative time\n", total_ns / 1e9);
	if (top < n)
		fprintf(f, "   List reduced from %u to %u due to restriction <%u>\n", n, top, top);
	fprintf(f, "\n   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n");
	for (i = 0; i < n && i < top; i++) {
		const struct func *fn = &p->funcs[order[i]];
		uint64_t cc = fn->st.calls - fn->st.rec_calls;
		char calls[48];

		if (cc != fn->st.calls)
			snprintf(calls, sizeof(calls), "%llu/%llu", (unsigned long long)fn->st.calls,
				 (unsigned long long)cc);
		else
			snprintf(calls, sizeof(calls), "%llu", (unsigned long long)fn->st.calls);
		fprintf(f, "%9s ", calls);
		print_time(f, fn->st.inline_ns / 1e9, false);
		print_time(f, fn->st.inline_ns / 1e9 / fn->st.calls, false);
		print_time(f, fn->st.total_ns / 1e9, false);
		print_time(f, cc ? fn->st.total_ns / 1e9 / cc : 0, !cc);
		if (!strcmp(fn->filename, "~") && !fn->firstlineno)
			fprintf(f, "%s\n", fn->name);
		else
			fprintf(f, "%s:%d(%s)\n", fn->filename, fn->firstlineno, fn->name);
	}
	fputc('\n', f);
	free(order);
	return 0;
}
