// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One place that knows every output a run may write, and the order they are finished in. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "marshal.h"
#include "out_callgraph.h"
#include "out_chrome.h"
#include "out_collapsed.h"
#include "out_flamegraph.h"
#include "out_pprof.h"
#include "out_pstats.h"
#include "outputs.h"

/* The outputs, in the order they are opened and written. */
#define FOR_EACH_OUTPUT(o, X)                                                                    \
	X(o, prof) X(o, svg) X(o, flamegraph) X(o, collapsed) X(o, pprof) X(o, trace) X(o, raw)

int outputs__open(struct outputs *o, const struct output_paths *paths, const char **failed)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->paths = *paths;
#define OPEN(o, name)                                                                            \
	o->name.fd = -1;                                                                         \
	if (o->paths.name) {                                                                     \
		err = outfile__open(&o->name, o->paths.name);                                    \
		if (err) {                                                                       \
			*failed = o->paths.name;                                                 \
			outputs__abort(o);                                                       \
			return err;                                                              \
		}                                                                                \
	}
	FOR_EACH_OUTPUT(o, OPEN)
#undef OPEN
	return 0;
}

int outputs__start_trace(struct outputs *o, struct profile *p, uint32_t pid, uint64_t base_ns,
			 unsigned min_us)
{
	if (!o->paths.trace)
		return 0;
	o->ct = chrome_trace__open(&o->trace, p, pid, base_ns, (uint64_t)min_us * 1000);
	if (!o->ct)
		return -ENOMEM;
	p->on_call = chrome_trace__on_call;
	p->on_call_ctx = o->ct;
	return 0;
}

static int write_pstats(struct profile *p, struct outfile *out)
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

/* Commits out if err is 0, reports a failure once. Returns err, or the commit's error. */
static int finish(struct outfile *out, const char *path, int err)
{
	if (!err)
		err = outfile__commit(out);
	if (err == -ENODATA)
		elog("%s not written: no function reaches the thresholds", path);
	else if (err)
		elog("cannot write %s: %s", path, strerror(-err));
	outfile__abort(out);
	return err;
}

int outputs__write(struct outputs *o, struct profile *p, double node_thres, double edge_thres,
		   bool per_thread)
{
	int err = 0, e;

	if (!p->n.calls)
		return -ENODATA; /* nothing recorded: the caller says so, nothing is written */
	if (o->ct) {
		p->on_call = NULL;
		e = chrome_trace__close(o->ct, p, o->run.command, &o->trace_events);
		o->trace_bytes = o->trace.bytes;
		e = finish(&o->trace, o->paths.trace, e);
		o->ct = NULL;
		err = err ? err : e;
	}
	if (o->paths.prof) {
		e = finish(&o->prof, o->paths.prof, write_pstats(p, &o->prof));
		err = err ? err : e;
	}
	if (o->paths.svg) {
		e = finish(&o->svg, o->paths.svg, callgraph__write(p, node_thres, edge_thres, &o->run, &o->svg));
		err = err ? err : e;
	}
	if (o->paths.flamegraph) {
		char title[RUN_COMMAND_LEN + 48] = "pyuprof";
		size_t n = strlen(title);

		if (o->run.command[0])
			n += snprintf(title + n, sizeof(title) - n, ": %s", o->run.command);
		if (o->run.pid)
			snprintf(title + n, sizeof(title) - n, " (pid %u)", o->run.pid);
		e = finish(&o->flamegraph, o->paths.flamegraph,
			   flamegraph__write(p, per_thread, title, &o->flamegraph));
		err = err ? err : e;
	}
	if (o->paths.collapsed) {
		e = finish(&o->collapsed, o->paths.collapsed,
			   collapsed__write(p, per_thread, &o->collapsed));
		err = err ? err : e;
	}
	if (o->paths.pprof) {
		e = finish(&o->pprof, o->paths.pprof, pprof__write(p, &o->pprof));
		err = err ? err : e;
	}
	if (o->paths.raw) {
		e = finish(&o->raw, o->paths.raw, 0);
		err = err ? err : e;
	}
	return err;
}

int outputs__write_pstats(const char *path, struct profile *p)
{
	struct outfile f = { .fd = -1 };
	int err = outfile__open(&f, path);

	if (!err)
		err = write_pstats(p, &f);
	return finish(&f, path, err);
}

int outputs__write_pprof(const char *path, struct profile *p)
{
	struct outfile f = { .fd = -1 };
	int err = outfile__open(&f, path);

	if (!err)
		err = pprof__write(p, &f);
	return finish(&f, path, err);
}

void outputs__abort(struct outputs *o)
{
	if (o->ct) {
		chrome_trace__close(o->ct, NULL, NULL, NULL);
		o->ct = NULL;
	}
#define ABORT(o, name) outfile__abort(&o->name);
	FOR_EACH_OUTPUT(o, ABORT)
#undef ABORT
}
