/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyuprof top: a full-screen view of a recording as it goes, redrawn every interval: the
 * functions by own time and by calls over the last interval and in total, calls per second,
 * lost events. Keys: q quits; o, c, t, n choose the order.
 */
#ifndef __PYUPROF_TOP_H
#define __PYUPROF_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/profile.h"
#include "pyuprof.h"

struct top;

/*
 * Takes the terminal (stdin for keys, stdout to draw on; both must be terminals): keys one at
 * a time without echo, the alternate screen, no cursor. title heads the screen. Returns NULL
 * with errno set (ENOTTY: not a terminal).
 */
struct top *top__new(const char *title, uint64_t interval_ns, uint64_t now_ns);
/* Puts the terminal back as it was and frees t; NULL-safe. The terminal is also put back at
 * exit() should t never be freed. */
void top__free(struct top *t);
/* The descriptor to poll for keys. */
int top__fd(const struct top *t);
/* Reads the keys that came; returns true once q (or Ctrl-D) was pressed. */
bool top__keys(struct top *t);
/* Redraws from p and the counters of what was lost, if an interval has passed since the last
 * drawing (or a key changed the order). */
void top__draw(struct top *t, const struct profile *p, const struct pyuprof_stats *lost,
	       uint64_t now_ns);

#endif /* __PYUPROF_TOP_H */
