// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stopping a held process (ptrace_hold.h), and making system calls in it. A thread asleep in
 * a system call is left asleep, armed in the guard (hold_guard.h), rather than interrupted;
 * a call to make is made in a thread already stopped outside a system call if there is one,
 * else in one that wakes, else in one interrupted after all.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <time.h>
#include "base/log.h"
#include "base/proc.h"
#include "inject/hold_guard.h"
#include "inject/inject.h"
#include "inject/ptrace_held.h"
#include "inject/ptrace_hold.h"

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
void ptrace_held__disarm(struct ptrace_hold *t, pid_t pid)
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
		err = ptrace_held__drain(t, NULL);
		if (err == -ESRCH)
			return err;
		interrupt_missed(t, pid);
		if (all_stopped(t, pid))
			return 0;
		nanosleep(&ms, NULL);
	}
	return -ETIMEDOUT;
}

/*
 * async_threads: the threads of the first process (of pid, if not 0) that are not seized yet
 * are seized (they run on: the stop interrupts them, or leaves them asleep). Returns whether
 * any was.
 */
static bool seize_new(struct ptrace_hold *t, pid_t pid)
{
	pid_t p = pid ? pid : t->pid;
	bool added = false;
	struct dirent *d;
	char path[64];
	DIR *dir;

	if (!t->cfg.async_threads || !ptrace_hold__holds(t, p))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task", p);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0 || ptrace_held__find(t, tid))
			continue;
		if (ptrace_held__seize(t, p, tid)) {
			dlog("pid %d: thread %d seized at a stop", p, tid);
			added = true;
		}
	}
	closedir(dir);
	return added;
}

int ptrace_hold__stop(struct ptrace_hold *t, pid_t pid)
{
	int i, err, rounds = 0;

	t->stopping = true;
	t->stop_pid = pid;
	seize_new(t, pid);
	do {
		for (i = 0; i < t->n; i++) {
			struct held *h = &t->th[i];

			if ((pid && h->pid != pid) ||
			    (h->state != HELD_RUNNING && h->state != HELD_LISTENING) ||
			    leave_asleep(t, h))
				continue;
			/* a listening thread (the target stopped itself) traps again when
			 * interrupted, into a stop that can be detached from */
			if (ptrace(PTRACE_INTERRUPT, h->tid, NULL, NULL) && errno == ESRCH)
				h->state = HELD_GONE;
			else if (h->state == HELD_LISTENING)
				h->state = HELD_RUNNING; /* until that trap is seen */
		}
		err = wait_stopped(t, pid);
		/* a thread not seized yet may have started another meanwhile: again, until
		 * every thread is held and stopped (a stopped one starts none) */
	} while (!err && rounds++ < 1000 && seize_new(t, pid));
	if (err == -ESRCH) {
		t->stopping = false; /* what is left runs on; the exit is kept for handle */
		ptrace_held__disarm(t, pid);
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
	ptrace_held__disarm(t, pid);
	for (int i = 0; i < t->n; i++) {
		struct held *h = &t->th[i];

		/* (one that waits for the session to take its event is left: a vfork child let
		 * run during ptrace_hold__serve_during may exec before its birth is taken) */
		if (h->state == HELD_STOPPED && !h->awaiting && (!pid || h->pid == pid)) {
			ptrace_held__resume(h, h->pending_sig);
			h->pending_sig = 0;
		}
	}
	return 0;
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
		if (ptrace_held__drain(t, NULL) == -ESRCH)
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
			h = ptrace_held__find(t, tid);
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
