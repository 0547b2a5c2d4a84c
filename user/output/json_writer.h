/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small streaming JSON writer in the spirit of bpftool's: callers say what comes next (an
 * object, a member name, a value) and the writer puts in the commas, colons and brackets and
 * escapes every string, so what it writes always parses. Strings are UTF-8 and pass through;
 * control characters become \u00XX, and bytes that are not valid UTF-8 become U+FFFD. Output
 * is buffered (64 KiB) and flushed to an outfile. Errors are sticky: after the first one
 * every call does nothing, and json_writer__close() returns it.
 */
#ifndef __PYUPROF_JSON_WRITER_H
#define __PYUPROF_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/outfile.h"

struct json_writer;

/*
 * A writer into out (which the caller opened and later commits or aborts). Members of the
 * containers nested at most line_depth deep start on a line of their own (0: all on one line;
 * 2: one array element per line inside a top-level object). Returns NULL with errno set.
 */
struct json_writer *json_writer__new(struct outfile *out, unsigned int line_depth);
/* Ends the output with a newline and flushes it; the document must be complete. Frees w
 * either way. Returns 0 or the first error (-errno; -EINVAL for an incomplete document). */
int json_writer__close(struct json_writer *w);
/* Frees w without flushing (the output is being thrown away). NULL-safe. */
void json_writer__free(struct json_writer *w);
/* The first error so far, or 0. */
int json_writer__err(const struct json_writer *w);

void json_writer__object_begin(struct json_writer *w);
void json_writer__object_end(struct json_writer *w);
void json_writer__array_begin(struct json_writer *w);
void json_writer__array_end(struct json_writer *w);
/* The name of the next member of the open object. */
void json_writer__name(struct json_writer *w, const char *name);

/* A string; NULL writes null. */
void json_writer__string(struct json_writer *w, const char *s);
/* A string written in pieces: begin, any number of parts (each escaped on its own), end. */
void json_writer__string_begin(struct json_writer *w);
void json_writer__string_part(struct json_writer *w, const char *s, size_t len);
void json_writer__string_end(struct json_writer *w);
void json_writer__u64(struct json_writer *w, uint64_t v);
void json_writer__s64(struct json_writer *w, int64_t v);
/* v / 1000 with exactly three decimals ("-1.005"): ns as µs, exactly. */
void json_writer__milli(struct json_writer *w, int64_t v);
void json_writer__bool(struct json_writer *w, bool v);
void json_writer__null(struct json_writer *w);

/* name and value in one call */
void json_writer__string_field(struct json_writer *w, const char *name, const char *s);
void json_writer__u64_field(struct json_writer *w, const char *name, uint64_t v);
void json_writer__milli_field(struct json_writer *w, const char *name, int64_t v);

#endif /* __PYUPROF_JSON_WRITER_H */
