/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Interactive flame graph: one self-contained SVG (stylesheet and script inside, no external
 * URL) drawn from the exact recorded call paths. Width is wall time, callees included.
 */
#ifndef __PYUPROF_OUT_FLAMEGRAPH_H
#define __PYUPROF_OUT_FLAMEGRAPH_H

#include <stdbool.h>
#include "base/outfile.h"
#include "profile/profile.h"

/*
 * Threads are merged by function path under one root "all", or with per_thread each is a
 * named frame under "all threads". Frames narrower than 0.1 px at full width are left out
 * with their callees; the subtitle says how many. title may be NULL. The same profile gives
 * the same bytes. Returns 0 or -errno.
 */
int flamegraph__write(const struct profile *p, bool per_thread, const char *title,
		     struct outfile *out);

#endif /* __PYUPROF_OUT_FLAMEGRAPH_H */
