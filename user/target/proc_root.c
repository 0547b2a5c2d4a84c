// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A process's files when it runs in another root (proc_root.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "target/proc_root.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

bool proc_root__is_ours(pid_t pid)
{
	struct stat ours, theirs;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	return !stat("/", &ours) && !stat(path, &theirs) && same_file(&ours, &theirs);
}

int proc_root__mapped_file(pid_t pid, uint64_t start, uint64_t end, const char *shown, char *buf,
			   size_t len)
{
	int fd;

	snprintf(buf, len, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	/* without the capability map_files asks for: the path, in the process's root */
	snprintf(buf, len, "/proc/%d/root%s", pid, shown);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

void proc_root__describe(pid_t pid, const char *shown, const char *file, char *buf, size_t len)
{
	struct stat here, mapped;

	if (!stat(shown, &here) && !stat(file, &mapped) && same_file(&here, &mapped))
		snprintf(buf, len, "%s", shown);
	else
		snprintf(buf, len, "%s in pid %d's root", shown, pid);
}

/* Whether path, looked up in pid's root, is the file exe. */
static bool names_exe(pid_t pid, const char *path, const struct stat *exe)
{
	char full[PATH_MAX + 32];
	struct stat st;

	snprintf(full, sizeof(full), "/proc/%d/root%s", pid, path);
	return *path == '/' && !stat(full, &st) && same_file(&st, exe);
}

int proc_root__exe(pid_t pid, char *buf, size_t len, char *why, size_t why_len)
{
	char link[64], shown[PATH_MAX], root[PATH_MAX];
	struct stat exe;
	ssize_t n, r;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, shown, sizeof(shown) - 1);
	if (n <= 0 || stat(link, &exe)) {
		snprintf(why, why_len, "cannot read %s: %s", link, strerror(errno));
		return -ENOENT;
	}
	shown[n] = 0;
	/* seen from pyuprof's root, a chroot's file is ROOT/PATH, ROOT being the process's root
	 * as pyuprof sees it; a mount namespace's own root shows its files as the process does */
	snprintf(link, sizeof(link), "/proc/%d/root", pid);
	r = readlink(link, root, sizeof(root) - 1);
	root[r > 0 ? r : 0] = 0;
	if (r > 1 && !strncmp(shown, root, r) && shown[r] == '/' && names_exe(pid, shown + r, &exe)) {
		snprintf(buf, len, "%s", shown + r);
		return 0;
	}
	if (names_exe(pid, shown, &exe)) {
		snprintf(buf, len, "%s", shown);
		return 0;
	}
	snprintf(why, why_len, "%s is no path in pid %d's root", shown, pid);
	return -ENOENT;
}
