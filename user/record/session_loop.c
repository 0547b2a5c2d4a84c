// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A recording session's event loop (session.h): the rings read by the reader thread, the
 * target's stops and the processes it starts served, the status line or top's screen drawn,
 * until the program ends, a signal or the deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"
#include "base/proc.h"
#include "inject/hook.h"
#include "inject/ptrace_hold.h"
#include "output/top.h"
#include "record/probes.h"
#include "record/reader_thread.h"
#include "record/seed.h"
#include "record/session.h"
#include "target/py_image.h"

/* How often the loop reads the ring buffers without being woken (bpf/target.bpf.h: the BPF
 * side wakes it only when a quarter of a ring waits) */
#define POLL_MS 10
/* How often the main loop takes the lock with nothing to wake it: the status line, top, a
 * target that ended without a ptrace event */
#define TURN_NS 100000000ull
/* New threads told (probes__births) wake the loop at most once in 2 ms: while they come, it
 * looks for them as often, for BIRTHS_NS after the last (each runs unseized until then) */
#define BIRTHS_POLL_MS 2
#define BIRTHS_NS 100000000ull

/* Following: starts recording a process of the target's, stopped; it runs on either way. */
static void follow_start(struct session *s, struct proc_rec *pr, enum rec_start how)
{
	char why[512] = "", by[40] = "the command itself"; /* it ran no Python until its exec */
	int err;

	if (pr->parent)
		snprintf(by, sizeof(by), "started by pid %d", pr->parent);
	err = proc_rec__start(pr, how, env.ringbuf_mb, &s->spare, clock__mono_ns(), why,
			      sizeof(why));
	if (!err) {
		err = seeds__apply(&pr->seeds, &pr->rec);
		if (err)
			snprintf(why, sizeof(why), "%s", strerror(-err));
	}
	if (err) {
		wlog("pid %d (%s) is not recorded: %s", pr->pid, by, why);
		proc_rec__unstage(pr);
		proc_rec__end(pr, clock__mono_ns());
		proc_rec__restore(pr);
		return;
	}
	probes__signal_requests(pr->tr, true);
	vlog("recording pid %d (Python %s), %s", pr->pid, pr->version, by);
	/* the next child's, while this one runs */
	if (!s->spare)
		s->spare = proc_rec__spare(pr, env.ringbuf_mb);
}

/* Whether the first process has gone (its end ends the recording: a process started after it,
 * whose events may have queued up behind loads, is let go unrecorded). */
static bool target_went(struct session *s)
{
	if (!s->target_gone && ptrace_hold__handle(s->held, &s->child_status) == -ESRCH)
		s->target_gone = true;
	return s->target_gone;
}

/* Following: a process of the target's was born, exec'd, loaded libpython or ended. It stands
 * stopped (but at its end) until it is resumed here. */
static void on_proc_event(struct session *s, const struct proc_event *ev)
{
	struct proc_rec *pr = session__find_proc(s, ev->kind == PROC_FORK ? ev->child : ev->pid);
	struct proc_rec *parent = session__find_proc(s, ev->pid);

	switch (ev->kind) {
	case PROC_FORK:
		/* its first stop may not have come in yet: wait for it */
		if (ptrace_hold__stop(s->held, ev->child) || !ptrace_hold__holds(s->held, ev->child))
			return; /* gone already (or it ran on: then it is not followed) */
		if (!pr)
			pr = session__add_proc(s, ev->child, ev->pid);
		/* a vfork child runs in its parent's memory until it execs: nothing to record
		 * yet; a fork child of a recorded process runs on in its frames */
		if (pr && !ev->vfork && parent && parent->tr && !s->stopping && !target_went(s))
			follow_start(s, pr, REC_FORKED);
		ptrace_hold__resume(s->held, ev->child);
		return;
	case PROC_EXEC:
		if (!pr)
			pr = session__add_proc(s, ev->pid, 0);
		if (pr) {
			/* (its staged records were copied out as it exec'd: stage.bpf.h) */
			proc_rec__forget_stage(pr);
			proc_rec__end(pr, clock__mono_ns());
			proc_rec__drop_image(pr);
		}
		if (pr && !s->stopping && !target_went(s)) {
			enum py_image_kind kind = py_image__kind(ev->pid);

			if (kind == IMAGE_HAS_PYTHON) {
				session__calibrate_for(s, ev->pid);
				follow_start(s, pr, REC_LAUNCHED);
			} else if (kind == IMAGE_NEEDS_LIBPYTHON) {
				/* resumed, one system call at a time, until PROC_LOADED */
				if (!ptrace_hold__watch_loader(s->held, ev->pid))
					return;
			}
		}
		ptrace_hold__resume(s->held, ev->pid);
		return;
	case PROC_LOADED:
		if (pr && !s->stopping && !target_went(s)) {
			session__calibrate_for(s, ev->pid);
			follow_start(s, pr, REC_LAUNCHED);
		}
		ptrace_hold__resume(s->held, ev->pid);
		return;
	case PROC_EXIT:
		if (pr) {
			pr->gone = true;
			proc_rec__end(pr, clock__mono_ns());
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
			probes__counters(pr->tr, &live);
		proc_rec__add_counters(b, &live);
		proc_rec__add_counters(b, &pr->bstats);
	}
}

/* The live line on a terminal: how the recording goes, redrawn in place once a second. */
static void show_status(struct session *s, uint64_t start_ns, uint64_t *last_ns,
			uint64_t *last_calls)
{
	uint64_t now = clock__mono_ns(), calls = total_calls(s), lost;
	struct pyuprof_stats b = { 0 };
	uint32_t funcs = 0, threads = 0, i;

	if (now - *last_ns < 1000000000ull)
		return;
	live_counters(s, &b);
	for (i = 0; i < s->nprocs; i++) {
		funcs += s->procs[i]->rec.prof->nfuncs;
		threads += s->procs[i]->rec.prof->nthreads;
	}
	lost = b.lost_calls + b.lost_returns + b.lost_codes + b.lost_requests + b.lost_ccalls +
	       b.lost_creturns;
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

/*
 * The reader thread's drain (reader_thread.c): what the probes of every recorded process sent.
 * Returns 1 when the main loop must look (a recording failed, requests wait), else 0.
 */
static int drain_rings(void *ctx, bool *more, bool *read)
{
	struct session *s = ctx;
	int look = 0, err;
	bool left;

	for (uint32_t i = 0; i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->tr || pr->rec.err)
			continue;
		if (!pr->ring_watched) {
			/* (if not, its ring is read every POLL_MS without being woken) */
			err = reader__watch(&s->reader, probes__epoll_fd(pr->tr));
			if (err)
				dlog("pid %d: its ring buffer does not wake the reader: %s", pr->pid,
				     strerror(-err));
			pr->ring_watched = true;
		}
		err = probes__consume_upto(pr->tr, s->reader_turn, &left);
		*more |= left;
		if (err < 0) {
			s->read_err = err;
			return 1;
		}
		*read |= err > 0;
		if (err > 0 && !s->t_first)
			s->t_first = clock__mono_ns();
		/* a failed recording, or requests the main loop does with the process stopped */
		if (pr->rec.err || pr->hooks.npending)
			look = 1;
	}
	return look;
}

/* With the lock held: a reading that failed ends the recording (the target's), or lets go the
 * subprocess whose recording failed (said where it failed). Returns 0 or -errno (fatal). */
static int check_failed(struct session *s)
{
	if (s->read_err || s->reader.err) {
		elog("reading events failed: %s", log__errstr(s->read_err ? s->read_err : s->reader.err));
		return s->read_err ? s->read_err : s->reader.err;
	}
	for (uint32_t i = 0; i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->tr || !pr->rec.err)
			continue;
		if (i == 0)
			return pr->rec.err;
		wlog("pid %d is no longer recorded", pr->pid);
		if (!ptrace_hold__stop(s->held, pr->pid)) {
			proc_rec__unstage(pr);
			proc_rec__end(pr, clock__mono_ns());
			session__put_back(pr);
			ptrace_hold__resume(s->held, pr->pid);
		} else {
			proc_rec__end(pr, clock__mono_ns());
		}
	}
	return 0;
}

struct loop_state {
	uint64_t deadline_ns, start_ns, last_ns, last_calls, turn_ns;
	uint64_t births_ns; /* new threads were last told then */
	bool live; /* the status line is drawn */
	bool turns; /* a launched program not held, without a pidfd: its end is looked for */
};

/* One turn of the main loop, with the lock held. Returns 0 to go on, 1 to end, or -errno. */
static int serve(struct session *s, struct loop_state *ls)
{
	struct proc_event ev;
	int err = check_failed(s);

	if (err)
		return err;
	if (s->held && ptrace_hold__handle(s->held, &s->child_status) == -ESRCH) {
		s->target_gone = true;
		return 1;
	}
	while (s->held && ptrace_hold__next_event(s->held, &ev))
		on_proc_event(s, &ev);
	/* requests whose thread could not be signalled, or that wait for the whole process (their
	 * thread stands stopped meanwhile): do them with it stopped */
	for (uint32_t i = 0; s->held && i < s->nprocs; i++) {
		struct proc_rec *pr = s->procs[i];

		if (!pr->tr || !pr->hooks.npending || ptrace_hold__stop(s->held, pr->pid))
			continue;
		err = hook__service(&pr->target, &pr->hooks, 0);
		ptrace_hold__resume(s->held, pr->pid);
		if (err)
			wlog("cannot write into pid %d: %s", pr->pid, strerror(-err));
	}
	if (ls->live)
		show_status(s, ls->start_ns, &ls->last_ns, &ls->last_calls);
	if (s->view) { /* pyuprof top: its keys, and its screen once an interval */
		struct pyuprof_stats b = { 0 };

		if (top__keys(s->view))
			return 1;
		live_counters(s, &b);
		top__draw(s->view, s->procs[0]->rec.prof, &b, clock__mono_ns());
	}
	if (!s->launched || s->held) {
		if (!proc__alive(s->pid))
			return 0;
		/* its wait status, if a stop's drain reaped it meanwhile */
		if (s->held)
			ptrace_hold__handle(s->held, &s->child_status);
		s->target_gone = true;
		return 1;
	}
	return 0;
}

/* Without the lock: whether the recording ends here (a deadline, or a launched program not
 * held that has ended: its wait status is taken). */
static bool loop_ends(struct session *s, const struct loop_state *ls, uint64_t now)
{
	if (ls->deadline_ns && now >= ls->deadline_ns)
		return true;
	if (s->launched && !s->held && waitpid(s->pid, &s->child_status, WNOHANG) == s->pid) {
		s->target_gone = true;
		return true;
	}
	return false;
}

static bool births_recent(const struct session *s, const struct loop_state *ls, uint64_t now)
{
	return s->held && s->births && ls->births_ns && now - ls->births_ns < BIRTHS_NS;
}

/*
 * How long the loop may sleep: until the deadline, and for a target held or attached to (whose
 * end without a ptrace event is looked for), the status line and top, until the next turn. A
 * launched program not held wakes it by its pidfd as it ends; everything else by a descriptor.
 * (It woke every POLL_MS before: 100 times a second while recording, for nothing.)
 */
static int sleep_ms(const struct session *s, const struct loop_state *ls, uint64_t now)
{
	uint64_t next = ls->deadline_ns ? ls->deadline_ns : UINT64_MAX;

	if (!s->launched || s->held || ls->live || s->view || ls->turns)
		next = next < ls->turn_ns + TURN_NS ? next : ls->turn_ns + TURN_NS;
	if (next == UINT64_MAX && !births_recent(s, ls, now))
		return -1;
	if (births_recent(s, ls, now) && next > now + BIRTHS_POLL_MS * 1000000ull)
		next = now + BIRTHS_POLL_MS * 1000000ull;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

int session__record(struct session *s, uint64_t deadline_ns)
{
	struct loop_state ls = {
		.deadline_ns = deadline_ns,
		/* attach mode only: a launched program writes to the same terminal */
		.live = !s->launched && !env.quiet && log_level >= LOG_INFO &&
			isatty(STDERR_FILENO) && !s->view,
	};
	struct pollfd pfd[5];
	int err, child = -1;
	uint64_t now;

	ls.start_ns = ls.last_ns = ls.turn_ns = clock__mono_ns();
	/* bench/reader_stalls.sh: the reader as it was, all it finds in one turn */
	s->reader_turn = getenv("PYUPROF_BENCH_READER_WHOLE") ? UINT64_MAX : READER_TURN_BYTES;
	dlog_step("recording");
	err = reader__start(&s->reader, drain_rings, s, POLL_MS);
	if (err) {
		elog("cannot start the thread that reads the events: %s", strerror(-err));
		return err;
	}
	/* a launched program not held: its end wakes the loop (without a pidfd, a turn does) */
	if (s->launched && !s->held) {
		child = (int)syscall(SYS_pidfd_open, s->pid, 0);
		ls.turns = child < 0;
	}
	while (!session__exiting()) {
		pfd[0] = (struct pollfd){ .fd = s->held ? ptrace_hold__fd(s->held) : -1,
					  .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->view ? top__fd(s->view) : -1, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = reader__note_fd(&s->reader), .events = POLLIN };
		pfd[3] = (struct pollfd){ .fd = s->held ? -1 : child, .events = POLLIN };
		pfd[4] = (struct pollfd){ .fd = s->held && s->births ? s->births_fd : -1,
					  .events = POLLIN };
		if (poll(pfd, 5, sleep_ms(s, &ls, clock__mono_ns())) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		now = clock__mono_ns();
		if (loop_ends(s, &ls, now))
			break;
		/* the lock only for something to do: the reader runs at our priority meanwhile
		 * (a target held or attached to that ended: serve sees to it) */
		if (!pfd[0].revents && !pfd[1].revents && !pfd[2].revents && !pfd[4].revents &&
		    !births_recent(s, &ls, now) && now - ls.turn_ns < TURN_NS &&
		    ((s->launched && !s->held) || !proc__alive(s->pid)))
			continue;
		ls.turn_ns = now;
		reader__clear_note(&s->reader);
		reader__lock(&s->reader);
		/* new threads first: each runs unseized until then (the reader reads the table) */
		if (s->held && s->births && probes__births_consume(s->procs[0]->tr) > 0)
			ls.births_ns = now;
		err = serve(s, &ls);
		reader__unlock(&s->reader);
		if (err)
			break;
	}
	dlog_step("recording ends");
	if (child >= 0)
		close(child);
	reader__stop(&s->reader);
	return err < 0 ? err : 0;
}
