/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Chrome trace writer: turns each call the profile builder reports into a complete event as
 * it ends. All JSON syntax and escaping is json_writer's; this file knows the trace format
 * and the one ordering rule the viewers need that end order does not give.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "output/json_writer.h"
#include "output/out_chrome.h"

/* A call held back until the enclosing call that began at the same ns is written. */
struct held_call {
	uint64_t t0, t1;
	uint32_t thread, func;
	uint32_t level; /* open stack entries below it when it ended */
	uint32_t seq;	/* (put_held: its place among those it writes) */
};

struct chrome_trace {
	struct json_writer *w;
	const struct profile *p;
	uint32_t pid;
	uint64_t base_ns, min_ns;
	uint64_t left_out, events;
	struct held_call *held;
	uint32_t nheld, held_cap;
	/*
	 * How many held calls each (thread, ns) has (held_key): a call ending writes the ones it
	 * holds, and most hold none, so that most look at none. Scanning the held calls at every
	 * call made a recording with many calls at one instant quadratic: 400,000 of them (the
	 * effect of a timing bug, since fixed) kept --trace at it for over 12 minutes.
	 */
	struct u64_map held_at;
	struct held_call *out; /* put_held's scratch */
	uint32_t out_cap;
};

/* held_at's key of (thread, ns); two pairs may share one (their counts add up). */
static uint64_t held_key(uint32_t thread, uint64_t t0_ns)
{
	return hash_u64(t0_ns ^ (uint64_t)thread << 40) | 1;
}

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

static void put_call(struct chrome_trace *ct, uint32_t thread, uint32_t func, uint64_t t0_ns,
		     uint64_t t1_ns)
{
	struct json_writer *w = ct->w;
	const struct func *f = &ct->p->funcs[func];
	const char *base = strrchr(f->filename, '/');
	char line[16], *end = line + sizeof(line), *s = end;
	unsigned int n;

	json_writer__object_begin(w);
	json_writer__name(w, "name");
	json_writer__string_begin(w);
	json_writer__string_part(w, func__label(f), strlen(func__label(f)));
	if (f->cfunc) { /* (no file: its label says what it is) */
		json_writer__string_end(w);
		json_writer__string_field(w, "cat", "C");
		goto times;
	}
	json_writer__string_part(w, " (", 2);
	/* the file's base name in the name, its path in args: the name stays short (a trace is
	 * as big as its names) and still tells apart what the viewers would merge */
	base = base ? base + 1 : f->filename;
	json_writer__string_part(w, base, strlen(base));
	/* ":LINE)" by hand: snprintf was a tenth of the time spent per call */
	*--s = ')';
	n = f->firstlineno < 0 ? 0u - (unsigned int)f->firstlineno : (unsigned int)f->firstlineno;
	do {
		*--s = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	if (f->firstlineno < 0)
		*--s = '-';
	*--s = ':';
	json_writer__string_part(w, s, (size_t)(end - s));
	json_writer__string_end(w);
	json_writer__string_field(w, "cat", "python");
times:
	json_writer__string_field(w, "ph", "X");
	/*
	 * Exact ns as µs with three decimals: a child's [ts, ts + dur] then lies within its
	 * parent's in the file too, which rounding to whole µs would not keep.
	 */
	json_writer__milli_field(w, "ts", (int64_t)(t0_ns - ct->base_ns));
	json_writer__milli_field(w, "dur", (int64_t)(t1_ns - t0_ns));
	json_writer__u64_field(w, "pid", ct->pid);
	json_writer__u64_field(w, "tid", ct->p->threads[thread]->tid);
	/* the viewers show args beside the event: where the function is, unabridged */
	json_writer__name(w, "args");
	json_writer__object_begin(w);
	json_writer__string_field(w, "file", f->filename);
	json_writer__name(w, "line");
	json_writer__s64(w, f->firstlineno);
	json_writer__object_end(w);
	json_writer__object_end(w);
	ct->events++;
}

static int hold(struct chrome_trace *ct, uint32_t thread, uint32_t func, uint32_t level,
		uint64_t t0_ns, uint64_t t1_ns)
{
	uint64_t *count;
	struct held_call *h;

	if (ct->nheld == ct->held_cap) {
		uint32_t cap = ct->held_cap ? ct->held_cap * 2 : 16;

		h = realloc(ct->held, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		ct->held = h;
		ct->held_cap = cap;
	}
	count = u64_map__upsert(&ct->held_at, held_key(thread, t0_ns));
	if (!count)
		return -ENOMEM;
	++*count;
	ct->held[ct->nheld++] = (struct held_call){ .t0 = t0_ns, .t1 = t1_ns, .thread = thread,
						    .func = func, .level = level };
	return 0;
}

/* Outermost first, and at one level in the order they were held. */
static int by_level(const void *a, const void *b)
{
	const struct held_call *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Writes the held calls of thread deeper than level that began at t0_ns, outermost first. Only
 * descendants of the call just written qualify: a held call outside it began earlier.
 */
static void put_held(struct chrome_trace *ct, uint32_t thread, uint32_t level, uint64_t t0_ns)
{
	uint64_t key = held_key(thread, t0_ns), *count = u64_map__get(&ct->held_at, key);
	uint32_t i, n = 0, kept = 0;

	if (!count || !*count)
		return;
	if (ct->out_cap < *count &&
	    array_grow((void **)&ct->out, &ct->out_cap, sizeof(*ct->out), (uint32_t)*count))
		return; /* (held until a later call of theirs, or the close, writes them) */
	/* its own out of the held calls, in the order they were held; the others stay so */
	for (i = 0; i < ct->nheld; i++) {
		const struct held_call *c = &ct->held[i];

		if (c->thread == thread && c->level > level && c->t0 == t0_ns && n < ct->out_cap) {
			ct->out[n] = *c;
			ct->out[n].seq = n;
			n++;
		} else {
			ct->held[kept++] = *c;
		}
	}
	ct->nheld = kept;
	*count -= n;
	if (!*count)
		u64_map__del(&ct->held_at, key);
	qsort(ct->out, n, sizeof(*ct->out), by_level);
	for (i = 0; i < n; i++)
		put_call(ct, ct->out[i].thread, ct->out[i].func, ct->out[i].t0, ct->out[i].t1);
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
	return ct;
}

void chrome_trace__on_call(void *ctx, uint32_t thread, uint32_t func, uint64_t t0_ns,
			   uint64_t t1_ns)
{
	struct chrome_trace *ct = ctx;
	const struct thread *t = ct->p->threads[thread];
	uint32_t i;

	if (t1_ns < t0_ns)
		t1_ns = t0_ns;
	if (t1_ns - t0_ns < ct->min_ns) {
		ct->left_out++;
		return;
	}
	/*
	 * Calls end children first, so a child comes before its parent in the file. When both
	 * begin at the same ns, chrome://tracing then draws them overlapping instead of nested
	 * (ties keep their file order there), so such a child waits for its parent.
	 * The builder reports a call after popping it: the counted entries left on the thread's
	 * stack are its open callers, the nearest of them its parent in the trace.
	 */
	for (i = t->depth; i > 0 && !t->stack[i - 1].counted; i--)
		;
	if (i > 0 && t->stack[i - 1].t0 == t0_ns && !hold(ct, thread, func, t->depth, t0_ns, t1_ns))
		return;
	put_call(ct, thread, func, t0_ns, t1_ns);
	if (ct->nheld)
		put_held(ct, thread, t->depth, t0_ns);
}

/*
 * Thread i's name, once per tid: a tid the kernel gave again after its thread ended is one
 * track in the viewers, named by each of its threads in turn ("first / second").
 */
static void put_thread_name(struct chrome_trace *ct, const struct profile *p, uint32_t i)
{
	char name[256], one[THREAD_NAME_LEN + 16];
	size_t len = 0;
	uint32_t j;

	for (j = 0; j < i; j++)
		if (p->threads[j]->tid == p->threads[i]->tid)
			return; /* (named with the first) */
	name[0] = 0;
	for (j = i; j < p->nthreads; j++) {
		const struct thread *t = p->threads[j];

		if (t->tid != p->threads[i]->tid)
			continue;
		if (t->name[0])
			snprintf(one, sizeof(one), "%.*s", (int)sizeof(t->name), t->name);
		else
			snprintf(one, sizeof(one), "thread-%u", t->tid);
		/* (names that do not fit are left out whole) */
		if (len + strlen(one) + 3 < sizeof(name))
			len += (size_t)snprintf(name + len, sizeof(name) - len, "%s%s",
						len ? " / " : "", one);
	}
	put_meta(ct, "thread_name", p->threads[i]->tid, name);
}

int chrome_trace__close(struct chrome_trace *ct, const struct profile *p, const char *process,
			uint64_t *events)
{
	struct json_writer *w;
	uint32_t i, n;
	int err;

	if (!ct)
		return 0;
	w = ct->w;
	if (!p) {
		/* thrown away: the caller aborts the outfile */
		json_writer__free(w);
		free(ct->held);
		free(ct->out);
		u64_map__free(&ct->held_at);
		free(ct);
		return 0;
	}
	/* calls still held because their parent never ended (no profile__finish) */
	for (n = ct->nheld + 1; ct->nheld && ct->nheld < n;) {
		n = ct->nheld;
		/* (held calls have a parent: level >= 1) */
		put_held(ct, ct->held[0].thread, 0, ct->held[0].t0);
	}
	/* (what put_held had no memory to order: as held) */
	for (i = 0; i < ct->nheld; i++)
		put_call(ct, ct->held[i].thread, ct->held[i].func, ct->held[i].t0, ct->held[i].t1);
	/* named at the end: a raw recording's replay learns the command after the header */
	put_meta(ct, "process_name", ct->pid, process && *process ? process : "python");
	for (i = 0; i < p->nthreads; i++)
		put_thread_name(ct, p, i);
	json_writer__array_end(w);
	json_writer__string_field(w, "displayTimeUnit", "ns");
	json_writer__name(w, "otherData");
	json_writer__object_begin(w);
	json_writer__u64_field(w, "pyuprof_calls_left_out", ct->left_out);
	json_writer__milli_field(w, "pyuprof_min_us", (int64_t)ct->min_ns);
	json_writer__object_end(w);
	json_writer__object_end(w);
	err = json_writer__close(w);
	if (events)
		*events = ct->events;
	free(ct->held);
	free(ct->out);
	u64_map__free(&ct->held_at);
	free(ct);
	return err;
}
