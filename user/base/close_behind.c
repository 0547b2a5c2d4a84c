// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Links removed by a child process of their own (base/close_behind.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/close_behind.h"

#define KEEP_MAX 64

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The grandchild: keeps keep[0..k) until the caller lets go of go (its write end), then exits,
 * and the kernel closes them. System calls only (forked from a threaded process). */
static void keep_until(const int *keep, int k, int go)
{
	int from = 0;
	char c;

	for (int i = 0; i < k; from = keep[i++] + 1)
		if (keep[i] > from)
			close_range(from, keep[i] - 1, 0);
	close_range(from, UINT_MAX, 0);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

int close_behind__fork(const int *fds, int n)
{
	int keep[KEEP_MAX + 1], k = 0, go[2], st;
	pid_t child, pid;

	for (int i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (k == KEEP_MAX)
			return -E2BIG;
		keep[k++] = fds[i];
	}
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	keep[k++] = go[0];
	qsort(keep, k, sizeof(*keep), by_value);
	/*
	 * Twice: the child exits at once and is reaped here; its own child, which holds the
	 * links, is then nobody's here (its parent gone, the kernel hands it to the subreaper
	 * or init), and no waitpid of pyuprof's, for its targets, ever sees it.
	 */
	child = fork();
	if (child < 0) {
		st = -errno;
		close(go[0]);
		close(go[1]);
		return st;
	}
	if (!child) {
		pid = fork();
		if (!pid)
			keep_until(keep, k, go[0]);
		_exit(pid < 0); /* 1: nobody keeps them */
	}
	close(go[0]);
	do
		pid = waitpid(child, &st, __WALL);
	while (pid < 0 && errno == EINTR);
	/* (reaped elsewhere meanwhile: its status is lost, the grandchild most likely there) */
	if (pid == child && (!WIFEXITED(st) || WEXITSTATUS(st))) {
		close(go[1]);
		return -ECHILD;
	}
	return go[1];
}
