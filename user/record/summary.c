// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What pyuprof says at the end, on stderr: the top table (pstats' print_stats/print_line, so
 * it reads like what users already know), the notes on everything repaired, lost or left out,
 * and the summary line after the outputs are written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "base/env.h"
#include "base/log.h"
#include "record/summary.h"

/* the summary's word on the times: the calibration's figures, or why they are raw */
static char comp_note[128];

void summary__compensation(const struct compensation *c)
{
	if (c)
		snprintf(comp_note, sizeof(comp_note), "; calibrated: %.2f µs a call, %.2f inside",
			 c->call_ns / 1e3, c->inside_ns / 1e3);
	else
		snprintf(comp_note, sizeof(comp_note), "; not compensated (calibration failed)");
}

static int by_cumtime(const void *a, const void *b, void *arg)
{
	const struct func *funcs = arg;
	const struct func *x = &funcs[*(const uint32_t *)a], *y = &funcs[*(const uint32_t *)b];
	int c = (x->st.total_ns < y->st.total_ns) - (x->st.total_ns > y->st.total_ns);

	if (c)
		return c;
	c = strcmp(x->filename, y->filename);
	return c ? c : (x->firstlineno > y->firstlineno) - (x->firstlineno < y->firstlineno);
}

static void print_time(FILE *f, double v, bool blank)
{
	if (blank)
		fprintf(f, "%8s ", "");
	else
		fprintf(f, "%8.3f ", v);
}

int summary__top(FILE *f, const struct profile *p, unsigned top)
{
	uint64_t total_calls = 0, prim_calls = 0, total_ns = 0;
	uint32_t *order, n = 0, i;

	order = malloc(((size_t)p->nfuncs + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < p->nfuncs; i++) {
		const struct func *fn = &p->funcs[i];

		if (!fn->st.calls)
			continue;
		order[n++] = i;
		total_calls += fn->st.calls;
		prim_calls += fn->st.calls - fn->st.rec_calls;
		total_ns += fn->st.inline_ns;
	}
	qsort_r(order, n, sizeof(*order), by_cumtime, p->funcs);

	fprintf(f, "         %llu function calls ", (unsigned long long)total_calls);
	if (total_calls != prim_calls)
		fprintf(f, "(%llu primitive calls) ", (unsigned long long)prim_calls);
	fprintf(f, "in %.3f seconds\n\n   Ordered by: cumulative time\n", total_ns / 1e9);
	if (top < n)
		fprintf(f, "   List reduced from %u to %u due to restriction <%u>\n", n, top, top);
	fprintf(f, "\n   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n");
	for (i = 0; i < n && i < top; i++) {
		const struct func *fn = &p->funcs[order[i]];
		uint64_t cc = fn->st.calls - fn->st.rec_calls;
		char calls[48];

		if (cc != fn->st.calls)
			snprintf(calls, sizeof(calls), "%llu/%llu", (unsigned long long)fn->st.calls,
				 (unsigned long long)cc);
		else
			snprintf(calls, sizeof(calls), "%llu", (unsigned long long)fn->st.calls);
		fprintf(f, "%9s ", calls);
		print_time(f, fn->st.inline_ns / 1e9, false);
		print_time(f, fn->st.inline_ns / 1e9 / fn->st.calls, false);
		print_time(f, fn->st.total_ns / 1e9, false);
		print_time(f, cc ? fn->st.total_ns / 1e9 / cc : 0, !cc);
		if (fn->cfunc) /* (as pstats prints them) */
			fprintf(f, "%s\n", func__label(fn));
		else if (!strcmp(fn->filename, "~") && !fn->firstlineno)
			fprintf(f, "%s\n", fn->name);
		else
			fprintf(f, "%s:%d(%s)\n", fn->filename, fn->firstlineno, fn->name);
	}
	fputc('\n', f);
	free(order);
	return 0;
}

void summary__notes(const struct profile *p, const struct hook_state *h,
		    const struct pyuprof_stats *s, const char *version, bool exit_probe)
{
	if (s->lost_calls + s->lost_returns + s->lost_codes + s->lost_requests + s->lost_ccalls +
	    s->lost_creturns)
		wlog("the ring buffer was full: %llu calls, %llu returns, %llu C calls, %llu C "
		     "returns and %llu code identities were lost (try a larger --ringbuf-mb)",
		     (unsigned long long)s->lost_calls, (unsigned long long)s->lost_returns,
		     (unsigned long long)s->lost_ccalls, (unsigned long long)s->lost_creturns,
		     (unsigned long long)s->lost_codes);
	if (p->n.waits)
		wlog("the ring buffer was full %llu times: the thread that staged the calls waited "
		     "%.3f s in all while pyuprof caught up (not counted in any call; a larger "
		     "--ringbuf-mb waits less)", (unsigned long long)p->n.waits,
		     p->n.waited_ns / 1e9);
	/* 3.11's come from its inline __getitem__, 3.13.0's from its class call */
	if (p->n.inline_calls && !strncmp(version, "3.11.", 5))
		wlog("%llu __getitem__ calls ran inline through CPython %s's specialised subscript "
		     "(a known hole of the eval_frame switch): counted by a probe on that path, "
		     "timed up to the thread's next event", (unsigned long long)p->n.inline_calls,
		     version);
	else if (p->n.inline_calls)
		wlog("%llu __init__ calls ran inline through CPython %s's specialised class call "
		     "(a known hole of the eval_frame switch): counted by a probe on its allocation, "
		     "timed up to the thread's next event", (unsigned long long)p->n.inline_calls,
		     version);
	if (p->n.recovered && exit_probe)
		wlog("%llu calls ran inline despite the eval_frame switch (a known CPython %s hole) "
		     "and were counted at their exit (USDT function__return), timed from the "
		     "thread's previous event", (unsigned long long)p->n.recovered, version);
	else if (p->n.recovered)
		wlog("%llu calls had no entry event of their own (run inline by CPython %s despite "
		     "the eval_frame switch, or lost) and were recovered from the frame chain; calls "
		     "of that kind that call no other Python function are not seen, so more may be "
		     "missing", (unsigned long long)p->n.recovered, version);
	if (s->exit_unverified)
		wlog("%llu frame exits could not be matched to their frame and counted as plain "
		     "returns", (unsigned long long)s->exit_unverified);
	if (h->resets_setter)
		wlog("the target reset its eval_frame hook %llu times (a PEP 523 user such as "
		     "Dynamo or the perf trampoline turning itself off); pyuprof switched it back "
		     "before its next call", (unsigned long long)h->resets_setter);
	if (h->resets_entry)
		wlog("the eval_frame hook was found reset %llu times at a later call (written "
		     "directly, not through the setter): calls just before it may be missing",
		     (unsigned long long)h->resets_entry);
	{
		uint64_t debt = 0;

		for (uint32_t i = 0; i < p->nfuncs; i++)
			debt += p->funcs[i].debt_ns;
		if (debt)
			vlog("compensation: %.6f s more than their calls took was to be taken from "
			     "some functions (their calls cost less than the calibrated figure): "
			     "they show 0", debt / 1e9);
	}
	if (h->waited_all)
		vlog("%llu times a hook write waited for the whole process to stop: another "
		     "interpreter's threads could have read it half-written",
		     (unsigned long long)h->waited_all);
	if (s->foreign_hook)
		vlog("another eval_frame hook (PEP 523) was active; it was left alone");
	if (s->read_fail)
		wlog("%llu reads of the target's memory failed", (unsigned long long)s->read_fail);
	if (p->n.unknown_code)
		wlog("%llu calls have no function name (identity lost)",
		     (unsigned long long)p->n.unknown_code);
	if (p->n.switches)
		vlog("%llu times a thread went on with the frames of another of its stacks (greenlet), "
		     "each stack's calls kept apart (at most %u waiting at once)",
		     (unsigned long long)p->n.switches, p->n.most_parked);
	if (p->n.closed_unseen || p->n.unmatched_returns)
		vlog("%llu frames returned without an event, %llu returns of frames entered before "
		     "recording", (unsigned long long)p->n.closed_unseen,
		     (unsigned long long)p->n.unmatched_returns);
	if (p->n.no_return)
		wlog("%llu calls were entered past the kernel's limit of %d pending uretprobes a "
		     "thread: their returns were taken from the caller chain at the thread's next "
		     "event", (unsigned long long)p->n.no_return, URETPROBE_DEPTH_MAX);
	if (p->n.open_at_stop)
		vlog("%llu calls were still running at the stop and were closed there",
		     (unsigned long long)p->n.open_at_stop);
}

/* A trace's viewers slow down with its size (speedscope gave up on 143 MB): say it. */
static void print_trace_size(const struct outputs *out)
{
	size_t len = strlen(out->paths.trace);
	bool gz = len > 3 && !strcmp(out->paths.trace + len - 3, ".gz"); /* as outfile.c */
	double mb = out->trace_bytes / 1e6;

	ilog("trace %s: %.1f MB%s, %llu calls", out->paths.trace, mb, gz ? " uncompressed" : "",
	     (unsigned long long)out->trace_events);
	if (out->trace_bytes > 64000000ull)
		ilog("traces this large load slowly or not at all in trace viewers: "
		     "--trace-min-us N leaves out the calls shorter than N microseconds%s",
		     env.trace_min_us ? " (a larger N than this run's)" : "");
}

/* Following: one line per process, in the order they were met. */
static void print_processes(struct proc_rec *const *procs, uint32_t nprocs)
{
	for (uint32_t i = 0; i < nprocs; i++) {
		const struct proc_rec *pr = procs[i];
		const struct profile *p = pr->rec.prof;
		char from[48] = "";

		if (!p->n.calls)
			continue;
		if (pr->parent)
			snprintf(from, sizeof(from), ", started by %d", pr->parent);
		ilog("pid %d (Python %s%s): %llu calls, %u functions, %u threads%s%s", pr->pid,
		     pr->version, from, (unsigned long long)p->n.calls, p->nfuncs, p->nthreads,
		     pr->written ? "; wrote " : "", pr->written ? pr->written : "");
	}
}

int summary__conclude(struct outputs *out, struct profile *p, const struct hook_state *h,
		      const struct pyuprof_stats *bs, const char *version, bool exit_probe,
		      double wall_s, struct proc_rec *const *procs, uint32_t nprocs,
		      const char *died)
{
	uint64_t lost = bs->lost_calls + bs->lost_returns + bs->lost_codes + bs->lost_requests +
			bs->lost_ccalls + bs->lost_creturns;
	int err;

	out->run.wall_ns = (uint64_t)(wall_s * 1e9);
	err = outputs__write(out, p, env.node_thres, env.edge_thres, env.root, env.threads);

	if (err == -ENODATA && !p->n.calls) {
		elog("no Python calls were recorded; nothing written");
		return err;
	}
	if (env.top && !env.quiet)
		summary__top(stderr, p, env.top);
	summary__notes(p, h, bs, version, exit_probe);
	if (procs)
		print_processes(procs, nprocs);
	ilog("%llu calls, %u functions, %u threads, %llu lost events, %.3f s wall%s%s%s%s%s",
	     (unsigned long long)p->n.calls, p->nfuncs, p->nthreads, (unsigned long long)lost,
	     wall_s, comp_note, died ? "; " : "", died ? died : "",
	     out->paths.prof && !err ? "; wrote " : "", out->paths.prof && !err ? out->paths.prof : "");
	if (out->paths.trace && out->trace_bytes)
		print_trace_size(out);
	return err;
}

