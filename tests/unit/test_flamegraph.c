/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Collapsed stacks and the flame graph SVG, from synthetic profiles fed through the real
 * builder (profile__call/return), so the call tree is the one a recording would give. The SVG
 * is read back by python3's xml.etree (and xmllint when present): well-formed, every function
 * there, widths proportional to time. With PYUPROF_FG_SAVE=DIR the SVGs are kept in DIR for
 * the browser test (tests/flamegraph.bats).
 */
#include <inttypes.h>
#include <linux/types.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "output/out_collapsed.h"
#include "output/out_flamegraph.h"
#include "profile/profile.h"
#include "test.h"

#define FFFD "\xef\xbf\xbd"
#define US 1000ULL /* the builder counts ns; whole microseconds keep collapsed values exact */

static char tmpdir[] = "/tmp/test_flamegraph.XXXXXX";

/* An entry of code at ts (in us) in frame, called from caller_frame running caller_code. */
static void call(struct profile *p, uint32_t tid, uint64_t ts, uint64_t code, uint64_t frame,
		 uint64_t caller_frame, uint64_t caller_code)
{
	__u64 chain[CHAIN_LEN] = { caller_frame }, chain_code[CHAIN_LEN] = { caller_code };

	CHECK(!profile__call(p, tid, ts * US, code, frame, chain, chain_code, 0, false));
}

static void ret(struct profile *p, uint32_t tid, uint64_t ts)
{
	CHECK(!profile__return(p, tid, ts * US));
}

/*
 * Thread 1:  main 0..100 { work 10..40; work 50..70; helper 75..95 { work 80..85 } }
 * self: main 30, main;work 50, main;helper 15, main;helper;work 5 (all us).
 */
static void thread_main(struct profile *p, uint32_t tid, uint64_t t0)
{
	call(p, tid, t0 + 0, 100, 1, 0, 0);
	call(p, tid, t0 + 10, 200, 2, 1, 100);
	ret(p, tid, t0 + 40);
	call(p, tid, t0 + 50, 200, 3, 1, 100);
	ret(p, tid, t0 + 70);
	call(p, tid, t0 + 75, 300, 4, 1, 100);
	call(p, tid, t0 + 80, 200, 5, 4, 300);
	ret(p, tid, t0 + 85);
	ret(p, tid, t0 + 95);
	ret(p, tid, t0 + 100);
}

static struct profile *new_profile(void)
{
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	profile__code(p, 100, "m.py", "main", 1);
	profile__code(p, 200, "m.py", "work", 5);
	profile__code(p, 300, "/lib/h.py", "helper", 9);
	profile__code(p, 400, "r.py", "rec", 3);
	profile__code(p, 500, "t.py", "worker", 2);
	return p;
}

/* Thread 1 as above; thread 2 (named "" so "thread-2"): worker 0..40 { work 5..25 }. */
static struct profile *two_threads(void)
{
	struct profile *p = new_profile();
	struct thread *t;

	if (!p)
		return NULL;
	t = profile__thread(p, 1);
	if (t)
		snprintf(t->name, sizeof(t->name), "MainThread");
	thread_main(p, 1, 0);
	call(p, 2, 0, 500, 11, 0, 0);
	call(p, 2, 5, 200, 12, 11, 500);
	ret(p, 2, 25);
	ret(p, 2, 40);
	profile__finish(p, 100 * US);
	return p;
}

static size_t slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

enum fmt { COLLAPSED, SVG };

/* Writes p in fmt through an outfile to DIR/name; returns the path (static) or NULL. */
static const char *write_out(const struct profile *p, enum fmt fmt, bool per_thread,
			     const char *name)
{
	static char path[4096];
	const char *dir = getenv("PYUPROF_FG_SAVE");
	struct outfile o;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir && fmt == SVG ? dir : tmpdir, name);
	if (outfile__open(&o, path))
		return NULL;
	err = fmt == SVG ? flamegraph__write(p, per_thread, "Test <flame> & \"graph\"", &o)
			 : collapsed__write(p, per_thread, &o);
	if (err) {
		outfile__abort(&o);
		return NULL;
	}
	return outfile__commit(&o) ? NULL : path;
}

static size_t collapsed(const struct profile *p, bool per_thread, char *buf, size_t len)
{
	const char *path = write_out(p, COLLAPSED, per_thread, "c.txt");

	return path ? slurp(path, buf, len) : 0;
}

static uint64_t sum_values(const char *text)
{
	uint64_t sum = 0;
	const char *s, *sp, *nl;

	for (s = text; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			return UINT64_MAX; /* every line ends with one */
		sp = memrchr(s, ' ', (size_t)(nl - s));
		if (!sp)
			return UINT64_MAX;
		sum += strtoull(sp + 1, NULL, 10);
	}
	return sum;
}

static uint64_t total_tt(const struct profile *p)
{
	uint64_t tt = 0;

	for (uint32_t i = 0; i < p->nfuncs; i++)
		tt += p->funcs[i].st.inline_ns;
	return tt;
}

TEST(collapsed_one_thread)
{
	struct profile *p = new_profile();
	char buf[4096];

	REQUIRE(p);
	thread_main(p, 1, 0);
	profile__finish(p, 100 * US);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	/* children sorted by name: helper before work */
	CHECK(!strcmp(buf, "main (m.py:1) 30\n"
			   "main (m.py:1);helper (/lib/h.py:9) 15\n"
			   "main (m.py:1);helper (/lib/h.py:9);work (m.py:5) 5\n"
			   "main (m.py:1);work (m.py:5) 50\n"));
	CHECK(sum_values(buf) == 100);
	CHECK(sum_values(buf) * US == total_tt(p));
	profile__free(p);
}

TEST(collapsed_recursion)
{
	struct profile *p = new_profile();
	char buf[4096];

	REQUIRE(p);
	/* rec 0..60 { rec 10..50 { rec 20..30 } }: one path per level, not one function */
	call(p, 1, 0, 400, 1, 0, 0);
	call(p, 1, 10, 400, 2, 1, 400);
	call(p, 1, 20, 400, 3, 2, 400);
	ret(p, 1, 30);
	ret(p, 1, 50);
	ret(p, 1, 60);
	profile__finish(p, 60 * US);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	CHECK(!strcmp(buf, "rec (r.py:3) 20\n"
			   "rec (r.py:3);rec (r.py:3) 30\n"
			   "rec (r.py:3);rec (r.py:3);rec (r.py:3) 10\n"));
	CHECK(sum_values(buf) * US == total_tt(p));
	profile__free(p);
}

TEST(collapsed_threads_merged_and_apart)
{
	struct profile *p = two_threads();
	char buf[4096];

	REQUIRE(p);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	CHECK(!strcmp(buf, "main (m.py:1) 30\n"
			   "main (m.py:1);helper (/lib/h.py:9) 15\n"
			   "main (m.py:1);helper (/lib/h.py:9);work (m.py:5) 5\n"
			   "main (m.py:1);work (m.py:5) 50\n"
			   "worker (t.py:2) 20\n"
			   "worker (t.py:2);work (m.py:5) 20\n"));
	CHECK(sum_values(buf) * US == total_tt(p));

	REQUIRE(collapsed(p, true, buf, sizeof(buf)));
	CHECK(!strcmp(buf, "MainThread;main (m.py:1) 30\n"
			   "MainThread;main (m.py:1);helper (/lib/h.py:9) 15\n"
			   "MainThread;main (m.py:1);helper (/lib/h.py:9);work (m.py:5) 5\n"
			   "MainThread;main (m.py:1);work (m.py:5) 50\n"
			   "thread-2;worker (t.py:2) 20\n"
			   "thread-2;worker (t.py:2);work (m.py:5) 20\n"));
	CHECK(sum_values(buf) * US == total_tt(p));
	profile__free(p);
}

TEST(collapsed_same_path_in_two_threads_adds_up)
{
	struct profile *p = new_profile();
	char buf[4096];

	REQUIRE(p);
	thread_main(p, 1, 0);
	thread_main(p, 7, 200);
	profile__finish(p, 300 * US);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	CHECK(!strcmp(buf, "main (m.py:1) 60\n"
			   "main (m.py:1);helper (/lib/h.py:9) 30\n"
			   "main (m.py:1);helper (/lib/h.py:9);work (m.py:5) 10\n"
			   "main (m.py:1);work (m.py:5) 100\n"));
	/* two unnamed threads: each its own label */
	REQUIRE(collapsed(p, true, buf, sizeof(buf)));
	CHECK(strstr(buf, "\nthread-1;main (m.py:1);work (m.py:5) 50\n"));
	CHECK(strstr(buf, "\nthread-7;main (m.py:1);work (m.py:5) 50\n"));
	profile__free(p);
}

TEST(collapsed_rounding_keeps_the_total)
{
	struct profile *p = profile__new();
	char buf[4096];
	uint64_t code;

	REQUIRE(p);
	/* five leaves of 0.4 us self each under a 10.2 us root: 2.0 us of leaves, 8.2 us of root */
	profile__code(p, 1, "x.py", "root", 1);
	for (code = 2; code <= 6; code++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", (int)code);
		profile__code(p, code, "x.py", name, (int)code);
	}
	call(p, 1, 0, 1, 1, 0, 0);
	for (code = 2; code <= 6; code++) {
		__u64 chain[CHAIN_LEN] = { 1 }, chain_code[CHAIN_LEN] = { 1 };

		CHECK(!profile__call(p, 1, code * US, code, code, chain, chain_code, 0, false));
		CHECK(!profile__return(p, 1, code * US + 400));
	}
	CHECK(!profile__return(p, 1, 10200));
	profile__finish(p, 10200);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	/* rounded on the running sum: 8.2, 8.6, 9.0, 9.4, 9.8, 10.2 -> 8, 9, 9, 9, 10, 10 */
	CHECK(!strcmp(buf, "root (x.py:1) 8\n"
			   "root (x.py:1);f2 (x.py:2) 1\n"
			   "root (x.py:1);f5 (x.py:5) 1\n"));
	CHECK(sum_values(buf) == 10);
	profile__free(p);
}

TEST(collapsed_frame_text_cannot_break_lines)
{
	struct profile *p = profile__new();
	char buf[4096];

	REQUIRE(p);
	profile__code(p, 1, "we;ird\n.py", "a;b", 1);
	call(p, 1, 0, 1, 1, 0, 0);
	ret(p, 1, 3);
	profile__finish(p, 3 * US);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	CHECK(!strcmp(buf, "a,b (we,ird .py:1) 3\n"));
	profile__free(p);
}

TEST(collapsed_empty_profile_is_empty)
{
	struct profile *p = profile__new();
	const char *path;
	char buf[16];

	REQUIRE(p);
	profile__finish(p, 0);
	path = write_out(p, COLLAPSED, false, "empty.txt");
	REQUIRE(path);
	CHECK(slurp(path, buf, sizeof(buf)) == 0);
	path = write_out(p, SVG, false, "empty.svg");
	CHECK(path);
	profile__free(p);
}

/* One frame of the SVG as python reads it back. */
struct svg_frame {
	unsigned d;
	uint64_t x, w;
	double px, pw;
	char name[64];
	int cls_r;
};

#define MAX_FRAMES 64

static const char read_svg_py[] =
	"import sys, xml.etree.ElementTree as E\n"
	"S = '{http://www.w3.org/2000/svg}'\n"
	"r = E.parse(sys.argv[1]).getroot()\n"
	"g = [x for x in r.iter(S + 'g') if x.get('id') == 'frames'][0]\n"
	"print('total', r.get('data-total'))\n"
	"for f in g:\n"
	"    t = f.find(S + 'title').text.split('\\n')\n"
	"    q = f.find(S + 'rect')\n"
	"    print(f.get('data-d'), f.get('data-x'), f.get('data-w'), q.get('x'), q.get('width'),\n"
	"          int(f.get('class') == 'r'), t[0], sep='\\t')\n";

/* Parses path with python3's xml.etree; fills frames. Returns the count, or -1 if malformed. */
static int read_svg(const char *path, struct svg_frame *fr, uint64_t *total)
{
	char cmd[8192], line[512];
	FILE *f;
	int n = 0, status;

	snprintf(cmd, sizeof(cmd), "python3 -c \"$PYUPROF_READ_SVG\" '%s'", path);
	setenv("PYUPROF_READ_SVG", read_svg_py, 1);
	setenv("PYTHONIOENCODING", "utf-8", 1);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long t;

		if (sscanf(line, "total %llu", &t) == 1) {
			*total = t;
			continue;
		}
		if (n < MAX_FRAMES &&
		    sscanf(line, "%u\t%" SCNu64 "\t%" SCNu64 "\t%lf\t%lf\t%d\t%63[^\n]", &fr[n].d,
			   &fr[n].x, &fr[n].w, &fr[n].px, &fr[n].pw, &fr[n].cls_r, fr[n].name) == 7)
			n++;
	}
	status = pclose(f);
	return status == 0 ? n : -1;
}

static const struct svg_frame *find_frame(const struct svg_frame *fr, int n, const char *name,
					  unsigned d)
{
	for (int i = 0; i < n; i++)
		if (fr[i].d == d && !strcmp(fr[i].name, name))
			return &fr[i];
	return NULL;
}

static int xmllint_ok(const char *path)
{
	char cmd[4200];

	if (system("command -v xmllint >/dev/null 2>&1"))
		return 1; /* not installed: python's parse above still checks */
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
	return system(cmd) == 0;
}

TEST(svg_well_formed_with_every_function_and_proportional_widths)
{
	struct profile *p = two_threads();
	struct svg_frame fr[MAX_FRAMES];
	const struct svg_frame *f;
	const char *path;
	uint64_t total = 0;
	int n, i;

	REQUIRE(p);
	path = write_out(p, SVG, false, "merged.svg");
	REQUIRE(path);
	CHECK(xmllint_ok(path));
	n = read_svg(path, fr, &total);
	REQUIRE(n > 0);
	/* all (140) { main 100 { helper 20 { work 5 }, work 50 }, worker 40 { work 20 } } */
	CHECK(n == 7);
	CHECK(total == 140 * US);
	for (i = 0; i < n; i++) {
		CHECK(fabs(fr[i].pw - (double)fr[i].w * 1180 / total) < 0.006);
		CHECK(fabs(fr[i].px - 10 - (double)fr[i].x * 1180 / total) < 0.006);
	}
	CHECK((f = find_frame(fr, n, "all", 0)) && f->w == 140 * US && f->cls_r && f->pw == 1180);
	CHECK((f = find_frame(fr, n, "main", 1)) && f->x == 0 && f->w == 100 * US);
	CHECK((f = find_frame(fr, n, "worker", 1)) && f->x == 100 * US && f->w == 40 * US);
	CHECK((f = find_frame(fr, n, "helper", 2)) && f->x == 0 && f->w == 20 * US);
	CHECK((f = find_frame(fr, n, "work", 2)) && f->w == 50 * US && f->x == 20 * US);
	CHECK((f = find_frame(fr, n, "work", 3)) && f->w == 5 * US && f->x == 0);
	/* worker's callee: x = 100 us, after main's subtree */
	for (i = 0, f = NULL; i < n; i++)
		if (fr[i].d == 2 && !strcmp(fr[i].name, "work") && fr[i].x == 100 * US)
			f = &fr[i];
	CHECK(f && f->w == 20 * US);
	profile__free(p);
}

TEST(svg_per_thread_has_named_thread_roots)
{
	struct profile *p = two_threads();
	struct svg_frame fr[MAX_FRAMES];
	const struct svg_frame *f;
	const char *path;
	uint64_t total = 0;
	int n;

	REQUIRE(p);
	path = write_out(p, SVG, true, "threads.svg");
	REQUIRE(path);
	n = read_svg(path, fr, &total);
	REQUIRE(n == 9);
	CHECK((f = find_frame(fr, n, "all threads", 0)) && f->w == 140 * US);
	CHECK((f = find_frame(fr, n, "MainThread", 1)) && f->cls_r && f->x == 0 &&
	      f->w == 100 * US);
	CHECK((f = find_frame(fr, n, "thread-2", 1)) && f->cls_r && f->x == 100 * US &&
	      f->w == 40 * US);
	CHECK((f = find_frame(fr, n, "worker", 2)) && f->x == 100 * US);
	CHECK((f = find_frame(fr, n, "main", 2)) && !f->cls_r);
	profile__free(p);
}

TEST(svg_escapes_markup_in_names)
{
	struct profile *p = profile__new();
	struct svg_frame fr[MAX_FRAMES];
	char buf[1 << 16];
	const char *path;
	uint64_t total = 0;
	int n;

	REQUIRE(p);
	profile__code(p, 1, "<string>", "<module>", 1);
	profile__code(p, 2, "a&b.py", "<lambda>", 2);
	profile__code(p, 3, "q\"'.py", "it's \"x\" & <y>", 3);
	profile__code(p, 4, "bad.py", "bad\xff\xfe utf8 \xed\xa0\x80", 4);
	call(p, 1, 0, 1, 1, 0, 0);
	call(p, 1, 10, 2, 2, 1, 1);
	call(p, 1, 20, 3, 3, 2, 2);
	call(p, 1, 30, 4, 4, 3, 3);
	ret(p, 1, 800);
	ret(p, 1, 900);
	ret(p, 1, 950);
	ret(p, 1, 1000);
	profile__finish(p, 1000 * US);
	path = write_out(p, SVG, false, "escape.svg");
	REQUIRE(path);
	CHECK(xmllint_ok(path));
	n = read_svg(path, fr, &total);
	REQUIRE(n == 5);
	CHECK(find_frame(fr, n, "<module>", 1));
	CHECK(find_frame(fr, n, "<lambda>", 2));
	CHECK(find_frame(fr, n, "it's \"x\" & <y>", 3));
	/* U+FFFD for each byte that is not (XML-allowed) UTF-8: a surrogate is three */
	CHECK(find_frame(fr, n, "bad" FFFD FFFD " utf8 " FFFD FFFD FFFD, 4));
	REQUIRE(slurp(path, buf, sizeof(buf)));
	CHECK(strstr(buf, "&lt;module&gt;") && !strstr(buf, "<module>"));
	CHECK(strstr(buf, "&lt;lambda&gt; (a&amp;b.py:2)") && !strstr(buf, "<lambda>"));
	CHECK(strstr(buf, "it&apos;s &quot;x&quot; &amp; &lt;y&gt;"));
	CHECK(strstr(buf, "Test &lt;flame&gt; &amp; &quot;graph&quot;"));
	/* self-contained: nothing to fetch (the two xmlns names are not fetched) */
	CHECK(!strstr(buf, "href") && !strstr(buf, "url(") && !strstr(buf, "@import") &&
	      !strstr(buf, "src="));
	profile__free(p);
}

/*
 * C functions (include/cfuncs.h) have a look of their own: no file (their label, as pstats
 * prints them, says what they are), "C function" where a file would be, class c (cool
 * colours, italic labels), in the flame graph and the collapsed stacks alike.
 * main 0..100 { len 10..30; sorted 40..90 { work 50..70 } }
 */
TEST(c_functions_have_a_look_of_their_own)
{
	struct profile *p = new_profile();
	struct svg_frame fr[MAX_FRAMES];
	char buf[1 << 16];
	const char *path;
	uint64_t total = 0;
	int n;

	REQUIRE(p);
	REQUIRE(!profile__cfunc(p, 7000, "<built-in method builtins.len>"));
	REQUIRE(!profile__cfunc(p, 7100, "<built-in method builtins.sorted>"));
	call(p, 1, 0, 100, 1, 0, 0);
	CHECK(!profile__ccall(p, 1, 10 * US, 7000, 1));
	CHECK(!profile__creturn(p, 1, 30 * US, 0));
	CHECK(!profile__ccall(p, 1, 40 * US, 7100, 1));
	call(p, 1, 50, 200, 2, 1, 100); /* called from inside sorted: its caller frame is main's */
	ret(p, 1, 70);
	CHECK(!profile__creturn(p, 1, 90 * US, 0));
	ret(p, 1, 100);
	profile__finish(p, 100 * US);
	REQUIRE(collapsed(p, false, buf, sizeof(buf)));
	CHECK(!strcmp(buf, "main (m.py:1) 30\n"
			   "main (m.py:1);{built-in method builtins.len} 20\n"
			   "main (m.py:1);{built-in method builtins.sorted} 30\n"
			   "main (m.py:1);{built-in method builtins.sorted};work (m.py:5) 20\n"));
	path = write_out(p, SVG, false, "cfunc.svg");
	REQUIRE(path);
	CHECK(xmllint_ok(path));
	n = read_svg(path, fr, &total);
	REQUIRE(n == 5);
	CHECK(find_frame(fr, n, "{built-in method builtins.len}", 2));
	CHECK(find_frame(fr, n, "work", 3));
	REQUIRE(slurp(path, buf, sizeof(buf)));
	CHECK(strstr(buf, "<g class=\"c\" "));
	CHECK(strstr(buf, "<title>{built-in method builtins.sorted}\nC function\n"));
	CHECK(strstr(buf, ">{built-in method builtins.sorted}</text>") && !strstr(buf, "~:0"));
	profile__free(p);
}

TEST(svg_leaves_out_tiny_frames_and_says_so)
{
	struct profile *p = new_profile();
	struct svg_frame fr[MAX_FRAMES];
	char buf[1 << 16];
	const char *path;
	uint64_t total = 0;
	int n;

	REQUIRE(p);
	/* main 1 s { work 10 ns { helper 5 ns } }: 10 ns is 1.2e-5 px of 1180 */
	CHECK(!profile__call(p, 1, 0, 100, 1, (__u64[CHAIN_LEN]){ 0 }, (__u64[CHAIN_LEN]){ 0 }, 0,
			     false));
	CHECK(!profile__call(p, 1, 100, 200, 2, (__u64[CHAIN_LEN]){ 1 },
			     (__u64[CHAIN_LEN]){ 100 }, 0, false));
	CHECK(!profile__call(p, 1, 102, 300, 3, (__u64[CHAIN_LEN]){ 2 },
			     (__u64[CHAIN_LEN]){ 200 }, 0, false));
	CHECK(!profile__return(p, 1, 107));
	CHECK(!profile__return(p, 1, 110));
	CHECK(!profile__return(p, 1, 1000000000));
	profile__finish(p, 1000000000);
	path = write_out(p, SVG, false, "tiny.svg");
	REQUIRE(path);
	n = read_svg(path, fr, &total);
	CHECK(n == 2); /* all, main */
	CHECK(!find_frame(fr, n, "work", 2) && !find_frame(fr, n, "helper", 3));
	REQUIRE(slurp(path, buf, sizeof(buf)));
	CHECK(strstr(buf, "2 frames, 2 under 0.1 px left out"));
	profile__free(p);
}

TEST(outputs_are_deterministic)
{
	static char a[1 << 16], b[1 << 16];
	struct profile *p1 = two_threads(), *p2 = two_threads();
	const char *path;
	size_t na, nb;

	REQUIRE(p1 && p2);
	for (int per_thread = 0; per_thread < 2; per_thread++) {
		for (enum fmt fmt = COLLAPSED; fmt <= SVG; fmt++) {
			/* same profile twice, then a second profile from the same events */
			REQUIRE((path = write_out(p1, fmt, per_thread, "d1")));
			na = slurp(path, a, sizeof(a));
			REQUIRE((path = write_out(p1, fmt, per_thread, "d2")));
			nb = slurp(path, b, sizeof(b));
			CHECK(na > 0 && na == nb && !memcmp(a, b, na));
			REQUIRE((path = write_out(p2, fmt, per_thread, "d3")));
			nb = slurp(path, b, sizeof(b));
			CHECK(na == nb && !memcmp(a, b, na));
		}
	}
	profile__free(p1);
	profile__free(p2);
}

/* A wider profile for the browser test: long names get truncated, deep stacks, a search. */
TEST(svg_for_the_browser)
{
	struct profile *p = two_threads();
	const char *path;
	uint64_t total = 0;
	struct svg_frame fr[MAX_FRAMES];

	REQUIRE(p);
	REQUIRE((path = write_out(p, SVG, false, "browser-merged.svg")));
	CHECK(read_svg(path, fr, &total) > 0);
	REQUIRE((path = write_out(p, SVG, true, "browser-threads.svg")));
	CHECK(read_svg(path, fr, &total) > 0);
	profile__free(p);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(collapsed_one_thread),
		TEST_CASE(collapsed_recursion),
		TEST_CASE(collapsed_threads_merged_and_apart),
		TEST_CASE(collapsed_same_path_in_two_threads_adds_up),
		TEST_CASE(collapsed_rounding_keeps_the_total),
		TEST_CASE(collapsed_frame_text_cannot_break_lines),
		TEST_CASE(collapsed_empty_profile_is_empty),
		TEST_CASE(svg_well_formed_with_every_function_and_proportional_widths),
		TEST_CASE(svg_per_thread_has_named_thread_roots),
		TEST_CASE(svg_escapes_markup_in_names),
		TEST_CASE(svg_leaves_out_tiny_frames_and_says_so),
		TEST_CASE(outputs_are_deterministic),
		TEST_CASE(c_functions_have_a_look_of_their_own),
		TEST_CASE(svg_for_the_browser),
	};
	char cmd[64];
	int rc;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = test_run(cases, TEST_COUNT(cases));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return rc;
}
