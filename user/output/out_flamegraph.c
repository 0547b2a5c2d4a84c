/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Flame graph SVG writer. The frames are plain SVG, laid out here (so the file shows without
 * its script too, as an image); the embedded script only adds hover, zoom and search.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/flamegraph_assets.h"
#include "output/out_collapsed.h"
#include "output/out_flamegraph.h"
#include "output/strbuf.h"

#define FG_WIDTH 1200
#define FG_PAD 10
#define FG_FW (FG_WIDTH - 2 * FG_PAD) /* frame area */
#define FG_FRAME_H 16
#define FG_TOP 84    /* title, subtitle and search box above the frames */
#define FG_BOTTOM 30 /* details line below */
#define FG_MIN_PX 0.1
/* advance of a 12 px monospace glyph (0.6 em in DejaVu and Liberation Mono); the script
 * truncates with the same number */
#define FG_CHAR_W 7.22
#define FG_LABEL_MAX 512

/* Number of characters put_text() would write for s (each bad byte is one). */
static size_t text_chars(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, chars = 0, l;

	while (i < n) {
		l = xml_utf8_len(u + i, n - i);
		i += l ? l : 1;
		chars++;
	}
	return chars;
}

/*
 * Appends at most max characters of s, escaped for XML text and attributes alike: the five
 * markup characters as entities, control characters (line breaks too: a title's lines are
 * ours) as spaces, bytes that are not valid UTF-8 as U+FFFD.
 */
static void put_text(struct strbuf *b, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, l, chars;

	for (chars = 0; i < n && chars < max; chars++) {
		unsigned char c = u[i];

		l = xml_utf8_len(u + i, n - i);
		if (!l) {
			strbuf__puts(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (l > 1)
			strbuf__put(b, s + i, l);
		else if (c == '&')
			strbuf__puts(b, "&amp;");
		else if (c == '<')
			strbuf__puts(b, "&lt;");
		else if (c == '>')
			strbuf__puts(b, "&gt;");
		else if (c == '"')
			strbuf__puts(b, "&quot;");
		else if (c == '\'')
			strbuf__puts(b, "&apos;");
		else if (c < 0x20 || c == 0x7f)
			strbuf__puts(b, " ");
		else
			strbuf__put(b, s + i, 1);
		i += l;
	}
}

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.2f \xc2\xb5s", ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 " ns", ns);
}

/* FNV-1a: a stable hash, so that a function keeps its colour from one graph to the next. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Warm colours (red to yellow), varied by the name's hash. */
static void name_colour(const char *name, char *buf, size_t len)
{
	uint32_t h = name_hash(name);

	snprintf(buf, len, "#%02x%02x%02x", 205 + (h & 0xff) % 51, (h >> 8 & 0xff) * 230 / 255,
		 (h >> 16 & 0xff) * 60 / 255);
}

/* A C function's: the cool colours beside the Python functions' warm ones (a look of their
 * own, with their italic labels: flamegraph.css) */
static void c_colour(const char *name, char *buf, size_t len)
{
	uint32_t h = name_hash(name);

	snprintf(buf, len, "#%02x%02x%02x", 80 + (h & 0xff) % 60, 150 + (h >> 8 & 0xff) % 50,
		 200 + (h >> 16 & 0xff) % 56);
}

struct layout {
	const struct profile *p;
	const struct fold *f;
	bool per_thread;
	uint64_t total;
	uint32_t maxd;
};

/* A frame wide enough to draw; and, per thread, every thread that ran, however narrow (its
 * name stays in the picture for the search: a short-lived thread among long ones) */
static bool keep(const struct layout *l, const struct fold_node *n)
{
	return l->total && n->total_ns &&
	       (n->thread != CT_NONE ||
		(double)n->total_ns * FG_FW / l->total >= FG_MIN_PX);
}

/* The node after i's subtree in a depth-first walk, or CT_NONE. */
static uint32_t skip_subtree(const struct fold *f, uint32_t i)
{
	for (; i != CT_NONE; i = f->nodes[i].parent)
		if (f->nodes[i].next_sibling != CT_NONE)
			return f->nodes[i].next_sibling;
	return CT_NONE;
}

/* One frame: <g data-x data-w data-d><title>name, file:line, times</title><rect/><text/></g> */
static void put_frame(struct strbuf *b, const struct layout *l, uint32_t i, uint64_t x)
{
	const struct fold_node *n = &l->f->nodes[i];
	const struct func *fn = n->func == CT_NONE ? NULL : &l->p->funcs[n->func];
	char name[THREAD_NAME_LEN + 32], loc[64], tot[32], self[32], colour[8];
	char label[FG_LABEL_MAX];
	double px = (double)x * FG_FW / l->total, pw = (double)n->total_ns * FG_FW / l->total;
	double pct = 100.0 * n->total_ns / l->total;
	unsigned y = FG_TOP + (l->maxd - n->depth) * FG_FRAME_H;
	size_t fit, chars;
	const char *base;

	fmt_ns(tot, sizeof(tot), n->total_ns);
	strbuf__printf(b, "<g %sdata-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\"><title>",
		  !fn ? "class=\"r\" " : fn->cfunc ? "class=\"c\" " : "", x, n->total_ns, n->depth);
	if (fn && fn->cfunc) { /* a C function: its label alone, no file */
		put_text(b, func__label(fn), SIZE_MAX);
		fmt_ns(self, sizeof(self), n->self_ns);
		strbuf__printf(b, "\n" CFUNC_PLACE "\n%s (%.2f%%), self %s (%.2f%%), %" PRIu64
			       " call%s", tot, pct, self, 100.0 * n->self_ns / l->total, n->calls,
			  n->calls == 1 ? "" : "s");
		snprintf(label, sizeof(label), "%s", func__label(fn));
		c_colour(func__label(fn), colour, sizeof(colour));
	} else if (fn) {
		put_text(b, func__label(fn), SIZE_MAX);
		strbuf__puts(b, "\n");
		put_text(b, fn->filename, SIZE_MAX);
		fmt_ns(self, sizeof(self), n->self_ns);
		strbuf__printf(b, ":%d\n%s (%.2f%%), self %s (%.2f%%), %" PRIu64 " call%s",
			  fn->firstlineno, tot, pct, self, 100.0 * n->self_ns / l->total, n->calls,
			  n->calls == 1 ? "" : "s");
		/* the label: name (file's base name:line), as the script rebuilds it */
		base = strrchr(fn->filename, '/');
		snprintf(label, sizeof(label), "%s (%s:%d)", func__label(fn),
			 base ? base + 1 : fn->filename, fn->firstlineno);
		name_colour(func__label(fn), colour, sizeof(colour));
	} else {
		if (n->depth == 0) {
			snprintf(name, sizeof(name), "%s", l->per_thread ? "all threads" : "all");
			loc[0] = '\0';
		} else {
			fold__thread_label(l->p, n->thread, name, sizeof(name));
			snprintf(loc, sizeof(loc), "tid %" PRIu32, l->p->threads[n->thread]->tid);
		}
		put_text(b, name, SIZE_MAX);
		strbuf__puts(b, "\n");
		put_text(b, loc, SIZE_MAX);
		strbuf__printf(b, "\n%s (%.2f%%)", tot, pct);
		snprintf(label, sizeof(label), "%s", name);
		snprintf(colour, sizeof(colour), "#c4c4cc");
	}
	strbuf__printf(b, "</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" fill=\"%s\"/>",
		  FG_PAD + px, y, pw, FG_FRAME_H - 1, colour);
	fit = pw > 6 ? (size_t)((pw - 6) / FG_CHAR_W) : 0;
	if (fit >= 3) {
		/* baseline 12 px below the frame's top (the script places added labels so too) */
		strbuf__printf(b, "<text x=\"%.2f\" y=\"%u\">", FG_PAD + px + 3, y + 12);
		chars = text_chars(label);
		if (chars > fit) {
			put_text(b, label, fit - 1);
			strbuf__puts(b, "\xe2\x80\xa6"); /* ellipsis */
		} else {
			put_text(b, label, SIZE_MAX);
		}
		strbuf__puts(b, "</text>");
	}
	strbuf__puts(b, "</g>\n");
}

static void put_head(struct strbuf *b, const struct layout *l, const char *title, uint32_t kept,
		     uint32_t dropped)
{
	unsigned height = FG_TOP + (l->maxd + 1) * FG_FRAME_H + FG_BOTTOM;
	char tot[32];

	strbuf__printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		     "height=\"%u\" viewBox=\"0 0 %u %u\" data-pad=\"%u\" data-fw=\"%u\" "
		     "data-total=\"%" PRIu64 "\" data-cw=\"%.2f\">\n",
		  FG_WIDTH, height, FG_WIDTH, height, FG_PAD, FG_FW, l->total, FG_CHAR_W);
	strbuf__printf(b, "<style>\n%s</style>\n", flamegraph_css);
	strbuf__printf(b, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f7f7f2\"/>\n"
		     "<text id=\"title\" x=\"%u\" y=\"24\">",
		  FG_WIDTH / 2);
	put_text(b, title ? title : "Flame Graph", SIZE_MAX);
	fmt_ns(tot, sizeof(tot), l->total);
	strbuf__printf(b, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"44\">", FG_WIDTH / 2);
	if (!l->total)
		strbuf__puts(b, "No call was recorded");
	else
		strbuf__printf(b, "Wall time %s in %" PRIu32 " thread%s; %" PRIu32 " frames, %" PRIu32
			     " under %.1f px left out. Hover: details; click: zoom; Ctrl-F: search",
			  tot, l->p->nthreads, l->p->nthreads == 1 ? "" : "s", kept, dropped,
			  FG_MIN_PX);
	strbuf__printf(b, "</text>\n"
		     "<text id=\"reset\" class=\"btn h\" x=\"%u\" y=\"70\">Reset zoom</text>\n"
		     "<foreignObject id=\"searchbox\" x=\"%u\" y=\"54\" width=\"260\" height=\"24\">"
		     "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
		     "placeholder=\"Search (Ctrl-F)\" title=\"name or file, any case\"/>"
		     "</foreignObject>\n"
		     "<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n"
		     "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n<g id=\"frames\">\n",
		  FG_PAD, FG_WIDTH - FG_PAD - 260, FG_PAD, height - 10, FG_WIDTH - FG_PAD,
		  height - 10);
}

int flamegraph__write(const struct profile *p, bool per_thread, const char *title,
		     struct outfile *out)
{
	struct layout l = { .p = p, .per_thread = per_thread };
	struct strbuf b = { .out = out };
	uint64_t *cursor = NULL; /* cursor[d]: where the next frame at depth d starts */
	uint32_t *size = NULL, i, maxd = 0, kept = 0, dropped = 0;
	struct fold f;
	int err;

	err = fold__build(p, per_thread, &f);
	if (err)
		return err;
	l.f = &f;
	l.total = f.nodes[0].total_ns;
	size = calloc(f.n, sizeof(*size));
	for (i = 0; i < f.n; i++)
		maxd = f.nodes[i].depth > maxd ? f.nodes[i].depth : maxd;
	cursor = calloc((size_t)maxd + 2, sizeof(*cursor));
	if (!size || !cursor) {
		err = -ENOMEM;
		goto out;
	}
	/* subtree sizes, to count what a left-out frame takes with it (children follow parents) */
	for (i = f.n; i-- > 0;) {
		size[i]++;
		if (i)
			size[f.nodes[i].parent] += size[i];
	}
	for (i = 0; i != CT_NONE;) {
		if (!keep(&l, &f.nodes[i])) {
			dropped += size[i];
			i = skip_subtree(&f, i);
			continue;
		}
		kept++;
		l.maxd = f.nodes[i].depth > l.maxd ? f.nodes[i].depth : l.maxd;
		i = fold__next(&f, i);
	}

	put_head(&b, &l, title, kept, dropped);
	for (i = 0; i != CT_NONE && !b.err;) {
		const struct fold_node *n = &f.nodes[i];
		uint64_t x = cursor[n->depth];

		/* siblings side by side in sorted order; children start where their parent does */
		cursor[n->depth] += n->total_ns;
		cursor[n->depth + 1] = x;
		if (!keep(&l, n)) {
			i = skip_subtree(&f, i);
			continue;
		}
		put_frame(&b, &l, i, x);
		strbuf__flush(&b, 1 << 16);
		i = fold__next(&f, i);
	}
	strbuf__printf(&b, "</g>\n<g id=\"tip\" class=\"h\"><rect rx=\"3\"/><text y=\"0\"/></g>\n"
		      "<script><![CDATA[\n%s]]></script>\n</svg>\n",
		  flamegraph_js);
	err = strbuf__flush(&b, 0);
out:
	free(b.s);
	free(size);
	free(cursor);
	fold__free(&f);
	return err;
}
