// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One place that knows every output a run may write, and the order they are finished in. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "base/log.h"
#include "output/dot_render.h"
#include "output/marshal.h"
#include "output/out_callgraph.h"
#include "output/out_chrome.h"
#include "output/out_collapsed.h"
#include "output/out_flamegraph.h"
#include "output/out_pprof.h"
#include "output/out_pstats.h"
#include "output/outputs.h"

/* What the writers of a run's outputs take, besides the file they write. */
struct write_args {
	struct outputs *o;
	struct profile *p;
	double node_thres, edge_thres;
	const char *root;
	bool per_thread;
};

static int encode_pstats(struct profile *p, struct outfile *out)
{
	struct marshal_buf b;
	int err;

	marshal__init(&b);
	err = pstats__encode(p, &b);
	if (!err)
		err = outfile__write(out, b.data, b.len);
	marshal__free(&b);
	return err;
}

static int write_pstats(const struct write_args *a, struct outfile *out)
{
	return encode_pstats(a->p, out);
}

static int write_callgraph(const struct write_args *a, struct outfile *out)
{
	return callgraph__write(a->p, a->node_thres, a->edge_thres, a->root, &a->o->run, out);
}

static int write_flamegraph(const struct write_args *a, struct outfile *out)
{
	const struct run_info *run = &a->o->run;
	char title[RUN_COMMAND_LEN + 48] = "pyuprof";
	size_t n = strlen(title);

	if (run->command[0])
		n += snprintf(title + n, sizeof(title) - n, ": %s", run->command);
	if (run->pid)
		snprintf(title + n, sizeof(title) - n, " (pid %u)", run->pid);
	return flamegraph__write(a->p, a->per_thread, title, out);
}

static int write_collapsed(const struct write_args *a, struct outfile *out)
{
	return collapsed__write(a->p, a->per_thread, out);
}

static int write_pprof(const struct write_args *a, struct outfile *out)
{
	return pprof__write(a->p, out);
}

/* The trace streamed its calls while recording: only its end is written here. */
static int write_trace(const struct write_args *a, struct outfile *out)
{
	struct outputs *o = a->o;
	int err;

	if (!o->ct)
		return -EINVAL; /* asked for, never started (outputs__start_trace) */
	a->p->on_call = NULL;
	err = chrome_trace__close(o->ct, a->p, o->run.command, &o->trace_events);
	o->ct = NULL;
	o->trace_bytes = out->bytes;
	return err;
}

/* Each output: where its path comes from, how it is written. */
static const struct output_desc {
	size_t path; /* offsetof(struct output_paths, ...) */
	/* NULL: streamed into its file while recording (the raw events), only committed */
	int (*write)(const struct write_args *a, struct outfile *out);
} output_table[OUTPUT_N] = {
	[OUTPUT_PSTATS] = { offsetof(struct output_paths, prof), write_pstats },
	[OUTPUT_CALLGRAPH] = { offsetof(struct output_paths, svg), write_callgraph },
	[OUTPUT_FLAMEGRAPH] = { offsetof(struct output_paths, flamegraph), write_flamegraph },
	[OUTPUT_COLLAPSED] = { offsetof(struct output_paths, collapsed), write_collapsed },
	[OUTPUT_PPROF] = { offsetof(struct output_paths, pprof), write_pprof },
	[OUTPUT_TRACE] = { offsetof(struct output_paths, trace), write_trace },
	[OUTPUT_RAW] = { offsetof(struct output_paths, raw), NULL },
};

static const char *path_of(const struct output_paths *paths, enum output_kind k)
{
	const char *path;

	memcpy(&path, (const char *)paths + output_table[k].path, sizeof(path));
	return path;
}

int outputs__open(struct outputs *o, const struct output_paths *paths, const char **failed)
{
	int k, err;

	memset(o, 0, sizeof(*o));
	o->paths = *paths;
	for (k = 0; k < OUTPUT_N; k++)
		o->file[k].fd = -1;
	*failed = NULL;
	if (paths->svg) {
		err = dot_render__check(); /* said; nothing opened yet */
		if (err)
			return err;
	}
	for (k = 0; k < OUTPUT_N; k++) {
		const char *path = path_of(paths, k);

		if (!path)
			continue;
		err = outfile__open(&o->file[k], path);
		if (err) {
			*failed = path;
			outputs__abort(o);
			return err;
		}
	}
	return 0;
}

int outputs__start_trace(struct outputs *o, struct profile *p, uint32_t pid, uint64_t base_ns,
			 unsigned min_us)
{
	if (!o->paths.trace)
		return 0;
	o->ct = chrome_trace__open(&o->file[OUTPUT_TRACE], p, pid, base_ns,
				   (uint64_t)min_us * 1000);
	if (!o->ct)
		return -ENOMEM;
	p->on_call = chrome_trace__on_call;
	p->on_call_ctx = o->ct;
	return 0;
}

/* Commits out if err is 0, reports a failure once (root: the call graph's --root, or NULL).
 * Returns err, or the commit's error. */
static int finish(struct outfile *out, const char *path, int err, const char *root)
{
	if (!err)
		err = outfile__commit(out);
	if (err == -ENODATA)
		elog("%s not written: no function reaches the thresholds", path);
	else if (err == -ESRCH && root)
		elog("%s not written: no function named %s in the profile (--root)", path, root);
	else if (err)
		elog("cannot write %s: %s", path, strerror(-err));
	outfile__abort(out);
	return err;
}

int outputs__write(struct outputs *o, struct profile *p, double node_thres, double edge_thres,
		   const char *root, bool per_thread)
{
	struct write_args a = { o, p, node_thres, edge_thres, root, per_thread };
	int k, err = 0, e;

	if (!p->n.calls)
		return -ENODATA; /* nothing recorded: the caller says so, nothing is written */
	for (k = 0; k < OUTPUT_N; k++) {
		const char *path = path_of(&o->paths, k);

		if (!path)
			continue;
		e = output_table[k].write ? output_table[k].write(&a, &o->file[k]) : 0;
		e = finish(&o->file[k], path, e, k == OUTPUT_CALLGRAPH ? root : NULL);
		err = err ? err : e;
	}
	return err;
}

int outputs__write_pstats(const char *path, struct profile *p)
{
	struct outfile f = { .fd = -1 };
	int err = outfile__open(&f, path);

	if (!err)
		err = encode_pstats(p, &f);
	return finish(&f, path, err, NULL);
}

int outputs__write_pprof(const char *path, struct profile *p)
{
	struct outfile f = { .fd = -1 };
	int err = outfile__open(&f, path);

	if (!err)
		err = pprof__write(p, &f);
	return finish(&f, path, err, NULL);
}

void outputs__abort(struct outputs *o)
{
	int k;

	if (o->ct) {
		chrome_trace__close(o->ct, NULL, NULL, NULL);
		o->ct = NULL;
	}
	for (k = 0; k < OUTPUT_N; k++)
		outfile__abort(&o->file[k]);
}
