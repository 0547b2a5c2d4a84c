/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Chrome trace writer: turns each call the profile builder reports into a complete event as
 * it ends. All JSON syntax and escaping is json_writer's; this file knows the trace format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_writer.h"
#include "out_chrome.h"

struct chrome_trace {
	struct json_writer *w;
	const struct profile *p;
	uint32_t pid;
	uint64_t base_ns, min_ns;
	uint64_t left_out;
};

/* A metadata event naming the process or a thread (args.name = name). */
static void put_meta(struct chrome_trace *ct, const char *what, uint32_t tid, const char *name)
{
	struct json_writer *w = ct->w;

	json_writer__object_begin(w);
	json_writer__string_field(w, "name", what);
	json_writer__string_field(w, "ph", "M");
	json_writer__u64_field(w, "pid", ct->pid);
	json_writer__u64_field(w, "tid", tid);
	json_writer__name(w, "args");
	json_writer__object_begin(w);
	json_writer__string_field(w, "name", name);
	json_writer__object_end(w);
	json_writer__object_end(w);
}

struct chrome_trace *chrome_trace__open(struct outfile *out, const struct profile *p,
					uint32_t pid, uint64_t base_ns, uint64_t min_ns)
{
	struct chrome_trace *ct = calloc(1, sizeof(*ct));

	if (!ct)
		return NULL;
	/* line depth 2: one event per line, which keeps big traces greppable */
	ct->w = json_writer__new(out, 2);
	if (!ct->w) {
		free(ct);
		return NULL;
	}
	ct->p = p;
	ct->pid = pid;
	ct->base_ns = base_ns;
	ct->min_ns = min_ns;
	json_writer__object_begin(ct->w);
	json_writer__name(ct->w, "traceEvents");
	json_writer__array_begin(ct->w);
	put_meta(ct, "process_name", pid, "python");
	return ct;
}

void chrome_trace__on_call(void *ctx, uint32_t thread, uint32_t func, uint64_t t0_ns,
			   uint64_t t1_ns)
{
	struct chrome_trace *ct = ctx;
	struct json_writer *w = ct->w;
	const struct func *f = &ct->p->funcs[func];
	uint64_t dur = t1_ns > t0_ns ? t1_ns - t0_ns : 0;
	char line[16];
	int n;

	if (dur < ct->min_ns) {
		ct->left_out++;
		return;
	}
	json_writer__object_begin(w);
	json_writer__name(w, "name");
	json_writer__string_begin(w);
	json_writer__string_part(w, f->name, strlen(f->name));
	json_writer__string_part(w, " (", 2);
	json_writer__string_part(w, f->filename, strlen(f->filename));
	n = snprintf(line, sizeof(line), ":%d)", f->firstlineno);
	json_writer__string_part(w, line, (size_t)n);
	json_writer__string_end(w);
	json_writer__string_field(w, "cat", "python");
	json_writer__string_field(w, "ph", "X");
	/*
	 * Exact ns as µs with three decimals: a child's [ts, ts + dur] then lies within its
	 * parent's in the file too, which rounding to whole µs would not keep.
	 */
	json_writer__milli_field(w, "ts", (int64_t)(t0_ns - ct->base_ns));
	json_writer__milli_field(w, "dur", (int64_t)dur);
	json_writer__u64_field(w, "pid", ct->pid);
	json_writer__u64_field(w, "tid", ct->p->threads[thread]->tid);
	json_writer__object_end(w);
}

int chrome_trace__close(struct chrome_trace *ct, const struct profile *p)
{
	struct json_writer *w;
	char name[32];
	uint32_t i;
	int err;

	if (!ct)
		return 0;
	w = ct->w;
	if (!p) {
		/* thrown away: the caller aborts the outfile */
		json_writer__free(w);
		free(ct);
		return 0;
	}
	for (i = 0; i < p->nthreads; i++) {
		const struct thread *t = p->threads[i];

		if (t->name[0]) {
			put_meta(ct, "thread_name", t->tid, t->name);
		} else {
			snprintf(name, sizeof(name), "thread-%u", t->tid);
			put_meta(ct, "thread_name", t->tid, name);
		}
	}
	json_writer__array_end(w);
	json_writer__string_field(w, "displayTimeUnit", "ns");
	json_writer__name(w, "otherData");
	json_writer__object_begin(w);
	json_writer__u64_field(w, "pyuprof_calls_left_out", ct->left_out);
	json_writer__milli_field(w, "pyuprof_min_us", (int64_t)ct->min_ns);
	json_writer__object_end(w);
	json_writer__object_end(w);
	err = json_writer__close(w);
	free(ct);
	return err;
}
