/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python marshal encoder for the values a pstats file holds. Output uses only the type codes that
 * every marshal reader from 3.4 on accepts and that marshal.dumps(v, 2) itself emits: no FLAG_REF
 * bits, no short forms, so the bytes equal marshal.dumps(value, 2) for the same value. Errors are
 * sticky in b->err, so callers can emit a whole structure and check once at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/marshal.h"

#define MARSHAL_MIN_CAP 4096

/* Marshal stores every length and count as a signed 32-bit value. */
#define MARSHAL_MAX_COUNT 0x7fffffffu

/* Python's marshal writes longs as base-2**15 digits (PyLong_MARSHAL_SHIFT), whatever the
 * interpreter's internal digit size is. */
#define PYLONG_MARSHAL_SHIFT 15
#define PYLONG_MARSHAL_MASK ((1u << PYLONG_MARSHAL_SHIFT) - 1)

void marshal__init(struct marshal_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
}

void marshal__free(struct marshal_buf *b)
{
	free(b->data);
	marshal__init(b);
}

/* Returns a pointer to n writable bytes at the end of the buffer (len already advanced), or
 * NULL with b->err set. */
static unsigned char *reserve(struct marshal_buf *b, size_t n)
{
	unsigned char *p;
	size_t need, cap;

	if (b->err)
		return NULL;
	if (n > SIZE_MAX - b->len) {
		b->err = -ENOMEM;
		return NULL;
	}
	need = b->len + n;
	if (need > b->cap) {
		/* Doubling keeps appends amortised O(1); a 3M-entry profile is tens of MB. */
		cap = b->cap ? b->cap : MARSHAL_MIN_CAP;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	p = b->data + b->len;
	b->len = need;
	return p;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void put_byte(struct marshal_buf *b, unsigned char c)
{
	unsigned char *p = reserve(b, 1);

	if (p)
		*p = c;
}

/* Type code plus a 32-bit count; counts beyond INT32_MAX would read back as negative. */
static void put_code_count(struct marshal_buf *b, unsigned char code, size_t n)
{
	unsigned char *p;

	if (!b->err && n > MARSHAL_MAX_COUNT) {
		b->err = -EOVERFLOW;
		return;
	}
	p = reserve(b, 5);
	if (!p)
		return;
	p[0] = code;
	put_le32(p + 1, n);
}

void marshal__dict_begin(struct marshal_buf *b)
{
	put_byte(b, '{');
}

void marshal__dict_end(struct marshal_buf *b)
{
	/* TYPE_NULL terminates a dict. */
	put_byte(b, '0');
}

void marshal__tuple_begin(struct marshal_buf *b, uint32_t n)
{
	put_code_count(b, '(', n);
}

void marshal__str(struct marshal_buf *b, const char *utf8, size_t len)
{
	unsigned char *p;

	/* The reader decodes with "surrogatepass"; bytes that are not UTF-8 make it raise, so
	 * callers must hand over text that a Python str could have produced. */
	put_code_count(b, 'u', len);
	p = reserve(b, len);
	if (p && len)
		memcpy(p, utf8, len);
}

void marshal__int(struct marshal_buf *b, int64_t v)
{
	unsigned char digits[2 * 5]; /* 64 bits need at most 5 digits of 15 bits */
	unsigned char *p;
	uint64_t mag;
	unsigned int d;
	int n = 0;

	if (v >= INT32_MIN && v <= INT32_MAX) {
		p = reserve(b, 5);
		if (p) {
			p[0] = 'i';
			put_le32(p + 1, (uint32_t)v);
		}
		return;
	}
	/* Negate in unsigned arithmetic: -INT64_MIN does not fit in int64_t. */
	mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	while (mag) {
		d = mag & PYLONG_MARSHAL_MASK;
		digits[2 * n] = d & 0xff;
		digits[2 * n + 1] = d >> 8;
		mag >>= PYLONG_MARSHAL_SHIFT;
		n++;
	}
	p = reserve(b, 5 + 2 * n);
	if (!p)
		return;
	p[0] = 'l';
	/* The sign lives in the digit count. */
	put_le32(p + 1, (uint32_t)(v < 0 ? -n : n));
	memcpy(p + 5, digits, 2 * n);
}

void marshal__float(struct marshal_buf *b, double v)
{
	unsigned char *p = reserve(b, 9);
	uint64_t bits;
	int i;

	if (!p)
		return;
	/* TYPE_BINARY_FLOAT: the IEEE-754 bits, little-endian whatever the host order. */
	memcpy(&bits, &v, sizeof(bits));
	p[0] = 'g';
	for (i = 0; i < 8; i++)
		p[1 + i] = bits >> (8 * i);
}
