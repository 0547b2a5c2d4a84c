// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Protocol buffers encoding (protobuf.dev/programming-guides/encoding): a varint is 7 bits a
 * byte, low first, the top bit set on all but the last; a field starts with the varint
 * (number << 3 | wire type), 0 for a varint and 2 for length-delimited data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/protobuf.h"

#define WIRE_VARINT 0
#define WIRE_LEN 2

void pb__init(struct pb_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pb__free(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static void put(struct pb_buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pb__varint(struct pb_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (unsigned char)v;
	put(b, tmp, n);
}

void pb__uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	pb__varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb__varint(b, v);
}

void pb__bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	pb__varint(b, (uint64_t)field << 3 | WIRE_LEN);
	pb__varint(b, len);
	if (len)
		put(b, data, len);
}
