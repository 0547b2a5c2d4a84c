// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Threads that take no signal (base/quiet_thread.h). */
#include <signal.h>
#include "base/quiet_thread.h"

int quiet_thread__start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	/* (the new thread inherits the mask of the one that makes it) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
