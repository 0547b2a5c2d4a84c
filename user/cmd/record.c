// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyuprof record (and top, a recording shown live): find the target -> load and attach the
 * probes -> (3.11+) switch inlining off -> consume events until told to stop -> switch
 * inlining back on -> write the profile. The session (session.c) does the steps; this file is
 * their order, the outputs around them and the exit status.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/log.h"
#include "base/proc.h"
#include "cmd/cli.h"
#include "cmd/record.h"
#include "inject/hold_guard.h"
#include "inject/launch.h"
#include "inject/tsc.h"
#include "output/outputs.h"
#include "output/top.h"
#include "profile/raw.h"
#include "profile/run_info.h"
#include "record/probes.h"
#include "record/seed.h"
#include "record/session.h"
#include "record/summary.h"

/* CAP_BPF and CAP_PERFMON (BPF programs, uprobes), CAP_SYS_PTRACE (the target's memory, and
 * stopping it around writes). Root has them all. */
static bool has_privileges(void)
{
	return proc__has_caps(1ull << 19 | 1ull << 38 | 1ull << 39);
}

/* --raw: the header, the command and the calibration go first; the events follow as they come
 * (proc_rec writes them), and the end record last. Returns 0 or -errno. */
static int raw_begin_recording(struct outputs *out, const struct session *s,
			       struct proc_rec *root, uint64_t start_ns)
{
	struct raw_header rh = { .magic = RAW_MAGIC, .version = RAW_VERSION, .clock = 1 };
	struct raw_command rc = { .type = RAW_COMMAND };
	int err;

	rh.clock = env.cpu_clock ? RAW_CLOCK_THREAD_CPU : rh.clock;
	rh.pid = (__u32)s->pid;
	rh.start_ns = start_ns;
	rh.flags = root->exits == EXITS_USDT ? RAW_FLAG_EXIT_PROBE : 0;
	snprintf(rh.python, sizeof(rh.python), "%s", root->version);
	err = raw__begin(&out->file[OUTPUT_RAW], &rh);
	if (!err) {
		memcpy(rc.command, out->run.command, sizeof(rc.command));
		err = raw__record(&out->file[OUTPUT_RAW], &rc, sizeof(rc));
	}
	root->rec.raw = &out->file[OUTPUT_RAW];
	if (!err && s->cal.comp.call_ns) {
		struct raw_calib cal = { .type = RAW_CALIB, .call_ns = s->cal.comp.call_ns,
					 .inside_ns = s->cal.comp.inside_ns,
					 .done_ns = s->cal.comp.done_ns,
					 .ccall_ns = s->cal.comp.ccall_ns,
					 .cinside_ns = s->cal.comp.cinside_ns,
					 .gauge_ps = s->cal.comp.gauge_ps };

		err = raw__record(&out->file[OUTPUT_RAW], &cal, sizeof(cal));
	}
	return err;
}

/* -v, and the bench: how the probes did, and how long attaching and detaching took. */
static void say_probe_figures(const struct session *s, const struct proc_rec *root)
{
	uint64_t run_ns = 0, runs = 0, direct = 0, bad = 0, reordered = 0, flushes = 0, flushed = 0;
	uint64_t gauges = 0;
	double smin = 0, smax = 0;
	uint32_t i;

	for (i = 0; i < s->nprocs; i++) {
		run_ns += s->procs[i]->bpf_run_ns;
		runs += s->procs[i]->bpf_runs;
		direct += s->procs[i]->direct_calls;
		bad += s->procs[i]->rec.staged_bad;
		reordered += s->procs[i]->rec.prof->n.reordered;
		flushes += s->procs[i]->rec.prof->n.flushes;
		flushed += s->procs[i]->rec.prof->n.flushed_ns;
		gauges += s->procs[i]->rec.prof->n.gauges;
		if (s->procs[i]->rec.prof->n.speed_max > smax)
			smax = s->procs[i]->rec.prof->n.speed_max;
		if (s->procs[i]->rec.prof->n.speed_min &&
		    (!smin || s->procs[i]->rec.prof->n.speed_min < smin))
			smin = s->procs[i]->rec.prof->n.speed_min;
	}
	if (root && root->has_target)
		vlog("returns from %s; %llu calls bypassed the trampoline", exits__name(root->exits),
		     (unsigned long long)direct);
	if (flushes)
		vlog("%llu code flushes (a code object's first call) took %.3f ms: taken out of the "
		     "times", (unsigned long long)flushes, flushed / 1e6);
	if (gauges && smax)
		vlog("%llu speed gauge readings: the probes' cost taken at %.2f-%.2fx the calibrated "
		     "figures", (unsigned long long)gauges, smin, smax);
	else if (gauges)
		vlog("%llu speed gauge readings, not used (the calibration has none)",
		     (unsigned long long)gauges);
	if (reordered)
		vlog("%llu events were stamped before their thread's previous one (staged TSC stamps "
		     "and the kernel's clock differ by tens of ns): given that one's time",
		     (unsigned long long)reordered);
	if (bad)
		wlog("%llu staged records could not be read as calls or returns and were left out",
		     (unsigned long long)bad);
	if (runs) /* for the bench */
		vlog("BPF: %llu probe runs, %.0f ns each", (unsigned long long)runs,
		     (double)run_ns / (double)runs);
	if (!s->launched && root && root->has_target)
		vlog("attach: probes in place %.3f s after start, first event after %.3f s; "
		     "detach took %.3f s", (s->t_attached - s->t_start) / 1e9,
		     s->t_first ? (s->t_first - s->t_start) / 1e9 : -1.0, s->detach_ns / 1e9);
}

/* What the thread that holds the target does, and what it gives back. */
struct held_part {
	struct session *s;
	struct outputs *out;
	char *default_prof;
	size_t default_len;
	bool started; /* the target was taken (else err says why not) */
	uint64_t start_ns, stop_ns;
	int err;
};

/*
 * From taking the target to letting it go. The thread that runs this holds the target under
 * ptrace, and it ends right after: a thread of the target left asleep in a system call by a
 * stop (ptrace_hold.h) can be let go only by the kernel, as that thread exits, since a
 * PTRACE_DETACH would need it stopped.
 */
static void *record_held(void *arg)
{
	struct held_part *hp = arg;
	struct session *s = hp->s;
	struct outputs *out = hp->out;
	struct proc_rec *root;
	char what[64];
	char cfuncs[128] = "";
	uint32_t i;
	int err;

	err = session__start(s);
	root = s->nprocs ? s->procs[0] : NULL;
	if (err)
		goto out;
	hp->started = true;
	if (!env.output && !env.live) {
		snprintf(hp->default_prof, hp->default_len, "pyuprof-%d.prof", s->pid);
		snprintf(out->file[OUTPUT_PSTATS].path, sizeof(out->file[OUTPUT_PSTATS].path), "%s",
			 hp->default_prof);
		out->paths.prof = hp->default_prof;
	}
	out->run.pid = (uint32_t)s->pid;
	if (run_info__read_command(&out->run, s->pid)) /* none: the titles go without it */
		vlog("cannot read the command line of pid %d", s->pid);
	root->rec.prof->pid = (uint32_t)s->pid;
	if (root->has_target)
		snprintf(what, sizeof(what), "Python %s", root->version);
	else /* launched through a program that is not Python, followed (session.c) */
		snprintf(what, sizeof(what), "%s", s->command[0]);
	/* the batch page stages C functions; the per-call probes see Python frames only */
	if (!env.no_builtins && env.exits != EXITS_AUTO && env.exits != EXITS_BATCH)
		snprintf(cfuncs, sizeof(cfuncs), "; C functions are not recorded with --exits %s "
			 "(only the batch mode, the default, records them)", exits__name(env.exits));
	ilog("recording pid %d (%s)%s%s%s", s->pid, what,
	     s->follow ? " and the processes it starts" : "",
	     s->launched ? "" : env.live ? "; q to quit" : "; Ctrl-C to stop", cfuncs);
	if (env.live) {
		char title[RUN_COMMAND_LEN + 96];

		snprintf(title, sizeof(title), "pid %d (Python %s): %s", s->pid, root->version,
			 out->run.command);
		s->view = top__new(title, (uint64_t)(env.interval * 1e9), clock__mono_ns());
		if (!s->view) {
			err = -errno;
			elog("cannot draw on the terminal: %s", strerror(errno));
			goto out;
		}
	}
	hp->start_ns = clock__mono_ns();
	err = outputs__start_trace(out, root->rec.prof, (uint32_t)s->pid, hp->start_ns,
				   env.trace_min_us);
	if (!err && env.raw)
		err = raw_begin_recording(out, s, root, hp->start_ns);
	if (!err)
		err = seeds__apply(&root->seeds, &root->rec);
	if (!err)
		err = session__record(s, env.duration > 0 ?
					      hp->start_ns + (uint64_t)(env.duration * 1e9) : 0);
out:
	hp->stop_ns = clock__mono_ns();
	top__free(s->view); /* the terminal as it was, for what is said from here on */
	s->view = NULL;
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i]->tr)
			s->procs[i]->rec.stop_ns = hp->stop_ns;
	if (s->status_shown)
		fputs("\r\033[K", stderr);
	session__stop(s, hp->stop_ns);
	hp->err = err;
	return NULL;
}

/* What ended the program recorded, if a signal did (its exit status alone does not say that
 * it crashed): "pid N died of SIGSEGV" for the summary line, ", which died of SIGSEGV" for
 * top's last line, in buf; NULL if it did not die so. */
static const char *death_of(const struct session *s, char *buf, size_t len)
{
	const char *name;
	char who[32];
	int st = s->child_status;

	if (st == -1 || !WIFSIGNALED(st))
		return NULL;
	name = sigabbrev_np(WTERMSIG(st));
	if (env.live)
		snprintf(who, sizeof(who), ", which");
	else
		snprintf(who, sizeof(who), "pid %d", s->pid);
	snprintf(buf, len, "%s died of SIG%s%s", who, name ? name : "?",
		 WCOREDUMP(st) ? " (core dumped)" : "");
	return buf;
}

/*
 * Runs record_held in a thread of its own. The SIGCHLDs of the hold's ptrace stops are read
 * from a signalfd in that thread: no other thread may take them, so SIGCHLD is blocked
 * before it starts (the program pyuprof launches was forked already, with pyuprof's mask as
 * it came). Returns 0 or -errno (the thread could not start).
 */
static int hold_in_thread(struct held_part *hp)
{
	sigset_t chld, old;
	pthread_t th;
	int err;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	err = pthread_create(&th, NULL, record_held, hp);
	if (!err)
		pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

int record__run(void)
{
	char died[64];
	struct session s = { .pid = env.pid, .command = env.command, .child_status = -1,
			     .follow = env.subprocesses };
	struct pyuprof_stats bstats = { 0 };
	struct output_paths paths = {
		.prof = env.output, .svg = env.svg, .flamegraph = env.flamegraph,
		.collapsed = env.collapsed, .pprof = env.pprof, .trace = env.trace, .raw = env.raw,
	};
	struct raw_end re = { .type = RAW_END };
	char default_prof[64], tmp_prof[] = "pyuprof.prof";
	struct profile *merged = NULL;
	struct proc_rec *root = NULL, *py;
	struct outputs out;
	struct held_part hp;
	const char *failed = NULL;
	uint64_t start_ns, stop_ns;
	uint32_t i;
	int err, exit_code = 1, status;

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
		if (failed)
			elog("cannot write %s: %s", failed, strerror(-err));
		return 1;
	}
	session__install_signals();
	probes__set_cpu_clock(env.cpu_clock);
	profile__set_cpu_clock(env.cpu_clock);
	s.t_start = clock__mono_ns();
	tsc__begin(); /* (its rate is measured from here: by the batch mode's check, unwaited) */
	hold_guard__preload(); /* (for the hold, which takes it later) */
	s.launched = env.command != NULL;
	/* (the program's parent is this thread, which outlives the holding one: launch.h) */
	if (s.launched && (err = launch__fork(env.command, NULL, &s.forked, &s.forked_fd))) {
		elog("cannot start %s: %s", env.command[0], strerror(-err));
		goto cleanup;
	}
	hp = (struct held_part){ .s = &s, .out = &out, .default_prof = default_prof,
				 .default_len = sizeof(default_prof) };
	err = hold_in_thread(&hp);
	if (err) {
		elog("cannot start the thread that holds the target: %s", strerror(-err));
		if (s.forked) {
			close(s.forked_fd);
			launch__abort(s.forked);
		}
		goto cleanup;
	}
	err = hp.err;
	root = s.nprocs ? s.procs[0] : NULL;
	if (!hp.started)
		goto cleanup;
	/* the notes speak of the target's interpreter; launched through a program that is not
	 * Python (following), of the first Python it ran */
	py = root;
	for (i = 0; i < s.nprocs && !py->has_target; i++)
		if (s.procs[i]->has_target)
			py = s.procs[i];
	start_ns = hp.start_ns;
	stop_ns = hp.stop_ns;
	for (i = 0; i < s.nprocs; i++)
		proc_rec__add_counters(&bstats, &s.procs[i]->bstats);
	say_probe_figures(&s, root);
	if (err)
		goto cleanup;
	if (env.live) { /* pyuprof top: nothing to write; what was lost is still said */
		summary__notes(root->rec.prof, &root->hooks, &bstats, root->version,
			       root->target.exit_probe.offset != 0);
		ilog("%llu calls, %u functions, %u threads, %llu lost events, %.3f s; detached "
		     "from pid %d%s", (unsigned long long)root->rec.prof->n.calls,
		     root->rec.prof->nfuncs, root->rec.prof->nthreads,
		     (unsigned long long)(bstats.lost_calls + bstats.lost_returns +
					  bstats.lost_codes + bstats.lost_requests +
					  bstats.lost_ccalls + bstats.lost_creturns),
		     (stop_ns - start_ns) / 1e9, s.pid,
		     death_of(&s, died, sizeof(died)) ? died :
		     s.target_gone ? ", which has exited" : ", which runs on");
		exit_code = 0;
		goto cleanup;
	}
	if (env.raw) {
		re.stop_ns = stop_ns;
		re.stats = bstats;
		err = raw__record(&out.file[OUTPUT_RAW], &re, sizeof(re));
	}
	if (!err && s.follow)
		err = session__write_processes(&s, out.paths.prof, stop_ns, &merged);
	if (!err)
		err = summary__conclude(&out, merged ? merged : root->rec.prof, &py->hooks,
					&bstats, py->version, py->exits == EXITS_USDT,
					(stop_ns - start_ns) / 1e9, s.follow ? s.procs : NULL,
					s.nprocs, death_of(&s, died, sizeof(died)));
	dlog_step("outputs written");
	exit_code = err ? 1 : 0;

cleanup:
	top__free(s.view);
	outputs__abort(&out);
	profile__free(merged);
	status = session__end(&s);
	hold_guard__drop_preloaded();
	probes__wait_detached();
	dlog_step("done");
	return status >= 0 ? status : exit_code;
}
