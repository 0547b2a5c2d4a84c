// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The thread that reads the ring buffers.
 *
 * Why a thread of its own: reading the records costs CPU in proportion to the target's calls.
 * On a machine with few CPUs the scheduler may put the reader on the CPU of the target thread
 * whose records it reads, and every call the target makes then waits behind the reading of
 * earlier ones: measured on the 2-vCPU VM, 3.12's compile section 0.166-0.174 s compensated
 * with pyuprof pinned to the target's CPU, 0.135-0.142 s apart (bench/FIDELITY.md), and a
 * recording took one mode or the other by where the reader happened to run. At nice 19 the
 * reader takes only CPU time nobody else wants, mostly: once the scheduler picks it (the
 * target thread having run past its fair share: EEVDF), it runs until it sleeps or the next
 * tick, whatever its priority. On the 2-vCPU VM the reader, woken on the target's CPU, held
 * it so ~2-4 ms while the other CPU idled, in 8 of 30 recordings of a 4 ms section (Debian
 * 3.11 fib(22); the same as SCHED_IDLE). So it reads in turns of about one staged batch
 * (READER_TURN_BYTES) and offers the CPU between turns (sched_yield).
 *
 * The main loop stays at pyuprof's own priority: it serves the target's stops (forks, requests,
 * a thread that waits for room in a full ring), which a starved reader would serve late. A
 * ring that fills while the reader is starved costs nothing but a wait: the thread that found
 * no room stops (bpf/stage.bpf.h, stage_wait) and the main loop reads everything itself.
 *
 * One lock covers the session: the reader holds it for each drain, the main loop for each turn.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include "record/reader_thread.h"

/* An eventfd's count goes up (a write fails only if it would overflow: it is up then) */
static void ping(int fd)
{
	uint64_t one = 1;

	(void)!write(fd, &one, sizeof(one));
}

static void *reader_main(void *arg)
{
	struct reader_thread *rt = arg;
	struct epoll_event evs[16];
	bool more = false, read;
	int n, i, wait_ms = rt->poll_ms;

	__atomic_store_n(&rt->tid, gettid(), __ATOMIC_RELEASE);
	pthread_setname_np(pthread_self(), "pyuprof-reader"); /* (for perf, top -H) */
	/* (a failure leaves it at the main thread's priority: as before there was a thread) */
	setpriority(PRIO_PROCESS, (id_t)rt->tid, READER_NICE);
	for (;;) {
		/* (after a turn that left records, at once: quit is looked at between turns) */
		n = epoll_wait(rt->ep, evs, sizeof(evs) / sizeof(evs[0]), more ? 0 : wait_ms);
		if (n < 0 && errno != EINTR) {
			rt->err = -errno;
			ping(rt->note);
			/* its tid stays its own until reader__stop joins it (reader__lock renices it) */
			while (poll(&(struct pollfd){ .fd = rt->quit, .events = POLLIN }, 1, -1) < 0)
				;
			return NULL;
		}
		for (i = 0; i < n; i++)
			if (evs[i].data.fd == rt->quit)
				return NULL;
		more = read = false;
		pthread_mutex_lock(&rt->lock);
		n = rt->drain(rt->ctx, &more, &read);
		pthread_mutex_unlock(&rt->lock);
		/* idle: the next wait twice as long (READER_IDLE_MS at most); else poll_ms again */
		wait_ms = read ? rt->poll_ms : wait_ms * 2 < READER_IDLE_MS ? wait_ms * 2 : READER_IDLE_MS;
		if (n > 0)
			ping(rt->note);
		/* a turn at a time, the CPU offered between turns (see above) */
		if (more)
			sched_yield();
	}
}

int reader__start(struct reader_thread *rt, reader_drain_fn drain, void *ctx, int poll_ms)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t all, old;
	int err;

	memset(rt, 0, sizeof(*rt));
	rt->drain = drain;
	rt->ctx = ctx;
	rt->poll_ms = poll_ms;
	errno = 0;
	rt->main_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		rt->main_nice = 0;
	rt->ep = epoll_create1(EPOLL_CLOEXEC);
	rt->quit = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rt->note = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.fd = rt->quit;
	if (rt->ep < 0 || rt->quit < 0 || rt->note < 0 ||
	    epoll_ctl(rt->ep, EPOLL_CTL_ADD, rt->quit, &ev)) {
		err = -errno;
		goto fail;
	}
	pthread_mutex_init(&rt->lock, NULL);
	/* signals are the main thread's: it ends the recording, it waits in poll for them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&rt->thread, NULL, reader_main, rt);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_destroy(&rt->lock);
		goto fail;
	}
	rt->running = true;
	return 0;
fail:
	if (rt->ep >= 0)
		close(rt->ep);
	if (rt->quit >= 0)
		close(rt->quit);
	if (rt->note >= 0)
		close(rt->note);
	rt->ep = rt->quit = rt->note = -1;
	return err;
}

int reader__watch(struct reader_thread *rt, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(rt->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int reader__note_fd(const struct reader_thread *rt)
{
	return rt->running ? rt->note : -1;
}

void reader__clear_note(struct reader_thread *rt)
{
	uint64_t n;

	(void)!read(rt->note, &n, sizeof(n)); /* (EAGAIN: nothing was noted) */
}

void reader__lock(struct reader_thread *rt)
{
	pid_t tid = __atomic_load_n(&rt->tid, __ATOMIC_ACQUIRE);

	if (!pthread_mutex_trylock(&rt->lock))
		return;
	/* a drain is under way: it runs at our priority till it lets go (root may raise it) */
	if (tid)
		setpriority(PRIO_PROCESS, (id_t)tid, rt->main_nice);
	pthread_mutex_lock(&rt->lock);
	if (tid)
		setpriority(PRIO_PROCESS, (id_t)tid, READER_NICE);
}

void reader__unlock(struct reader_thread *rt)
{
	pthread_mutex_unlock(&rt->lock);
}

void reader__stop(struct reader_thread *rt)
{
	if (!rt->running)
		return;
	ping(rt->quit);
	pthread_join(rt->thread, NULL);
	pthread_mutex_destroy(&rt->lock);
	close(rt->ep);
	close(rt->quit);
	close(rt->note);
	rt->running = false;
}
