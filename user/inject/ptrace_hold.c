// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small ptrace supervisor. Threads are seized with PTRACE_O_TRACECLONE, so threads started
 * later are held too, and PTRACE_O_TRACEEXEC, so an exec does not turn into a SIGTRAP; with
 * on_birth, PTRACE_O_TRACEFORK and PTRACE_O_TRACEVFORK hold new processes from their birth.
 * State changes arrive as SIGCHLD on a signalfd. A stop that is not ours (a signal for the
 * target, a group-stop) is passed on at once: signals are re-injected, group-stops are
 * LISTENed to. A new process is known from two stops, its parent's fork event and its own
 * first stop, which come in either order: it is handed to on_birth at the second of them.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/hashmap.h"
#include "base/log.h"
#include "base/proc.h"
#include "inject/hold_guard.h"
#include "inject/inject.h"
#include "inject/ptrace_hold.h"
#include "target/py_image.h"

/* TRACESYSGOOD: system-call stops (the loader stepped, calls injected: inject.h) are told
 * from a SIGTRAP of the target's */
#define HOLD_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD)
#define BIRTH_OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)
#define STOP_TIMEOUT_MS 3000
/* how long a system call to make waits for a thread left asleep to wake (and be stopped by
 * the guard) before one is interrupted: an idle event loop wakes within its timeout */
#define WAKE_WAIT_MS 250
#define MAX_QUEUED 1024

enum hold_state {
	HELD_RUNNING,
	HELD_NEWBORN,	/* a new thread or process whose first stop has not been seen */
	HELD_STOPPED,	/* in a ptrace-stop we keep, resumed with pending_sig */
	HELD_BIRTH,	/* a new process stopped at its first instruction, not yet born() */
	HELD_LISTENING, /* in a group-stop of the target's own (SIGSTOP, Ctrl-Z) */
	HELD_ASLEEP,	/* left asleep in a system call during a stop of ours, armed (guard) */
	HELD_GONE,
};

struct held {
	pid_t tid;
	pid_t pid; /* its process */
	enum hold_state state;
	int pending_sig;
	bool expect;	 /* the BPF side sent it REQUEST_SIGNAL */
	bool stepping;	 /* resumed with PTRACE_SYSCALL: its loader is watched */
	bool in_syscall; /* stepping: between a syscall's entry and exit stops */
	bool group_stop; /* HELD_STOPPED in the target's own group-stop: resumed by LISTEN */
	bool armed;	 /* armed in the guard (HELD_ASLEEP, or woken from it in this stop) */
	bool awaiting;	 /* HELD_STOPPED for a queued PROC_EXEC or PROC_LOADED not yet taken */
	long sleep_nr;	 /* HELD_ASLEEP: the system call it sleeps in */
	/* a new process: its parent's event seen (parent set), its own first stop seen */
	bool announced, born, unfollowed, shared;
	pid_t parent;
};

struct ptrace_hold {
	pid_t pid; /* the first process: its end ends the recording */
	long options;
	int sfd;
	sigset_t old_mask;
	struct held *th;
	int n, cap;
	bool stopping; /* a stop is in progress: keep every stop of stop_pid (0: of all) */
	bool serving;  /* in ptrace_hold__serve_during */
	/* the first process is gone (exit or exec), seen by whichever drain saw it: reported by
	 * every later ptrace_hold__handle, with its wait status if it exited */
	bool first_gone, first_exited;
	int first_status;
	pid_t stop_pid;
	struct proc_event queue[MAX_QUEUED];
	int qhead, qlen;
	struct hold_cfg cfg;
	struct hold_guard *guard; /* cfg.guard, where possible */
};

static struct held *find(const struct ptrace_hold *t, pid_t tid)
{
	for (int i = 0; i < t->n; i++)
		if (t->th[i].tid == tid && t->th[i].state != HELD_GONE)
			return &t->th[i];
	return NULL;
}

/* Whatever the guard holds of tid goes: its thread is gone, or tid is a new one's (a stale
 * entry would take a signal of the target's, or of a request, as the guard's) */
static void forget_guard(struct ptrace_hold *t, pid_t tid)
{
	if (!t->guard)
		return;
	hold_guard__disarm(t->guard, tid);
	hold_guard__take(t->guard, tid);
	hold_guard__missed(t->guard, tid);
}

static struct held *add(struct ptrace_hold *t, pid_t tid, pid_t pid, enum hold_state state)
{
	struct held *h;
	int i;

	/* reuse the slot of a thread that is gone, so a long run with many short threads does
	 * not grow the table */
	for (i = 0; i < t->n; i++)
		if (t->th[i].state == HELD_GONE)
			break;
	if (i < t->n)
		forget_guard(t, t->th[i].tid);
	forget_guard(t, tid);
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

static bool keeps(const struct ptrace_hold *t, const struct held *h)
{
	return t->stopping && (!t->stop_pid || t->stop_pid == h->pid);
}

static void resume(struct held *h, int sig)
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

static bool queue(struct ptrace_hold *t, struct proc_event ev)
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
		struct held *h = find(t, ev->pid);

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
	t->options = HOLD_OPTIONS | (cfg->on_birth ? BIRTH_OPTIONS : 0);
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

			if (tid <= 0 || find(t, tid))
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
					if (!add(t, tid, pid, HELD_NEWBORN)) {
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
			if (!add(t, tid, pid, HELD_RUNNING)) {
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
	h = add(t, pid, pid, HELD_STOPPED);
	/* from now on pyuprof's death must not kill the program (launch set EXITKILL) */
	if (!h || ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)t->options)) {
		err = h ? -errno : -ENOMEM;
		ptrace_hold__release(t);
		return err;
	}
	resume(h, 0);
	*out = t;
	return 0;
}

int ptrace_hold__fd(const struct ptrace_hold *t)
{
	return t->sfd;
}

void ptrace_hold__expect_signal(struct ptrace_hold *t, pid_t tid)
{
	struct held *h = find(t, tid);

	if (h)
		h->expect = true;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The threads of process pid are gone (exit or exec): forget them, but for keep. */
static void forget_process(struct ptrace_hold *t, pid_t pid, pid_t keep)
{
	for (int i = 0; i < t->n; i++)
		if (t->th[i].pid == pid && t->th[i].tid != keep) {
			forget_guard(t, t->th[i].tid);
			t->th[i].state = HELD_GONE;
		}
}

/* A new process's first stop and its parent's event are both in: on_birth (unless it shares
 * its parent's memory, which holds the parent's probes), then it is let go unless followed. */
static void born(struct ptrace_hold *t, struct held *h)
{
	bool follow = t->cfg.follow && !h->unfollowed;
	pid_t tid = h->tid;

	if (!h->shared && t->cfg.on_birth)
		t->cfg.on_birth(t->cfg.ctx, h->pid, h->parent, follow);
	h = find(t, tid);
	if (!h)
		return;
	/* while ptrace_hold__serve_during runs, nobody starts recording a new process: one
	 * that shares its parent's memory (vfork) runs on rather than keep its parent waiting
	 * (its exec is still held and queued) */
	if (follow && h->shared && t->serving && !keeps(t, h)) {
		resume(h, h->pending_sig);
		h->pending_sig = 0;
		return;
	}
	if (follow) {
		h->state = HELD_STOPPED; /* until the session has started recording it */
		return;
	}
	ptrace(PTRACE_DETACH, h->tid, NULL, (void *)(long)h->pending_sig);
	h->state = HELD_GONE;
}

/* Whether child shares its memory with parent (vfork, or a clone with CLONE_VM). */
static bool shares_memory(pid_t child, pid_t parent, int event)
{
	long same = syscall(SYS_kcmp, child, parent, KCMP_VM, 0, 0);

	if (same >= 0)
		return same == 0;
	/* no kcmp: a vfork shares it, and a clone may; never write into memory that might */
	return event != PTRACE_EVENT_FORK;
}

/* A fork, vfork or clone event of h: the new task is held from its first stop. */
static int on_clone_event(struct ptrace_hold *t, struct held *h, int event)
{
	unsigned long msg = 0;
	pid_t child, parent = h->pid;
	struct held *c;

	if (ptrace(PTRACE_GETEVENTMSG, h->tid, NULL, &msg) || !msg)
		return 0;
	child = (pid_t)msg;
	/* a thread (CLONE_THREAD): of h's process */
	if (event == PTRACE_EVENT_CLONE && proc__status_field(child, "Tgid", child) != child) {
		if (!find(t, child) && !add(t, child, parent, HELD_NEWBORN))
			return -ENOMEM;
		return 0;
	}
	c = find(t, child);
	/* (one that died before its first stop was seen would never stop: nothing to wait for) */
	if (!c && proc__alive(child))
		return 0;
	if (!c && !(c = add(t, child, child, HELD_NEWBORN)))
		return -ENOMEM;
	c->announced = true;
	c->parent = parent;
	c->shared = shares_memory(child, parent, event);
	if (t->cfg.follow && !queue(t, (struct proc_event){ .kind = PROC_FORK, .pid = parent,
							     .child = child, .vfork = c->shared }))
		c->unfollowed = true;
	if (c->born)
		born(t, c);
	return 0;
}

/* A syscall stop of a process whose loader is watched: has it mapped libpython yet? */
static void on_loader_step(struct ptrace_hold *t, struct held *h)
{
	struct user_regs_struct regs;

	/* syscall stops alternate entry/exit; look after each mmap returns */
	h->in_syscall = !h->in_syscall;
	if (!h->in_syscall && !ptrace(PTRACE_GETREGS, h->tid, NULL, &regs) &&
	    regs.orig_rax == SYS_mmap && py_image__libpython_mapped(h->pid)) {
		h->stepping = false;
		h->state = HELD_STOPPED;
		h->awaiting = queue(t, (struct proc_event){ .kind = PROC_LOADED, .pid = h->pid });
		if (!h->awaiting)
			resume(h, 0);
		return;
	}
	resume(h, 0);
}

/* One wait status. Returns -ESRCH when the first process is gone (exit or exec). */
static int dispatch(struct ptrace_hold *t, pid_t tid, int st, int *status)
{
	struct held *h = find(t, tid);
	int sig, event, err;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (!h)
			return 0;
		forget_guard(t, tid);
		h->state = HELD_GONE;
		if (tid != h->pid)
			return 0;
		forget_process(t, tid, 0);
		if (tid == t->pid) {
			t->first_gone = t->first_exited = true;
			t->first_status = st;
			if (status)
				*status = st;
			return -ESRCH;
		}
		queue(t, (struct proc_event){ .kind = PROC_EXIT, .pid = tid, .status = st });
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	if (!h) {
		/* its first stop came before its parent's event: find its process */
		h = add(t, tid, proc__status_field(tid, "Tgid", tid), HELD_NEWBORN);
		if (!h)
			return -ENOMEM;
	}
	sig = WSTOPSIG(st);
	event = st >> 16;
	if (h->state == HELD_NEWBORN && h->tid == h->pid) {
		/* a new process stands still until its parent's event is in too (born) */
		h->born = true;
		h->state = HELD_BIRTH;
		if (h->announced)
			born(t, h);
		return 0;
	}
	if (h->state == HELD_NEWBORN) { /* a new thread runs on */
		if (keeps(t, h))
			h->state = HELD_STOPPED;
		else
			resume(h, 0);
		return 0;
	}
	switch (event) {
	case PTRACE_EVENT_EXEC:
		/* another program now: the probes were on the old one. The thread that exec'd
		 * now has the leader's tid; the others are gone. */
		forget_process(t, h->pid, h->pid);
		h = find(t, h->pid);
		if (!h)
			return 0;
		h->state = HELD_STOPPED;
		h->shared = false; /* (a vfork child's memory is its own now) */
		if (h->pid == t->pid) {
			t->first_gone = true;
			return -ESRCH;
		}
		/* stopped until the session has taken this event, whatever else it resumes (with
		 * no room for it: on, unrecorded) */
		h->awaiting = queue(t, (struct proc_event){ .kind = PROC_EXEC, .pid = h->pid });
		if (!h->awaiting)
			resume(h, 0);
		return 0;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		err = on_clone_event(t, h, event);
		if (err)
			return err;
		h = find(t, tid); /* the table may have moved */
		if (keeps(t, h))
			h->state = HELD_STOPPED;
		else
			resume(h, 0);
		return 0;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig) && keeps(t, h)) {
			/* in the target's own group-stop, and held for a stop of ours (a thread
			 * must be in a ptrace-stop to be written around or detached) */
			h->state = HELD_STOPPED;
			h->group_stop = true;
		} else if (is_stop_signal(sig)) {
			/* the target's own group-stop: stay stopped, wake on SIGCONT */
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			h->state = HELD_LISTENING;
		} else if (keeps(t, h)) {
			h->state = HELD_STOPPED;
		} else {
			resume(h, 0);
		}
		return 0;
	default:
		break;
	}
	if (h->stepping && sig == (SIGTRAP | 0x80)) {
		on_loader_step(t, h);
		return 0;
	}
	/* signal-delivery-stop */
	if (sig == REQUEST_SIGNAL && t->guard && hold_guard__take(t->guard, tid)) {
		/* an armed thread woke from its system call during a stop of ours (or just
		 * before its end): it stands here, before any instruction of its own, if the stop
		 * lasts. (It made no request: it had not left the kernel.) */
		if (keeps(t, h)) {
			h->state = HELD_STOPPED;
			h->pending_sig = 0;
		} else {
			resume(h, 0);
		}
		return 0;
	}
	if (sig == REQUEST_SIGNAL) {
		/* the handler first reads the request, which marks the signal as ours; then the
		 * thread's requests are done while it stands here */
		bool hold = t->cfg.on_request && t->cfg.on_request(t->cfg.ctx, h->pid, tid);

		h = find(t, tid); /* the handler may have grown the table */
		if (!h)
			return 0;
		if (h->expect) {
			h->expect = false;
			sig = 0;
		}
		if (hold) {
			h->state = HELD_STOPPED;
			h->pending_sig = sig;
			return 0;
		}
	}
	resume(h, sig);
	/* during a stop of ours the signal is taken as it would be (a handler's frame is set up,
	 * a default action done) and the thread is stopped again, in our interrupt: a thread
	 * never stands in our stop with a signal of the target's held, which would keep it from
	 * making our system calls (inject.h) */
	if (keeps(t, h) && h->state == HELD_RUNNING &&
	    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno == ESRCH)
		h->state = HELD_GONE;
	return 0;
}

static int drain(struct ptrace_hold *t, int *status)
{
	struct signalfd_siginfo si;
	int st, err = 0, e;
	pid_t tid;

	while (read(t->sfd, &si, sizeof(si)) == sizeof(si))
		;
	for (;;) {
		tid = waitpid(-1, &st, __WALL | WNOHANG);
		if (tid <= 0)
			return tid < 0 && errno != ECHILD && errno != EINTR ? -errno : err;
		e = dispatch(t, tid, st, status);
		if (e == -ESRCH || (e && !err))
			err = e;
	}
}

int ptrace_hold__handle(struct ptrace_hold *t, int *status)
{
	int err = drain(t, status);

	/* also when an earlier drain (a stop's) saw it go */
	if (t->first_gone) {
		if (t->first_exited && status)
			*status = t->first_status;
		return -ESRCH;
	}
	return err;
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
	 * wait for them (as born() does for those born from here on) */
	for (int i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		if (h->shared && h->born && h->state == HELD_STOPPED && h->tid == h->pid &&
		    !h->awaiting && !keeps(t, h)) {
			resume(h, h->pending_sig);
			h->pending_sig = 0;
		}
	}
	for (;;) {
		/* every state change at once: a thread of the target's that stops for a signal,
		 * a clone, a fork or an exec stands still until it is dealt with */
		err = ptrace_hold__handle(t, NULL);
		if (err && err != -ESRCH) /* (-ESRCH: the first process went; for the caller) */
			dlog("while serving: %s", strerror(-err));
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

static bool all_stopped(const struct ptrace_hold *t, pid_t pid)
{
	for (int i = 0; i < t->n; i++)
		if ((!pid || t->th[i].pid == pid) &&
		    (t->th[i].state == HELD_RUNNING || t->th[i].state == HELD_NEWBORN))
			return false;
	return true;
}

/*
 * The system call tid sleeps in, or -1 if it does not sleep in one (it runs, or waits in the
 * kernel for something else, like a page fault).
 */
static long asleep_in(pid_t pid, pid_t tid)
{
	char path[64], buf[32] = "";
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9')
		nr = strtol(buf, NULL, 10);
	fclose(f);
	return nr;
}

/*
 * Whether tid sleeps inside a system call's own code (its kernel stack has the call's
 * __x64_sys_ frame), not in the work done on the way back to user mode after the call's exit
 * was traced (memory.high throttling, task work, a freezer): from there it would return to user
 * mode without another exit for the guard to see.
 */
static bool asleep_in_call(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	bool in_call = false, leaving = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		in_call |= strstr(line, "__x64_sys_") != NULL;
		leaving |= strstr(line, "exit_to_user_mode") != NULL;
	}
	fclose(f);
	return in_call && !leaving;
}

/*
 * A stop of ours leaves h asleep in its system call, armed, rather than interrupt it (see
 * hold_guard.h for why). Armed first, then looked at: should it wake in between, the guard
 * has it (it stops, or, seen awake here, it is interrupted as well: two stops, both ours), or
 * it is no longer armed (a system call of its ended unstopped: then it is interrupted). Never
 * a thread that blocks REQUEST_SIGNAL, now or once its call returns: it could not be stopped.
 */
static bool leave_asleep(struct ptrace_hold *t, struct held *h)
{
	uint64_t fs_base, masks;
	long nr;

	if (!t->guard || h->state != HELD_RUNNING || h->stepping ||
	    hold_guard__query(t->guard, h->tid, &fs_base, &masks) ||
	    (masks & (1ULL << (REQUEST_SIGNAL - 1))) || hold_guard__arm(t->guard, h->pid, h->tid))
		return false;
	h->armed = true;
	nr = asleep_in(h->pid, h->tid);
	if (nr < 0 || !asleep_in_call(h->pid, h->tid) || !hold_guard__armed(t->guard, h->tid)) {
		hold_guard__disarm(t->guard, h->tid);
		h->armed = false;
		return false;
	}
	h->state = HELD_ASLEEP;
	h->sleep_nr = nr;
	return true;
}

/* The threads of pid (0: all) that were armed are no longer. */
static void disarm(struct ptrace_hold *t, pid_t pid)
{
	bool any = false;

	for (int i = 0; t->guard && i < t->n; i++) {
		struct held *h = &t->th[i];

		if (h->armed && (!pid || h->pid == pid)) {
			hold_guard__disarm(t->guard, h->tid);
			h->armed = false;
		}
		if (h->state == HELD_ASLEEP && (!pid || h->pid == pid))
			h->state = HELD_RUNNING;
		any |= h->armed;
	}
	if (t->guard && !any)
		hold_guard__detach(t->guard);
}

/* A thread left asleep that woke and could not be stopped by the guard (it changed its mask
 * meanwhile) runs: it is interrupted after all. */
static void interrupt_missed(struct ptrace_hold *t, pid_t pid)
{
	for (int i = 0; t->guard && i < t->n; i++) {
		struct held *h = &t->th[i];

		if ((pid && h->pid != pid) || h->state != HELD_ASLEEP ||
		    !hold_guard__missed(t->guard, h->tid))
			continue;
		dlog("pid %d: thread %d woke and could not be stopped by the guard: interrupted",
		     h->pid, h->tid);
		h->state = HELD_RUNNING;
		if (ptrace(PTRACE_INTERRUPT, h->tid, NULL, NULL) && errno == ESRCH)
			h->state = HELD_GONE;
	}
}

/* Waits until no thread of pid (0: all) runs. Returns 0, -ESRCH or -ETIMEDOUT. */
static int wait_stopped(struct ptrace_hold *t, pid_t pid)
{
	struct timespec ms = { 0, 1000000 };
	int waited, err;

	for (waited = 0; waited < STOP_TIMEOUT_MS; waited++) {
		err = drain(t, NULL);
		if (err == -ESRCH)
			return err;
		interrupt_missed(t, pid);
		if (all_stopped(t, pid))
			return 0;
		nanosleep(&ms, NULL);
	}
	return -ETIMEDOUT;
}

int ptrace_hold__stop(struct ptrace_hold *t, pid_t pid)
{
	int i, err;

	t->stopping = true;
	t->stop_pid = pid;
	for (i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		if ((pid && h->pid != pid) ||
		    (h->state != HELD_RUNNING && h->state != HELD_LISTENING) || leave_asleep(t, h))
			continue;
		/* a listening thread (the target stopped itself) traps again when interrupted,
		 * into a stop that can be detached from */
		if (ptrace(PTRACE_INTERRUPT, h->tid, NULL, NULL) && errno == ESRCH)
			h->state = HELD_GONE;
		else if (h->state == HELD_LISTENING)
			h->state = HELD_RUNNING; /* until that trap is seen */
	}
	err = wait_stopped(t, pid);
	if (err == -ESRCH) {
		t->stopping = false; /* what is left runs on; the exit is kept for handle */
		disarm(t, pid);
		return err;
	}
	if (err) {
		dlog("some threads of pid %d did not stop", pid ? pid : t->pid);
		ptrace_hold__resume(t, pid);
	}
	return err;
}

int ptrace_hold__resume(struct ptrace_hold *t, pid_t pid)
{
	if (!pid || t->stop_pid == pid)
		t->stopping = false;
	/* first: a thread that wakes from here on runs on (a signal the guard sent meanwhile is
	 * still taken as ours: dispatch) */
	disarm(t, pid);
	for (int i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		/* (one that waits for the session to take its event is left: a vfork child let
		 * run during ptrace_hold__serve_during may exec before its birth is taken) */
		if (h->state == HELD_STOPPED && !h->awaiting && (!pid || h->pid == pid)) {
			resume(h, h->pending_sig);
			h->pending_sig = 0;
		}
	}
	return 0;
}

bool ptrace_hold__holds(const struct ptrace_hold *t, pid_t pid)
{
	const struct held *h = find(t, pid);

	return h && h->pid == pid;
}

int ptrace_hold__watch_loader(struct ptrace_hold *t, pid_t pid)
{
	struct held *h = find(t, pid);

	if (!h || h->state != HELD_STOPPED)
		return -ESRCH;
	h->stepping = true;
	h->in_syscall = false;
	resume(h, 0);
	return h->state == HELD_GONE ? -ESRCH : 0;
}

int ptrace_hold__fs_bases(struct ptrace_hold *t, pid_t pid, pid_t *tids, uint64_t *bases, int max)
{
	struct user_regs_struct regs;
	int i, n = 0;

	for (i = 0; i < t->n && n < max; i++) {
		if (t->th[i].pid != pid)
			continue;
		if (t->th[i].state == HELD_ASLEEP) {
			uint64_t masks;

			if (hold_guard__query(t->guard, t->th[i].tid, &bases[n], &masks))
				continue;
		} else if (t->th[i].state != HELD_STOPPED ||
			   ptrace(PTRACE_GETREGS, t->th[i].tid, NULL, &regs)) {
			continue;
		} else {
			bases[n] = regs.fs_base;
		}
		tids[n++] = t->th[i].tid;
	}
	return n;
}

/*
 * System calls that a stop of ours restarts as if nothing happened (they return ERESTART*: no
 * handler of the target's runs at our stop, so the kernel restarts them, with what is left of
 * a timeout). Not so epoll_wait and its kin, which return EINTR.
 */
static bool restarts_itself(long nr)
{
	switch (nr) {
	case SYS_futex:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_pause:
		return true;
	default:
		return false;
	}
}

static int count_state(const struct ptrace_hold *t, pid_t pid, enum hold_state state)
{
	int n = 0;

	for (int i = 0; i < t->n; i++)
		n += t->th[i].pid == pid && t->th[i].state == state;
	return n;
}

/* Waits up to WAKE_WAIT_MS for a thread of pid left asleep to wake and be stopped by the
 * guard. Returns whether one was. */
static bool wait_woken(struct ptrace_hold *t, pid_t pid)
{
	struct timespec ms = { 0, 1000000 };
	int stopped = count_state(t, pid, HELD_STOPPED);

	for (int waited = 0; waited < WAKE_WAIT_MS && count_state(t, pid, HELD_ASLEEP); waited++) {
		nanosleep(&ms, NULL);
		if (drain(t, NULL) == -ESRCH)
			return false;
		interrupt_missed(t, pid);
		if (count_state(t, pid, HELD_STOPPED) > stopped)
			return true;
	}
	return false;
}

/*
 * Every thread of pid is asleep (left so by the stop) but one is needed to make system calls
 * in: one is interrupted after all, one whose call restarts by itself if there is one.
 * Returns 0 or -errno.
 */
static int wake_one(struct ptrace_hold *t, pid_t pid)
{
	struct held *pick = NULL;

	for (int i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		/* (inject cannot use one under seccomp: none is woken for nothing) */
		if (h->pid == pid && h->state == HELD_ASLEEP &&
		    !proc__status_field(h->tid, "Seccomp", 1) &&
		    (!pick || (restarts_itself(h->sleep_nr) && !restarts_itself(pick->sleep_nr))))
			pick = h;
	}
	if (!pick)
		return -EAGAIN;
	dlog("pid %d: interrupting thread %d (asleep in system call %ld) to make a call in it",
	     pid, pick->tid, pick->sleep_nr);
	hold_guard__disarm(t->guard, pick->tid);
	pick->armed = false;
	pick->state = HELD_RUNNING;
	if (ptrace(PTRACE_INTERRUPT, pick->tid, NULL, NULL) && errno == ESRCH)
		pick->state = HELD_GONE;
	return wait_stopped(t, pid);
}

int ptrace_hold__inject(struct ptrace_hold *t, pid_t pid, uint64_t insn, struct inject_call *call)
{
	struct user_regs_struct regs;
	int i, pass, err;
	bool waited = false;
	struct held *h;
	pid_t tid;

again:
	err = -EAGAIN;
	/* a thread stopped outside a system call first (nothing of its own to restart), then any;
	 * never one in the target's own group-stop (it would run while the target is stopped),
	 * one with a signal held in its stop, or one whose loader is stepped */
	for (pass = 0; pass < 2 && err == -EAGAIN; pass++)
		for (i = 0; i < t->n && err == -EAGAIN; i++) {
			h = &t->th[i];
			if (h->pid != pid || h->state != HELD_STOPPED || h->pending_sig ||
			    h->stepping || h->group_stop ||
			    ptrace(PTRACE_GETREGS, h->tid, NULL, &regs) ||
			    ((int64_t)regs.orig_rax < 0) != !pass)
				continue;
			tid = h->tid;
			err = inject__syscalls(tid, insn, call, 1);
			if (err == -EBUSY) /* under seccomp or in vfork: another, if any */
				err = -EAGAIN;
			h = find(t, tid);
			if (err == -ESRCH && h)
				h->state = HELD_GONE;
		}
	/* every thread asleep: one that wakes is stopped by the guard, and used; failing that
	 * (waited for once), one is interrupted */
	if (err == -EAGAIN && !waited) {
		waited = true;
		if (wait_woken(t, pid))
			goto again;
	}
	if (err == -EAGAIN && !wake_one(t, pid))
		goto again;
	return err;
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
	disarm(t, 0);
	t->stopping = true; /* (a thread stopped by it stays so, to be detached) */
	t->stop_pid = 0;
	for (int waited = 0; pending && waited < 100; waited++) {
		nanosleep(&ms, NULL);
		drain(t, NULL);
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
			h->shared = shares_memory(h->tid, h->parent, 0);
		}
		h->unfollowed = true;
		born(t, h);
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
