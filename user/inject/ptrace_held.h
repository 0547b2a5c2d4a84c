/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The table of held threads, shared by the parts of the ptrace supervisor and by nothing else:
 * ptrace_hold.c (the table, seizing, the release), ptrace_events.c (the state changes and
 * births) and ptrace_stop.c (stopping a held process, and making system calls in it).
 */
#ifndef __PYUPROF_PTRACE_HELD_H
#define __PYUPROF_PTRACE_HELD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include "inject/hold_guard.h"
#include "inject/ptrace_hold.h"

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

/* The live entry of tid, or NULL. */
struct held *ptrace_held__find(const struct ptrace_hold *t, pid_t tid);
/* async_threads: seizes tid, a thread of process pid the table does not have (it runs on).
 * Returns its entry, or NULL (had already, gone, or not seized). */
struct held *ptrace_held__seize(struct ptrace_hold *t, pid_t pid, pid_t tid);
/* Lets h run on from a stop of ours with sig (0: none); a group-stop of the target's own is
 * LISTENed to instead. */
void ptrace_held__resume(struct held *h, int sig);
/* A new entry of the table, tid of process pid in state (a gone thread's slot reused). */
struct held *ptrace_held__add(struct ptrace_hold *t, pid_t tid, pid_t pid, enum hold_state state);
/* Whatever the guard holds of tid goes: its thread is gone, or tid is a new one's. */
void ptrace_held__forget_guard(struct ptrace_hold *t, pid_t tid);
/* Whether a stop of ours keeps h stopped (a stop of its process, or of all, is in progress). */
bool ptrace_held__keeps(const struct ptrace_hold *t, const struct held *h);
/* A process event for ptrace_hold__next_event; false (and a warning) if the queue is full. */
bool ptrace_held__queue(struct ptrace_hold *t, struct proc_event ev);
/* Whether child shares its memory with parent (vfork, or a clone with CLONE_VM). */
bool ptrace_held__shares_memory(pid_t child, pid_t parent, int event);
/* A new process's first stop and its parent's event are both in (ptrace_events.c). */
void ptrace_held__born(struct ptrace_hold *t, struct held *h);
/* Every state change waiting: dispatched. Returns -ESRCH when the first process is gone. */
int ptrace_held__drain(struct ptrace_hold *t, int *status);
/* The threads of pid (0: all) that were armed in the guard are no longer. */
void ptrace_held__disarm(struct ptrace_hold *t, pid_t pid);

#endif /* __PYUPROF_PTRACE_HELD_H */
