/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call-graph SVG with gprof2dot's rules for a pstats profile (its PstatsParser, prune() and
 * DotWriter): a box per function with name, file:line, total %, (self %), total time and
 * calls; an edge per caller->callee pair with its total % and calls; colours from its
 * "temperature" map by total %; functions and edges under the thresholds left out. The graph is
 * written in DOT and graphviz's dot lays it out and renders the SVG, in a child process
 * (dot_render.c). Nodes and edges are written in sorted order, so one profile always gives the
 * same bytes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/dot_render.h"
#include "output/out_callgraph.h"
#include "output/strbuf.h"
#include "profile/rooted.h"

struct selection {
	uint32_t *nodes, nnodes; /* functions drawn, in key order */
	uint32_t *rank;		 /* function -> its place in nodes[]; NO_ID when left out */
	uint32_t *edges, nedges; /* edges drawn, by caller then callee rank */
	double total_ns;	 /* 100% of total times */
	double self_ns;		 /* 100% of self times */
	uint32_t nlisted, nlisted_edges; /* what the .prof lists, drawn or not */
};

/*
 * Text for a plain (not HTML-like) graphviz label or tooltip, so that it shows as it is. graphviz
 * (2.43) reads backslash escapes in both (\N is the node's name, \l a line break) and HTML
 * entities ("&lt;"), so '&' goes in as "&amp;" and a backslash doubled; a tooltip is unescaped
 * twice, so there it goes in four times (tests/unit/test_callgraph.c checks both). The SVG
 * renderer escapes < > " ' itself: "<module>" needs nothing. Bytes that XML 1.0 refuses
 * (controls) or that are not UTF-8 (graphviz would warn and guess latin-1) become U+FFFD.
 */
static void sb_text(struct strbuf *b, const char *text, bool tooltip)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n;

	while (*s) {
		n = xml_utf8_len(s, 4);
		if (*s == '\\') {
			strbuf__printf(b, tooltip ? "\\\\\\\\" : "\\\\");
		} else if (*s == '&') {
			strbuf__printf(b, "&amp;");
		} else if (!n || *s < 0x20 || *s == 0x7f) {
			strbuf__printf(b, "\xef\xbf\xbd");
			n = n ? n : 1;
		} else {
			strbuf__printf(b, "%.*s", (int)n, (const char *)s);
		}
		s += n ? n : 1;
	}
}

static void sb_time(struct strbuf *b, uint64_t ns)
{
	/* gprof2dot prints str(seconds); a unit reads better at a glance and keeps labels short */
	if (ns >= 1000000000ULL)
		strbuf__printf(b, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ULL)
		strbuf__printf(b, "%.3f ms", ns / 1e6);
	else if (ns >= 1000ULL)
		strbuf__printf(b, "%.3f \xc2\xb5s", ns / 1e3);
	else
		strbuf__printf(b, "%llu ns", (unsigned long long)ns);
}

/* 19631 -> "19,631": counts of millions read at a glance */
static void sb_count(struct strbuf *b, uint64_t n)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n), i;

	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			strbuf__printf(b, ",");
		strbuf__printf(b, "%c", digits[i]);
	}
}

/* gprof2dot's ratio(): 0/0 counts as 1 ("more useful"), the result is clamped to [0, 1]. */
static double ratio(double num, double den)
{
	double r;

	if (den == 0.0)
		return 1.0;
	r = num / den;
	return r < 0.0 ? 0.0 : r > 1.0 ? 1.0 : r;
}

static double hue_to_rgb(double m1, double m2, double h)
{
	if (h < 0.0)
		h += 1.0;
	else if (h > 1.0)
		h -= 1.0;
	if (h * 6 < 1.0)
		return m1 + (m2 - m1) * h * 6.0;
	if (h * 2 < 1.0)
		return m2;
	if (h * 3 < 2.0)
		return m1 + (m2 - m1) * (2.0 / 3.0 - h) * 6.0;
	return m1;
}

static unsigned int to_byte(double f)
{
	if (f <= 0.0)
		return 0;
	if (f >= 1.0)
		return 255;
	return (unsigned int)(255.0 * f + 0.5);
}

/*
 * gprof2dot's default colour map, "temperature": weight 0 is HSL (2/3, 0.80, 0.25), dark blue,
 * weight 1 is HSL (0, 1, 0.5), saturated red, interpolated linearly in HSL (through green), gamma
 * 1. Its arithmetic is kept as is so that colours match to the byte.
 */
static void temperature(double w, char rgb[8])
{
	const double hmin = 2.0 / 3.0, smin = 0.80, lmin = 0.25, hmax = 0.0, smax = 1.0, lmax = 0.5;
	double h, s, l, m1, m2;

	w = w < 0.0 ? 0.0 : w > 1.0 ? 1.0 : w;
	h = hmin + w * (hmax - hmin);
	s = smin + w * (smax - smin);
	l = lmin + w * (lmax - lmin);
	m2 = l <= 0.5 ? l * (s + 1.0) : l + s - l * s;
	m1 = l * 2.0 - m2;
	snprintf(rgb, 8, "#%02x%02x%02x", to_byte(hue_to_rgb(m1, m2, h + 1.0 / 3.0)),
		 to_byte(hue_to_rgb(m1, m2, h)), to_byte(hue_to_rgb(m1, m2, h - 1.0 / 3.0)));
}

/* Square root by Newton's method: pyuprof does not link libm for one attribute. */
static double root(double x)
{
	double r = x > 1.0 ? x : 1.0;
	int i;

	for (i = 0; i < 64 && x > 0.0; i++)
		r = 0.5 * (r + x / r);
	return x > 0.0 ? r : 0.0;
}

static int by_key(const void *a, const void *b, void *arg)
{
	const struct func *funcs = arg;
	const struct func *x = &funcs[*(const uint32_t *)a], *y = &funcs[*(const uint32_t *)b];
	int c = strcmp(x->filename, y->filename);

	if (c)
		return c;
	if (x->firstlineno != y->firstlineno)
		return x->firstlineno < y->firstlineno ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct edge_key {
	uint64_t key; /* caller's rank << 32 | callee's rank: unique, as edges are per pair */
	uint32_t edge;
};

static int by_edge_key(const void *a, const void *b)
{
	uint64_t x = ((const struct edge_key *)a)->key, y = ((const struct edge_key *)b)->key;

	return (x > y) - (x < y);
}

static void selection__free(struct selection *sel)
{
	free(sel->nodes);
	free(sel->rank);
	free(sel->edges);
}

/*
 * What gprof2dot keeps of our .prof. The 100% of total times is its PstatsParser's: the larger of
 * the sum of all self times (pstats' total_tt) and the largest cumulative time; self % is
 * relative to the sum of self times. We take the same, so the percentages agree with gprof2dot's
 * on the .prof written in the same run. With threads running at once that sum is more than the
 * wall time: a function busy all along in one of two busy threads shows 50%, its share of the
 * work recorded, which is also what cProfile's own total says.
 */
static int select_graph(const struct profile *p, double node_thres, double edge_thres,
			struct selection *sel)
{
	uint64_t self_sum = 0, max_total = 0;
	struct edge_key *keys;
	uint32_t i, n = 0;
	bool *listed;

	sel->nodes = malloc(((size_t)p->nfuncs + 1) * sizeof(*sel->nodes));
	sel->rank = malloc(((size_t)p->nfuncs + 1) * sizeof(*sel->rank));
	sel->edges = malloc(((size_t)p->nedges + 1) * sizeof(*sel->edges));
	keys = malloc(((size_t)p->nedges + 1) * sizeof(*keys));
	listed = calloc((size_t)p->nfuncs + 1, sizeof(*listed));
	if (!sel->nodes || !sel->rank || !sel->edges || !keys || !listed) {
		free(keys);
		free(listed);
		return -ENOMEM;
	}

	/* the functions pstats lists (out_pstats.c): called, or seen as the caller of a call */
	for (i = 0; i < p->nfuncs; i++) {
		listed[i] = p->funcs[i].st.calls > 0;
		self_sum += p->funcs[i].st.inline_ns;
		if (p->funcs[i].st.total_ns > max_total)
			max_total = p->funcs[i].st.total_ns;
	}
	for (i = 0; i < p->nedges; i++)
		if (p->edges[i].st.calls)
			listed[p->edges[i].caller] = true;
	sel->self_ns = (double)self_sum;
	sel->total_ns = (double)(self_sum > max_total ? self_sum : max_total);

	sel->nnodes = 0;
	for (i = 0; i < p->nfuncs; i++) {
		sel->nlisted += listed[i];
		sel->rank[i] = NO_ID;
		if (listed[i] && ratio(p->funcs[i].st.total_ns, sel->total_ns) >= node_thres)
			sel->nodes[sel->nnodes++] = i;
	}
	qsort_r(sel->nodes, sel->nnodes, sizeof(*sel->nodes), by_key, p->funcs);
	for (i = 0; i < sel->nnodes; i++)
		sel->rank[sel->nodes[i]] = i;

	/* an edge goes when either end does, or under its own threshold (gprof2dot's prune()) */
	for (i = 0; i < p->nedges; i++) {
		const struct edge *e = &p->edges[i];

		sel->nlisted_edges += e->st.calls > 0;
		if (!e->st.calls || sel->rank[e->caller] == NO_ID || sel->rank[e->callee] == NO_ID)
			continue;
		if (ratio(e->st.total_ns, sel->total_ns) < edge_thres)
			continue;
		keys[n].key = (uint64_t)sel->rank[e->caller] << 32 | sel->rank[e->callee];
		keys[n++].edge = i;
	}
	qsort(keys, n, sizeof(*keys), by_edge_key);
	for (i = 0; i < n; i++)
		sel->edges[i] = keys[i].edge;
	sel->nedges = n;
	free(keys);
	free(listed);
	return sel->nnodes ? 0 : -ENODATA;
}

enum attr_id {
	G_FONTNAME, G_RANKSEP, G_NODESEP,
	N_FONTNAME, N_SHAPE, N_STYLE, N_FONTCOLOR, N_FONTSIZE, N_WIDTH, N_HEIGHT,
	N_LABEL, N_COLOR, N_TOOLTIP,
	E_FONTNAME, E_FONTSIZE,
	E_LABEL, E_COLOR, E_FONTCOLOR, E_PENWIDTH, E_LABELDISTANCE, E_ARROWSIZE,
	G_LABEL, G_LABELLOC, G_LABELJUST, G_FONTSIZE, /* the legend's */
	NATTRS
};

/*
 * gprof2dot's DotWriter: its graph, node and edge defaults, then what each node and edge sets
 * (declared empty here). The temperature theme's font size is 10 whatever the weight, so it
 * is a default too; so is the white text (its node_fgcolor is the white background).
 */
static const struct attr_decl {
	const char *kind; /* the DOT statement that declares it: graph, node or edge */
	const char *name, *value;
} attrs[NATTRS] = {
	[G_FONTNAME] = { "graph", "fontname", "Arial" },
	[G_RANKSEP] = { "graph", "ranksep", "0.25" },
	[G_NODESEP] = { "graph", "nodesep", "0.125" },
	[N_FONTNAME] = { "node", "fontname", "Arial" },
	[N_SHAPE] = { "node", "shape", "box" },
	[N_STYLE] = { "node", "style", "filled" },
	[N_FONTCOLOR] = { "node", "fontcolor", "#ffffff" },
	[N_FONTSIZE] = { "node", "fontsize", "10.00" },
	[N_WIDTH] = { "node", "width", "0" },
	[N_HEIGHT] = { "node", "height", "0" },
	[N_LABEL] = { "node", "label", "" },
	[N_COLOR] = { "node", "color", "" },
	[N_TOOLTIP] = { "node", "tooltip", "" },
	[E_FONTNAME] = { "edge", "fontname", "Arial" },
	[E_FONTSIZE] = { "edge", "fontsize", "10.00" },
	[E_LABEL] = { "edge", "label", "" },
	[E_COLOR] = { "edge", "color", "" },
	[E_FONTCOLOR] = { "edge", "fontcolor", "" },
	[E_PENWIDTH] = { "edge", "penwidth", "" },
	[E_LABELDISTANCE] = { "edge", "labeldistance", "" },
	[E_ARROWSIZE] = { "edge", "arrowsize", "" },
	[G_LABEL] = { NULL, "label", NULL },
	[G_LABELLOC] = { NULL, "labelloc", NULL },
	[G_LABELJUST] = { NULL, "labeljust", NULL },
	[G_FONTSIZE] = { NULL, "fontsize", NULL },
};

/*
 * One attribute of a DOT statement: name="value". In a quoted DOT string only \" is an escape
 * (dot keeps every other backslash for the label's own escapes, which sb_text wrote); the
 * value is what graphviz's agxset() would have been given.
 */
static void put_attr(struct strbuf *dot, enum attr_id id, const char *value, bool last)
{
	const char *q;

	strbuf__printf(dot, "%s=\"", attrs[id].name);
	for (; (q = strchr(value, '"')); value = q + 1)
		strbuf__printf(dot, "%.*s\\\"", (int)(q - value), value);
	strbuf__printf(dot, "%s\"%s", value, last ? "];\n" : ", ");
}

static int add_node(struct strbuf *dot, const struct func *f, uint32_t rank,
		    const struct selection *sel, struct strbuf *b)
{
	double w = ratio(f->st.total_ns, sel->total_ns);
	const char *base = strrchr(f->filename, '/');
	char rgb[8];

	/* name, file:line, total %, (self %), total time, calls: gprof2dot's order */
	strbuf__clear(b);
	sb_text(b, func__label(f), false);
	strbuf__printf(b, "\\n");
	if (f->cfunc) /* (no file: where a C function is) */
		sb_text(b, CFUNC_PLACE, false);
	else
		sb_text(b, base ? base + 1 : f->filename, false);
	if (!f->cfunc)
		strbuf__printf(b, ":%d", f->firstlineno);
	strbuf__printf(b, "\\n%.2f%%\\n(%.2f%%)\\n", w * 100.0,
		  ratio(f->st.inline_ns, sel->self_ns) * 100.0);
	sb_time(b, f->st.total_ns);
	/* gprof2dot shows a function's nc, all of its calls, recursive ones included */
	strbuf__printf(b, "\\n");
	sb_count(b, f->st.calls);
	strbuf__printf(b, "\xc3\x97");
	if (b->err)
		return b->err;
	temperature(w, rgb);
	strbuf__printf(dot, "n%u [", rank);
	if (f->cfunc) /* a C function: rounded (graphviz's style, one node's own) */
		put_attr(dot, N_STYLE, "filled,rounded", false);
	put_attr(dot, N_LABEL, b->s, false);
	put_attr(dot, N_COLOR, rgb, false);
	strbuf__clear(b);
	sb_text(b, f->filename, true);
	if (b->err)
		return b->err;
	put_attr(dot, N_TOOLTIP, b->s, true);
	return dot->err;
}

static int add_edge(struct strbuf *dot, const struct edge *e, uint32_t caller, uint32_t callee,
		    const struct selection *sel, struct strbuf *b)
{
	double w = ratio(e->st.total_ns, sel->total_ns), pen = w * 4.0 > 0.5 ? w * 4.0 : 0.5;
	char rgb[8], num[32];

	/*
	 * gprof2dot reads a caller entry (nc, cc, tt, ct) and shows cc alone, the primitive calls
	 * of the pair: "3x" on a recursive self-loop beside a box of 47,880 calls. Both, then:
	 * all calls, and the primitive ones where some were recursive.
	 */
	strbuf__clear(b);
	strbuf__printf(b, "%.2f%%\\n", w * 100.0);
	sb_count(b, e->st.calls);
	strbuf__printf(b, "\xc3\x97");
	if (e->st.rec_calls) {
		strbuf__printf(b, " (");
		sb_count(b, e->st.calls - e->st.rec_calls);
		strbuf__printf(b, " primitive)");
	}
	if (b->err)
		return b->err;
	temperature(w, rgb);
	strbuf__printf(dot, "n%u -> n%u [", caller, callee);
	put_attr(dot, E_LABEL, b->s, false);
	put_attr(dot, E_COLOR, rgb, false);
	put_attr(dot, E_FONTCOLOR, rgb, false);
	/* the pen from 0.5 to 4 points with the weight, the arrow head with its square root */
	snprintf(num, sizeof(num), "%.2f", pen);
	put_attr(dot, E_PENWIDTH, num, false);
	put_attr(dot, E_LABELDISTANCE, num, false);
	snprintf(num, sizeof(num), "%.2f", 0.5 * root(pen));
	put_attr(dot, E_ARROWSIZE, num, true);
	return dot->err;
}

/*
 * The legend above the graph: the run, what 100% is, what was left out by which threshold,
 * and how to read a box and an arrow. Left-aligned lines ("\l"). Returns 0 or -ENOMEM.
 */
static int add_legend(struct strbuf *dot, const struct profile *p, const struct selection *sel,
		      double node_thres, double edge_thres, const char *root,
		      const struct run_info *run, struct strbuf *b)
{
	strbuf__clear(b);
	strbuf__printf(b, "pyuprof");
	if (run && run->command[0]) {
		strbuf__printf(b, ": ");
		sb_text(b, run->command, false);
	}
	if (run && run->pid)
		strbuf__printf(b, " (pid %u)", run->pid);
	if (run && run->wall_ns) {
		strbuf__printf(b, ", ");
		sb_time(b, run->wall_ns);
		strbuf__printf(b, " wall");
	}
	strbuf__printf(b, "; ");
	sb_count(b, p->n.calls);
	strbuf__printf(b, " calls in %u thread%s", p->nthreads, p->nthreads == 1 ? "" : "s");
	if (root) { /* p is then the calls under it (profile__rooted) */
		strbuf__printf(b, " under ");
		sb_text(b, root, false);
		strbuf__printf(b, " (--root: it and the calls made under it, counted on their "
				 "stacks)");
	}
	strbuf__printf(b, "\\l100%% = ");
	sb_time(b, (uint64_t)sel->total_ns);
	strbuf__printf(b, " (the larger of the sum of self times and the longest total time, as "
			 "gprof2dot)\\l%u of %u functions drawn: %u under %.2f%% total left out "
			 "(--node-thres); %u of %u caller-callee pairs drawn: the others under "
			 "%.2f%% (--edge-thres) or to a function left out\\l",
		      sel->nnodes, sel->nlisted, sel->nlisted - sel->nnodes, node_thres * 100.0,
		      sel->nedges, sel->nlisted_edges, edge_thres * 100.0);
	strbuf__printf(b, "box: name, file:line, total %% (callees included), (self %%), total "
			 "time, calls; arrow: total %% of the calls, calls (primitive: not nested "
			 "in a call of the same pair); colour and width grow with total %%\\l");
	if (b->err)
		return b->err;
	strbuf__printf(dot, "graph [");
	put_attr(dot, G_LABEL, b->s, false);
	put_attr(dot, G_LABELLOC, "t", false);
	put_attr(dot, G_LABELJUST, "l", false);
	put_attr(dot, G_FONTSIZE, "11", true);
	return dot->err;
}

/* The graph in DOT: the declarations, the legend, the nodes, the edges. */
static int build(struct strbuf *dot, const struct profile *p, const struct selection *sel,
		 double node_thres, double edge_thres, const char *root,
		 const struct run_info *run)
{
	struct strbuf b = { 0 };
	uint32_t i;
	int err;

	strbuf__printf(dot, "digraph callgraph {\n");
	for (i = 0; i < NATTRS; i++) {
		if (!attrs[i].kind)
			continue; /* set by the legend alone */
		strbuf__printf(dot, "%s [", attrs[i].kind);
		put_attr(dot, i, attrs[i].value, true);
	}
	err = add_legend(dot, p, sel, node_thres, edge_thres, root, run, &b);
	for (i = 0; i < sel->nnodes && !err; i++)
		err = add_node(dot, &p->funcs[sel->nodes[i]], i, sel, &b);
	for (i = 0; i < sel->nedges && !err; i++) {
		const struct edge *e = &p->edges[sel->edges[i]];

		err = add_edge(dot, e, sel->rank[e->caller], sel->rank[e->callee], sel, &b);
	}
	strbuf__printf(dot, "}\n");
	free(b.s);
	return err ? err : dot->err;
}

int callgraph__write(const struct profile *p, double node_thres_pct, double edge_thres_pct,
		    const char *root, const struct run_info *run, struct outfile *out)
{
	struct selection sel = { 0 };
	struct strbuf dot = { 0 };
	struct profile q;
	int err;

	if (root) {
		err = profile__rooted(p, root, &q);
		if (err)
			return err;
		p = &q;
	}
	err = select_graph(p, node_thres_pct / 100.0, edge_thres_pct / 100.0, &sel);
	if (!err)
		err = build(&dot, p, &sel, node_thres_pct / 100.0, edge_thres_pct / 100.0, root,
			    run);
	if (!err)
		err = dot_render__svg(dot.s, dot.len, out);
	strbuf__free(&dot);
	selection__free(&sel);
	if (root)
		profile__rooted_free(&q);
	return err;
}
