/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Folded stacks ("outer;inner;leaf 123", the input format of flamegraph.pl, inferno and
 * speedscope), and the folded tree both they and the flame graph are drawn from: the profile's
 * call tree with threads merged by function path (or kept apart under one node per thread),
 * children sorted by frame text so that output does not depend on which thread ran first.
 */
#ifndef __PYUPROF_OUT_COLLAPSED_H
#define __PYUPROF_OUT_COLLAPSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/outfile.h"
#include "profile/profile.h"

struct fold_node {
	uint32_t func;	       /* index into profile->funcs; CT_NONE: the root or a thread */
	uint32_t thread;       /* a thread node: index into profile->threads; else CT_NONE */
	uint32_t parent;       /* CT_NONE for the root */
	uint32_t first_child;  /* children sorted, CT_NONE-terminated */
	uint32_t next_sibling;
	uint32_t depth;	       /* 0 for the root */
	uint64_t total_ns, self_ns, calls;
};

/* Node 0 is the root above every thread; with per_thread its children are the threads. */
struct fold {
	struct fold_node *nodes;
	uint32_t n, cap;
};

/* Folds the finished profile's call tree. Returns 0 or -ENOMEM. */
int fold__build(const struct profile *p, bool per_thread, struct fold *f);
void fold__free(struct fold *f);

/* The next node of a depth-first walk from node 0 (parents before children), or CT_NONE. */
uint32_t fold__next(const struct fold *f, uint32_t i);

/*
 * A thread's label: its name, "thread-TID" when the name is unknown, and " (TID)" added when
 * another thread has the same label. Returns the length it needed (as snprintf).
 */
int fold__thread_label(const struct profile *p, uint32_t thread, char *buf, size_t len);

/*
 * One line per call path with self time: frames "name (file:line)" joined by ';' (a ';' inside
 * becomes ','), then the self time in whole microseconds. Values are rounded on the running
 * sum, so that they add up to the total self time rounded to 1 us, each within 1 us of its
 * path's own; a path whose value comes out 0 is left out (its time carries into the next).
 * With per_thread each line starts with the thread's label. Returns 0 or -errno.
 */
int collapsed__write(const struct profile *p, bool per_thread, struct outfile *out);

#endif /* __PYUPROF_OUT_COLLAPSED_H */
