/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output files are written whole or not at all: into a temporary file next to the target path,
 * renamed over it only when every write and the close succeeded. Opening early checks that the
 * directory is writable before any recording starts. A character device or FIFO is written to
 * directly (there is nothing to replace); a directory or block device is refused. A name
 * ending in ".gz" is written gzip-compressed (zlib).
 */
#ifndef __PYUPROF_OUTFILE_H
#define __PYUPROF_OUTFILE_H

#include <stddef.h>
#include <zlib.h>

struct outfile {
	char path[4096];
	char tmp[4096 + 16]; /* "": written directly (a device or FIFO), or nothing to remove */
	int fd;
	gzFile gz; /* set when the path ends in ".gz": what is written is compressed */
	struct write_behind *wb; /* outfile__write_behind: written by a thread of its own */
	unsigned long long bytes; /* written so far, before compression */
};

/* Returns 0 or -errno. */
int outfile__open(struct outfile *o, const char *path);
int outfile__write(struct outfile *o, const void *buf, size_t len);
/* From now on o's bytes are written (and compressed) by a thread of its own, at the lowest
 * priority; the caller only copies them. Returns 0 or -errno (then they are written as before). */
int outfile__write_behind(struct outfile *o);
/* Closes and renames into place. Returns 0 or -errno (the temporary file is then removed). */
int outfile__commit(struct outfile *o);
/* Removes the temporary file; safe after a failed or no open. */
void outfile__abort(struct outfile *o);

#endif /* __PYUPROF_OUTFILE_H */
