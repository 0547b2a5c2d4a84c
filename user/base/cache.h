/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What pyuprof measures once per machine and keeps for the next recordings: values keyed by all
 * they depend on. A key names the files a value describes as they are now (cache__file_id: a
 * file replaced or written to has another), and cache__get and cache__put add pyuprof's own
 * build and the running kernel to every key, so that neither a new pyuprof nor a new kernel
 * reads what an old one measured.
 *
 * One small text file per kind of value, a line per key ("KEY<TAB>VALUE"), in
 * /var/cache/pyuprof, or in PYUPROF_CACHE_DIR (empty: no cache at all). A directory or file
 * that another user owns or could write is neither read nor written: pyuprof runs as root and
 * must not take its figures from anyone else. The cache never fails a recording: a value it
 * cannot give is measured again, one it cannot keep is said with --debug.
 */
#ifndef __PYUPROF_CACHE_H
#define __PYUPROF_CACHE_H

#include <stddef.h>

/* The value kept for key in kind's file: 0 with value filled (NUL-terminated), or -ENOENT. */
int cache__get(const char *kind, const char *key, char *value, size_t len);
/* Keeps value (one line: no tab, no newline) for key in kind's file, in place of any older one;
 * the file keeps the CACHE_LINES newest keys. */
void cache__put(const char *kind, const char *key, const char *value);
/* The identity of the file at path as it is now (device, inode, size, modification and change
 * times), for a key. Returns 0, or -errno (no file: no key). */
int cache__file_id(const char *path, char *out, size_t len);

#define CACHE_LINES 64

#endif /* __PYUPROF_CACHE_H */
