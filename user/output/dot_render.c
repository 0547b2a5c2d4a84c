// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* graphviz's dot as an unprivileged child: DOT in through a memfd, SVG out through a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/log.h"
#include "output/dot_render.h"

#define DOT "dot"
#define NOBODY 65534 /* Debian's nobody and nogroup, when the passwd file has none */

/* The first executable `dot` in PATH, into buf: 0, or -ENOENT. */
static int find_dot(char *buf, size_t size)
{
	const char *path = getenv("PATH");
	const char *p, *end;

	for (p = path ? path : ""; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (end == p)
			continue;
		if (snprintf(buf, size, "%.*s/" DOT, (int)(end - p), p) < (int)size &&
		    !access(buf, X_OK))
			return 0;
	}
	return -ENOENT;
}

int dot_render__check(void)
{
	char buf[PATH_MAX];

	if (!find_dot(buf, sizeof(buf)))
		return 0;
	elog("--svg needs graphviz's dot, which is not in PATH (apt-get install graphviz)");
	return -ENOENT;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* In the child, before exec: only async-signal-safe calls; a failure exits 127. */
static void __attribute__((noreturn)) run_dot(const char *path, pid_t parent, int in, int out,
					      int err, uid_t uid, gid_t gid)
{
	static const int quiet[] = { SIGINT, SIGQUIT, SIGHUP, SIGTERM };
	char *argv[] = { (char *)DOT, (char *)"-Tsvg", NULL };
	size_t i;

	/* pyuprof's own end (its signals, a kill) is dot's: Ctrl-C at the end of a recording is
	 * for pyuprof, which finishes its outputs */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)))
		_exit(127);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(127);
	execve(path, argv, environ);
	_exit(127);
}

/* dot's messages, a line each: warnings with -v, errors when it failed. */
static void log_messages(int fd, bool failed)
{
	char buf[4096], *line, *nl;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = buf; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!*line)
			continue;
		if (failed)
			elog("graphviz: %s", line);
		else
			vlog("graphviz: %s", line);
	}
}

int dot_render__svg(const char *dot, size_t len, struct outfile *out)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : NOBODY;
	gid_t gid = pw ? pw->pw_gid : NOBODY;
	int in = -1, msgs = -1, pipefd[2] = { -1, -1 }, err, status;
	pid_t pid, reaped, parent = getpid();
	char buf[65536], path[PATH_MAX];
	ssize_t n;

	err = find_dot(path, sizeof(path));
	if (err)
		return err;
	in = memfd_create("pyuprof-dot-in", MFD_CLOEXEC);
	msgs = memfd_create("pyuprof-dot-msgs", MFD_CLOEXEC);
	if (in < 0 || msgs < 0 || pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	err = write_all(in, dot, len);
	if (err)
		goto out;
	if (lseek(in, 0, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0)
		run_dot(path, parent, in, pipefd[1], msgs, uid, gid);
	close(pipefd[1]);
	pipefd[1] = -1;
	/* read to the end whatever happens, so that dot never blocks on a full pipe */
	while ((n = read(pipefd[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = err ? err : -errno;
			break;
		}
		if (!err)
			err = outfile__write(out, buf, (size_t)n);
	}
	while ((reaped = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (reaped < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (reaped >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
			elog("could not run graphviz's %s as an unprivileged child", DOT);
		err = err ? err : -EIO;
	}
	log_messages(msgs, err == -EIO);
out:
	if (in >= 0)
		close(in);
	if (msgs >= 0)
		close(msgs);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	return err;
}
