/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Converting the raw characters of a CPython str (as copied by BPF) to UTF-8. */
#ifndef __PYUPROF_PYSTR_H
#define __PYUPROF_PYSTR_H

#include <stddef.h>
#include <stdint.h>

/*
 * raw holds up to raw_bytes bytes of a str of len characters of the given STR_* kind.
 * Writes NUL-terminated UTF-8 to out (lone surrogates encoded as marshal's "surrogatepass"
 * does) and returns its length; a str longer than what was copied ends in "...".
 */
size_t pystr__to_utf8(const void *raw, size_t raw_bytes, uint32_t len, uint8_t kind, char *out,
		     size_t out_len);

#endif /* __PYUPROF_PYSTR_H */
