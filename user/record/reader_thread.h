/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The thread that reads the ring buffers, at the lowest priority, apart from the loop that
 * serves the target's stops. Both work on the session under one lock.
 */
#ifndef __PYUPROF_READER_THREAD_H
#define __PYUPROF_READER_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

/* Its nice value: a CPU's time goes to anything else that wants it first. */
#define READER_NICE 19

/* What the reader reads in one turn at most: about one staged batch (~0.1-0.2 ms of work) */
#define READER_TURN_BYTES (64u << 10)

/* Reads what waits, READER_TURN_BYTES at most, *more set when it left some and *read when it
 * read any; returns > 0 when the main loop must look (a recording failed, requests wait), else
 * 0. */
typedef int (*reader_drain_fn)(void *ctx, bool *more, bool *read);

/* Without being woken the reader reads every poll_ms, and, after turns that found nothing, less
 * often, down to every READER_IDLE_MS: a target that waits or sleeps does not wake it 100 times
 * a second (what must be read at once wakes it: requests, a thread's start, a quarter of a ring
 * filled: bpf/target.bpf.h) */
#define READER_IDLE_MS 160

struct reader_thread {
	pthread_t thread;
	pthread_mutex_t lock;
	int ep;	  /* epoll: the rings' fds (reader__watch) and quit */
	int quit; /* eventfd: ends the thread */
	int note; /* eventfd: the thread's drain asked the main loop to look */
	int poll_ms;
	int main_nice; /* the main thread's: lent to the reader while it waits for the lock */
	pid_t tid;     /* the reader's, once it runs (0 before) */
	reader_drain_fn drain;
	void *ctx;
	int err; /* -errno: the thread could not wait (the note says so; it waits for the stop) */
	bool running;
};

/* Starts the thread, every signal blocked in it: drain(ctx) runs under the lock when a watched
 * fd is readable and at least every poll_ms (READER_IDLE_MS when idle). Returns 0 or -errno. */
int reader__start(struct reader_thread *rt, reader_drain_fn drain, void *ctx, int poll_ms);
/* A ring's fd to wake the thread (from drain, or with the lock held). Returns 0 or -errno. */
int reader__watch(struct reader_thread *rt, int fd);
/* What the main loop polls: readable when a drain asked it to look. */
int reader__note_fd(const struct reader_thread *rt);
void reader__clear_note(struct reader_thread *rt);
/* The main thread's side of the lock: a reader holding it runs at the main thread's priority
 * until it lets go, so that a busy CPU does not delay the main loop's work behind it. */
void reader__lock(struct reader_thread *rt);
void reader__unlock(struct reader_thread *rt);
/* Ends the thread (it finishes the drain it is in) and frees what it had. Nothing if it was not
 * running. */
void reader__stop(struct reader_thread *rt);

#endif /* __PYUPROF_READER_THREAD_H */
