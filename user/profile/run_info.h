/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the pictures and the trace say about the run they show: their titles and legends. */
#ifndef __PYUPROF_RUN_INFO_H
#define __PYUPROF_RUN_INFO_H

#include <stdint.h>

#define RUN_COMMAND_LEN 256

struct run_info {
	char command[RUN_COMMAND_LEN]; /* the target's command line, spaces between; "" unknown */
	uint32_t pid;
	uint64_t wall_ns; /* from the start of the recording to its stop */
};

/* Reads /proc/PID/cmdline into r->command (truncated to fit). Returns 0 or -errno (-ENODATA:
 * empty, a kernel thread or a zombie). */
int run_info__read_command(struct run_info *r, int pid);

#endif /* __PYUPROF_RUN_INFO_H */
