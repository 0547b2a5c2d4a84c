// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small ptrace supervisor. Threads are seized with PTRACE_O_TRACECLONE, so threads started
 * later are held too (with async_threads, not: each is seized as it runs, or at the next stop),
 * and PTRACE_O_TRACEEXEC, so an exec does not turn into a SIGTRAP; with
 * on_birth, PTRACE_O_TRACEFORK and PTRACE_O_TRACEVFORK hold new processes from their birth.
 * State changes arrive as SIGCHLD on a signalfd. A stop that is not ours (a signal for the
 * target, a group-stop) is passed on at once: signals are re-injected, group-stops are
 * LISTENed to. A new process is known from two stops, its parent's fork event and its own
 * first stop, which come in either order: it is handed to on_birth at the second of them.
 * The state changes and births: ptrace_events.c. Stopping a held process and making system
 * calls in it: ptrace_stop.c.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/log.h"
#include "base/proc.h"
#include "inject/hold_guard.h"
#include "inject/ptrace_held.h"
#include "inject/ptrace_hold.h"

/* TRACESYSGOOD: system-call stops (the loader stepped, calls injected: inject.h) are told
 * from a SIGTRAP of the target's */
#define HOLD_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD)
#define BIRTH_OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)

struct held *ptrace_held__find(const struct ptrace_hold *t, pid_t tid)
{
	for (int i = 0; i < t->n; i++)
		if (t->th[i].tid == tid && t->th[i].state != HELD_GONE)
			return &t->th[i];
	return NULL;
}

/* Whatever the guard holds of tid goes: its thread is gone, or tid is a new one's (a stale
 * entry would take a signal of the target's, or of a request, as the guard's) */
void ptrace_held__forget_guard(struct ptrace_hold *t, pid_t tid)
{
	if (!t->guard)
		return;
	hold_guard__disarm(t->guard, tid);
	hold_guard__take(t->guard, tid);
	hold_guard__missed(t->guard, tid);
}

struct held *ptrace_held__add(struct ptrace_hold *t, pid_t tid, pid_t pid, enum hold_state state)
{
	struct held *h;
	int i;

	/* reuse the slot of a thread that is gone, so a long run with many short threads does
	 * not grow the table */
	for (i = 0; i < t->n; i++)
		if (t->th[i].state == HELD_GONE)
			break;
	if (i < t->n)
		ptrace_held__forget_guard(t, t->th[i].tid);
	ptrace_held__forget_guard(t, tid);
	if (i == t->n) {
		if (t->n == t->cap) {
			int cap = t->cap ? t->cap * 2 : 64;

			h = realloc(t->th, cap * sizeof(*h));
			if (!h)
				return NULL;
			t->th = h;
			t->cap = cap;
		}
		t->n++;
	}
	h = &t->th[i];
	memset(h, 0, sizeof(*h));
	h->tid = tid;
	h->pid = pid;
	h->state = state;
	return h;
}

bool ptrace_held__keeps(const struct ptrace_hold *t, const struct held *h)
{
	return t->stopping && (!t->stop_pid || t->stop_pid == h->pid);
}

void ptrace_held__resume(struct held *h, int sig)
{
	if (h->group_stop) { /* stopped by the target's own SIGSTOP/Ctrl-Z: it stays so */
		h->group_stop = false;
		if (ptrace(PTRACE_LISTEN, h->tid, NULL, NULL) && errno == ESRCH)
			h->state = HELD_GONE;
		else
			h->state = HELD_LISTENING;
		return;
	}
	if (ptrace(h->stepping ? PTRACE_SYSCALL : PTRACE_CONT, h->tid, NULL, (void *)(long)sig) &&
	    errno == ESRCH)
		h->state = HELD_GONE;
	else
		h->state = HELD_RUNNING;
}

bool ptrace_held__queue(struct ptrace_hold *t, struct proc_event ev)
{
	if (t->qlen == MAX_QUEUED) {
		wlog("too many processes started at once: pid %d is not followed",
		     ev.child ? ev.child : ev.pid);
		return false;
	}
	t->queue[(t->qhead + t->qlen++) % MAX_QUEUED] = ev;
	return true;
}

bool ptrace_hold__next_event(struct ptrace_hold *t, struct proc_event *ev)
{
	if (!t || !t->qlen)
		return false;
	*ev = t->queue[t->qhead];
	t->qhead = (t->qhead + 1) % MAX_QUEUED;
	t->qlen--;
	if (ev->kind == PROC_EXEC || ev->kind == PROC_LOADED) {
		struct held *h = ptrace_held__find(t, ev->pid);

		if (h)
			h->awaiting = false;
	}
	return true;
}

static int create(struct ptrace_hold **out, pid_t pid, const struct hold_cfg *cfg)
{
	struct ptrace_hold *t = calloc(1, sizeof(*t));
	sigset_t chld;
	int err;

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->cfg = *cfg;
	t->cfg.follow = cfg->follow && cfg->on_birth;
	t->cfg.async_threads = cfg->async_threads && !t->cfg.follow;
	t->options = HOLD_OPTIONS | (cfg->on_birth ? BIRTH_OPTIONS : 0);
	if (t->cfg.async_threads)
		t->options &= ~PTRACE_O_TRACECLONE;
	if (cfg->guard && (err = hold_guard__open(&t->guard)))
		dlog("no guard for the threads asleep in a system call (%s): a stop interrupts them",
		     strerror(-err));
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* SIGCHLD is only read from the signalfd */
	sigprocmask(SIG_BLOCK, &chld, &t->old_mask);
	t->sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (t->sfd < 0) {
		err = -errno;
		sigprocmask(SIG_SETMASK, &t->old_mask, NULL);
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

int ptrace_hold__seize(struct ptrace_hold **out, pid_t pid, const struct hold_cfg *cfg)
{
	struct ptrace_hold *t;
	char path[64];
	bool added;
	int err;

	err = create(&t, pid, cfg);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	/* again until no thread is new: one may start while we seize the others (it is then
	 * held through TRACECLONE, or listed on the next pass) */
	do {
		DIR *dir = opendir(path);
		struct dirent *d;

		if (!dir) {
			err = -errno;
			goto fail;
		}
		added = false;
		while ((d = readdir(dir))) {
			pid_t tid = (pid_t)atoi(d->d_name);

			if (tid <= 0 || ptrace_held__find(t, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)t->options)) {
				int e = errno;
				pid_t tracer = e == EPERM ? proc__status_field(tid, "TracerPid", -1) : 0;

				/* gone meanwhile (its status too) */
				if (e == ESRCH || tracer < 0)
					continue;
				/* started by a thread seized already: the kernel attached it to
				 * us (TRACECLONE); its first stop is still to come */
				if (tracer == (pid_t)syscall(SYS_gettid)) {
					if (!ptrace_held__add(t, tid, pid, HELD_NEWBORN)) {
						err = -ENOMEM;
						closedir(dir);
						goto fail;
					}
					added = true;
					continue;
				}
				err = -e;
				closedir(dir);
				goto fail;
			}
			if (!ptrace_held__add(t, tid, pid, HELD_RUNNING)) {
				err = -ENOMEM;
				closedir(dir);
				goto fail;
			}
			added = true;
		}
		closedir(dir);
	} while (added);
	*out = t;
	return 0;
fail:
	ptrace_hold__release(t);
	return err;
}

int ptrace_hold__adopt(struct ptrace_hold **out, pid_t pid, const struct hold_cfg *cfg)
{
	struct ptrace_hold *t;
	struct held *h;
	int err = create(&t, pid, cfg);

	if (err)
		return err;
	h = ptrace_held__add(t, pid, pid, HELD_STOPPED);
	/* from now on pyuprof's death must not kill the program (launch set EXITKILL) */
	if (!h || ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)t->options)) {
		err = h ? -errno : -ENOMEM;
		ptrace_hold__release(t);
		return err;
	}
	ptrace_held__resume(h, 0);
	*out = t;
	return 0;
}

struct held *ptrace_held__seize(struct ptrace_hold *t, pid_t pid, pid_t tid)
{
	struct held *h = ptrace_held__find(t, tid);

	if (h || !t->cfg.async_threads || syscall(SYS_tgkill, pid, tid, 0))
		return NULL;
	/* (ESRCH: gone already; EPERM: ending, or not ours to trace: then it is left) */
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)t->options))
		return NULL;
	/* a thread of pid's still: one that ended meanwhile may have left its tid to another
	 * process's, which is not ours to hold */
	if (syscall(SYS_tgkill, pid, tid, 0)) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return NULL;
	}
	h = ptrace_held__add(t, tid, pid, HELD_RUNNING);
	if (!h) /* (the table cannot grow: let go, as if never seen) */
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return h;
}

int ptrace_hold__add_thread(struct ptrace_hold *t, pid_t pid, pid_t tid)
{
	struct held *h = ptrace_held__seize(t, pid, tid);

	/* during a stop of ours it stops too (ptrace_hold__stop seizes what is new itself) */
	if (h && ptrace_held__keeps(t, h) && ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno == ESRCH)
		h->state = HELD_GONE;
	return 0;
}

void ptrace_hold__async_threads(struct ptrace_hold *t, pid_t pid)
{
	if (t->cfg.follow)
		return;
	t->cfg.async_threads = true;
	t->options &= ~PTRACE_O_TRACECLONE;
	/* (one left asleep keeps the clone stop: it cannot be set while it runs) */
	for (int i = 0; i < t->n; i++)
		if (t->th[i].pid == pid && t->th[i].state == HELD_STOPPED)
			ptrace(PTRACE_SETOPTIONS, t->th[i].tid, NULL, (void *)t->options);
}

int ptrace_hold__fd(const struct ptrace_hold *t)
{
	return t->sfd;
}

void ptrace_hold__expect_signal(struct ptrace_hold *t, pid_t tid)
{
	struct held *h = ptrace_held__find(t, tid);

	if (h)
		h->expect = true;
}

struct serve_job {
	int (*fn)(void *);
	void *arg;
	int err;
	int done_fd; /* written when fn has returned */
};

static void *serve_job_run(void *p)
{
	struct serve_job *job = p;
	uint64_t one = 1;

	job->err = job->fn(job->arg);
	if (write(job->done_fd, &one, sizeof(one)) != sizeof(one))
		job->err = job->err ? job->err : -errno;
	return NULL;
}

int ptrace_hold__serve_during(struct ptrace_hold *t, int (*fn)(void *), void *arg)
{
	struct serve_job job = { .fn = fn, .arg = arg };
	struct pollfd pfd[2];
	sigset_t all, old;
	bool said = false;
	pthread_t th;
	int err;

	job.done_fd = eventfd(0, EFD_CLOEXEC);
	if (job.done_fd < 0)
		return fn(arg); /* (unserved, as before) */
	/* no signal of pyuprof's is taken by the job's thread (it inherits this mask) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&th, NULL, serve_job_run, &job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(job.done_fd);
		return fn(arg);
	}
	pfd[0] = (struct pollfd){ .fd = t->sfd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = job.done_fd, .events = POLLIN };
	t->serving = true;
	/* vfork children born before, still waiting for their birth to be taken: their parents
	 * wait for them (as ptrace_held__born() does for those born from here on) */
	for (int i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		if (h->shared && h->born && h->state == HELD_STOPPED && h->tid == h->pid &&
		    !h->awaiting && !ptrace_held__keeps(t, h)) {
			ptrace_held__resume(h, h->pending_sig);
			h->pending_sig = 0;
		}
	}
	for (;;) {
		/* every state change at once: a thread of the target's that stops for a signal,
		 * a clone, a fork or an exec stands still until it is dealt with */
		err = ptrace_hold__handle(t, NULL);
		if (err && err != -ESRCH) /* (-ESRCH: the first process went; for the caller) */
			dlog("while serving: %s", strerror(-err));
		/* (tests wait for this line: the hold has seen it, not only the kernel) */
		if (err == -ESRCH && !said) {
			dlog("pid %d: gone (it ended or ran another program) while the hold served",
			     t->pid);
			said = true;
		}
		/* (a timeout too: a change whose SIGCHLD an earlier drain took is seen anyway) */
		pfd[1].revents = 0;
		if (poll(pfd, 2, 50) < 0 && errno != EINTR)
			usleep(10000); /* (cannot happen with these two fds; keep serving) */
		if (pfd[1].revents & POLLIN)
			break;
	}
	pthread_join(th, NULL);
	close(job.done_fd);
	ptrace_hold__handle(t, NULL);
	t->serving = false;
	return job.err;
}

bool ptrace_hold__holds(const struct ptrace_hold *t, pid_t pid)
{
	const struct held *h = ptrace_held__find(t, pid);

	return h && h->pid == pid;
}

int ptrace_hold__watch_loader(struct ptrace_hold *t, pid_t pid)
{
	struct held *h = ptrace_held__find(t, pid);

	if (!h || h->state != HELD_STOPPED)
		return -ESRCH;
	h->stepping = true;
	h->in_syscall = false;
	ptrace_held__resume(h, 0);
	return h->state == HELD_GONE ? -ESRCH : 0;
}

/*
 * Before a release: every thread disarmed and the guard detached; a signal it sent before
 * (one may still be under way as the guard is detached) is waited for, its stop taken, so
 * that no REQUEST_SIGNAL of ours reaches a thread let go.
 */
static void settle_guard(struct ptrace_hold *t)
{
	struct timespec ms = { 0, 1000000 };
	bool pending = true;

	if (!t->guard)
		return;
	ptrace_held__disarm(t, 0);
	t->stopping = true; /* (a thread stopped by it stays so, to be detached) */
	t->stop_pid = 0;
	for (int waited = 0; pending && waited < 100; waited++) {
		nanosleep(&ms, NULL);
		ptrace_held__drain(t, NULL);
		pending = false;
		for (int i = 0; i < t->n && !pending; i++)
			pending = t->th[i].state != HELD_GONE &&
				  hold_guard__pending(t->guard, t->th[i].tid);
	}
}

void ptrace_hold__release(struct ptrace_hold *t)
{
	int i;

	if (!t)
		return;
	/* a thread must be in a ptrace-stop to be detached (one that would not stop is tried
	 * as it is) */
	ptrace_hold__stop(t, 0);
	/* a new process whose parent's event never came in (the parent died meanwhile) is
	 * born here, by what /proc says of it, and let go */
	for (i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		if (h->state != HELD_BIRTH)
			continue;
		if (!h->announced) {
			h->parent = proc__status_field(h->tid, "PPid", 0);
			h->shared = ptrace_held__shares_memory(h->tid, h->parent, 0);
		}
		h->unfollowed = true;
		ptrace_held__born(t, h);
	}
	/* threads left asleep cannot be detached: PTRACE_DETACH needs a ptrace-stop, and the
	 * interrupt that would make one is what they were spared. They are disarmed and stay
	 * traced until the thread that holds them exits; the kernel then lets them go as they
	 * are, asleep or not, a signal of the target's kept (exit_ptrace). */
	settle_guard(t);
	for (i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		/* one not in a stop of ours (left asleep, or that would not stop) is left to the
		 * kernel as this thread exits: detached now, a signal of the target's it may stand
		 * in a stop for, unseen, would be lost */
		if (h->state == HELD_GONE || (t->guard && h->state == HELD_RUNNING))
			continue;
		/* a signal held back goes to the target now; a pending request signal of ours
		 * (REQUEST_SIGNAL) would be ignored by default */
		ptrace(PTRACE_DETACH, h->tid, NULL, (void *)(long)h->pending_sig);
	}
	hold_guard__free(t->guard);
	close(t->sfd);
	sigprocmask(SIG_SETMASK, &t->old_mask, NULL);
	free(t->th);
	free(t);
}
