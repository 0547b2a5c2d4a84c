/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): a reader over the fuzz input that
 * yields zeros once it runs out, and an in-memory file for APIs that take a path.
 */
#ifndef __PYUPROF_FUZZ_H
#define __PYUPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fuzz_bytes(struct fuzz_in *in, size_t k)
{
	uint64_t v = 0;

	for (size_t i = 0; i < k; i++, in->p++, in->n--) {
		if (!in->n)
			return v;
		v |= (uint64_t)*in->p << (8 * i);
	}
	return v;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in) { return (uint8_t)fuzz_bytes(in, 1); }
static inline uint16_t fuzz_u16(struct fuzz_in *in) { return (uint16_t)fuzz_bytes(in, 2); }
static inline uint32_t fuzz_u32(struct fuzz_in *in) { return (uint32_t)fuzz_bytes(in, 4); }
static inline uint64_t fuzz_u64(struct fuzz_in *in) { return fuzz_bytes(in, 8); }

/* Copies up to len bytes of the input into buf (the rest zero); returns how many. */
static inline size_t fuzz_copy(struct fuzz_in *in, void *buf, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(buf, in->p, k);
	memset((char *)buf + k, 0, len - k);
	in->p += k;
	in->n -= k;
	return k;
}

/* An anonymous file holding data; *path names it (/proc/self/fd/N). Returns the fd or -1. */
static inline int fuzz_memfile(const void *data, size_t len, char *path, size_t path_len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (len && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	snprintf(path, path_len, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* __PYUPROF_FUZZ_H */
