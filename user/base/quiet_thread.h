/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread of pyuprof's own that takes none of its signals: they are the main thread's (it
 * ends the recording) and the holding thread's (SIGCHLD, read from its signalfd). A signal a
 * process-directed kill or a child's end leaves pending in a helper thread is lost to those
 * (SIGCHLD, ignored there), and a BPF load in that thread fails: the verifier gives up on a
 * pending signal (EAGAIN; seen: libbpf's look at the kernel's memory accounting failed, and it
 * said it could not raise RLIMIT_MEMLOCK).
 */
#ifndef __PYUPROF_QUIET_THREAD_H
#define __PYUPROF_QUIET_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread: 0 or an errno (positive). */
int quiet_thread__start(pthread_t *th, void *(*fn)(void *), void *arg);

#endif /* __PYUPROF_QUIET_THREAD_H */
