// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/maps parsing, process_vm_readv/writev wrappers, and writes through /proc/PID/mem. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "base/proc.h"

int proc__maps(pid_t pid, struct mapping **out)
{
	char path[64], line[PATH_MAX + 128];
	struct mapping *maps = NULL, *m;
	int n = 0, cap = 0, err;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[5];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &start, &end, perms, &off, &pos) < 4 ||
		    !pos || line[pos] != '/')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			m = realloc(maps, cap * sizeof(*maps));
			if (!m) {
				err = -ENOMEM;
				goto fail;
			}
			maps = m;
		}
		m = &maps[n++];
		m->start = start;
		m->end = end;
		m->offset = off;
		memcpy(m->perms, perms, sizeof(m->perms));
		snprintf(m->path, sizeof(m->path), "%s", line + pos);
		m->path[strcspn(m->path, "\n")] = 0;
	}
	fclose(f);
	*out = maps;
	return n;
fail:
	fclose(f);
	free(maps);
	return err;
}

int proc__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int proc__write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int proc__poke(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pwrite(fd, buf, len, (off_t)addr);
	err = n < 0 ? -errno : (size_t)n == len ? 0 : -EFAULT;
	close(fd);
	return err;
}

long proc__status_field(pid_t tid, const char *name, long none)
{
	char path[64], line[128];
	size_t len = strlen(name);
	long v = none;
	FILE *f;

	/* /proc/TID works for any thread, listed or not */
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = atol(line + len + 1);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

int proc__alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int alive = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		alive = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive ? 0 : -ESRCH;
}

bool proc__has_caps(uint64_t mask)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return (eff & mask) == mask;
}
