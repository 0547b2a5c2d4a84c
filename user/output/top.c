// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyuprof top's screen. Plain ANSI escapes (home, clear to end of line, alternate screen,
 * reverse video), which every terminal emulator and tmux know: the view is one table, and
 * curses would add a dependency and its own idea of the terminal's state to restore. The
 * numbers are the profile builder's own (cProfile's tottime and call counts), taken as calls
 * end: a call still running shows its time when it returns.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "output/strbuf.h"
#include "output/top.h"

enum top_order { BY_OWN_NOW, BY_CALLS_NOW, BY_OWN_TOTAL, BY_CALLS_TOTAL };

struct top_row {
	uint32_t func;
	uint64_t own_now, calls_now, own_total, calls_total;
};

struct top {
	char *title;
	enum top_order order;
	uint64_t interval_ns, start_ns, last_ns;
	uint64_t *prev_own, *prev_calls; /* per function, at the last interval's end */
	uint32_t nprev, prev_cap;
	struct top_row *rows;
	uint32_t nrows, rows_cap;
	const struct profile *p; /* of the last interval, for names */
	uint64_t calls, calls_per_s, lost, span_ns;
	uint32_t nfuncs, nthreads;
	bool ticked, dirty;
};

/* The terminal as it was, for top__free and for exit() should it come first. */
static struct termios saved_tio;
static bool terminal_taken;

static void put_back_terminal(void)
{
	static const char leave[] = "\033[0m\033[?25h\033[?1049l";

	if (!terminal_taken)
		return;
	terminal_taken = false;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	(void)!write(STDOUT_FILENO, leave, sizeof(leave) - 1);
}

struct top *top__new(const char *title, uint64_t interval_ns, uint64_t now_ns)
{
	static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";
	static bool registered;
	struct termios raw;
	struct top *t;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		errno = ENOTTY;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->title = strdup(title))) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->interval_ns = interval_ns;
	/* the first drawing at the first turn, the next ones an interval apart */
	t->start_ns = now_ns;
	t->last_ns = now_ns - interval_ns;
	if (tcgetattr(STDIN_FILENO, &saved_tio)) {
		top__free(t);
		return NULL;
	}
	/* keys as they are typed, unechoed, reads never wait; Ctrl-C still signals */
	raw = saved_tio;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (!registered)
		registered = !atexit(put_back_terminal);
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw)) {
		top__free(t);
		return NULL;
	}
	terminal_taken = true;
	(void)!write(STDOUT_FILENO, enter, sizeof(enter) - 1);
	t->dirty = true;
	return t;
}

void top__free(struct top *t)
{
	put_back_terminal();
	if (!t)
		return;
	free(t->title);
	free(t->prev_own);
	free(t->prev_calls);
	free(t->rows);
	free(t);
}

int top__fd(const struct top *t)
{
	(void)t;
	return STDIN_FILENO;
}

bool top__keys(struct top *t)
{
	char keys[32];
	ssize_t n;

	while ((n = read(STDIN_FILENO, keys, sizeof(keys))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			switch (keys[i]) {
			case 'q':
			case 'Q':
			case 4: /* Ctrl-D */
				return true;
			case 'o':
				t->order = BY_OWN_NOW;
				break;
			case 'c':
				t->order = BY_CALLS_NOW;
				break;
			case 't':
				t->order = BY_OWN_TOTAL;
				break;
			case 'n':
				t->order = BY_CALLS_TOTAL;
				break;
			default:
				continue;
			}
			t->dirty = true;
		}
	}
	return false;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b); /* larger first */
}

static int by_order(const void *a, const void *b, void *arg)
{
	const struct top_row *x = a, *y = b;
	enum top_order order = *(const enum top_order *)arg;
	int c;

	switch (order) {
	case BY_CALLS_NOW:
		c = cmp_u64(x->calls_now, y->calls_now);
		break;
	case BY_OWN_TOTAL:
		c = cmp_u64(x->own_total, y->own_total);
		break;
	case BY_CALLS_TOTAL:
		c = cmp_u64(x->calls_total, y->calls_total);
		break;
	default:
		c = cmp_u64(x->own_now, y->own_now);
		break;
	}
	if (!c)
		c = cmp_u64(x->own_total, y->own_total);
	return c ? c : (x->func > y->func) - (x->func < y->func);
}

/* The functions' numbers over the interval just ended, and in total. Returns 0 or -ENOMEM. */
static int take_interval(struct top *t, const struct profile *p, const struct pyuprof_stats *l,
			 uint64_t now_ns)
{
	uint32_t i;

	if (p->nfuncs > t->prev_cap) {
		uint32_t cap = p->nfuncs * 2;
		uint64_t *own = realloc(t->prev_own, cap * sizeof(*own));

		if (!own)
			return -ENOMEM;
		t->prev_own = own;
		own = realloc(t->prev_calls, cap * sizeof(*own));
		if (!own)
			return -ENOMEM;
		t->prev_calls = own;
		t->prev_cap = cap;
	}
	if (p->nfuncs > t->rows_cap) {
		struct top_row *rows = realloc(t->rows, t->prev_cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		t->rows_cap = t->prev_cap;
	}
	for (i = t->nprev; i < p->nfuncs; i++)
		t->prev_own[i] = t->prev_calls[i] = 0;
	t->nprev = p->nfuncs;
	t->nrows = 0;
	for (i = 0; i < p->nfuncs; i++) {
		const struct call_stats *st = &p->funcs[i].st;

		if (st->calls || st->inline_ns)
			t->rows[t->nrows++] = (struct top_row){
				.func = i,
				.own_now = st->inline_ns - t->prev_own[i],
				.calls_now = st->calls - t->prev_calls[i],
				.own_total = st->inline_ns,
				.calls_total = st->calls,
			};
		t->prev_own[i] = st->inline_ns;
		t->prev_calls[i] = st->calls;
	}
	t->span_ns = now_ns - t->last_ns;
	t->calls_per_s = t->span_ns ? (uint64_t)((p->n.calls - t->calls) * 1e9 / t->span_ns) : 0;
	t->calls = p->n.calls;
	t->lost = l->lost_calls + l->lost_returns + l->lost_codes + l->lost_requests +
		  l->lost_ccalls + l->lost_creturns;
	t->nfuncs = p->nfuncs;
	t->nthreads = p->nthreads;
	t->p = p;
	t->last_ns = now_ns;
	t->ticked = true;
	return 0;
}

/* 1234567 -> "1,234,567" */
static const char *count(char *buf, size_t len, uint64_t n)
{
	char digits[24];
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < nd && o + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

static const char *duration(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 10000000000ull)
		snprintf(buf, len, "%.1f s", ns / 1e9);
	else if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else if (ns)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "0");
	return buf;
}

/* One screen line of at most cols characters (UTF-8 counted by characters), cleared after. */
static void line(struct strbuf *b, int cols, bool reverse, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void line(struct strbuf *b, int cols, bool reverse, const char *fmt, ...)
{
	char text[1024];
	int chars = 0;
	size_t i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (i = 0; text[i]; i++) {
		if (((unsigned char)text[i] & 0xc0) != 0x80 && chars++ == cols)
			break;
		if ((unsigned char)text[i] < 0x20)
			text[i] = ' ';
	}
	text[i] = 0;
	if (reverse)
		strbuf__printf(b, "\033[7m%s%*s\033[0m\033[K\r\n", text,
			      chars < cols ? cols - chars : 0, "");
	else
		strbuf__printf(b, "%s\033[K\r\n", text);
}

static const char *const order_names[] = {
	[BY_OWN_NOW] = "own time in the last interval",
	[BY_CALLS_NOW] = "calls in the last interval",
	[BY_OWN_TOTAL] = "own time in total",
	[BY_CALLS_TOTAL] = "calls in total",
};

static void render(struct top *t, uint64_t now_ns)
{
	struct winsize ws = { 0 };
	struct strbuf b = { 0 };
	char c1[32], c2[32], c3[32], c4[32];
	int rows = 24, cols = 80, shown, i;
	double span_s = t->span_ns / 1e9;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	qsort_r(t->rows, t->nrows, sizeof(*t->rows), by_order, &t->order);
	strbuf__puts(&b, "\033[H");
	line(&b, cols, true, " pyuprof top - %s", t->title);
	line(&b, cols, false, " recording %.0f s | %s calls, %s/s | %u functions | %u threads | "
			      "lost events %s",
	     (now_ns - t->start_ns) / 1e9, count(c1, sizeof(c1), t->calls),
	     count(c2, sizeof(c2), t->calls_per_s), t->nfuncs, t->nthreads,
	     count(c3, sizeof(c3), t->lost));
	line(&b, cols, false, " order: %s (last %.1f s) | keys: o c t n: order, q: quit",
	     order_names[t->order], span_s);
	line(&b, cols, false, "%s", "");
	line(&b, cols, true, "%11s %6s %12s %12s %14s  %s", "OWN(last)", "OWN%", "CALLS(last)",
	     "OWN(total)", "CALLS(total)", "FUNCTION (file:line)");
	shown = 0;
	for (i = 0; i < (int)t->nrows && 5 + shown < rows - 1; i++, shown++) {
		const struct top_row *r = &t->rows[i];
		const struct func *f = &t->p->funcs[r->func];
		const char *base = strrchr(f->filename, '/');

		/* own share of the interval's wall time (over 100% with threads running at once) */
		if (f->cfunc) /* (no file: its label says what it is) */
			line(&b, cols, false, "%11s %5.1f%% %12s %12s %14s  %s",
			     duration(c1, sizeof(c1), r->own_now),
			     t->span_ns ? 100.0 * r->own_now / t->span_ns : 0.0,
			     count(c2, sizeof(c2), r->calls_now),
			     duration(c4, sizeof(c4), r->own_total),
			     count(c3, sizeof(c3), r->calls_total), func__label(f));
		else
			line(&b, cols, false, "%11s %5.1f%% %12s %12s %14s  %s (%s:%d)",
			     duration(c1, sizeof(c1), r->own_now),
			     t->span_ns ? 100.0 * r->own_now / t->span_ns : 0.0,
			     count(c2, sizeof(c2), r->calls_now),
			     duration(c4, sizeof(c4), r->own_total),
			     count(c3, sizeof(c3), r->calls_total), func__label(f),
			     base ? base + 1 : f->filename, f->firstlineno);
	}
	if (!t->nrows)
		line(&b, cols, false, " no Python call has returned yet");
	strbuf__puts(&b, "\033[J");
	if (!b.err) {
		size_t off = 0;

		while (off < b.len) {
			ssize_t n = write(STDOUT_FILENO, b.s + off, b.len - off);

			if (n <= 0)
				break;
			off += (size_t)n;
		}
	}
	strbuf__free(&b);
}

void top__draw(struct top *t, const struct profile *p, const struct pyuprof_stats *lost,
	       uint64_t now_ns)
{
	if (now_ns - t->last_ns >= t->interval_ns) {
		if (take_interval(t, p, lost, now_ns))
			return;
		t->dirty = true;
	}
	if (!t->dirty || !t->ticked)
		return;
	t->dirty = false;
	render(t, now_ns);
}
