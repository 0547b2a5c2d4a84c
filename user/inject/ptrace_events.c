// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The held threads' state changes, one wait status at a time (ptrace_held__drain): a stop that
 * is not ours is passed on at once (signals re-injected, group-stops LISTENed to); clone, fork
 * and vfork events and a new process's first stop, which come in either order, make a birth
 * at the second of them; an exec or exit of the first process ends the recording; a watched
 * loader is stepped until libpython is mapped. The table and the hold itself: ptrace_hold.c.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/proc.h"
#include "inject/hold_guard.h"
#include "inject/ptrace_held.h"
#include "inject/ptrace_hold.h"
#include "target/py_image.h"

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The threads of process pid are gone (exit or exec): forget them, but for keep. */
static void forget_process(struct ptrace_hold *t, pid_t pid, pid_t keep)
{
	for (int i = 0; i < t->n; i++)
		if (t->th[i].pid == pid && t->th[i].tid != keep) {
			ptrace_held__forget_guard(t, t->th[i].tid);
			t->th[i].state = HELD_GONE;
		}
}

/* A new process's first stop and its parent's event are both in: on_birth (unless it shares
 * its parent's memory, which holds the parent's probes), then it is let go unless followed. */
void ptrace_held__born(struct ptrace_hold *t, struct held *h)
{
	bool follow = t->cfg.follow && !h->unfollowed;
	pid_t tid = h->tid;

	if (!h->shared && t->cfg.on_birth)
		t->cfg.on_birth(t->cfg.ctx, h->pid, h->parent, follow);
	h = ptrace_held__find(t, tid);
	if (!h)
		return;
	/* while ptrace_hold__serve_during runs, nobody starts recording a new process: one
	 * that shares its parent's memory (vfork) runs on rather than keep its parent waiting
	 * (its exec is still held and queued) */
	if (follow && h->shared && t->serving && !ptrace_held__keeps(t, h)) {
		ptrace_held__resume(h, h->pending_sig);
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
bool ptrace_held__shares_memory(pid_t child, pid_t parent, int event)
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
	/* a thread (CLONE_THREAD): of h's process (tgkill finds it there; one system call where
	 * /proc's status took three, with the parent standing meanwhile) */
	if (event == PTRACE_EVENT_CLONE && !syscall(SYS_tgkill, h->pid, child, 0)) {
		if (!ptrace_held__find(t, child) && !ptrace_held__add(t, child, parent, HELD_NEWBORN))
			return -ENOMEM;
		return 0;
	}
	c = ptrace_held__find(t, child);
	/* (one that died before its first stop was seen would never stop: nothing to wait for) */
	if (!c && proc__alive(child))
		return 0;
	if (!c && !(c = ptrace_held__add(t, child, child, HELD_NEWBORN)))
		return -ENOMEM;
	c->announced = true;
	c->parent = parent;
	c->shared = ptrace_held__shares_memory(child, parent, event);
	if (t->cfg.follow && !ptrace_held__queue(t, (struct proc_event){ .kind = PROC_FORK, .pid = parent,
							     .child = child, .vfork = c->shared }))
		c->unfollowed = true;
	if (c->born)
		ptrace_held__born(t, c);
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
		h->awaiting = ptrace_held__queue(t, (struct proc_event){ .kind = PROC_LOADED, .pid = h->pid });
		if (!h->awaiting)
			ptrace_held__resume(h, 0);
		return;
	}
	ptrace_held__resume(h, 0);
}

/* One wait status. Returns -ESRCH when the first process is gone (exit or exec). */
static int dispatch(struct ptrace_hold *t, pid_t tid, int st, int *status)
{
	struct held *h = ptrace_held__find(t, tid);
	int sig, event, err;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (!h)
			return 0;
		ptrace_held__forget_guard(t, tid);
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
		ptrace_held__queue(t, (struct proc_event){ .kind = PROC_EXIT, .pid = tid, .status = st });
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	if (!h) {
		/* its first stop came before its parent's event: find its process */
		h = ptrace_held__add(t, tid, proc__status_field(tid, "Tgid", tid), HELD_NEWBORN);
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
			ptrace_held__born(t, h);
		return 0;
	}
	if (h->state == HELD_NEWBORN) { /* a new thread runs on */
		if (ptrace_held__keeps(t, h))
			h->state = HELD_STOPPED;
		else
			ptrace_held__resume(h, 0);
		return 0;
	}
	switch (event) {
	case PTRACE_EVENT_EXEC:
		/* another program now: the probes were on the old one. The thread that exec'd
		 * now has the leader's tid; the others are gone. */
		forget_process(t, h->pid, h->pid);
		h = ptrace_held__find(t, h->pid);
		if (!h)
			return 0;
		h->state = HELD_STOPPED;
		h->shared = false; /* (a vfork child's memory is its own now) */
		if (h->pid == t->pid && !(t->cfg.follow && t->cfg.first_execs)) {
			t->first_gone = true;
			return -ESRCH;
		}
		/* stopped until the session has taken this event, whatever else it resumes (with
		 * no room for it: on, unrecorded) */
		h->awaiting = ptrace_held__queue(t, (struct proc_event){ .kind = PROC_EXEC, .pid = h->pid });
		if (!h->awaiting)
			ptrace_held__resume(h, 0);
		return 0;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		err = on_clone_event(t, h, event);
		if (err)
			return err;
		h = ptrace_held__find(t, tid); /* the table may have moved */
		if (ptrace_held__keeps(t, h))
			h->state = HELD_STOPPED;
		else
			ptrace_held__resume(h, 0);
		return 0;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig) && ptrace_held__keeps(t, h)) {
			/* in the target's own group-stop, and held for a stop of ours (a thread
			 * must be in a ptrace-stop to be written around or detached) */
			h->state = HELD_STOPPED;
			h->group_stop = true;
		} else if (is_stop_signal(sig)) {
			/* the target's own group-stop: stay stopped, wake on SIGCONT */
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			h->state = HELD_LISTENING;
		} else if (ptrace_held__keeps(t, h)) {
			h->state = HELD_STOPPED;
		} else {
			ptrace_held__resume(h, 0);
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
		if (ptrace_held__keeps(t, h)) {
			h->state = HELD_STOPPED;
			h->pending_sig = 0;
		} else {
			ptrace_held__resume(h, 0);
		}
		return 0;
	}
	if (sig == REQUEST_SIGNAL) {
		/* the handler first reads the request, which marks the signal as ours; then the
		 * thread's requests are done while it stands here */
		bool hold = t->cfg.on_request && t->cfg.on_request(t->cfg.ctx, h->pid, tid);

		h = ptrace_held__find(t, tid); /* the handler may have grown the table */
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
	ptrace_held__resume(h, sig);
	/* during a stop of ours the signal is taken as it would be (a handler's frame is set up,
	 * a default action done) and the thread is stopped again, in our interrupt: a thread
	 * never stands in our stop with a signal of the target's held, which would keep it from
	 * making our system calls (inject.h) */
	if (ptrace_held__keeps(t, h) && h->state == HELD_RUNNING &&
	    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno == ESRCH)
		h->state = HELD_GONE;
	return 0;
}

int ptrace_held__drain(struct ptrace_hold *t, int *status)
{
	struct signalfd_siginfo si;
	int st, err = 0, e;
	pid_t tid;

	while (read(t->sfd, &si, sizeof(si)) == sizeof(si))
		;
	for (;;) {
		/* this thread's tracees only: another thread may hold processes of its own (the
		 * calibration's snippet, run while this one serves: ptrace_hold__serve_during) */
		tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (tid <= 0)
			return tid < 0 && errno != ECHILD && errno != EINTR ? -errno : err;
		e = dispatch(t, tid, st, status);
		if (e == -ESRCH || (e && !err))
			err = e;
	}
}

int ptrace_hold__handle(struct ptrace_hold *t, int *status)
{
	int err = ptrace_held__drain(t, status);

	/* also when an earlier drain (a stop's) saw it go */
	if (t->first_gone) {
		if (t->first_exited && status)
			*status = t->first_status;
		return -ESRCH;
	}
	return err;
}
