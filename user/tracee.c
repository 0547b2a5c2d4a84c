// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small ptrace supervisor. Threads are seized with PTRACE_O_TRACECLONE, so threads started
 * later are held too, and PTRACE_O_TRACEEXEC, so an exec does not turn into a SIGTRAP. State
 * changes arrive as SIGCHLD on a signalfd. A stop that is not ours (a signal for the target, a
 * group-stop) is passed on at once: signals are re-injected, group-stops are LISTENed to.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "tracee.h"

#define HOLD_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
#define STOP_TIMEOUT_MS 3000

enum hold_state {
	HELD_RUNNING,
	HELD_STOPPED,	/* in a ptrace-stop we keep, resumed with pending_sig */
	HELD_LISTENING, /* in a group-stop of the target's own (SIGSTOP, Ctrl-Z) */
	HELD_GONE,
};

struct held {
	pid_t tid;
	enum hold_state state;
	int pending_sig;
	bool expect; /* the BPF side sent it REQUEST_SIGNAL */
};

struct tracee {
	pid_t pid;
	int sfd;
	sigset_t old_mask;
	struct held *th;
	int n, cap;
	bool stopping; /* stop_all in progress: keep every stop */
	request_fn on_request;
	void *ctx;
};

static struct held *find(struct tracee *t, pid_t tid, bool add)
{
	struct held *h;
	int i;

	for (i = 0; i < t->n; i++)
		if (t->th[i].tid == tid && t->th[i].state != HELD_GONE)
			return &t->th[i];
	if (!add)
		return NULL;
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;

		h = realloc(t->th, cap * sizeof(*h));
		if (!h)
			return NULL;
		t->th = h;
		t->cap = cap;
	}
	h = &t->th[t->n++];
	memset(h, 0, sizeof(*h));
	h->tid = tid;
	return h;
}

static void resume(struct held *h, int sig)
{
	if (ptrace(PTRACE_CONT, h->tid, NULL, (void *)(long)sig) && errno == ESRCH)
		h->state = HELD_GONE;
	else
		h->state = HELD_RUNNING;
}

static int create(struct tracee **out, pid_t pid, request_fn on_request, void *ctx)
{
	struct tracee *t = calloc(1, sizeof(*t));
	sigset_t chld;
	int err;

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->on_request = on_request;
	t->ctx = ctx;
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

int tracee__seize(struct tracee **out, pid_t pid, request_fn on_request, void *ctx)
{
	struct tracee *t;
	char path[64];
	bool added;
	int err;

	err = create(&t, pid, on_request, ctx);
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
			struct held *h;

			if (tid <= 0 || find(t, tid, false))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)HOLD_OPTIONS)) {
				if (errno == ESRCH)
					continue;
				err = -errno;
				closedir(dir);
				goto fail;
			}
			h = find(t, tid, true);
			if (!h) {
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
	tracee__release(t);
	return err;
}

int tracee__adopt(struct tracee **out, pid_t pid, request_fn on_request, void *ctx)
{
	struct tracee *t;
	struct held *h;
	int err = create(&t, pid, on_request, ctx);

	if (err)
		return err;
	h = find(t, pid, true);
	/* from now on pyuprof's death must not kill the program (launch set EXITKILL) */
	if (!h || ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)HOLD_OPTIONS)) {
		err = h ? -errno : -ENOMEM;
		tracee__release(t);
		return err;
	}
	resume(h, 0);
	*out = t;
	return 0;
}

int tracee__fd(const struct tracee *t)
{
	return t->sfd;
}

void tracee__expect_signal(struct tracee *t, pid_t tid)
{
	struct held *h = find(t, tid, true);

	if (h)
		h->expect = true;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* One wait status. Returns -ESRCH when the whole target is gone (exit or exec). */
static int dispatch(struct tracee *t, pid_t tid, int st, int *status)
{
	struct held *h = find(t, tid, true);
	int sig, event;

	if (!h)
		return -ENOMEM;
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		h->state = HELD_GONE;
		if (tid == t->pid) {
			if (status)
				*status = st;
			return -ESRCH;
		}
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	sig = WSTOPSIG(st);
	event = st >> 16;
	switch (event) {
	case PTRACE_EVENT_EXEC:
		/* another program now: the probes were on the old one */
		h->state = HELD_STOPPED;
		return -ESRCH;
	case PTRACE_EVENT_CLONE:
		/* the new thread reports its own first stop */
		if (t->stopping)
			h->state = HELD_STOPPED;
		else
			resume(h, 0);
		return 0;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig)) {
			/* the target's own group-stop: stay stopped, wake on SIGCONT */
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			h->state = HELD_LISTENING;
		} else if (t->stopping) {
			h->state = HELD_STOPPED;
		} else {
			resume(h, 0);
		}
		return 0;
	default:
		break;
	}
	/* signal-delivery-stop */
	if (sig == REQUEST_SIGNAL) {
		/* the handler first reads the request, which marks the signal as ours; then the
		 * thread's requests are done while it stands here */
		if (t->on_request)
			t->on_request(t->ctx, tid);
		h = find(t, tid, true); /* the handler may have grown the table */
		if (!h)
			return -ENOMEM;
		if (h->expect) {
			h->expect = false;
			sig = 0;
		}
	}
	if (t->stopping) {
		h->state = HELD_STOPPED;
		h->pending_sig = sig;
	} else {
		resume(h, sig);
	}
	return 0;
}

static int drain(struct tracee *t, int *status)
{
	struct signalfd_siginfo si;
	int st, err = 0;
	pid_t tid;

	while (read(t->sfd, &si, sizeof(si)) == sizeof(si))
		;
	for (;;) {
		tid = waitpid(-1, &st, __WALL | WNOHANG);
		if (tid <= 0)
			return tid < 0 && errno != ECHILD && errno != EINTR ? -errno : err;
		if (dispatch(t, tid, st, status) == -ESRCH)
			err = -ESRCH;
	}
}

int tracee__handle(struct tracee *t, int *status)
{
	return drain(t, status);
}

static bool all_stopped(const struct tracee *t)
{
	for (int i = 0; i < t->n; i++)
		if (t->th[i].state == HELD_RUNNING)
			return false;
	return true;
}

int tracee__stop_all(struct tracee *t)
{
	struct timespec ms = { 0, 1000000 };
	int i, waited, err = 0;

	t->stopping = true;
	for (i = 0; i < t->n; i++)
		if (t->th[i].state == HELD_RUNNING &&
		    ptrace(PTRACE_INTERRUPT, t->th[i].tid, NULL, NULL) && errno == ESRCH)
			t->th[i].state = HELD_GONE;
	for (waited = 0; !all_stopped(t) && waited < STOP_TIMEOUT_MS; waited++) {
		err = drain(t, NULL);
		if (err == -ESRCH)
			return err;
		if (!all_stopped(t))
			nanosleep(&ms, NULL);
	}
	if (!all_stopped(t)) {
		dlog("some threads of pid %d did not stop", t->pid);
		tracee__resume_all(t);
		return -ETIMEDOUT;
	}
	return 0;
}

int tracee__resume_all(struct tracee *t)
{
	t->stopping = false;
	for (int i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		if (h->state == HELD_STOPPED) {
			resume(h, h->pending_sig);
			h->pending_sig = 0;
		}
	}
	return 0;
}

int tracee__fs_bases(struct tracee *t, pid_t *tids, uint64_t *bases, int max)
{
	struct user_regs_struct regs;
	int i, n = 0;

	for (i = 0; i < t->n && n < max; i++) {
		if (t->th[i].state == HELD_GONE || t->th[i].state == HELD_RUNNING ||
		    ptrace(PTRACE_GETREGS, t->th[i].tid, NULL, &regs))
			continue;
		tids[n] = t->th[i].tid;
		bases[n++] = regs.fs_base;
	}
	return n;
}

void tracee__release(struct tracee *t)
{
	int i;

	if (!t)
		return;
	/* a thread must be in a ptrace-stop to be detached */
	if (tracee__stop_all(t) == -ETIMEDOUT)
		t->stopping = true;
	for (i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		if (h->state == HELD_GONE)
			continue;
		/* a signal held back goes to the target now; a pending request signal of ours
		 * (REQUEST_SIGNAL) would be ignored by default */
		ptrace(PTRACE_DETACH, h->tid, NULL, (void *)(long)h->pending_sig);
	}
	close(t->sfd);
	sigprocmask(SIG_SETMASK, &t->old_mask, NULL);
	free(t->th);
	free(t);
}
