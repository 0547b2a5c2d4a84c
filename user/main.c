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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "events.h"
#include "hook.h"
#include "launch.h"
#include "log.h"
#include "outputs.h"
#include "raw.h"
#include "proc.h"
#include "profile.h"
#include "py_target.h"
#include "report.h"
#include "seed.h"
#include "tracee.h"
#include "tracer.h"

static volatile sig_atomic_t exiting;
static volatile pid_t child_pid;

/*
 * Attach mode: any of these signals ends the recording. Launch mode: the program decides; a
 * signal sent to pyuprof alone is passed on to it, while a terminal's Ctrl-C already reached it
 * (same process group) and is not sent twice.
 */
static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (!child_pid) {
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
	signal(SIGPIPE, SIG_IGN);
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
	const unsigned long long need = 1ull << 19 | 1ull << 38 | 1ull << 39;
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return (eff & need) == need;
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
	if (p->n.open_at_stop)
		vlog("%llu calls were still running at the stop and were closed there",
		     (unsigned long long)p->n.open_at_stop);
}

/*
 * Writes the outputs of a finished profile and prints the summary. Returns 0, or -errno when an
 * output could not be written or nothing was recorded.
 */
static int conclude(struct outputs *out, struct profile *p, const struct hook_state *h,
		    const struct pyuprof_stats *bs, const char *version, bool exit_probe,
		    double wall_s)
{
	uint64_t lost = bs->lost_calls + bs->lost_returns + bs->lost_codes + bs->lost_requests;
	int err = outputs__write(out, p, env.node_thres, env.edge_thres, env.threads);

	if (err == -ENODATA && !p->n.calls) {
		elog("no Python calls were recorded; nothing written");
		return err;
	}
	if (env.top && !env.quiet)
		report_print(stderr, p, env.top);
	print_notes(p, h, bs, version, exit_probe);
	ilog("%llu calls, %u functions, %u threads, %llu lost events, %.3f s wall%s%s",
	     (unsigned long long)p->n.calls, p->nfuncs, p->nthreads, (unsigned long long)lost,
	     wall_s, out->paths.prof && !err ? "; wrote " : "",
	     out->paths.prof && !err ? out->paths.prof : "");
	return err;
}

/* One recording: the target, the probes, the writes into the target, the profile. */
struct session {
	pid_t pid;
	bool launched, released, target_gone;
	int child_status; /* launch mode: the program's wait status, -1 until known */
	struct py_target target;
	struct tracer *tr;
	struct tracee *held; /* 3.11+: the target under ptrace, for the writes */
	struct hook_state hooks;
	struct recorder rec;
	struct seeds seeds; /* attach: the frames running then, applied before any event */
	bool stopping;
	/* CLOCK_MONOTONIC of pyuprof's start, of the probes in place, of the first event
	 * handled, and how long detaching took: the attach latency (--verbose, the bench) */
	uint64_t t_start, t_attached, t_first, detach_ns;
	bool status_shown; /* the live line is on the terminal: clear it before more output */
};

/* A thread stopped by our signal: read its request, then do it while it stands still. */
static void on_request(void *ctx, pid_t tid)
{
	struct session *s = ctx;
	int err;

	tracer__consume(s->tr);
	if (s->stopping)
		return;
	err = hook_service(&s->target, &s->hooks, tid);
	if (err)
		wlog("cannot write into pid %d: %s", s->pid, strerror(-err));
}

/* Launch or find the target and attach; on return the program runs and is recorded. */
static int start(struct session *s)
{
	bool writes;
	char why[512] = "";
	int err;

	if (s->launched) {
		err = launch_start(env.command, &s->pid, &s->target, &s->child_status, why,
				   sizeof(why));
		if (err) {
			elog("%s", why);
			return err;
		}
		child_pid = s->pid;
	} else {
		s->pid = env.pid;
		err = py_target__find(s->pid, &s->target, why, sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
	}
	vlog("Python %s in %s (pid %d), %d return sites", s->target.version, s->target.path,
	     s->pid, s->target.nret);
	s->rec.target_version = s->target.version;
	s->rec.hooks = &s->hooks;
	s->rec.live_pid = s->pid;
	writes = s->target.offsets->bpf.PyInterpreterState_eval_frame != 0;

	if (s->launched) {
		err = tracer__start(&s->tr, &s->target, env.ringbuf_mb, recorder__handle, &s->rec);
		if (err) {
			elog("cannot attach probes to pid %d: %s", s->pid, errstr(err));
			return err;
		}
		/* written before the interpreter starts: its first call is already seen */
		err = writes ? hook_preinit(&s->target, &s->hooks) : 0;
		if (!err)
			err = writes ? tracee__adopt(&s->held, s->pid, on_request, s)
				     : launch_release(s->pid);
		if (err) {
			elog("cannot start %s: %s", env.command[0], strerror(-err));
			return err;
		}
		s->released = true;
	} else {
		/* attach: with the target stopped, check the layout on its live frames, take
		 * those frames as they are, attach, switch inlining off; then let it run */
		err = tracee__seize(&s->held, s->pid, on_request, s);
		if (!err)
			err = tracee__stop_all(s->held);
		if (err) {
			elog("cannot stop pid %d: %s%s", s->pid, strerror(-err),
			     err == -EPERM ? " (is it traced by a debugger?)" : "");
			return err;
		}
		err = py_target__check_live(&s->target, why, sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
		err = seeds__walk(&s->seeds, &s->target, s->held, now_ns());
		if (!err)
			err = tracer__start(&s->tr, &s->target, env.ringbuf_mb, recorder__handle,
					    &s->rec);
		if (err) {
			elog("cannot attach probes to pid %d: %s", s->pid, errstr(err));
			return err;
		}
		err = writes ? hook_install(&s->target, &s->hooks) : 0;
		if (err) {
			elog("cannot switch the call inlining of pid %d off: %s", s->pid,
			     strerror(-err));
			return err;
		}
		tracee__resume_all(s->held);
		s->t_attached = now_ns();
		if (!writes) { /* nothing to write into it: no need to hold it */
			tracee__release(s->held);
			s->held = NULL;
		}
	}
	s->rec.held = s->held;
	if (s->held)
		tracer__signal_requests(s->tr, true);
	return 0;
}

/* The live line on a terminal: how the recording goes, redrawn in place once a second. */
static void show_status(struct session *s, uint64_t start_ns, uint64_t *last_ns,
			uint64_t *last_calls)
{
	struct pyuprof_stats b;
	uint64_t now = now_ns(), calls = s->rec.prof->n.calls;

	if (now - *last_ns < 1000000000ull)
		return;
	tracer__counters(s->tr, &b);
	fprintf(stderr, "\rpyuprof: %.0f s, %llu calls (%.0f/s), %u functions, %u threads, %llu lost"
		"\033[K", (now - start_ns) / 1e9, (unsigned long long)calls,
		(calls - *last_calls) / ((now - *last_ns) / 1e9), s->rec.prof->nfuncs,
		s->rec.prof->nthreads,
		(unsigned long long)(b.lost_calls + b.lost_returns + b.lost_codes +
				     b.lost_requests));
	*last_ns = now;
	*last_calls = calls;
	s->status_shown = true;
}

/* Consumes events until a stop condition. Returns 0 or -errno. */
static int record(struct session *s, uint64_t deadline_ns)
{
	/* attach mode only: a launched program writes to the same terminal */
	bool live = !s->launched && !env.quiet && log_level >= LOG_INFO && isatty(STDERR_FILENO);
	uint64_t start_ns = now_ns(), last_ns = start_ns, last_calls = 0;
	struct pollfd pfd[2] = {
		{ .fd = tracer__epoll_fd(s->tr), .events = POLLIN },
		{ .fd = s->held ? tracee__fd(s->held) : -1, .events = POLLIN },
	};
	int err;

	while (!exiting) {
		if (poll(pfd, 2, 100) < 0 && errno != EINTR)
			return -errno;
		err = tracer__consume(s->tr);
		if (err < 0) {
			elog("reading events failed: %s", errstr(err));
			return err;
		}
		if (err > 0 && !s->t_first)
			s->t_first = now_ns();
		if (s->rec.err)
			return s->rec.err;
		if (s->held && tracee__handle(s->held, &s->child_status) == -ESRCH) {
			s->target_gone = true;
			return 0;
		}
		/* requests whose thread could not be signalled: do them with all stopped */
		if (s->held && s->hooks.npending && !tracee__stop_all(s->held)) {
			err = hook_service(&s->target, &s->hooks, 0);
			tracee__resume_all(s->held);
			if (err)
				wlog("cannot write into pid %d: %s", s->pid, strerror(-err));
		}
		if (live)
			show_status(s, start_ns, &last_ns, &last_calls);
		if (deadline_ns && now_ns() >= deadline_ns)
			return 0;
		if (s->launched && !s->held) {
			if (waitpid(s->pid, &s->child_status, WNOHANG) == s->pid) {
				s->target_gone = true;
				return 0;
			}
		} else if (proc_alive(s->pid)) {
			s->target_gone = true;
			return 0;
		}
	}
	return 0;
}

/* Ends the recording and leaves the target as it was (but for the 3.12 budget raise). */
static void stop(struct session *s)
{
	/* from here on nothing asks for a write; then put the target back as it was */
	uint64_t t0 = now_ns();

	s->stopping = true;
	if (s->tr) {
		tracer__stop_hook(s->tr);
		tracer__detach(s->tr);
	}
	if (s->held) {
		if (s->target_gone)
			;
		else if (tracee__stop_all(s->held))
			wlog("cannot stop pid %d to restore its eval_frame hook: left switched; the "
			     "program runs correctly, only without call inlining", s->pid);
		else
			hook_restore(&s->target, &s->hooks);
		tracee__release(s->held);
		s->held = NULL;
	}
	s->detach_ns = now_ns() - t0;
}

/* pyuprof record: the profile's default name needs the pid, known only once started */
static int cmd_record(void)
{
	struct session s = { .child_status = -1 };
	struct pyuprof_stats bstats = { 0 };
	struct output_paths paths = {
		.prof = env.output, .svg = env.svg, .flamegraph = env.flamegraph,
		.collapsed = env.collapsed, .trace = env.trace, .raw = env.raw,
	};
	struct raw_header rh = { .magic = RAW_MAGIC, .version = RAW_VERSION, .clock = 1 };
	struct raw_end re = { .type = RAW_END };
	char default_prof[64], tmp_prof[] = "pyuprof.prof";
	struct outputs out;
	const char *failed = NULL;
	uint64_t start_ns, stop_ns, run_ns = 0, runs = 0;
	int err, exit_code = 1;

	if (!has_privileges()) {
		elog("needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE): run it with sudo");
		return 1;
	}
	/* fail on an unwritable output before touching any process; the default name is set
	 * once the pid is known (its temporary file is already in the right directory) */
	if (!paths.prof)
		paths.prof = tmp_prof;
	err = outputs__open(&out, &paths, &failed);
	if (err) {
		elog("cannot write %s: %s", failed, strerror(-err));
		return 1;
	}
	install_signals();
	s.t_start = now_ns();
	s.launched = env.command != NULL;
	s.rec.prof = profile__new();
	if (!s.rec.prof) {
		err = -ENOMEM;
		elog("out of memory");
		goto cleanup;
	}
	err = start(&s);
	if (err)
		goto cleanup;
	if (!env.output) {
		snprintf(default_prof, sizeof(default_prof), "pyuprof-%d.prof", s.pid);
		snprintf(out.prof.path, sizeof(out.prof.path), "%s", default_prof);
		out.paths.prof = default_prof;
	}
	ilog("recording pid %d (Python %s)%s", s.pid, s.target.version,
	     s.launched ? "" : "; Ctrl-C to stop");
	start_ns = now_ns();
	err = outputs__start_trace(&out, s.rec.prof, (uint32_t)s.pid, start_ns, env.trace_min_us);
	if (!err && env.raw) {
		rh.pid = (__u32)s.pid;
		rh.start_ns = start_ns;
		rh.flags = s.target.exit_probe.offset ? RAW_FLAG_EXIT_PROBE : 0;
		snprintf(rh.python, sizeof(rh.python), "%s", s.target.version);
		err = raw_begin(&out.raw, &rh);
		s.rec.raw = &out.raw;
	}
	if (!err)
		err = seeds__apply(&s.seeds, &s.rec);
	if (!err)
		err = record(&s, env.duration > 0 ? start_ns + (uint64_t)(env.duration * 1e9) : 0);
	stop_ns = s.rec.stop_ns = now_ns();
	if (s.status_shown)
		fputs("\r\033[K", stderr);
	stop(&s);
	tracer__counters(s.tr, &bstats);
	if (!tracer__run_time(s.tr, &run_ns, &runs) && runs) /* for the bench */
		vlog("BPF: %llu probe runs, %.0f ns each", (unsigned long long)runs,
		     (double)run_ns / (double)runs);
	if (!s.launched)
		vlog("attach: probes in place %.3f s after start, first event after %.3f s; "
		     "detach took %.3f s", (s.t_attached - s.t_start) / 1e9,
		     s.t_first ? (s.t_first - s.t_start) / 1e9 : -1.0, s.detach_ns / 1e9);
	if (err)
		goto cleanup;
	profile__finish(s.rec.prof, stop_ns);
	if (env.raw) {
		re.stop_ns = stop_ns;
		re.stats = bstats;
		err = raw_record(&out.raw, &re, sizeof(re));
	}
	if (!err)
		err = conclude(&out, s.rec.prof, &s.hooks, &bstats, s.target.version,
			       s.target.exit_probe.offset != 0, (stop_ns - start_ns) / 1e9);
	exit_code = err ? 1 : 0;

cleanup:
	outputs__abort(&out);
	if (s.held) /* an error after the target was taken: put it back first */
		stop(&s);
	tracer__free(s.tr);
	if (child_pid && !s.released)
		launch_abort(child_pid); /* the program has not run any of its code */
	else if (child_pid && s.child_status == -1)
		while (waitpid(child_pid, &s.child_status, 0) < 0 && errno == EINTR)
			;
	py_target__free(&s.target);
	hook_state_free(&s.hooks);
	seeds__free(&s.seeds);
	profile__free(s.rec.prof);
	/* a launched program's own status wins, whatever happened to the profile */
	if (s.released && s.child_status != -1)
		return exit_status_of(s.child_status);
	return exit_code;
}

/* pyuprof report: the same outputs again, from a raw recording; no root, no target. */
static int cmd_report(void)
{
	struct output_paths paths = {
		.prof = env.output, .svg = env.svg, .flamegraph = env.flamegraph,
		.collapsed = env.collapsed, .trace = env.trace,
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
	if (!err)
		err = outputs__start_trace(&out, rec.prof, h.pid, h.start_ns, env.trace_min_us);
	if (!err)
		err = raw_read(env.input, &h, &end, recorder__handle, &rec, &records, why,
			       sizeof(why));
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
			       h.flags & RAW_FLAG_EXIT_PROBE, (end.stop_ns - h.start_ns) / 1e9);
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
	return cmd == CMD_REPORT ? cmd_report() : cmd_record();
}
