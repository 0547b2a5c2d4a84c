/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyuprof dump: every thread's Python stack in a running process, now, as `py-spy dump`
 * prints it (or as JSON). The target is stopped (ptrace, every thread) only while its
 * memory is read, then let go: nothing of pyuprof stays in it.
 */
#ifndef __PYUPROF_DUMP_H
#define __PYUPROF_DUMP_H

#include <stdbool.h>
#include <sys/types.h>

/* Prints the stacks of pid on stdout. Returns the exit status: 0, or 1 (reported). */
int dump__run(pid_t pid, bool json);

#endif /* __PYUPROF_DUMP_H */
