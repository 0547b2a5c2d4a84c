/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Streaming JSON writer: keeps a stack of the open containers so that it alone decides where
 * commas, colons and line breaks go, refuses calls that would make the document malformed
 * (a value without a member name, a mismatched end), and escapes strings byte by byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/json_writer.h"

#define JW_BUF_SIZE (64 * 1024)
#define JW_MAX_DEPTH 32

struct jw_level {
	char close;	/* '}' or ']' */
	bool empty;	/* nothing written in it yet: no comma before the next member */
};

struct json_writer {
	struct outfile *out;
	int err;
	unsigned int depth, line_depth;
	bool want_value; /* a member name was written: its value comes next */
	bool in_string;	 /* between string_begin and string_end */
	bool done;	 /* the one top-level value is complete */
	struct jw_level stack[JW_MAX_DEPTH];
	size_t len;
	char buf[JW_BUF_SIZE];
};

static void fail(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void flush(struct json_writer *w)
{
	int err;

	if (w->len && !w->err) {
		err = outfile__write(w->out, w->buf, w->len);
		if (err)
			fail(w, err);
	}
	w->len = 0;
}

static void put(struct json_writer *w, const void *p, size_t n)
{
	int err;

	if (w->len + n > sizeof(w->buf)) {
		flush(w);
		if (n > sizeof(w->buf)) {
			/* longer than the buffer: no point in copying it through */
			err = w->err ? 0 : outfile__write(w->out, p, n);
			if (err)
				fail(w, err);
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_char(struct json_writer *w, char c)
{
	if (w->len == sizeof(w->buf))
		flush(w);
	w->buf[w->len++] = c;
}

/*
 * Length of the well-formed UTF-8 sequence at s (Unicode 15, table 3-7: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or minus the length of its longest prefix that could
 * still have become one. That prefix is replaced by one U+FFFD, which is what Python's
 * decode("utf-8", "replace") does, so a test can compare with it.
 */
static int utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int need, i;

	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800..DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return -1; /* a continuation byte, C0/C1 (always overlong) or F5..FF */
	}
	for (i = 1; i <= need; i++) {
		if ((size_t)i >= n || s[i] < lo || s[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

static void put_escaped(struct json_writer *w, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run;
	char esc[6];
	int len;

	while (i < n) {
		/* copy plain ASCII in runs: names are mostly that */
		run = i;
		while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			put(w, s + i, run - i);
			i = run;
			continue;
		}
		if (s[i] == '"' || s[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)s[i++];
			put(w, esc, 2);
		} else if (s[i] < 0x20) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[s[i] >> 4];
			esc[5] = hex[s[i] & 0xf];
			put(w, esc, 6);
			i++;
		} else {
			len = utf8_seq(s + i, n - i);
			if (len > 0) {
				put(w, s + i, (size_t)len);
				i += (size_t)len;
			} else {
				put(w, "\xef\xbf\xbd", 3); /* U+FFFD */
				i += (size_t)-len;
			}
		}
	}
}

/* Breaks the line before a member of a container nested at most line_depth deep. */
static void member_sep(struct json_writer *w)
{
	struct jw_level *l = &w->stack[w->depth - 1];

	if (!l->empty)
		put_char(w, ',');
	l->empty = false;
	if (w->depth <= w->line_depth)
		put_char(w, '\n');
}

/* Checks that a value may come here and writes what goes before it. Returns false if not. */
static bool value_begin(struct json_writer *w)
{
	if (w->err)
		return false;
	if (w->in_string || (w->depth == 0 && w->done)) {
		fail(w, -EINVAL);
		return false;
	}
	if (w->depth == 0)
		return true;
	if (w->stack[w->depth - 1].close == '}') {
		/* inside an object a value needs its name first; the comma came with it */
		if (!w->want_value) {
			fail(w, -EINVAL);
			return false;
		}
		w->want_value = false;
		return true;
	}
	member_sep(w);
	return true;
}

static void value_end(struct json_writer *w)
{
	if (w->depth == 0)
		w->done = true;
}

struct json_writer *json_writer__new(struct outfile *out, unsigned int line_depth)
{
	struct json_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->out = out;
	w->line_depth = line_depth;
	return w;
}

void json_writer__free(struct json_writer *w)
{
	free(w);
}

int json_writer__close(struct json_writer *w)
{
	int err;

	if (!w->err && (w->depth || !w->done || w->in_string))
		fail(w, -EINVAL);
	if (!w->err) {
		put_char(w, '\n');
		flush(w);
	}
	err = w->err;
	free(w);
	return err;
}

int json_writer__err(const struct json_writer *w)
{
	return w->err;
}

static void container_begin(struct json_writer *w, char open, char close)
{
	if (!value_begin(w))
		return;
	if (w->depth == JW_MAX_DEPTH) {
		fail(w, -E2BIG);
		return;
	}
	put_char(w, open);
	w->stack[w->depth].close = close;
	w->stack[w->depth].empty = true;
	w->depth++;
}

static void container_end(struct json_writer *w, char close)
{
	struct jw_level *l;

	if (w->err)
		return;
	if (!w->depth || w->stack[w->depth - 1].close != close || w->want_value || w->in_string) {
		fail(w, -EINVAL);
		return;
	}
	l = &w->stack[w->depth - 1];
	if (!l->empty && w->depth <= w->line_depth)
		put_char(w, '\n');
	put_char(w, close);
	w->depth--;
	value_end(w);
}

void json_writer__object_begin(struct json_writer *w)
{
	container_begin(w, '{', '}');
}

void json_writer__object_end(struct json_writer *w)
{
	container_end(w, '}');
}

void json_writer__array_begin(struct json_writer *w)
{
	container_begin(w, '[', ']');
}

void json_writer__array_end(struct json_writer *w)
{
	container_end(w, ']');
}

void json_writer__name(struct json_writer *w, const char *name)
{
	if (w->err)
		return;
	if (!w->depth || w->stack[w->depth - 1].close != '}' || w->want_value || w->in_string) {
		fail(w, -EINVAL);
		return;
	}
	member_sep(w);
	put_char(w, '"');
	put_escaped(w, name, strlen(name));
	put(w, "\":", 2);
	w->want_value = true;
}

void json_writer__string_begin(struct json_writer *w)
{
	if (!value_begin(w))
		return;
	put_char(w, '"');
	w->in_string = true;
}

void json_writer__string_part(struct json_writer *w, const char *s, size_t len)
{
	if (w->err)
		return;
	if (!w->in_string) {
		fail(w, -EINVAL);
		return;
	}
	put_escaped(w, s, len);
}

void json_writer__string_end(struct json_writer *w)
{
	if (w->err)
		return;
	if (!w->in_string) {
		fail(w, -EINVAL);
		return;
	}
	put_char(w, '"');
	w->in_string = false;
	value_end(w);
}

void json_writer__string(struct json_writer *w, const char *s)
{
	if (!s) {
		json_writer__null(w);
		return;
	}
	json_writer__string_begin(w);
	json_writer__string_part(w, s, strlen(s));
	json_writer__string_end(w);
}

/* Digits of v, written backwards from end; returns where they start. */
static char *fmt_u64(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void json_writer__u64(struct json_writer *w, uint64_t v)
{
	char tmp[24], *s;

	if (!value_begin(w))
		return;
	s = fmt_u64(tmp + sizeof(tmp), v);
	put(w, s, (size_t)(tmp + sizeof(tmp) - s));
	value_end(w);
}

void json_writer__s64(struct json_writer *w, int64_t v)
{
	/* unsigned negation: INT64_MIN has no positive int64_t */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char tmp[24], *s;

	if (!value_begin(w))
		return;
	s = fmt_u64(tmp + sizeof(tmp), m);
	if (v < 0)
		*--s = '-';
	put(w, s, (size_t)(tmp + sizeof(tmp) - s));
	value_end(w);
}

void json_writer__milli(struct json_writer *w, int64_t v)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char tmp[32], *end = tmp + sizeof(tmp), *s;

	if (!value_begin(w))
		return;
	end[-1] = (char)('0' + m % 10);
	end[-2] = (char)('0' + m / 10 % 10);
	end[-3] = (char)('0' + m / 100 % 10);
	end[-4] = '.';
	s = fmt_u64(end - 4, m / 1000);
	if (v < 0)
		*--s = '-';
	put(w, s, (size_t)(end - s));
	value_end(w);
}

void json_writer__bool(struct json_writer *w, bool v)
{
	if (!value_begin(w))
		return;
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
	value_end(w);
}

void json_writer__null(struct json_writer *w)
{
	if (!value_begin(w))
		return;
	put(w, "null", 4);
	value_end(w);
}

void json_writer__string_field(struct json_writer *w, const char *name, const char *s)
{
	json_writer__name(w, name);
	json_writer__string(w, s);
}

void json_writer__u64_field(struct json_writer *w, const char *name, uint64_t v)
{
	json_writer__name(w, name);
	json_writer__u64(w, v);
}

void json_writer__milli_field(struct json_writer *w, const char *name, int64_t v)
{
	json_writer__name(w, name);
	json_writer__milli(w, v);
}
