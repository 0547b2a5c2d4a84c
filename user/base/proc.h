/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* /proc/PID access: file-backed mappings, and reads/writes of the target's memory. */
#ifndef __PYUPROF_PROC_H
#define __PYUPROF_PROC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mapping {
	uint64_t start, end, offset;
	char perms[5];
	char path[PATH_MAX];
};

/* Reads the file-backed mappings of pid. Returns the count (>= 0) or -errno; *out is malloc'd. */
int proc__maps(pid_t pid, struct mapping **out);

/* Reads/writes exactly len bytes at addr in pid. Returns 0, -EFAULT on a short transfer, or
 * -errno. */
int proc__read(pid_t pid, uint64_t addr, void *buf, size_t len);
int proc__write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* Writes through /proc/PID/mem, as a debugger does: also into a read-only mapping of code (the
 * process gets its own copy of the page). The process must be stopped. Returns 0 or -errno. */
int proc__poke(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Whether pyuprof's effective capabilities hold every bit of mask (1 << CAP_...). */
bool proc__has_caps(uint64_t mask);

/* A number field of /proc/TID/status ("Tgid", "PPid", "TracerPid", "Seccomp": each thread
 * has its own), or none if there is no such field or thread. */
long proc__status_field(pid_t tid, const char *name, long none);

/* 0 if pid exists, -ESRCH if not (zombies count as gone). */
int proc__alive(pid_t pid);

#endif /* __PYUPROF_PROC_H */
