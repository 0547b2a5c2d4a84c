/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A writer for the subset of Python's marshal format that pstats files use (dict, tuple, str,
 * int, float). Appends to a growable in-memory buffer; the caller writes the buffer out.
 */
#ifndef __PYUPROF_MARSHAL_H
#define __PYUPROF_MARSHAL_H

#include <stddef.h>
#include <stdint.h>

struct marshal_buf {
	unsigned char *data;
	size_t len, cap;
	int err; /* first error (-ENOMEM), sticky: later calls do nothing */
};

void marshal__init(struct marshal_buf *b);
void marshal__free(struct marshal_buf *b);

void marshal__dict_begin(struct marshal_buf *b);
void marshal__dict_end(struct marshal_buf *b);
void marshal__tuple_begin(struct marshal_buf *b, uint32_t n); /* then exactly n items */
void marshal__str(struct marshal_buf *b, const char *utf8, size_t len);
void marshal__int(struct marshal_buf *b, int64_t v); /* 'i' when it fits in int32, else 'l' */
void marshal__float(struct marshal_buf *b, double v);

#endif /* __PYUPROF_MARSHAL_H */
