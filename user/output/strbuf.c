// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Growable strings for the text writers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/strbuf.h"

void strbuf__reserve(struct strbuf *b, size_t more)
{
	size_t cap;
	char *s;

	if (b->err || b->len + more + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s) {
		b->err = -ENOMEM;
		return;
	}
	b->s = s;
	b->cap = cap;
}

void strbuf__put(struct strbuf *b, const char *s, size_t n)
{
	strbuf__reserve(b, n);
	if (b->err)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void strbuf__puts(struct strbuf *b, const char *s)
{
	strbuf__put(b, s, strlen(s));
}

void strbuf__printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = b->err ? b->err : -EINVAL;
		return;
	}
	strbuf__reserve(b, (size_t)n);
	if (b->err)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void strbuf__clear(struct strbuf *b)
{
	b->len = 0;
	strbuf__reserve(b, 0);
	if (!b->err)
		b->s[0] = '\0';
}

int strbuf__flush(struct strbuf *b, size_t min)
{
	int err;

	if (b->err)
		return b->err;
	if (!b->len || b->len < min)
		return 0;
	err = outfile__write(b->out, b->s, b->len);
	b->len = 0;
	if (err)
		b->err = err;
	return err;
}

void strbuf__free(struct strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

size_t xml_utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0; /* overlong, surrogate, beyond U+10FFFF */
	if (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0; /* U+FFFE, U+FFFF: not XML characters */
	return len;
}
