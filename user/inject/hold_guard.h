/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The guard of a hold (bpf/hold_guard.bpf.c): a thread of the target asleep in a system call
 * is armed rather than interrupted while pyuprof holds the target stopped. An interrupt would
 * end its call: most calls restart by themselves, but epoll_wait, sigtimedwait, semtimedop
 * and a few others return EINTR (signal(7)), and a timeout that ran out meanwhile ends the
 * program's wait with nothing. Armed, the thread sleeps on; should it wake during the hold, it
 * stops at its call's exit by REQUEST_SIGNAL, before any instruction of its own.
 *
 * A guard needs BPF and pyuprof in the initial PID namespace (the BPF side sees tids there);
 * without one, every thread is interrupted, as before.
 */
#ifndef __PYUPROF_HOLD_GUARD_H
#define __PYUPROF_HOLD_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct hold_guard;

/* Loads the guard (not yet attached): the one loaded ahead if there is one. Returns 0 or
 * -errno (-EOPNOTSUPP: not possible here). */
int hold_guard__open(struct hold_guard **out);
/* Starts loading a guard in a thread of its own, for the next hold_guard__open: the verifier's
 * ~15 ms then pass while the target is found and its probes load, not while it waits. */
void hold_guard__preload(void);
/* Frees the guard loaded ahead if no hold took it. */
void hold_guard__drop_preloaded(void);
/* Arms thread tid of process pid: from now on, its system call's exit stops it (once).
 * Attaches the guard if it is not. Returns 0 or -errno (the thread must then be interrupted). */
int hold_guard__arm(struct hold_guard *g, pid_t pid, pid_t tid);
/* Whether tid is still armed, or was sent its signal (a system call of its ended since it was
 * armed: one that could not be stopped is neither). */
bool hold_guard__armed(struct hold_guard *g, pid_t tid);
/* Disarms tid (its hold is over, or it is interrupted after all). */
void hold_guard__disarm(struct hold_guard *g, pid_t tid);
/* Whether tid was sent REQUEST_SIGNAL by the guard, a stop not yet taken: true once, as the
 * stop is taken (the signal is pyuprof's, never the target's). */
bool hold_guard__take(struct hold_guard *g, pid_t tid);
/* Whether a REQUEST_SIGNAL of the guard's to tid may still be on its way. */
bool hold_guard__pending(struct hold_guard *g, pid_t tid);
/* Whether tid woke armed and could not be stopped (it blocked the signal): true once. */
bool hold_guard__missed(struct hold_guard *g, pid_t tid);
/* tid's FS base (x86-64: its pthread_self()) and the union of its signal masks (the one it
 * has, and those a system call it sleeps in will give back), whether it is stopped or not.
 * Returns 0 or -errno. */
int hold_guard__query(struct hold_guard *g, pid_t tid, uint64_t *fs_base, uint64_t *masks);
/* Detaches the guard (no thread is armed). */
void hold_guard__detach(struct hold_guard *g);
/* Detaches and frees g. NULL-safe. */
void hold_guard__free(struct hold_guard *g);

#endif /* __PYUPROF_HOLD_GUARD_H */
