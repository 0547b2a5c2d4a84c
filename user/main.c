// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyuprof record: find the target -> load and attach the probes -> (3.11+) switch inlining off
 * -> consume events until told to stop -> switch inlining back on -> write the profile.
 * Everything else lives in the modules; this file is the order of things and the exit paths.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "calibrate.h"
#include "cli.h"
#include "dump.h"
#include "events.h"
#include "hook.h"
#include "launch.h"
#include "log.h"
#include "outputs.h"
#include "raw.h"
#include "proc.h"
#include "proc_rec.h"
#include "py_image.h"
#include "profile.h"
#include "py_target.h"
#include "report.h"
#include "run_info.h"
#include "seed.h"
#include "top.h"
#include "tracee.h"
#include "tracer.h"

static volatile sig_atomic_t exiting;
static volatile pid_t child_pid;
static volatile sig_atomic_t calibrating; /* child_pid is the calibration snippet */
/* the summary's word on the times: the calibration's figures, or why they are raw */
static char comp_note[128];

/*
 * Attach mode: any of these signals ends the recording. Launch mode: the program decides; a
 * signal sent to pyuprof alone is passed on to it, while a terminal's Ctrl-C already reached it
 * (same process group) and is not sent twice. During the calibration (before anything is
 * recorded) any of them ends pyuprof: it is not the snippet's to take.
 */
static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (!child_pid || calibrating) {
		exiting = 1;
		return;
	}
	if (info->si_code == SI_USER || info->si_code == SI_QUEUE || sig == SIGTERM ||
	    sig == SIGHUP)
		kill(child_pid, sig);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	launch_ignore_sigpipe();
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock of bpf_ktime_get_ns */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CAP_BPF and CAP_PERFMON (BPF programs, uprobes), CAP_SYS_PTRACE (the target's memory, and
 * stopping it around writes). Root has them all. */
static bool has_privileges(void)
{
	return proc_has_caps(1ull << 19 | 1ull << 38 | 1ull << 39);
}

static int exit_status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Summary of everything that was repaired, lost or left out: nothing goes unreported. */
static void print_notes(const struct profile *p, const struct hook_state *h,
			const struct pyuprof_stats *s, const char *version, bool exit_probe)
{
	if (s->lost_calls + s->lost_returns + s->lost_codes + s->lost_requests)
		wlog("the ring buffer was full: %llu calls, %llu returns and %llu code identities "
		     "were lost (try a larger --ringbuf-mb)",
		     (unsigned long long)s->lost_calls, (unsigned long long)s->lost_returns,
		     (unsigned long long)s->lost_codes);
	if (p->n.inline_calls)
		wlog("%llu __init__ calls ran inline through CPython %s's specialised class call "
		     "(a known hole of the eval_frame switch): counted by a probe on its allocation, "
		     "timed up to the thread's next event", (unsigned long long)p->n.inline_calls,
		     version);
	if (p->n.recovered && exit_probe)
		wlog("%llu calls ran inline despite the eval_frame switch (a known CPython %s hole) "
		     "and were counted at their exit (USDT function__return), timed from the "
		     "thread's previous event", (unsigned long long)p->n.recovered, version);
	else if (p->n.recovered)
		wlog("%llu calls ran inline despite the eval_frame switch (a known CPython %s hole) "
		     "and were recovered from the frame chain; calls of that kind that call no "
		     "other Python function are not seen, so more may be missing",
		     (unsigned long long)p->n.recovered, version);
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

struct session;
static void print_processes(const struct session *s);

/*
 * Writes the outputs of a finished profile and prints the summary (with a line per process
 * when following, procs). Returns 0, or -errno when an output could not be written or nothing
 * was recorded.
 */
static int conclude(struct outputs *out, struct profile *p, const struct hook_state *h,
		    const struct pyuprof_stats *bs, const char *version, bool exit_probe,
		    double wall_s, const struct session *procs)
{
	uint64_t lost = bs->lost_calls + bs->lost_returns + bs->lost_codes + bs->lost_requests;
	int err;

	out->run.wall_ns = (uint64_t)(wall_s * 1e9);
	err = outputs__write(out, p, env.node_thres, env.edge_thres, env.threads);

	if (err == -ENODATA && !p->n.calls) {
		elog("no Python calls were recorded; nothing written");
		return err;
	}
	if (env.top && !env.quiet)
		report_print(stderr, p, env.top);
	print_notes(p, h, bs, version, exit_probe);
	if (procs)
		print_processes(procs);
	ilog("%llu calls, %u functions, %u threads, %llu lost events, %.3f s wall%s%s%s",
	     (unsigned long long)p->n.calls, p->nfuncs, p->nthreads, (unsigned long long)lost,
	     wall_s, comp_note, out->paths.prof && !err ? "; wrote " : "",
	     out->paths.prof && !err ? out->paths.prof : "");
	if (out->paths.trace && out->trace_bytes)
		print_trace_size(out);
	return err;
}

/* One recording: the target and, following subprocesses, the processes it starts. */
struct session {
	pid_t pid; /* the target */
	char **command; /* launch mode: its argv */
	struct calib_run *calib; /* set when this session records the calibration snippet */
	bool launched, released, target_gone, follow;
	int child_status; /* launch mode: the program's wait status, -1 until known */
	struct tracee *held; /* under ptrace (for the hook writes, or to follow processes) */
	struct proc_rec **procs; /* procs[0] is the target's */
	uint32_t nprocs, procs_cap;
	bool stopping;
	/* CLOCK_MONOTONIC of pyuprof's start, of the probes in place, of the first event
	 * handled, and how long detaching took: the attach latency (--verbose, the bench) */
	uint64_t t_start, t_attached, t_first, detach_ns;
	struct calibration cal; /* zero: times not compensated */
	bool status_shown; /* the live line is on the terminal: clear it before more output */
	struct top *view; /* pyuprof top: drawn at each turn of the loop; NULL otherwise */
};

static struct proc_rec *find_proc(const struct session *s, pid_t pid)
{
	for (uint32_t i = 0; i < s->nprocs; i++)
		if (s->procs[i]->pid == pid)
			return s->procs[i];
	return NULL;
}

static struct proc_rec *add_proc(struct session *s, pid_t pid, pid_t parent)
{
	struct proc_rec *pr;

	if (array_grow((void **)&s->procs, &s->procs_cap, sizeof(*s->procs), s->nprocs + 1))
		return NULL;
	pr = proc_rec__new(pid, parent, s->held);
	if (pr) {
		pr->want_exits = env.exits;
		s->procs[s->nprocs++] = pr;
	}
	return pr;
}

/*
 * A thread stopped by our signal: read its request, then do it while it stands still. One
 * that needs the whole process stopped keeps it stopped: the main loop stops the rest.
 */
static bool on_request(void *ctx, pid_t pid, pid_t tid)
{
	struct session *s = ctx;
	struct proc_rec *pr = find_proc(s, pid);
	int err;

	if (!pr || !pr->tr)
		return false;
	tracer__consume(pr->tr);
	if (s->stopping)
		return false;
	err = hook_service(&pr->target, &pr->hooks, tid);
	if (err)
		wlog("cannot write into pid %d: %s", pid, strerror(-err));
	if (pr->hooks.watch_off)
		tracer__stop_tramp_watch(pr->tr);
	return pr->hooks.wait_all;
}

static int record(struct session *s, uint64_t deadline_ns);
static void stop(struct session *s, uint64_t stop_ns);
static int start(struct session *s);

/* calib_record_fn: the snippet is launched and recorded as a target is, by this file's code */
static int record_calibration(void *ctx, char **argv, struct calib_run *run)
{
	struct session c = { .child_status = -1, .launched = true, .command = argv, .calib = run };
	pid_t target = child_pid, snippet;
	uint64_t t0 = now_ns(), t1, t2;
	int err;

	(void)ctx;
	if (exiting)
		return -EINTR;
	child_pid = 0;
	calibrating = 1;
	err = start(&c);
	snippet = child_pid; /* 0 if it was never started: the target is not ours to end */
	t1 = now_ns();
	if (!err)
		err = record(&c, now_ns() + 30000000000ull);
	t2 = now_ns();
	stop(&c, now_ns());
	dlog("calibration run: start %.3f s, run %.3f s, stop %.3f s", (t1 - t0) / 1e9,
	     (t2 - t1) / 1e9, (now_ns() - t2) / 1e9);
	if (snippet && !c.released)
		launch_abort(snippet);
	else if (snippet && c.child_status == -1)
		while (waitpid(snippet, &c.child_status, 0) < 0 && errno == EINTR)
			;
	if (!err && c.procs[0]->rec.err)
		err = c.procs[0]->rec.err;
	if (!err && (c.child_status == -1 || exit_status_of(c.child_status)))
		err = -ECHILD;
	for (uint32_t i = 0; i < c.nprocs; i++)
		proc_rec__free(c.procs[i]);
	free(c.procs);
	child_pid = target;
	calibrating = 0;
	return exiting ? -EINTR : err;
}

/*
 * Calibrates the probes' cost on the target's interpreter binary, run as the target's user.
 * On failure, says so in one line and leaves the times as recorded.
 */
static void calibrate_for(pid_t pid, struct calibration *cal)
{
	char exe[PATH_MAX + 1], link[64], why[512] = "";
	const char *base;
	struct stat st;
	ssize_t n;
	int err = -ENOENT;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		/* an embedding program is not an interpreter to be run with -c */
		if (strncmp(base, "python", 6))
			snprintf(why, sizeof(why), "%.400s is not a python interpreter", exe);
		else
			err = 0;
	} else {
		snprintf(why, sizeof(why), "cannot read %s: %s", link, strerror(errno));
	}
	/* the process's owner, as /proc shows it */
	snprintf(link, sizeof(link), "/proc/%d", pid);
	if (!err && stat(link, &st))
		err = -errno;
	if (!err)
		vlog("calibrating the probes' cost with %s", exe);
	if (!err)
		err = calibrate(exe, st.st_uid, st.st_gid, env.cpu_clock, record_calibration, NULL,
				cal, why, sizeof(why));
	if (err && exiting) /* stopped by a signal: nothing more is said or done */
		return;
	if (err) {
		wlog("cannot calibrate the probes' cost (%s): times are not compensated",
		     *why ? why : strerror(-err));
		snprintf(comp_note, sizeof(comp_note), "; not compensated (calibration failed)");
		memset(cal, 0, sizeof(*cal));
		return;
	}
	profile__set_compensation(&cal->comp);
	snprintf(comp_note, sizeof(comp_note), "; calibrated: %.2f µs a call, %.2f inside",
		 cal->comp.call_ns / 1e3, cal->comp.inside_ns / 1e3);
	vlog("calibration took %.3f s: %.0f ns a call, %.0f inside (by a call with a body: %.0f, "
	     "%.0f); %.0f ns a call unprobed", cal->took_s, (double)cal->comp.call_ns,
	     (double)cal->comp.inside_ns, (double)cal->body_call_ns,
	     (double)cal->body_inside_ns, (double)cal->plain_call_ns);
}

/* Launch or find the target and attach; on return the program runs and is recorded. */
static int start(struct session *s)
{
	struct proc_rec *pr = add_proc(s, s->pid, 0);
	bool writes;
	char why[512] = "";
	int err;

	if (!pr)
		return -ENOMEM;
	if (s->calib)
		calibrate__watch(s->calib, pr->rec.prof);
	if (s->launched) {
		err = launch_start(s->command, &s->pid, &pr->target, &s->child_status, why,
				   sizeof(why));
		if (err) {
			elog("%s", why);
			return err;
		}
		child_pid = pr->pid = pr->rec.live_pid = s->pid;
	} else {
		err = py_target__find(s->pid, &pr->target, why, sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
	}
	pr->has_target = true;
	/* an --exits this interpreter cannot have fails here, once, before any calibration */
	err = proc_rec__exits_possible(pr, why, sizeof(why));
	if (err) {
		elog("cannot record pid %d: %s", s->pid, why);
		return err;
	}
	/* before the target runs (launch) or is stopped (attach); not for the snippet itself */
	if (!s->calib && !env.no_compensation)
		calibrate_for(s->pid, &s->cal);
	if (exiting && !s->calib) {
		elog("stopped by a signal before recording pid %d", s->pid);
		return -EINTR;
	}

	if (s->launched) {
		err = proc_rec__start(pr, REC_LAUNCHED, NULL, env.ringbuf_mb, now_ns(), why,
				      sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
		writes = pr->hooks.slot != 0;
		err = writes || s->follow ? tracee__adopt(&s->held, s->pid, s->follow, on_request, s)
					  : launch_release(s->pid);
		if (err) {
			elog("cannot start %s: %s", s->command[0], strerror(-err));
			return err;
		}
		s->released = true;
	} else {
		/* attach: with the target stopped, check the layout on its live frames, take
		 * those frames as they are, attach, switch inlining off; then let it run */
		err = tracee__seize(&s->held, s->pid, s->follow, on_request, s);
		if (!err)
			err = tracee__stop(s->held, s->pid);
		if (err) {
			elog("cannot stop pid %d: %s%s", s->pid, strerror(-err),
			     err == -EPERM ? " (is it traced by a debugger?)" : "");
			return err;
		}
		pr->rec.held = s->held;
		err = proc_rec__start(pr, REC_ATTACHED, NULL, env.ringbuf_mb, now_ns(), why,
				      sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
		tracee__resume(s->held, s->pid);
		s->t_attached = now_ns();
		writes = pr->hooks.slot != 0;
		if (!writes && !s->follow) { /* nothing to write into it: no need to hold it */
			tracee__release(s->held);
			s->held = NULL;
		}
	}
	pr->rec.held = s->held;
	if (s->held)
		tracer__signal_requests(pr->tr, true);
	return 0;
}

/* Following: starts recording a process of the target's, stopped; it runs on either way. */
static void follow_start(struct session *s, struct proc_rec *pr, enum rec_start how)
{
	char why[512] = "";
	int err;

	err = proc_rec__start(pr, how, find_proc(s, pr->parent), env.ringbuf_mb, now_ns(), why,
			      sizeof(why));
	if (!err) {
		err = seeds__apply(&pr->seeds, &pr->rec);
		if (err)
			snprintf(why, sizeof(why), "%s", strerror(-err));
	}
	if (err) {
		wlog("pid %d (started by pid %d) is not recorded: %s", pr->pid, pr->parent, why);
		proc_rec__end(pr, now_ns());
		proc_rec__restore(pr);
		return;
	}
	tracer__signal_requests(pr->tr, true);
	vlog("recording pid %d (Python %s), started by pid %d", pr->pid, pr->version, pr->parent);
}

/* Following: a process of the target's was born, exec'd, loaded libpython or ended. It stands
 * stopped (but at its end) until it is resumed here. */
static void on_proc_event(struct session *s, const struct proc_event *ev)
{
	struct proc_rec *pr = find_proc(s, ev->kind == PROC_FORK ? ev->child : ev->pid);
	struct proc_rec *parent = find_proc(s, ev->pid);

	switch (ev->kind) {
	case PROC_FORK:
		/* its first stop may not have come in yet: wait for it */
		if (tracee__stop(s->held, ev->child))
			return; /* gone already (or it ran on: then it is not followed) */
		if (!pr)
			pr = add_proc(s, ev->child, ev->pid);
		/* a vfork child runs in its parent's memory until it execs: nothing to record
		 * yet; a fork child of a recorded process runs on in its frames */
		if (pr && !ev->vfork && parent && parent->tr && !s->stopping)
			follow_start(s, pr, REC_FORKED);
		tracee__resume(s->held, ev->child);
		return;
	case PROC_EXEC:
		if (!pr)
			pr = add_proc(s, ev->pid, 0);
		if (pr) {
			proc_rec__end(pr, now_ns());
			proc_rec__drop_image(pr);
		}
		if (pr && !s->stopping) {
			enum py_image_kind kind = py_image_kind(ev->pid);

			if (kind == IMAGE_HAS_PYTHON) {
				follow_start(s, pr, REC_LAUNCHED);
			} else if (kind == IMAGE_NEEDS_LIBPYTHON) {
				/* resumed, one system call at a time, until PROC_LOADED */
				if (!tracee__watch_loader(s->held, ev->pid))
					return;
			}
		}
		tracee__resume(s->held, ev->pid);
		return;
	case PROC_LOADED:
		if (pr && !s->stopping)
			follow_start(s, pr, REC_LAUNCHED);
		tracee__resume(s->held, ev->pid);
		return;
	case PROC_EXIT:
		if (pr) {
			pr->gone = true;
			proc_rec__end(pr, now_ns());
		}
		return;
	}
}

static uint64_t total_calls(const struct session *s)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->nprocs; i++)
		n += s->procs[i]->rec.prof->n.calls;
	return n;
}

/* What the BPF side of every recorded process counted so far (lost events above all). */
static void live_counters(const struct session *s, struct pyuprof_stats *b)
{
	for (uint32_t i = 0; i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];
		struct pyuprof_stats live = { 0 };

		if (pr->tr)
			tracer__counters(pr->tr, &live);
		proc_rec__add_counters(b, &live);
		proc_rec__add_counters(b, &pr->bstats);
	}
}

/* The live line on a terminal: how the recording goes, redrawn in place once a second. */
static void show_status(struct session *s, uint64_t start_ns, uint64_t *last_ns,
			uint64_t *last_calls)
{
	uint64_t now = now_ns(), calls = total_calls(s), lost;
	struct pyuprof_stats b = { 0 };
	uint32_t funcs = 0, threads = 0, i;

	if (now - *last_ns < 1000000000ull)
		return;
	live_counters(s, &b);
	for (i = 0; i < s->nprocs; i++) {
		funcs += s->procs[i]->rec.prof->nfuncs;
		threads += s->procs[i]->rec.prof->nthreads;
	}
	lost = b.lost_calls + b.lost_returns + b.lost_codes + b.lost_requests;
	fprintf(stderr, "\rpyuprof: %.0f s, %llu calls (%.0f/s), %u functions, %u threads, ",
		(now - start_ns) / 1e9, (unsigned long long)calls,
		(calls - *last_calls) / ((now - *last_ns) / 1e9), funcs, threads);
	if (s->follow)
		fprintf(stderr, "%u processes, ", s->nprocs);
	fprintf(stderr, "%llu lost\033[K", (unsigned long long)lost);
	*last_ns = now;
	*last_calls = calls;
	s->status_shown = true;
}

/* Handles what the probes of every recorded process sent. Returns 0 or -errno (fatal). */
static int consume_all(struct session *s)
{
	for (uint32_t i = 0; i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];
		int err;

		if (!pr->tr)
			continue;
		err = tracer__consume(pr->tr);
		if (err < 0) {
			elog("reading events failed: %s", errstr(err));
			return err;
		}
		if (err > 0 && !s->t_first)
			s->t_first = now_ns();
		if (!pr->rec.err)
			continue;
		if (i == 0)
			return pr->rec.err;
		/* a subprocess whose recording failed (said where it failed) is let go */
		wlog("pid %d is no longer recorded", pr->pid);
		proc_rec__end(pr, now_ns());
		if (!tracee__stop(s->held, pr->pid)) {
			proc_rec__restore(pr);
			tracee__resume(s->held, pr->pid);
		}
	}
	return 0;
}

/* Consumes events until a stop condition. Returns 0 or -errno. */
static int record(struct session *s, uint64_t deadline_ns)
{
	/* attach mode only: a launched program writes to the same terminal */
	bool live = !s->launched && !env.quiet && log_level >= LOG_INFO && isatty(STDERR_FILENO) &&
		    !s->view;
	uint64_t start_ns = now_ns(), last_ns = start_ns, last_calls = 0;
	struct pollfd *pfd = NULL;
	struct proc_event ev;
	uint32_t cap = 0, n, i;
	int err = 0;

	while (!exiting) {
		if (array_grow((void **)&pfd, &cap, sizeof(*pfd), s->nprocs + 2)) {
			err = -ENOMEM;
			break;
		}
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = s->held ? tracee__fd(s->held) : -1,
					    .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = s->view ? top__fd(s->view) : -1, .events = POLLIN };
		for (i = 0; i < s->nprocs; i++)
			if (s->procs[i]->tr)
				pfd[n++] = (struct pollfd){ .fd = tracer__epoll_fd(s->procs[i]->tr),
							    .events = POLLIN };
		if (poll(pfd, n, 100) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		err = consume_all(s);
		if (err)
			break;
		if (s->held && tracee__handle(s->held, &s->child_status) == -ESRCH) {
			s->target_gone = true;
			break;
		}
		while (s->held && tracee__next_event(s->held, &ev))
			on_proc_event(s, &ev);
		/* requests whose thread could not be signalled, or that wait for the whole
		 * process (their thread stands stopped meanwhile): do them with it stopped */
		for (i = 0; s->held && i < s->nprocs; i++) {
			struct proc_rec *pr = s->procs[i];

			if (!pr->tr || !pr->hooks.npending || tracee__stop(s->held, pr->pid))
				continue;
			err = hook_service(&pr->target, &pr->hooks, 0);
			tracee__resume(s->held, pr->pid);
			if (err)
				wlog("cannot write into pid %d: %s", pr->pid, strerror(-err));
			err = 0;
		}
		if (live)
			show_status(s, start_ns, &last_ns, &last_calls);
		if (s->view) { /* pyuprof top: its keys, and its screen once an interval */
			struct pyuprof_stats b = { 0 };

			if (top__keys(s->view))
				break;
			live_counters(s, &b);
			top__draw(s->view, s->procs[0]->rec.prof, &b, now_ns());
		}
		if (deadline_ns && now_ns() >= deadline_ns)
			break;
		if (s->launched && !s->held) {
			if (waitpid(s->pid, &s->child_status, WNOHANG) == s->pid) {
				s->target_gone = true;
				break;
			}
		} else if (proc_alive(s->pid)) {
			/* its wait status, if a stop's drain reaped it meanwhile */
			if (s->held)
				tracee__handle(s->held, &s->child_status);
			s->target_gone = true;
			break;
		}
	}
	free(pfd);
	return err;
}

/* Ends the recording and leaves every process as it was (but for the 3.12 budget raise). */
static void stop(struct session *s, uint64_t stop_ns)
{
	uint64_t t0 = now_ns();
	uint32_t i;

	/* from here on nothing asks for a write; then put each process back as it was */
	s->stopping = true;
	for (i = 0; i < s->nprocs; i++)
		proc_rec__end(s->procs[i], stop_ns);
	if (!s->held) {
		s->detach_ns = now_ns() - t0;
		return;
	}
	for (i = 0; i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->has_target || pr->gone || !pr->hooks.n || (i == 0 && s->target_gone))
			continue;
		if (tracee__stop(s->held, pr->pid))
			wlog("cannot stop pid %d to restore its eval_frame hook: left switched; the "
			     "program runs correctly, only without call inlining", pr->pid);
		else
			proc_rec__restore(pr);
	}
	tracee__release(s->held);
	s->held = NULL;
	s->detach_ns = now_ns() - t0;
}

/* "out.prof" -> "out.PID.prof", "p.pb.gz" -> "p.PID.pb.gz"; another name gets ".PID" at its
 * end. */
static char *process_path(const char *base, pid_t pid)
{
	static const char *const suffixes[] = { ".prof", ".pb.gz", ".pb" };
	size_t len = strlen(base), n;
	char *path;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		n = strlen(suffixes[i]);
		if (len > n && !strcmp(base + len - n, suffixes[i]))
			return asprintf(&path, "%.*s.%d%s", (int)(len - n), base, pid,
					suffixes[i]) < 0 ? NULL : path;
	}
	return asprintf(&path, "%s.%d", base, pid) < 0 ? NULL : path;
}

/*
 * Following: each process that made calls gets its own profile, and the merge of them all
 * (into *merged) is what the outputs show. Returns 0 or -errno.
 */
static int write_processes(struct session *s, const char *base, uint64_t stop_ns,
			   struct profile **merged)
{
	struct profile *m = profile__new();
	uint32_t i;
	int err = m ? 0 : -ENOMEM;

	for (i = 0; i < s->nprocs && !err; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->rec.prof->n.calls)
			continue;
		pr->rec.prof->pid = (uint32_t)pr->pid;
		err = profile__merge(m, pr->rec.prof);
		if (err)
			break;
		pr->written = process_path(base, pr->pid);
		if (!pr->written) {
			err = -ENOMEM;
			break;
		}
		if (outputs__write_pstats(pr->written, pr->rec.prof)) {
			free(pr->written);
			pr->written = NULL;
		}
		if (env.pprof) {
			char *pp = process_path(env.pprof, pr->pid);

			/* like the process's .prof: a failure is reported, the others go on */
			if (!pp) {
				err = -ENOMEM;
				break;
			}
			outputs__write_pprof(pp, pr->rec.prof);
			free(pp);
		}
	}
	if (err) {
		profile__free(m);
		return err;
	}
	profile__finish(m, stop_ns);
	*merged = m;
	return 0;
}

/* Following: one line per process, in the order they were met. */
static void print_processes(const struct session *s)
{
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct proc_rec *pr = s->procs[i];
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

/* pyuprof record: the profile's default name needs the pid, known only once started */
static int cmd_record(void)
{
	struct session s = { .pid = env.pid, .command = env.command, .child_status = -1,
			     .follow = env.subprocesses };
	struct pyuprof_stats bstats = { 0 };
	struct output_paths paths = {
		.prof = env.output, .svg = env.svg, .flamegraph = env.flamegraph,
		.collapsed = env.collapsed, .pprof = env.pprof, .trace = env.trace, .raw = env.raw,
	};
	struct raw_header rh = { .magic = RAW_MAGIC, .version = RAW_VERSION, .clock = 1 };
	struct raw_end re = { .type = RAW_END };
	char default_prof[64], tmp_prof[] = "pyuprof.prof";
	struct profile *merged = NULL;
	struct proc_rec *root = NULL;
	struct outputs out;
	const char *failed = NULL;
	uint64_t start_ns, stop_ns, run_ns = 0, runs = 0;
	uint32_t i;
	int err, exit_code = 1;

	if (!has_privileges()) {
		elog("needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE): run it with sudo");
		return 1;
	}
	if (env.live && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		elog("pyuprof top draws on a terminal: stdin and stdout must be one");
		return 1;
	}
	/* fail on an unwritable output before touching any process; the default name is set
	 * once the pid is known (its temporary file is already in the right directory) */
	if (!paths.prof && !env.live)
		paths.prof = tmp_prof;
	err = outputs__open(&out, &paths, &failed);
	if (err) {
		elog("cannot write %s: %s", failed, strerror(-err));
		return 1;
	}
	install_signals();
	tracer__set_cpu_clock(env.cpu_clock);
	profile__set_cpu_clock(env.cpu_clock);
	rh.clock = env.cpu_clock ? RAW_CLOCK_THREAD_CPU : rh.clock;
	s.t_start = now_ns();
	s.launched = env.command != NULL;
	err = start(&s);
	root = s.nprocs ? s.procs[0] : NULL;
	if (err)
		goto cleanup;
	if (!env.output && !env.live) {
		snprintf(default_prof, sizeof(default_prof), "pyuprof-%d.prof", s.pid);
		snprintf(out.prof.path, sizeof(out.prof.path), "%s", default_prof);
		out.paths.prof = default_prof;
	}
	out.run.pid = (uint32_t)s.pid;
	if (run_info__read_command(&out.run, s.pid)) /* none: the titles go without it */
		vlog("cannot read the command line of pid %d", s.pid);
	root->rec.prof->pid = (uint32_t)s.pid;
	ilog("recording pid %d (Python %s)%s%s", s.pid, root->version,
	     s.follow ? " and the processes it starts" : "",
	     s.launched ? "" : env.live ? "; q to quit" : "; Ctrl-C to stop");
	if (env.live) {
		char title[RUN_COMMAND_LEN + 96];

		snprintf(title, sizeof(title), "pid %d (Python %s): %s", s.pid, root->version,
			 out.run.command);
		s.view = top__new(title, (uint64_t)(env.interval * 1e9), now_ns());
		if (!s.view) {
			err = -errno;
			elog("cannot draw on the terminal: %s", strerror(errno));
			goto cleanup;
		}
	}
	start_ns = now_ns();
	err = outputs__start_trace(&out, root->rec.prof, (uint32_t)s.pid, start_ns,
				   env.trace_min_us);
	if (!err && env.raw) {
		rh.pid = (__u32)s.pid;
		rh.start_ns = start_ns;
		rh.flags = root->exits == EXITS_USDT ? RAW_FLAG_EXIT_PROBE : 0;
		snprintf(rh.python, sizeof(rh.python), "%s", root->version);
		err = raw_begin(&out.raw, &rh);
		if (!err) {
			struct raw_command rc = { .type = RAW_COMMAND };

			memcpy(rc.command, out.run.command, sizeof(rc.command));
			err = raw_record(&out.raw, &rc, sizeof(rc));
		}
		root->rec.raw = &out.raw;
		if (!err && s.cal.comp.call_ns) {
			struct raw_calib rc = { .type = RAW_CALIB, .call_ns = s.cal.comp.call_ns,
						.inside_ns = s.cal.comp.inside_ns };

			err = raw_record(&out.raw, &rc, sizeof(rc));
		}
	}
	if (!err)
		err = seeds__apply(&root->seeds, &root->rec);
	if (!err)
		err = record(&s, env.duration > 0 ? start_ns + (uint64_t)(env.duration * 1e9) : 0);
	stop_ns = now_ns();
	top__free(s.view); /* the terminal as it was, for what is said from here on */
	s.view = NULL;
	for (i = 0; i < s.nprocs; i++)
		if (s.procs[i]->tr)
			s.procs[i]->rec.stop_ns = stop_ns;
	if (s.status_shown)
		fputs("\r\033[K", stderr);
	stop(&s, stop_ns);
	for (i = 0; i < s.nprocs; i++) {
		struct proc_rec *pr = s.procs[i];

		proc_rec__add_counters(&bstats, &pr->bstats);
		run_ns += pr->bpf_run_ns;
		runs += pr->bpf_runs;
	}
	if (root && root->has_target) {
		uint64_t direct = 0;

		for (i = 0; i < s.nprocs; i++)
			direct += s.procs[i]->direct_calls;
		vlog("returns from %s; %llu calls bypassed the trampoline", exits_name(root->exits),
		     (unsigned long long)direct);
	}
	if (runs) /* for the bench */
		vlog("BPF: %llu probe runs, %.0f ns each", (unsigned long long)runs,
		     (double)run_ns / (double)runs);
	if (!s.launched && root && root->has_target)
		vlog("attach: probes in place %.3f s after start, first event after %.3f s; "
		     "detach took %.3f s", (s.t_attached - s.t_start) / 1e9,
		     s.t_first ? (s.t_first - s.t_start) / 1e9 : -1.0, s.detach_ns / 1e9);
	if (err)
		goto cleanup;
	if (env.live) { /* pyuprof top: nothing to write; what was lost is still said */
		print_notes(root->rec.prof, &root->hooks, &bstats, root->version,
			    root->target.exit_probe.offset != 0);
		ilog("%llu calls, %u functions, %u threads, %llu lost events, %.3f s; detached "
		     "from pid %d%s", (unsigned long long)root->rec.prof->n.calls,
		     root->rec.prof->nfuncs, root->rec.prof->nthreads,
		     (unsigned long long)(bstats.lost_calls + bstats.lost_returns +
					  bstats.lost_codes + bstats.lost_requests),
		     (stop_ns - start_ns) / 1e9, s.pid,
		     s.target_gone ? ", which has exited" : ", which runs on");
		exit_code = 0;
		goto cleanup;
	}
	if (env.raw) {
		re.stop_ns = stop_ns;
		re.stats = bstats;
		err = raw_record(&out.raw, &re, sizeof(re));
	}
	if (!err && s.follow)
		err = write_processes(&s, out.paths.prof, stop_ns, &merged);
	if (!err)
		err = conclude(&out, merged ? merged : root->rec.prof, &root->hooks, &bstats,
			       root->version, root->exits == EXITS_USDT,
			       (stop_ns - start_ns) / 1e9, s.follow ? &s : NULL);
	exit_code = err ? 1 : 0;

cleanup:
	top__free(s.view);
	outputs__abort(&out);
	if (s.held) /* an error after the target was taken: put it back first */
		stop(&s, now_ns());
	if (child_pid && !s.released)
		launch_abort(child_pid); /* the program has not run any of its code */
	else if (child_pid && s.child_status == -1)
		while (waitpid(child_pid, &s.child_status, 0) < 0 && errno == EINTR)
			;
	for (i = 0; i < s.nprocs; i++)
		proc_rec__free(s.procs[i]);
	free(s.procs);
	profile__free(merged);
	/* a launched program's own status wins, whatever happened to the profile */
	if (s.released && s.child_status != -1)
		return exit_status_of(s.child_status);
	return exit_code;
}

/* report's raw_read callback: the calibration is taken (or left, --no-compensation) before the
 * events it applies to; everything else is the recorder's */
static int replay_record(void *ctx, void *data, size_t size)
{
	const struct raw_calib *rc = data;

	if (size < sizeof(__u32) || rc->type != RAW_CALIB)
		return recorder__handle(ctx, data, size);
	if (size != sizeof(*rc))
		return -EBADMSG;
	if (!env.no_compensation) {
		profile__set_compensation(&(struct compensation){ .call_ns = rc->call_ns,
								  .inside_ns = rc->inside_ns });
		snprintf(comp_note, sizeof(comp_note), "; calibrated: %.2f µs a call, %.2f inside",
			 rc->call_ns / 1e3, rc->inside_ns / 1e3);
	}
	return 0;
}

/* pyuprof report: the same outputs again, from a raw recording; no root, no target. */
static int cmd_report(void)
{
	struct output_paths paths = {
		.prof = env.output, .svg = env.svg, .flamegraph = env.flamegraph,
		.collapsed = env.collapsed, .pprof = env.pprof, .trace = env.trace,
	};
	struct hook_state hooks = { 0 };
	struct recorder rec = { .hooks = &hooks };
	struct raw_header h;
	struct raw_end end;
	struct outputs out;
	const char *failed = NULL;
	char why[512] = "";
	uint64_t records;
	int err;

	err = outputs__open(&out, &paths, &failed);
	if (err) {
		elog("cannot write %s: %s", failed, strerror(-err));
		return 1;
	}
	rec.prof = profile__new();
	if (!rec.prof) {
		outputs__abort(&out);
		return 1;
	}
	/* the trace needs the header's pid and start before the first event */
	err = raw_header_read(env.input, &h, why, sizeof(why));
	rec.target_version = h.python;
	rec.run = &out.run;
	out.run.pid = h.pid;
	rec.prof->pid = err ? 0 : h.pid;
	profile__set_cpu_clock(h.clock == RAW_CLOCK_THREAD_CPU);
	if (!err && h.clock == RAW_CLOCK_THREAD_CPU && env.trace) {
		snprintf(why, sizeof(why), "%s was recorded with --clock cpu: no --trace from it",
			 env.input);
		err = -EINVAL;
	}
	if (!err)
		err = outputs__start_trace(&out, rec.prof, h.pid, h.start_ns, env.trace_min_us);
	if (!err)
		err = raw_read(env.input, &h, &end, replay_record, &rec, &records, why,
			       sizeof(why));
	/* recorded with --no-compensation, or by a pyuprof that did not calibrate */
	if (!err && !env.no_compensation && !comp_note[0])
		wlog("%s holds no calibration: times are as recorded, probe cost included",
		     env.input);
	if (err) {
		if (*why)
			elog("%s", why);
		else if (rec.err)
			err = rec.err;
		else
			elog("cannot report on %s: %s", env.input, strerror(-err));
	} else {
		profile__finish(rec.prof, end.stop_ns);
		err = conclude(&out, rec.prof, &hooks, &end.stats, h.python,
			       h.flags & RAW_FLAG_EXIT_PROBE, (end.stop_ns - h.start_ns) / 1e9,
			       NULL);
	}
	outputs__abort(&out);
	hook_state_free(&hooks);
	profile__free(rec.prof);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	enum command cmd = cli_parse(argc, argv);

	log_level = env.debug ? LOG_DEBUG : env.verbose ? LOG_VERBOSE : env.quiet ? LOG_ERROR
										: LOG_INFO;
	libbpf_set_print(libbpf_print_fn);
	if (cmd == CMD_DUMP)
		return dump_run(env.pid, env.json);
	return cmd == CMD_REPORT ? cmd_report() : cmd_record(); /* top: a record shown live */
}
