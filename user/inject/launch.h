/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Launch mode: starts a command held under ptrace and lets it run only until the CPython
 * interpreter is mapped (through wrapper execs such as pyenv's shims), so that probes are in
 * place before its first Python call.
 */
#ifndef __PYUPROF_LAUNCH_H
#define __PYUPROF_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>
#include "target/py_target.h"

/*
 * Where and as whom a started program runs (the calibration's snippet: in the target's root,
 * as the target's user, no signal blocked). NULL for a launch_as: as pyuprof, with the
 * signal mask of the thread that starts it.
 */
struct launch_as {
	const char *root; /* a directory to chroot into first (/proc/PID/root), or NULL */
	bool as_user;	  /* then run as uid and gid, with no supplementary groups */
	uid_t uid;
	gid_t gid;
};

/* In a child, before its exec: unblocks every signal, enters as->root and becomes as->uid.
 * Returns 0 or -errno. */
int launch__become(const struct launch_as *as);

/*
 * Starts argv's program, stopped before its exec until launch__seize. The thread that calls
 * this is the program's parent as PR_SET_PDEATHSIG sees it: one that lives as long as pyuprof
 * waits for the program (a program that asked for a signal at its parent's death must not get
 * it when a thread of pyuprof's ends). Returns 0 (*errfd for launch__seize) or -errno.
 */
int launch__fork(char **argv, const struct launch_as *as, pid_t *pid, int *errfd);
/*
 * Seizes the child launch__fork started and lets it run until its interpreter is mapped.
 * Returns 0 with the child seized, in a ptrace-stop, and t filled, or -errno with why set;
 * on error the child is gone (reaped), and *exit_status holds its status if it ran and
 * exited by itself (else -1). With any (its child processes are to be followed), a program
 * that is not Python (a shell, make) is taken at its exec: 1, seized and stopped there, t not
 * filled. errfd is closed.
 */
int launch__seize(pid_t pid, int errfd, char **argv, bool any, struct py_target *t,
		  int *exit_status, char *why, size_t why_len);
/* launch__fork, then launch__seize, in the calling thread. */
int launch__start(char **argv, const struct launch_as *as, pid_t *pid, struct py_target *t,
		  int *exit_status, char *why, size_t why_len);

/* Lets the stopped child run, no longer traced. Returns 0 or -errno. */
int launch__release(pid_t pid);

/* Ignores SIGPIPE in pyuprof; a launched program gets the disposition pyuprof started with. */
void launch__ignore_sigpipe(void);

/* Kills and reaps a child that never got released. */
void launch__abort(pid_t pid);

#endif /* __PYUPROF_LAUNCH_H */
