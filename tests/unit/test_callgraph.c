/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The call-graph SVG writer (user/output/out_callgraph.c) on profiles built with the real builder.
 * Each SVG is checked by its consumers: xmllint for well-formedness, then python3's xml.etree
 * reads back what a viewer shows (the texts of every box and edge, their colours, tooltips),
 * and those are compared with numbers worked out here from the times fed in.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/outfile.h"
#include "output/out_callgraph.h"
#include "profile/profile.h"
#include "test.h"

#define U 10000ULL /* one time unit of the synthetic profiles: 10 µs */
#define MAX_ROWS 64
#define MAX_FIELDS 12

/* Replays calls and returns of one thread, keeping the frame chain the builder wants. */
struct player {
	struct profile *p;
	uint32_t tid;
	uint64_t frame[32], code[32];
	int depth;
	uint64_t next_frame;
};

static void enter(struct player *pl, uint64_t t, uint64_t code)
{
	__u64 chain[CHAIN_LEN] = { 0 }, codes[CHAIN_LEN] = { 0 };
	uint64_t frame = pl->tid * 1000 + ++pl->next_frame;

	if (pl->depth > 0) {
		chain[0] = pl->frame[pl->depth - 1];
		codes[0] = pl->code[pl->depth - 1];
	}
	if (pl->depth > 1) {
		chain[1] = pl->frame[pl->depth - 2];
		codes[1] = pl->code[pl->depth - 2];
	}
	CHECK(!profile__call(pl->p, pl->tid, t * U, code, frame, chain, codes, 0, false));
	pl->frame[pl->depth] = frame;
	pl->code[pl->depth++] = code;
}

static void leave(struct player *pl, uint64_t t)
{
	CHECK(!profile__return(pl->p, pl->tid, t * U));
	pl->depth--;
}

enum { MODULE = 400, MAIN = 100, WORK = 200, TINY = 300, LAMBDA = 500, ODD = 600 };

/*
 * <module> runs 0..1000 and calls main (10..990), which calls work three times (200 each),
 * <lambda> once (200) and tiny once (2, 0.2%: under the default 0.5% threshold). Self times:
 * <module> 20, main 178, work 600, <lambda> 200, tiny 2: they add up to 1000, the total.
 * reversed registers the code objects in the opposite order (other function indices).
 */
static struct profile *demo(bool reversed)
{
	static const struct {
		uint64_t code;
		const char *file, *name;
		int line;
	} codes[] = {
		{ MODULE, "/src/app/m.py", "<module>", 1 },
		{ MAIN, "/src/app/m.py", "main", 3 },
		{ WORK, "/src/app/m.py", "work", 9 },
		{ TINY, "/src/app/m.py", "tiny", 12 },
		{ LAMBDA, "/src/a&b/x<y>.py", "<lambda>", 7 },
		{ ODD, "/src/app/m.py", "odd\\N\"q\"", 20 }, /* never called */
	};
	struct player pl = { .p = profile__new(), .tid = 1 };
	size_t i, n = sizeof(codes) / sizeof(codes[0]);

	if (!pl.p)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t k = reversed ? n - 1 - i : i;

		CHECK(!profile__code(pl.p, codes[k].code, codes[k].file, codes[k].name,
				     codes[k].line));
	}
	enter(&pl, 0, MODULE);
	enter(&pl, 10, MAIN);
	enter(&pl, 20, WORK);
	leave(&pl, 220);
	enter(&pl, 230, WORK);
	leave(&pl, 430);
	enter(&pl, 440, WORK);
	leave(&pl, 640);
	enter(&pl, 650, LAMBDA);
	leave(&pl, 850);
	enter(&pl, 860, TINY);
	leave(&pl, 862);
	leave(&pl, 990);
	leave(&pl, 1000);
	profile__finish(pl.p, 1000 * U);
	return pl.p;
}

/* What a viewer sees of one box or edge: its texts, colour and tooltip. */
struct row {
	char kind;		/* 'n' node, 'e' edge */
	char *color;		/* node fill, edge stroke */
	char *tooltip;		/* node only */
	char *from, *to;	/* edge only: the first text of each end's box */
	char *text[MAX_FIELDS]; /* node: name, file:line, total %, (self %), time, calls */
	int ntext;
};

struct svg {
	char dir[64], path[96];
	char *data;
	size_t len;
	struct row rows[MAX_ROWS];
	int nrows;
	char *lines[MAX_ROWS];
};

/*
 * Prints one line per box ("n", fill, tooltip, texts...) and per edge ("e", stroke, caller's
 * name, callee's name, texts...), fields separated by tabs. No single quote inside: it is
 * passed with python3 -c '...'.
 */
static const char extract_py[] =
	"import sys, xml.etree.ElementTree as ET\n"
	"S = \"{http://www.w3.org/2000/svg}\"\n"
	"X = \"{http://www.w3.org/1999/xlink}\"\n"
	"root = ET.parse(sys.argv[1]).getroot()\n"
	"groups = [g for g in root.iter(S + \"g\") if g.get(\"class\") in (\"node\", \"edge\")]\n"
	"name = {}\n"
	"for g in groups:\n"
	"    if g.get(\"class\") == \"node\":\n"
	"        name[g.find(S + \"title\").text] = g.find(\".//\" + S + \"text\").text\n"
	"out = []\n"
	"for g in groups:\n"
	"    texts = [t.text or \"\" for t in g.iter(S + \"text\")]\n"
	"    a = g.find(\".//\" + S + \"a\")\n"
	"    tip = a.get(X + \"title\") if a is not None else \"\"\n"
	"    if g.get(\"class\") == \"node\":\n"
	"        fill = g.find(\".//\" + S + \"polygon\").get(\"fill\")\n"
	"        out.append([\"n\", fill, tip] + texts)\n"
	"    else:\n"
	"        src, dst = g.find(S + \"title\").text.split(\"->\")\n"
	"        stroke = g.find(\".//\" + S + \"path\").get(\"stroke\")\n"
	"        out.append([\"e\", stroke, name[src], name[dst]] + texts)\n"
	"sys.stdout.buffer.write(\"\".join(chr(9).join(r) + chr(10) for r in out).encode())\n";

static void svg__free(struct svg *s)
{
	int i;

	for (i = 0; i < s->nrows; i++)
		free(s->lines[i]);
	free(s->data);
	if (s->path[0])
		unlink(s->path);
	if (s->dir[0])
		rmdir(s->dir);
	free(s);
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static void parse_rows(struct svg *s, FILE *f)
{
	char line[4096], *tok, *save;

	while (s->nrows < MAX_ROWS && fgets(line, sizeof(line), f)) {
		struct row *r = &s->rows[s->nrows];
		char *copy;
		int field = 0;

		line[strcspn(line, "\n")] = '\0';
		copy = strdup(line);
		if (!copy)
			return;
		s->lines[s->nrows++] = copy;
		memset(r, 0, sizeof(*r));
		for (tok = strtok_r(copy, "\t", &save); tok; tok = strtok_r(NULL, "\t", &save)) {
			if (field == 0)
				r->kind = tok[0];
			else if (field == 1)
				r->color = tok;
			else if (r->kind == 'n' && field == 2)
				r->tooltip = tok;
			else if (r->kind == 'e' && field == 2)
				r->from = tok;
			else if (r->kind == 'e' && field == 3)
				r->to = tok;
			else if (r->ntext < MAX_FIELDS)
				r->text[r->ntext++] = tok;
			field++;
		}
	}
}

/*
 * Writes p's call graph through an outfile, as pyuprof does, checks it with xmllint and reads
 * it back. *err gets callgraph_write's result; NULL when that failed (or on a harness error).
 */
static struct svg *render(const struct profile *p, double node_thres, double edge_thres, int *err)
{
	struct svg *s = calloc(1, sizeof(*s));
	struct outfile out;
	char cmd[4096];
	FILE *f;

	*err = -EINVAL;
	if (!s)
		return NULL;
	snprintf(s->dir, sizeof(s->dir), "/tmp/test_callgraph.XXXXXX");
	if (!mkdtemp(s->dir)) {
		s->dir[0] = '\0';
		svg__free(s);
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s/g.svg", s->dir);
	if (outfile__open(&out, s->path)) {
		s->path[0] = '\0';
		svg__free(s);
		return NULL;
	}
	*err = callgraph__write(p, node_thres, edge_thres, NULL, NULL, &out);
	if (*err) {
		outfile__abort(&out);
		s->path[0] = '\0';
		svg__free(s);
		return NULL;
	}
	CHECK(!outfile__commit(&out));
	s->data = read_all(s->path, &s->len);
	CHECK(s->data != NULL);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", s->path);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "python3 -c '%s' %s", extract_py, s->path);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (f) {
		parse_rows(s, f);
		CHECK(pclose(f) == 0);
	}
	return s;
}

static const struct row *node(const struct svg *s, const char *name)
{
	int i;

	for (i = 0; i < s->nrows; i++)
		if (s->rows[i].kind == 'n' && s->rows[i].ntext && !strcmp(s->rows[i].text[0], name))
			return &s->rows[i];
	return NULL;
}

static const struct row *edge(const struct svg *s, const char *from, const char *to)
{
	int i;

	for (i = 0; i < s->nrows; i++)
		if (s->rows[i].kind == 'e' && !strcmp(s->rows[i].from, from) &&
		    !strcmp(s->rows[i].to, to))
			return &s->rows[i];
	return NULL;
}

static int count(const struct svg *s, char kind)
{
	int i, n = 0;

	for (i = 0; i < s->nrows; i++)
		n += s->rows[i].kind == kind;
	return n;
}

static bool text_is(const struct row *r, int i, const char *want)
{
	if (r && i < r->ntext && !strcmp(r->text[i], want))
		return true;
	printf("#   text %d of %s is \"%s\", want \"%s\"\n", i, r && r->ntext ? r->text[0] : "?",
	       r && i < r->ntext ? r->text[i] : "(none)", want);
	return false;
}

static bool pct_is(const struct row *r, int i, double part, double whole, bool paren)
{
	char want[32];

	snprintf(want, sizeof(want), paren ? "(%.2f%%)" : "%.2f%%", 100.0 * part / whole);
	return text_is(r, i, want);
}

/* Node: name, file:line, total %, (self %), total time, calls; all from the times fed in. */
static void check_node(const struct svg *s, const char *name, const char *where, double total,
		       double self, const char *time, const char *calls)
{
	const struct row *r = node(s, name);

	if (!r)
		printf("#   no box for %s\n", name);
	REQUIRE(r);
	CHECK(r->ntext == 6);
	CHECK(text_is(r, 1, where));
	CHECK(pct_is(r, 2, total, 1000, false));
	CHECK(pct_is(r, 3, self, 1000, true));
	CHECK(text_is(r, 4, time));
	CHECK(text_is(r, 5, calls));
}

static void check_edge(const struct svg *s, const char *from, const char *to, double total,
		       const char *calls)
{
	const struct row *r = edge(s, from, to);

	if (!r)
		printf("#   no edge %s -> %s\n", from, to);
	REQUIRE(r);
	CHECK(r->ntext == 2);
	CHECK(pct_is(r, 0, total, 1000, false));
	CHECK(text_is(r, 1, calls));
}

TEST(boxes_and_edges_show_gprof2dot_numbers)
{
	struct profile *p = demo(false);
	struct svg *s;
	int err;

	REQUIRE(p);
	s = render(p, 0.5, 0.1, &err);
	CHECK(err == 0);
	REQUIRE(s);
	/* total 1000 units of 10 µs; "<module>" and "<lambda>" are escaped and come back whole */
	check_node(s, "<module>", "m.py:1", 1000, 20, "10.000 ms", "1\u00d7");
	check_node(s, "main", "m.py:3", 980, 178, "9.800 ms", "1\u00d7");
	check_node(s, "work", "m.py:9", 600, 600, "6.000 ms", "3\u00d7");
	check_node(s, "<lambda>", "x<y>.py:7", 200, 200, "2.000 ms", "1\u00d7");
	check_edge(s, "<module>", "main", 980, "1\u00d7");
	check_edge(s, "main", "work", 600, "3\u00d7");
	check_edge(s, "main", "<lambda>", 200, "1\u00d7");
	/* tiny (0.2%) is under the default threshold, and so is its edge; odd was never called */
	CHECK(!node(s, "tiny") && !edge(s, "main", "tiny"));
	CHECK(count(s, 'n') == 4 && count(s, 'e') == 3);
	/* the tooltip is the full path, with its '&' and '<' as they are */
	CHECK(node(s, "<lambda>") && !strcmp(node(s, "<lambda>")->tooltip, "/src/a&b/x<y>.py"));
	CHECK(node(s, "main") && !strcmp(node(s, "main")->tooltip, "/src/app/m.py"));
	svg__free(s);
	profile__free(p);
}

TEST(colours_follow_the_temperature_map)
{
	struct profile *p = demo(false);
	struct svg *s;
	int err;

	REQUIRE(p);
	s = render(p, 0.5, 0.1, &err);
	REQUIRE(s);
	/*
	 * gprof2dot's map is HSL (2/3, 0.8, 0.25) at 0% to (0, 1, 0.5) at 100%; these were
	 * worked out with python3's colorsys.hls_to_rgb, not with our code: 100% saturated red,
	 * 98% h=0.0133 s=0.996 l=0.495, 60% h=0.2667 s=0.92 l=0.4, 20% h=0.5333 s=0.84 l=0.3.
	 */
	CHECK(node(s, "<module>") && !strcmp(node(s, "<module>")->color, "#ff0000"));
	CHECK(node(s, "main") && !strcmp(node(s, "main")->color, "#fc1501"));
	CHECK(node(s, "work") && !strcmp(node(s, "work")->color, "#53c408"));
	CHECK(node(s, "<lambda>") && !strcmp(node(s, "<lambda>")->color, "#0c738d"));
	CHECK(edge(s, "main", "work") && !strcmp(edge(s, "main", "work")->color, "#53c408"));
	svg__free(s);
	profile__free(p);
}

TEST(thresholds_leave_out_nodes_and_edges)
{
	struct profile *p = demo(false);
	struct svg *s;
	int err;

	REQUIRE(p);
	/* no threshold: tiny and its edge come in; odd still not (pstats does not list it) */
	s = render(p, 0, 0, &err);
	REQUIRE(s);
	check_node(s, "tiny", "m.py:12", 2, 2, "20.000 \u00b5s", "1\u00d7");
	check_edge(s, "main", "tiny", 2, "1\u00d7");
	CHECK(count(s, 'n') == 5 && count(s, 'e') == 4);
	CHECK(!node(s, "odd\\N\"q\""));
	svg__free(s);

	/* 50%: <module>, main and work (60%) stay, <lambda> (20%) goes with its edge */
	s = render(p, 50, 0.1, &err);
	REQUIRE(s);
	CHECK(node(s, "<module>") && node(s, "main") && node(s, "work"));
	CHECK(!node(s, "<lambda>") && !edge(s, "main", "<lambda>"));
	CHECK(count(s, 'n') == 3 && count(s, 'e') == 2);
	svg__free(s);

	/* an edge under its own threshold goes, its callee stays */
	s = render(p, 0.5, 30, &err);
	REQUIRE(s);
	CHECK(node(s, "<lambda>") && !edge(s, "main", "<lambda>"));
	CHECK(edge(s, "main", "work") && count(s, 'e') == 2);
	svg__free(s);

	/* above every function: nothing to draw */
	s = render(p, 100.5, 0.1, &err);
	CHECK(!s && err == -ENODATA);
	profile__free(p);
}

TEST(recursion_counts_as_gprof2dot_shows_them)
{
	struct player pl = { .p = profile__new(), .tid = 1 };
	const struct row *r;
	struct svg *s;
	int err;

	REQUIRE(pl.p);
	CHECK(!profile__code(pl.p, 10, "r.py", "fib", 1));
	/* fib (0..100) calls fib (10..40, which calls fib 20..30) and fib (50..90) */
	enter(&pl, 0, 10);
	enter(&pl, 10, 10);
	enter(&pl, 20, 10);
	leave(&pl, 30);
	leave(&pl, 40);
	enter(&pl, 50, 10);
	leave(&pl, 90);
	leave(&pl, 100);
	profile__finish(pl.p, 100 * U);
	s = render(pl.p, 0.5, 0.1, &err);
	REQUIRE(s);
	/*
	 * 4 calls, 100% total, 100% self. The self-loop shows the pair's 3 calls and, as
	 * gprof2dot reads a pstats caller entry, its primitive ones: the two made by the
	 * outermost fib, not the third, made while fib->fib was already running. Its time is
	 * those two calls' 70.
	 */
	r = node(s, "fib");
	CHECK(r && text_is(r, 2, "100.00%") && text_is(r, 3, "(100.00%)"));
	CHECK(r && text_is(r, 5, "4\u00d7"));
	r = edge(s, "fib", "fib");
	CHECK(r && text_is(r, 0, "70.00%") && text_is(r, 1, "3\u00d7 (2 primitive)"));
	svg__free(s);
	profile__free(pl.p);
}

TEST(threads_share_the_total_of_self_times)
{
	struct player a = { .tid = 1 }, b = { .tid = 2 };
	const struct row *r;
	struct profile *p;
	struct svg *s;
	int err;

	p = profile__new();
	REQUIRE(p);
	a.p = b.p = p;
	CHECK(!profile__code(p, 10, "t.py", "run", 1));
	CHECK(!profile__code(p, 20, "t.py", "spin", 5));
	/* two threads busy at once: run 0..100 in one, spin 0..100 in the other */
	enter(&a, 0, 10);
	enter(&b, 0, 20);
	leave(&a, 100);
	leave(&b, 100);
	profile__finish(p, 100 * U);
	s = render(p, 0.5, 0.1, &err);
	REQUIRE(s);
	/* 100% is the sum of self times (200), as gprof2dot takes it from pstats */
	r = node(s, "run");
	CHECK(r && text_is(r, 2, "50.00%") && text_is(r, 3, "(50.00%)"));
	r = node(s, "spin");
	CHECK(r && text_is(r, 2, "50.00%"));
	svg__free(s);
	profile__free(p);
}

TEST(odd_names_survive_escaping)
{
	struct player pl = { .p = profile__new(), .tid = 1 };
	const struct row *r;
	struct svg *s;
	int err;

	REQUIRE(pl.p);
	/*
	 * A backslash would be read as graphviz's \N (node name) or \l, '&' as the start of an
	 * entity; a control byte is not allowed in XML and 0xff is not UTF-8.
	 */
	CHECK(!profile__code(pl.p, 10, "/x/q\\N\\\\&amp;&lt;.py", "<genexpr>", 2));
	CHECK(!profile__code(pl.p, 20, "/x/y.py", "a\\Nb\\l&lt;\"'", 3));
	CHECK(!profile__code(pl.p, 30, "/x/y.py", "bad\x01\xff", 4));
	enter(&pl, 0, 10);
	enter(&pl, 10, 20);
	enter(&pl, 20, 30);
	leave(&pl, 80);
	leave(&pl, 90);
	leave(&pl, 100);
	profile__finish(pl.p, 100 * U);
	s = render(pl.p, 0.5, 0.1, &err);
	REQUIRE(s);
	r = node(s, "<genexpr>");
	CHECK(r && text_is(r, 1, "q\\N\\\\&amp;&lt;.py:2"));
	r = node(s, "<genexpr>");
	CHECK(r && !strcmp(r->tooltip, "/x/q\\N\\\\&amp;&lt;.py"));
	CHECK(node(s, "a\\Nb\\l&lt;\"'"));
	CHECK(node(s, "bad\ufffd\ufffd"));
	CHECK(count(s, 'n') == 3 && count(s, 'e') == 2);
	svg__free(s);
	profile__free(pl.p);
}

TEST(largest_cumtime_is_the_total_when_above_the_self_sum)
{
	struct profile *p = demo(false);
	const struct row *r;
	struct svg *s;
	int err;

	REQUIRE(p);
	/*
	 * Not seen in real profiles, but it is gprof2dot's rule: 100% of total times is the
	 * larger of the sum of self times (1000) and the largest cumulative time; self % stays
	 * relative to the sum. main made to last 2000 units shows 100%, <module> 50%.
	 */
	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, "main"))
			p->funcs[i].st.total_ns = 2000 * U;
	s = render(p, 0.5, 0.1, &err);
	REQUIRE(s);
	r = node(s, "main");
	CHECK(r && text_is(r, 2, "100.00%") && text_is(r, 3, "(17.80%)"));
	r = node(s, "<module>");
	CHECK(r && text_is(r, 2, "50.00%") && text_is(r, 3, "(2.00%)"));
	svg__free(s);
	profile__free(p);
}

TEST(output_is_deterministic)
{
	struct profile *p = demo(false), *q = demo(true);
	struct svg *s1, *s2, *s3;
	int err;

	REQUIRE(p && q);
	s1 = render(p, 0.5, 0.1, &err);
	s2 = render(p, 0.5, 0.1, &err);
	/* the same calls with the functions known in another order */
	s3 = render(q, 0.5, 0.1, &err);
	REQUIRE(s1 && s2 && s3 && s1->data && s2->data && s3->data);
	CHECK(s1->len == s2->len && !memcmp(s1->data, s2->data, s1->len));
	CHECK(s1->len == s3->len && !memcmp(s1->data, s3->data, s1->len));
	CHECK(strstr(s1->data, "<svg") != NULL);
	svg__free(s1);
	svg__free(s2);
	svg__free(s3);
	profile__free(p);
	profile__free(q);
}

TEST(empty_profile_is_no_data)
{
	struct profile *p = profile__new();
	struct svg *s;
	int err;

	REQUIRE(p);
	profile__finish(p, 0);
	s = render(p, 0, 0, &err);
	CHECK(!s && err == -ENODATA);
	profile__free(p);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(boxes_and_edges_show_gprof2dot_numbers),
		TEST_CASE(colours_follow_the_temperature_map),
		TEST_CASE(thresholds_leave_out_nodes_and_edges),
		TEST_CASE(recursion_counts_as_gprof2dot_shows_them),
		TEST_CASE(threads_share_the_total_of_self_times),
		TEST_CASE(odd_names_survive_escaping),
		TEST_CASE(largest_cumtime_is_the_total_when_above_the_self_sum),
		TEST_CASE(output_is_deterministic),
		TEST_CASE(empty_profile_is_no_data),
	};

	return test_run(cases, TEST_COUNT(cases));
}
