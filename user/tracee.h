/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holding the target under ptrace for the whole recording, every thread seized (no signal is
 * sent, the target sees nothing), so that (1) all of it can be stopped around a write into its
 * memory, and (2) a thread the BPF side signals (SIGURG, REQUEST_SIGNAL) stops before its next
 * instruction while its request is done: no Python call can run in between. Every other signal
 * is passed on to the target unchanged.
 */
#ifndef __PYUPROF_TRACEE_H
#define __PYUPROF_TRACEE_H

#include <stdbool.h>
#include <linux/types.h>
#include <sys/types.h>
#include "pyuprof.h" /* REQUEST_SIGNAL */

struct tracee;

/*
 * on_request(ctx, tid) is called for a thread stopped by our signal: it does that thread's
 * requests and returns; the thread then runs on.
 */
typedef void (*request_fn)(void *ctx, pid_t tid);

/* Seizes every thread of pid (attach mode). Returns 0 or -errno (EPERM: already traced). */
int tracee__seize(struct tracee **out, pid_t pid, request_fn on_request, void *ctx);

/* Takes over pid, seized and stopped by launch_start, and lets it run. Returns 0 or -errno. */
int tracee__adopt(struct tracee **out, pid_t pid, request_fn on_request, void *ctx);

/* A descriptor that becomes readable when some thread of the target changed state. */
int tracee__fd(const struct tracee *t);

/*
 * Deals with every pending state change. Returns 0, or -ESRCH once the target is gone or has
 * exec'd another program (its wait status in *status if the leader exited, else untouched).
 */
int tracee__handle(struct tracee *t, int *status);

/* Marks that the BPF side signalled tid: its next REQUEST_SIGNAL is ours, not the target's. */
void tracee__expect_signal(struct tracee *t, pid_t tid);

/* Stops / resumes every thread. Returns 0 or -errno. */
int tracee__stop_all(struct tracee *t);
int tracee__resume_all(struct tracee *t);

/* While stopped: the tids of the held threads and their FS bases (x86-64: pthread_self()).
 * Returns how many, at most max. */
int tracee__fs_bases(struct tracee *t, pid_t *tids, uint64_t *bases, int max);

/* Lets go of every thread (stopped or not); signals held back are delivered. NULL-safe. */
void tracee__release(struct tracee *t);

#endif /* __PYUPROF_TRACEE_H */
