/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A writer for the protocol buffers wire format (varints and length-delimited fields), enough
 * for pprof's profile.proto: appends to a growable buffer; a nested message is encoded into a
 * buffer of its own and appended as a bytes field.
 */
#ifndef __PYUPROF_PROTOBUF_H
#define __PYUPROF_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

struct pb_buf {
	unsigned char *data;
	size_t len, cap;
	int err; /* first error (-ENOMEM), sticky: later calls do nothing */
};

void pb__init(struct pb_buf *b);
void pb__free(struct pb_buf *b);

/* Field `field` as a varint (int64, uint64 and bool fields); 0 is written too. */
void pb__uint(struct pb_buf *b, uint32_t field, uint64_t v);
/* Field `field` as length-delimited bytes: strings, packed arrays, nested messages. */
void pb__bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* A bare varint (the elements of a packed repeated field). */
void pb__varint(struct pb_buf *b, uint64_t v);

#endif /* __PYUPROF_PROTOBUF_H */
