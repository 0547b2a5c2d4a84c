// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One recording session: the target (launched or attached to) and, following subprocesses,
 * the processes it starts as they come and go; the signals that end it; the calibration run
 * before it; the event loop; and the one way back out, which leaves every process as it was.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"
#include "base/proc.h"
#include "inject/hook.h"
#include "inject/launch.h"
#include "inject/ptrace_hold.h"
#include "output/outputs.h"
#include "record/probes.h"
#include "record/session.h"
#include "record/summary.h"
#include "target/proc_root.h"

#define CALIB_TRIES 3 /* calibrations that measured no cost, at most */

static volatile sig_atomic_t exiting;
static volatile pid_t child_pid;
static volatile sig_atomic_t calibrating; /* child_pid is the calibration snippet */

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

bool session__exiting(void)
{
	return exiting;
}

void session__install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	launch__ignore_sigpipe();
}

static int exit_status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* The recording of the live process pid (one that ended may have left its pid to another) */
struct proc_rec *session__find_proc(const struct session *s, pid_t pid)
{
	for (uint32_t i = 0; i < s->nprocs; i++)
		if (s->procs[i]->pid == pid && !s->procs[i]->gone)
			return s->procs[i];
	return NULL;
}

struct proc_rec *session__add_proc(struct session *s, pid_t pid, pid_t parent)
{
	struct proc_rec *pr;

	if (array_grow((void **)&s->procs, &s->procs_cap, sizeof(*s->procs), s->nprocs + 1))
		return NULL;
	pr = proc_rec__new(pid, parent, s->held);
	if (pr) {
		pr->want_exits = env.exits;
		pr->cfuncs = !env.no_builtins;
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
	struct proc_rec *pr = session__find_proc(s, pid);
	int err;

	if (!pr || !pr->tr)
		return false;
	/* a thread stopped as it started another: the birth marks the signal as ours */
	if (s->births)
		probes__births_consume(pr->tr);
	/* all of it: the request that marks this signal as ours may be behind a full ring */
	while (probes__consume(pr->tr) == CONSUME_BUDGET)
		;
	if (s->stopping)
		return false;
	proc_rec__stage_per_call(pr);
	err = hook__service(&pr->target, &pr->hooks, tid);
	if (err)
		wlog("cannot write into pid %d: %s", pid, strerror(-err));
	if (pr->hooks.watch_off)
		probes__stop_tramp_watch(pr->tr);
	return pr->hooks.wait_all;
}

/*
 * A process forked by a held one, stopped before its first instruction. Its memory is a copy of
 * its parent's, with the kernel's rewrite of each probed nop of the trampoline page: a call
 * into a page of the kernel's that the child does not have. The bytes are put back before it
 * runs; and a child that is not followed gets back, as well, the eval_frame hook its parent
 * had before pyuprof, so that it runs as it would have natively.
 */
static void on_birth(void *ctx, pid_t child, pid_t parent, bool follow)
{
	struct session *s = ctx;
	struct proc_rec *pr = session__find_proc(s, parent);
	int fixed = tramp__restore(child);

	if (fixed < 0)
		wlog("pid %d (forked by pid %d): cannot put back its copy of the trampoline page "
		     "(%s): it may crash at its first Python call", child, parent, strerror(-fixed));
	else if (fixed)
		dlog("pid %d (forked by pid %d): %d bytes of the trampoline page put back", child,
		     parent, fixed);
	if (!follow && pr && pr->has_target && !pr->gone) {
		struct py_target t = pr->target;

		t.pid = child;
		hook__restore(&t, &pr->hooks);
	}
}

/* probes__births: a new thread of the target, seized now (it may run meanwhile); one whose
 * starter was stopped for it (bpf/thread_births.bpf.h) has not run Python yet */
static void on_thread_birth(void *ctx, const struct thread_birth *b)
{
	struct session *s = ctx;

	if (!s->held)
		return;
	ptrace_hold__add_thread(s->held, s->pid, (pid_t)b->tid);
	if (!b->signalled)
		return;
	/* (the starter's stop is ours: its REQUEST_SIGNAL is not passed on) */
	ptrace_hold__expect_signal(s->held, (pid_t)b->creator);
	if (b->self && s->nprocs)
		proc_rec__learn_thread_class(s->procs[0], b->self);
}

/* Whether new threads of the target need no clone stop (ptrace_hold.h, async_threads): the
 * batch mode only (the page turns off in a forked child by itself), not following (every fork
 * must be seen), nor the calibration's snippet. */
static bool async_threads(const struct session *s, const struct proc_rec *pr)
{
	return !s->follow && !s->calib && probes__births_possible(pr->exits) &&
	       !getenv("PYUPROF_CLONE_STOP");
}

/* The BPF side tells of new threads from now on; before the target runs with them unseized */
static void births_on(struct session *s, struct proc_rec *pr)
{
	int fd = probes__births(pr->tr, on_thread_birth, s);

	if (fd < 0)
		dlog("pid %d: new threads are seized at the next stop only (%s)", s->pid,
		     strerror(-fd));
	s->births = fd >= 0;
	s->births_fd = fd;
}

/* calib_record_fn: the snippet is launched and recorded as a target is, by this file's code */
static int record_calibration(void *ctx, char **argv, const struct launch_as *as,
			      struct calib_run *run)
{
	struct session c = { .child_status = -1, .launched = true, .command = argv, .as = as,
			     .calib = run };
	pid_t target = child_pid, snippet;
	uint64_t t0 = clock__mono_ns(), t1, t2;
	int err;

	(void)ctx;
	if (exiting)
		return -EINTR;
	child_pid = 0;
	calibrating = 1;
	err = session__start(&c);
	snippet = child_pid; /* 0 if it was never started: the target is not ours to end */
	t1 = clock__mono_ns();
	if (!err)
		err = session__record(&c, clock__mono_ns() + 30000000000ull);
	t2 = clock__mono_ns();
	session__stop(&c, clock__mono_ns());
	dlog("calibration run: start %.3f s, run %.3f s, stop %.3f s", (t1 - t0) / 1e9,
	     (t2 - t1) / 1e9, (clock__mono_ns() - t2) / 1e9);
	if (snippet && !c.released)
		launch__abort(snippet);
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

/* What the probes' cost was measured for, and how it stands now (-v). */
static void say_calibration(const struct calibration *cal)
{
	const struct calib_steps *st = &cal->steps;
	double k = cal->step_ns;

	if (cal->kept)
		vlog("calibration kept from %s (steps of the call-free loop, %.2f ns a step then); "
		     "the loop's step now %.2f ns%s (the speed run took %.3f s)",
		     cal->when, cal->measured_ns, cal->step_ns,
		     cal->speed_unknown ? ", its fast one: the speed run failed" : "", cal->took_s);
	else
		vlog("calibration took %.3f s", cal->took_s);
	vlog("calibrated: %.0f ns a call (in a loop of empty calls: %.0f%s), %.0f inside (by a "
	     "call with a body: %.0f, %.0f); %.0f ns a call unprobed; %.0f ns more a coroutine's "
	     "return to its await; %.0f ns a C call, %.0f inside",
	     (double)cal->comp.call_ns, st->flat * k,
	     st->tree_fallback ? "; the trees of calls measured no cost, so the loop's" : "",
	     (double)cal->comp.inside_ns, st->body * k, st->body_inside * k, st->plain * k,
	     (double)cal->comp.done_ns, (double)cal->comp.ccall_ns, (double)cal->comp.cinside_ns);
	if (st->gauge > 0)
		vlog("at a speed gauge reading of %.0f ns (%.0f ps a ns of the loop's step): scaled "
		     "by each thread's readings", (double)cal->comp.gauge_ps / 1000, st->gauge);
	else
		vlog("no speed gauge readings in the calibration: its figures as they are");
}

/* No compensation: why, said once. */
static void uncompensated(struct session *s, const char *why)
{
	wlog("cannot calibrate the probes' cost (%s): times are not compensated", why);
	summary__compensation(NULL);
	memset(&s->cal, 0, sizeof(s->cal));
}

/*
 * The probes' cost for the interpreter binary pid runs, run where and as whom it runs: the
 * steps kept from an earlier recording of the same binary and mode, with a run of the call-free
 * loop started now that gives the machine's speed by the time the probes are in place
 * (calibrate_end); or, if none is kept (or --recalibrate), a calibration now, kept for the
 * next recordings. On failure, says so in one line and leaves the times as recorded.
 */
static void calibrate_begin(struct session *s, pid_t pid)
{
	char exe[PATH_MAX + 1], link[64], root[64], why[512] = "", key[PATH_MAX + 1024], mode[96];
	struct calibration *cal = &s->cal;
	double recent[CALIB_RECENT];
	uint32_t nrecent = 0;
	struct launch_as as_at = { 0 }, *as = &as_at;
	const char *base;
	struct stat st;
	int err;
	bool keyed;

	/* in another root (a chroot, a container): the file it runs there, run there, with
	 * the libraries and the standard library it runs with */
	if (!proc_root__is_ours(pid)) {
		snprintf(root, sizeof(root), "/proc/%d/root", pid);
		as->root = root;
	}
	err = proc_root__exe(pid, exe, sizeof(exe), why, sizeof(why));
	if (!err) {
		base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		/* an embedding program is not an interpreter to be run with -c */
		if (strncmp(base, "python", 6)) {
			snprintf(why, sizeof(why), "%.400s is not a python interpreter", exe);
			err = -ENOEXEC;
		}
	}
	/* the process's owner, as /proc shows it */
	snprintf(link, sizeof(link), "/proc/%d", pid);
	if (!err && stat(link, &st))
		err = -errno;
	if (err) {
		uncompensated(s, *why ? why : strerror(-err));
		return;
	}
	as->as_user = st.st_uid != geteuid();
	as->uid = st.st_uid;
	as->gid = st.st_gid;
	/* the binary itself (through /proc, whatever its root), for the key */
	/* (C functions recorded or not: on 3.8-3.11 a profile function, on 3.12+ sys.monitoring's
	 * CALL event, which every Python call pays too: 3.12's fib, ~40% more a call) */
	snprintf(mode, sizeof(mode), "exits=%s clock=%s builtins=%s",
		 exits__name((enum exits)env.exits), env.cpu_clock ? "cpu" : "wall",
		 env.no_builtins ? "off" : "on");
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	keyed = !calibrate__key(link, exe, mode, key, sizeof(key));
	snprintf(s->calib_key, sizeof(s->calib_key), "%s", keyed ? key : "");
	if (keyed && !env.recalibrate && !calibrate__kept(key, cal)) {
		if (calibrate__kept_trusted(cal)) {
			err = calibrate__speed_start(exe, as, &s->speed, why, sizeof(why));
			if (err) /* (calibrate_end says so) */
				dlog("no speed run: %s", why);
			return;
		}
		/* measured on a loaded machine: again, the machine's recent steps kept */
		vlog("the kept calibration (%s) was measured at %.2f ns a step, over %.1fx the "
		     "machine's fast step (%.2f ns): calibrating again", cal->when, cal->measured_ns,
		     CALIB_KEPT_BOUND, calibrate__fast_step(cal));
		memcpy(recent, cal->recent, sizeof(recent));
		nrecent = cal->nrecent;
	}
	if (as->root)
		vlog("calibrating the probes' cost with %s in pid %d's root", exe, pid);
	else
		vlog("calibrating the probes' cost with %s", exe);
	/* a calibration that measured no cost (-ERANGE) met a machine whose speed moved by more
	 * than the probes' cost within a round (a busy VM): again, CALIB_TRIES in all */
	for (int tries = 1;; tries++) {
		err = calibrate__run(exe, as, env.cpu_clock, record_calibration, NULL, cal, why,
				     sizeof(why));
		if (err != -ERANGE || tries == CALIB_TRIES || exiting)
			break;
		vlog("calibrating again: %s", why);
	}
	if (err && exiting) /* stopped by a signal: nothing more is said or done */
		return;
	if (err) {
		uncompensated(s, *why ? why : strerror(-err));
		return;
	}
	/* the machine's fast step so far: the one the figures were measured at, after the
	 * recent steps of figures found untrusted (so that these are judged by them too) */
	memcpy(cal->recent, recent, nrecent * sizeof(*recent));
	cal->nrecent = nrecent;
	if (cal->nrecent == CALIB_RECENT)
		memmove(cal->recent, cal->recent + 1, --cal->nrecent * sizeof(*cal->recent));
	cal->recent[cal->nrecent++] = cal->measured_ns;
	if (keyed)
		calibrate__keep(key, cal);
	profile__set_compensation(&cal->comp);
	summary__compensation(&cal->comp);
	say_calibration(cal);
}

/* Kept steps: the speed run's step turns them into this recording's ns (at most the machine's
 * fast step, calibrate.h; that step if it failed), and is kept with them as the most recent.
 * Before the first event is read. */
static void calibrate_end(struct session *s)
{
	struct calibration *cal = &s->cal;
	uint64_t t0 = s->speed.t0;
	double fast = calibrate__fast_step(cal), step = 0;
	char why[256] = "", what[80];
	bool bounded;

	if (!cal->kept)
		return;
	/* (what the fast step is: said before the step found joins the recent ones) */
	if (cal->nrecent)
		snprintf(what, sizeof(what), "the lowest of the last %u speed runs'", cal->nrecent);
	else
		snprintf(what, sizeof(what), "the calibration's own");
	if (calibrate__speed_end(&s->speed, &step, why, sizeof(why))) {
		vlog("the machine's speed is not known (%s): its fast step taken (%.2f ns, %s)",
		     why, fast, what);
		cal->speed_unknown = true;
		step = 0;
	}
	calibrate__at_speed_run(cal, step, &bounded);
	if (bounded && step > fast)
		vlog("the speed run's step (%.2f ns) is above the machine's fast one (%.2f, %s): "
		     "that one taken", step, fast, what);
	else if (bounded)
		vlog("the speed run's step (%.2f ns) is more than %.1fx below the machine's fast "
		     "one (%.2f, %s): taken at that bound", step, CALIB_SPEED_BOUND, fast, what);
	if (!cal->speed_unknown && s->calib_key[0])
		calibrate__keep(s->calib_key, cal);
	cal->took_s = t0 ? (clock__mono_ns() - t0) / 1e9 : 0;
	profile__set_compensation(&cal->comp);
	summary__compensation(&cal->comp);
	say_calibration(cal);
}

/* The target went during an attach (its probes not attached yet): nothing was recorded, and
 * nothing of it is to be put back (after an exec, not in this image). */
static void gone_while_attaching(struct session *s, const char *when, char *why, size_t why_len)
{
	int st = -1;

	s->target_gone = true;
	ptrace_hold__handle(s->held, &st);
	snprintf(why, why_len, "it %s %s: nothing recorded",
		 st == -1 ? "ran another program (exec)" : "ended", when);
}

/* The attach's stops: "why" says which failed. */
static int stop_target(struct session *s, const char *what, char *why, size_t why_len)
{
	int err = ptrace_hold__stop(s->held, s->pid);

	if (err == -ESRCH)
		gone_while_attaching(s, what, why, why_len);
	else if (err)
		snprintf(why, why_len, "cannot stop it: %s", strerror(-err));
	return err;
}

/*
 * Attach: the BPF side is loaded with the target running, between two stops, for the verifier
 * takes a few hundred ms that every thread of the target's would otherwise stand still
 * (a timer's expirations pile up, a timeout passes). The first stop, only if a trampoline page
 * must be mapped (the programs are configured with its addresses), checks the layout on live
 * frames and maps it; the second takes the running frames as they are, attaches, switches
 * staging on and writes the hook. The exits are chosen (proc_rec__choose) and the target
 * seized. The target is left stopped.
 */
static int attach_start(struct session *s, struct proc_rec *pr, char *why, size_t why_len)
{
	uint64_t t0;
	int err;

	if (proc_rec__places_page(pr)) {
		err = stop_target(s, "before its trampoline page was mapped", why, why_len);
		if (err)
			return err;
		err = proc_rec__place(pr, REC_ATTACHED, why, why_len);
		ptrace_hold__resume(s->held, s->pid);
	} else {
		err = proc_rec__place(pr, REC_ATTACHED, why, why_len);
	}
	if (err)
		return err;
	t0 = clock__mono_ns();
	err = proc_rec__load(pr, env.ringbuf_mb, why, why_len);
	if (ptrace_hold__handle(s->held, NULL) == -ESRCH) { /* (its exit or exec, meanwhile) */
		gone_while_attaching(s, "as its probes loaded", why, why_len);
		return -ESRCH;
	}
	if (err)
		return err;
	dlog("pid %d: BPF side loaded in %.0f ms; stopping it to attach", s->pid,
	     (clock__mono_ns() - t0) / 1e6);
	err = stop_target(s, "before its probes were attached", why, why_len);
	if (!err)
		err = proc_rec__arm(pr, REC_ATTACHED, clock__mono_ns(), why, why_len);
	return err;
}

/*
 * Following, launched through a program that is not Python (a shell, make, a launcher), taken
 * at its exec: held, and followed as any process of the target's is; the Python it runs, itself
 * or in a child process, is recorded from its exec, and calibrated for there
 * (session__calibrate_for).
 */
static int start_other(struct session *s, struct proc_rec *pr, struct hold_cfg *cfg)
{
	int err;

	cfg->first_execs = true;
	err = ptrace_hold__adopt(&s->held, s->pid, cfg);

	if (err) {
		elog("cannot start %s: %s", s->command[0], strerror(-err));
		return err;
	}
	s->released = true;
	s->calibrate_later = !env.no_compensation;
	pr->rec.held = s->held;
	vlog("'%s' (pid %d) is not Python: it is followed, and so are the processes it starts",
	     s->command[0], s->pid);
	return 0;
}

/* The calibration as a job of the holding thread's (ptrace_hold__serve_during). */
struct calib_job {
	struct session *s;
	pid_t pid;
};

static int calibrate_job(void *arg)
{
	struct calib_job *job = arg;

	/* (kept: its speed run waited for here, the process stands at its start) */
	calibrate_begin(job->s, job->pid);
	calibrate_end(job->s);
	return 0;
}

void session__calibrate_for(struct session *s, pid_t pid)
{
	struct calib_job job = { .s = s, .pid = pid };

	if (!s->calibrate_later)
		return;
	s->calibrate_later = false;
	/* in a thread of its own, which holds the snippet: this one serves the processes held
	 * meanwhile (a shell that runs on, its other children) */
	ptrace_hold__serve_during(s->held, calibrate_job, &job);
}

int session__start(struct session *s)
{
	struct proc_rec *pr = session__add_proc(s, s->pid, 0);
	/* (the calibration snippet has no thread asleep to spare: no guard to load) */
	struct hold_cfg cfg = { .on_request = on_request, .on_birth = on_birth,
				.follow = s->follow, .guard = !s->calib, .ctx = s };
	bool writes;
	char why[512] = "";
	int err;

	if (!pr)
		return -ENOMEM;
	if (s->calib)
		calibrate__watch(s->calib, pr->rec.prof);
	if (s->launched) {
		if (s->forked) { /* (handed over: launch__seize reaps it on error) */
			s->pid = s->forked;
			s->forked = 0;
			err = launch__seize(s->pid, s->forked_fd, s->command, s->follow,
					    &pr->target, &s->child_status, why, sizeof(why));
		} else {
			err = launch__start(s->command, s->as, &s->pid, &pr->target, &s->child_status,
					    why, sizeof(why));
		}
		if (err < 0) {
			elog("%s", why);
			return err;
		}
		child_pid = pr->pid = pr->rec.live_pid = s->pid;
		if (err == 1)
			return start_other(s, pr, &cfg);
		dlog_step("pid %d: its interpreter found%s", s->pid, s->calib ? " (the calibration)" : "");
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
	if (!s->calib && !env.no_compensation) {
		calibrate_begin(s, s->pid);
		dlog_step(s->speed.pid ? "calibration kept; the machine's speed being measured"
				       : "calibrated");
	}
	if (exiting && !s->calib) {
		elog("stopped by a signal before recording pid %d", s->pid);
		return -EINTR;
	}

	if (s->launched) {
		err = proc_rec__start(pr, REC_LAUNCHED, env.ringbuf_mb, NULL, clock__mono_ns(), why,
				      sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
		writes = pr->hooks.slot != 0;
		/* requests stop the asking thread from the program's first instruction: its first
		 * call that asks for the hook (<= 3.10: the interpreter's first, before the hook is
		 * set) must not run on past the trampoline while the request waits in the ring
		 * buffer. Only while the target is held: unheld, the signal would reach it. */
		if (writes || s->follow)
			probes__signal_requests(pr->tr, true);
		cfg.async_threads = (writes || s->follow) && async_threads(s, pr);
		if (cfg.async_threads)
			births_on(s, pr);
		err = writes || s->follow ? ptrace_hold__adopt(&s->held, s->pid, &cfg)
					  : launch__release(s->pid);
		if (err) {
			elog("cannot start %s: %s", s->command[0], strerror(-err));
			return err;
		}
		s->released = true;
		dlog_step("pid %d: let run, recorded", s->pid);
	} else {
		/* before it is seized: a signal it gets meanwhile waits for nobody */
		err = proc_rec__choose(pr, why, sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
		/* the verifier's ~100 ms while it is seized and its page placed */
		proc_rec__load_ahead(pr, env.ringbuf_mb);
		err = ptrace_hold__seize(&s->held, s->pid, &cfg);
		if (err) {
			elog("cannot stop pid %d: %s%s", s->pid, strerror(-err),
			     err == -EPERM ? " (is it traced by a debugger?)" : "");
			return err;
		}
		pr->rec.held = s->held;
		err = attach_start(s, pr, why, sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", s->pid, why);
			return err;
		}
		writes = pr->hooks.slot != 0;
		if (writes || s->follow) /* before it runs on, as in launch mode */
			probes__signal_requests(pr->tr, true);
		/* (its mode known now: the batch page, whose forked children see to themselves) */
		if (writes && async_threads(s, pr)) {
			births_on(s, pr);
			ptrace_hold__async_threads(s->held, s->pid);
		}
		ptrace_hold__resume(s->held, s->pid);
		s->t_attached = clock__mono_ns();
		dlog_step("pid %d: let run, recorded", s->pid);
		/* held to the end even with nothing to write into it: a thread the stop left
		 * asleep can be let go only as the holding thread exits (ptrace_hold.h) */
	}
	pr->rec.held = s->held;
	/* (its events wait in the ring until the loop reads them, with the figures set) */
	calibrate_end(s);
	/* following: the first child's BPF side, while the target runs */
	if (s->follow && !s->spare)
		s->spare = proc_rec__spare(pr, env.ringbuf_mb);
	return 0;
}

/*
 * pr stopped, its probes removed: its eval_frame hooks back where ours are still there, and its
 * trampoline page as it was written (the kernel's removal of a probe should have done that;
 * what it did not is put back here and said).
 */
void session__put_back(struct proc_rec *pr)
{
	int fixed;

	if (pr->hooks.n)
		proc_rec__restore(pr);
	fixed = tramp__restore(pr->pid);
	if (fixed > 0)
		wlog("pid %d: %d bytes of the trampoline page were not its own code after the probes "
		     "were removed: put back", pr->pid, fixed);
	else if (fixed < 0)
		wlog("pid %d: cannot read back the trampoline page after the probes were removed: %s",
		     pr->pid, strerror(-fixed));
}

void session__stop(struct session *s, uint64_t stop_ns)
{
	uint64_t t0 = clock__mono_ns();
	struct proc_event ev;
	bool any = false;
	uint32_t i;

	/* from here on nothing asks for a write; then put each process back as it was */
	s->stopping = true;
	proc_rec__spare_free(s->spare);
	s->spare = NULL;
	/* batch mode: each process stopped once to switch its staging off and read the rest */
	for (i = 0; s->held && i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->staging)
			continue;
		/* (an exiting thread copies its staged records out: stage.bpf.h) */
		if (pr->gone || (i == 0 && s->target_gone) || proc__alive(pr->pid))
			proc_rec__forget_stage(pr);
		else if (!ptrace_hold__stop(s->held, pr->pid)) {
			proc_rec__unstage(pr);
			ptrace_hold__resume(s->held, pr->pid);
		}
	}
	/* (the first process's end is the session's to see: its waits reap it) */
	if (s->nprocs && s->target_gone)
		s->procs[0]->gone = true;
	for (i = 0; i < s->nprocs; i++) {
		any |= s->procs[i]->tr != NULL;
		proc_rec__end(s->procs[i], stop_ns);
	}
	if (any)
		dlog_step("probes removed, the last records read");
	if (!s->held) {
		s->detach_ns = clock__mono_ns() - t0;
		return;
	}
	for (i = 0; i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->has_target || pr->gone || (i == 0 && s->target_gone))
			continue;
		if (ptrace_hold__stop(s->held, pr->pid))
			wlog("cannot stop pid %d to put it back: %s", pr->pid,
			     pr->hooks.n ? "its eval_frame hook is left switched (the program runs "
					   "correctly, only without call inlining)"
					 : "its trampoline page is not read back");
		else
			session__put_back(pr);
	}
	/* processes born meanwhile were seen to at their birth (on_birth): none is followed now */
	while (ptrace_hold__next_event(s->held, &ev))
		;
	ptrace_hold__release(s->held);
	s->held = NULL;
	dlog_step("every process put back and let go");
	s->detach_ns = clock__mono_ns() - t0;
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

int session__write_processes(struct session *s, const char *base, uint64_t stop_ns,
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

int session__end(struct session *s)
{
	int status = -1;

	/* an error after the target was taken: it is put back first (nothing if stopped) */
	session__stop(s, clock__mono_ns());
	calibrate__speed_abort(&s->speed);
	if (child_pid && !s->released)
		launch__abort(child_pid); /* the program has not run any of its code */
	else if (child_pid && s->child_status == -1)
		while (waitpid(child_pid, &s->child_status, 0) < 0 && errno == EINTR)
			;
	for (uint32_t i = 0; i < s->nprocs; i++)
		proc_rec__free(s->procs[i]);
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
	/* a launched program's own status wins, whatever happened to the profile */
	if (s->released && s->child_status != -1)
		status = exit_status_of(s->child_status);
	return status;
}
