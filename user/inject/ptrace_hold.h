/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holding the target under ptrace for the whole recording, every thread seized (no signal is
 * sent, the target sees nothing), so that (1) all of it can be stopped around a write into its
 * memory, and (2) a thread the BPF side signals (SIGURG, REQUEST_SIGNAL) stops before its next
 * instruction while its request is done: no Python call can run in between. Every other signal
 * is passed on to the target unchanged.
 *
 * With on_birth set, every process the target forks is held from its birth until on_birth has
 * seen it: kernel 6.18 rewrites a probed 5-byte nop into a call of its [uprobes-trampoline]
 * page, and a forked child gets the rewritten bytes but not that page, so the bytes must be
 * put back in the child before it runs. Then, unless followed, the child is let go.
 * With follow set too, each birth, exec and exit of one of them is queued as a struct
 * proc_event, and a new process stays stopped until it is resumed, so that it can be recorded
 * from its start.
 */
#ifndef __PYUPROF_PTRACE_HOLD_H
#define __PYUPROF_PTRACE_HOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include <sys/types.h>
#include "pyuprof.h" /* REQUEST_SIGNAL */

struct ptrace_hold;

/*
 * on_request(ctx, pid, tid) is called for a thread of process pid stopped by our signal: it
 * does that thread's requests and returns false, and the thread runs on; or true: the thread
 * stays stopped until ptrace_hold__resume (of pid, or all), e.g. after a ptrace_hold__stop of pid.
 */
typedef bool (*request_fn)(void *ctx, pid_t pid, pid_t tid);

/*
 * on_birth(ctx, child, parent, follow) is called once for each new process with a memory of its
 * own (a fork, not a vfork or a thread), stopped before its first instruction; parent is the
 * process it was forked from (its parent by /proc, if its birth was seen first), follow whether
 * it will be followed (else it is let go when on_birth returns).
 */
typedef void (*birth_fn)(void *ctx, pid_t child, pid_t parent, bool follow);

/* What a hold does beyond holding. */
struct hold_cfg {
	request_fn on_request; /* NULL: the BPF side sends no requests */
	birth_fn on_birth;     /* NULL: forks are not traced (the child is not ours to see) */
	bool follow;	       /* new processes are followed (needs on_birth) */
	/* following: the first process's exec is a PROC_EXEC like any other's, not its end (a
	 * program that is not Python, launched, which may run one) */
	bool first_execs;
	/*
	 * A stop leaves a thread asleep in a system call asleep, guarded (hold_guard.h), where it
	 * can: it would get EINTR from an interrupt in epoll_wait and a few other calls. Such a
	 * thread cannot be detached (ptrace needs it stopped): it stays traced after
	 * ptrace_hold__release until the thread that made the hold exits, which then must be
	 * soon, and must not be the process's main thread.
	 */
	bool guard;
	/*
	 * A thread the target starts is not held by a clone stop (PTRACE_O_TRACECLONE: two stops
	 * for each new thread, ~0.1 ms of its start): it is seized later, as it runs, by
	 * ptrace_hold__add_thread (as the BPF side tells of it) or by the next stop, which seizes
	 * every thread that is new. Only where nothing else needs the clone stop: not following
	 * (a fork of a thread not seized yet is not seen), and the BPF side signals no thread it
	 * does not trace (bpf/thread_births.bpf.h).
	 */
	bool async_threads;
	void *ctx;
};

enum proc_event_kind {
	PROC_FORK = 1, /* pid made child, which stands stopped until ptrace_hold__resume(child) */
	PROC_EXEC,     /* pid exec'd another program; it stands stopped */
	PROC_LOADED,   /* pid, watched with ptrace_hold__watch_loader, has libpython mapped; stopped */
	PROC_EXIT,     /* pid is gone (status) */
};

struct proc_event {
	enum proc_event_kind kind;
	pid_t pid;
	pid_t child;
	bool vfork; /* PROC_FORK: child shares pid's memory until it execs or exits */
	int status; /* PROC_EXIT: its wait status */
};

/* Seizes every thread of pid (attach mode). Returns 0 or -errno (EPERM: already traced). */
int ptrace_hold__seize(struct ptrace_hold **out, pid_t pid, const struct hold_cfg *cfg);
/* Takes over pid, seized and stopped by launch__start, and lets it run. Returns 0 or -errno. */
int ptrace_hold__adopt(struct ptrace_hold **out, pid_t pid, const struct hold_cfg *cfg);
/* A descriptor that becomes readable when some thread of the target changed state. */
int ptrace_hold__fd(const struct ptrace_hold *t);
/*
 * Deals with every pending state change. Returns 0, or -ESRCH once the first process is gone
 * or has exec'd another program (its wait status in *status if it exited, else untouched).
 */
int ptrace_hold__handle(struct ptrace_hold *t, int *status);
/* Takes the oldest queued process event. Returns false if there is none. */
bool ptrace_hold__next_event(struct ptrace_hold *t, struct proc_event *ev);
/* Seizes tid, a new thread of process pid not seized yet (async_threads; nothing if it is, or
 * is gone). Returns 0 or -errno. */
int ptrace_hold__add_thread(struct ptrace_hold *t, pid_t pid, pid_t tid);
/* From now on, async_threads (an attach, once its mode is known): the threads of pid stopped
 * now no longer stop at their clones. pid stopped. */
void ptrace_hold__async_threads(struct ptrace_hold *t, pid_t pid);
/* Marks that the BPF side signalled tid: its next REQUEST_SIGNAL is ours, not the target's. */
void ptrace_hold__expect_signal(struct ptrace_hold *t, pid_t tid);
/* Stops / resumes every thread of process pid, or of every process if pid is 0 (with guard, a
 * thread asleep in a system call counts as stopped: it stops if it wakes). */
int ptrace_hold__stop(struct ptrace_hold *t, pid_t pid);
int ptrace_hold__resume(struct ptrace_hold *t, pid_t pid);
/* Whether process pid is held (its leader seen, and not gone). */
bool ptrace_hold__holds(const struct ptrace_hold *t, pid_t pid);
/* Lets the stopped process pid run one system call at a time until its loader has mapped
 * libpython (PROC_LOADED). Returns 0 or -errno. */
int ptrace_hold__watch_loader(struct ptrace_hold *t, pid_t pid);
/* While stopped: the tids of the held threads of pid and their FS bases (x86-64:
 * pthread_self()), those left asleep too. Returns how many, at most max. */
int ptrace_hold__fs_bases(struct ptrace_hold *t, pid_t pid, pid_t *tids, uint64_t *bases, int max);
/*
 * While pid is stopped: runs one system call in one of its threads through the syscall
 * instruction at insn (inject.h), preferring a thread stopped outside a system call; never one
 * in the target's own group-stop, under seccomp, in vfork or with a signal held in its stop.
 * If every thread was left asleep, one that wakes within WAKE_WAIT_MS is used; else one is
 * interrupted: one whose call restarts by itself, if any.
 * Returns 0 or -errno (-EAGAIN: no thread fits).
 */
struct inject_call;
int ptrace_hold__inject(struct ptrace_hold *t, pid_t pid, uint64_t insn, struct inject_call *call);
/*
 * Runs fn(arg) in a thread of its own (every signal blocked) while this one, the tracer, deals
 * with the target's state changes as they come: a slow job (loading the BPF side) then holds
 * up no thread of the target's that stops for a signal, a clone, a fork or an exec. Returns
 * fn's result (whether the first process went meanwhile, ptrace_hold__handle says).
 */
int ptrace_hold__serve_during(struct ptrace_hold *t, int (*fn)(void *), void *arg);
/* Lets go of every thread and frees t. NULL-safe. */
void ptrace_hold__release(struct ptrace_hold *t);

#endif /* __PYUPROF_PTRACE_HOLD_H */
