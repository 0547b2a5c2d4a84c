/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files one run writes (pstats, call graph, flame graph, collapsed stacks, pprof, trace,
 * raw events), for record and report alike: all opened before anything runs, so an unwritable
 * one fails first; each written whole or not at all at the end (the trace and the raw events
 * stream into their temporary files meanwhile).
 */
#ifndef __PYUPROF_OUTPUTS_H
#define __PYUPROF_OUTPUTS_H

#include <stdint.h>
#include "base/outfile.h"
#include "profile/profile.h"
#include "profile/run_info.h"

struct chrome_trace;

struct output_paths {
	const char *prof, *svg, *flamegraph, *collapsed, *pprof, *trace, *raw;
};

/* The outputs, in the order they are opened and written (outputs.c: their table). */
enum output_kind {
	OUTPUT_PSTATS,
	OUTPUT_CALLGRAPH,
	OUTPUT_FLAMEGRAPH,
	OUTPUT_COLLAPSED,
	OUTPUT_PPROF,
	OUTPUT_TRACE,
	OUTPUT_RAW,
	OUTPUT_N
};

struct outputs {
	struct output_paths paths;
	struct outfile file[OUTPUT_N]; /* fd -1 where not asked for */
	struct chrome_trace *ct;
	struct run_info run; /* for titles and legends: set before outputs__write */
	uint64_t trace_bytes, trace_events; /* the trace written (bytes before compression) */
};

/* Opens every output named in paths. Returns 0, or -errno with the path in *failed (NULL when
 * what failed was said already: --svg without graphviz's dot). */
int outputs__open(struct outputs *o, const struct output_paths *paths, const char **failed);

/* Starts streaming the trace (if asked for) from p's calls; base_ns is its time 0. */
int outputs__start_trace(struct outputs *o, struct profile *p, uint32_t pid, uint64_t base_ns,
			 unsigned min_us);

/* After profile__finish: writes and commits each output; reports each failure once. root: the
 * call graph's --root, or NULL. Returns 0, -ENODATA when nothing was recorded (nothing
 * written), or the first other -errno. */
int outputs__write(struct outputs *o, struct profile *p, double node_thres, double edge_thres,
		   const char *root, bool per_thread);

/* One more pstats file, written whole or not at all; a failure is reported. Returns 0 or
 * -errno. */
int outputs__write_pstats(const char *path, struct profile *p);
/* The same for a pprof file. */
int outputs__write_pprof(const char *path, struct profile *p);
/* Removes whatever is not committed. */
void outputs__abort(struct outputs *o);

#endif /* __PYUPROF_OUTPUTS_H */
