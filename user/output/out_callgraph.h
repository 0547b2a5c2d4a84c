/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The call graph as SVG, drawn the way `gprof2dot -f pstats --node-label=total-time-percentage
 * --node-label=self-time-percentage --node-label=total-time | dot -Tsvg` draws our .prof: our
 * DOT, graphviz's dot run as an unprivileged child (dot_render.h).
 */
#ifndef __PYUPROF_OUT_CALLGRAPH_H
#define __PYUPROF_OUT_CALLGRAPH_H

#include "base/outfile.h"
#include "profile/profile.h"
#include "profile/run_info.h"

/*
 * Writes the SVG to out (the caller opens, commits or aborts it), with a legend that names the
 * run (run may be NULL), what 100% is and what was left out. Functions are named by their
 * qualified names where known. Functions under node_thres_pct % of the total time and calls
 * under edge_thres_pct % are left out. With root (a function's name or qualified name, or
 * FILE:NAME with FILE the end of its file's path; NULL:
 * the whole profile) only the functions named so and the calls made under them are drawn, from
 * the exact stacks, their total time as 100%. Returns 0, -ENOMEM, -EIO (dot failed; its
 * messages said), -ENODATA (no function reaches node_thres_pct), -ESRCH (no function is named
 * root), or the error of outfile__write() or of running dot.
 */
int callgraph__write(const struct profile *p, double node_thres_pct, double edge_thres_pct,
		    const char *root, const struct run_info *run, struct outfile *out);

#endif /* __PYUPROF_OUT_CALLGRAPH_H */
