// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fork, PTRACE_SEIZE, exec. After each exec the new image is examined: if it defines the
 * interpreter (Debian's static python3.11) we are done; if it needs a libpython, the loader is
 * stepped one system call at a time until that library is mapped. Anything else (a shell
 * wrapper) is let run until its next exec, or, when its child processes are followed, taken
 * there as it is. Signals meant for the child are passed on.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/log.h"
#include "base/proc.h"
#include "inject/launch.h"
#include "target/py_image.h"

/*
 * pyuprof ignores SIGPIPE (a write to a closed pipe is an EPIPE it reports), but an ignored
 * signal stays ignored across exec: the program gets back the disposition pyuprof was given,
 * so that `pyuprof record -- CMD | head` ends CMD's writers as `CMD | head` would.
 */
static struct sigaction sigpipe_given;
static bool sigpipe_saved;

void launch__ignore_sigpipe(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigemptyset(&ign.sa_mask);
	sigpipe_saved = !sigaction(SIGPIPE, &ign, &sigpipe_given);
}

static void reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
}

void launch__abort(pid_t pid)
{
	kill(pid, SIGKILL);
	reap(pid);
}

int launch__release(pid_t pid)
{
	return ptrace(PTRACE_DETACH, pid, NULL, NULL) ? -errno : 0;
}

int launch__become(const struct launch_as *as)
{
	sigset_t none;

	if (!as)
		return 0;
	/* (started from a thread that blocks every signal: ptrace_hold__serve_during's job) */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (as->root && (chroot(as->root) || chdir("/")))
		return -errno;
	/* groups first, then the group, then the user: each needs the rights the next drops */
	if (as->as_user && (setgroups(0, NULL) || setresgid(as->gid, as->gid, as->gid) ||
			    setresuid(as->uid, as->uid, as->uid)))
		return -errno;
	return 0;
}

static void child(char **argv, const struct launch_as *as, int errfd, pid_t parent)
{
	int err;

	if (sigpipe_saved)
		sigaction(SIGPIPE, &sigpipe_given, NULL);
	/* a pyuprof killed before it has seized us must not leave us stopped forever; once
	 * seized, PTRACE_O_EXITKILL does that, and the program itself must not inherit this */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	raise(SIGSTOP); /* until the parent has seized us */
	prctl(PR_SET_PDEATHSIG, 0);
	err = -launch__become(as);
	if (!err) {
		execvp(argv[0], argv);
		err = errno;
	}
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

int launch__fork(char **argv, const struct launch_as *as, pid_t *pidp, int *errfd)
{
	int fds[2];
	pid_t pid, parent;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0)
		child(argv, as, fds[1], parent);
	close(fds[1]);
	*pidp = pid;
	*errfd = fds[0];
	return 0;
}

int launch__seize(pid_t pid, int errfd, char **argv, bool any, struct py_target *t,
		  int *exit_status, char *why, size_t why_len)
{
	const long options = PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
	bool stepping = false, in_syscall = false, woken = false;
	int st, sig, err, exec_errno = 0;

	*exit_status = -1;
	/* seized, not PTRACE_TRACEME: only a seized tracee can be interrupted later */
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SEIZE, pid, NULL, (void *)options) || kill(pid, SIGCONT)) {
		close(errfd);
		snprintf(why, why_len, "cannot trace the child process: %s", strerror(errno));
		launch__abort(pid);
		return -ECHILD;
	}
	for (;;) {
		if (waitpid(pid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (read(errfd, &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
				snprintf(why, why_len, "cannot run '%s': %s", argv[0],
					 strerror(exec_errno));
				err = -exec_errno;
			} else {
				/* (it may have run one as a child process, unrecorded) */
				*exit_status = st;
				snprintf(why, why_len, "'%s' ran no Python interpreter itself: a "
					 "Python it starts as a child process is recorded with "
					 "--subprocesses", argv[0]);
				err = -ENOEXEC;
			}
			close(errfd);
			return err;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = 0;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
			enum py_image_kind kind = py_image__kind(pid);

			if (kind == IMAGE_HAS_PYTHON)
				goto found;
			if (kind == IMAGE_OTHER && any) {
				close(errfd);
				return 1;
			}
			stepping = kind == IMAGE_NEEDS_LIBPYTHON;
			in_syscall = false;
		} else if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			struct user_regs_struct regs;

			/* syscall stops alternate entry/exit; look after each mmap returns */
			in_syscall = !in_syscall;
			if (!in_syscall && !ptrace(PTRACE_GETREGS, pid, NULL, &regs) &&
			    regs.orig_rax == SYS_mmap && py_image__libpython_mapped(pid))
				goto found;
		} else if (st >> 16 != PTRACE_EVENT_STOP) {
			sig = WSTOPSIG(st);
			if (sig == SIGCONT && !woken) { /* ours, from above */
				woken = true;
				sig = 0;
			}
		}
		if (ptrace(stepping ? PTRACE_SYSCALL : PTRACE_CONT, pid, NULL, (void *)(long)sig)) {
			err = -errno;
			break;
		}
	}
	close(errfd);
	snprintf(why, why_len, "lost track of the child process: %s", strerror(-err));
	launch__abort(pid);
	return err;

found:
	close(errfd);
	err = py_target__find(pid, t, why, why_len);
	if (err)
		launch__abort(pid);
	return err;
}

int launch__start(char **argv, const struct launch_as *as, pid_t *pid, struct py_target *t,
		  int *exit_status, char *why, size_t why_len)
{
	int errfd, err = launch__fork(argv, as, pid, &errfd);

	if (err) {
		*exit_status = -1;
		snprintf(why, why_len, "cannot start %s: %s", argv[0], strerror(-err));
		return err;
	}
	return launch__seize(*pid, errfd, argv, false, t, exit_status, why, why_len);
}
