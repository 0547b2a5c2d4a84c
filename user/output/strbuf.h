/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A growable string for the text writers, with a sticky error, optionally flushed to an
 * outfile; and the UTF-8 check the SVG writers share. */
#ifndef __PYUPROF_STRBUF_H
#define __PYUPROF_STRBUF_H

#include <stddef.h>
#include "base/outfile.h"

struct strbuf {
	char *s;	     /* NUL-terminated once anything was reserved */
	size_t len, cap;
	int err;	     /* first error (-ENOMEM, -EINVAL, a write's), sticky */
	struct outfile *out; /* where strbuf_flush writes; NULL if never flushed */
};

void strbuf__reserve(struct strbuf *b, size_t more);
void strbuf__put(struct strbuf *b, const char *s, size_t n);
void strbuf__puts(struct strbuf *b, const char *s);
void strbuf__printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf__clear(struct strbuf *b);
/* Writes the content to b->out and empties it once it holds min bytes or more (min 0: all).
 * Returns 0 or the sticky error. */
int strbuf__flush(struct strbuf *b, size_t min);
void strbuf__free(struct strbuf *b);

/*
 * Length of the UTF-8 sequence at s (n bytes left) if it is well formed (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF) and an XML character (not U+FFFE,
 * U+FFFF), else 0. Python strings can hold lone surrogates, which XML forbids.
 */
size_t xml_utf8_len(const unsigned char *s, size_t n);

#endif /* __PYUPROF_STRBUF_H */
