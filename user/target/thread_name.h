/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The name a Python program gave a thread (threading.Thread's `_name`), read from the target's
 * memory: the Thread is `self` in the thread's threading._bootstrap(_inner) frame.
 */
#ifndef __PYUPROF_THREAD_NAME_H
#define __PYUPROF_THREAD_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "pyuprof.h"
#include "target/py_target.h"

/* The name CPython's threading module gives the thread that imported it. */
#define MAIN_THREAD_NAME "MainThread"

/* Whether a code object (UTF-8 co_filename and co_name) is threading's _bootstrap(_inner). */
bool thread_name__is_bootstrap(const char *filename, const char *name);

/*
 * The name of the Thread whose bootstrap frame is frame, still running code in thread tid, into
 * out (UTF-8, NUL-terminated, cut at a character boundary). Only reads the target. Returns 0,
 * -ESTALE (the frame runs something else now, or the Thread is another thread's), -ENOENT (no
 * `_name`), -EINVAL (not a str), -EFAULT.
 */
int thread_name__read(const struct py_target *t, uint64_t frame, uint64_t code, uint32_t tid,
		      char *out, size_t out_len);

/* The same from the Thread object itself; tid 0 skips the check of its _native_id. */
int thread_name__of_object(const struct py_target *t, uint64_t obj, uint32_t tid, char *out,
			   size_t out_len);

/*
 * The same, and how the BPF side can read the names of this Thread's class itself (path,
 * for the class at *type; path->how 0 if it cannot: a combined dict, a name not found by a
 * path). Read while the Thread is held still (its thread stands at its bootstrap).
 */
int thread_name__of_object_path(const struct py_target *t, uint64_t obj, uint32_t tid,
				char *out, size_t out_len, struct thread_name_path *path,
				uint64_t *type);

#endif /* __PYUPROF_THREAD_NAME_H */
