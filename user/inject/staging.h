/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The batch mode's staging area in one target (include/stage.h): switching it on and off, and
 * what is still staged when pyuprof stops. The area is placed, with the page that writes it,
 * by tramp.c.
 */
#ifndef __PYUPROF_STAGING_H
#define __PYUPROF_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long records may stay staged before the trampoline flushes them: `top` and the status
 * line stay this live. */
#define STAGING_BOUND_NS (50 * 1000 * 1000)


/* Process stopped: an empty batch, staging on, and C functions recorded if cfuncs
 * (include/cfuncs.h). Returns 0 or -errno. */
int staging__start(pid_t pid, uint64_t stage, bool cfuncs);

/* Process (or the thread that asked) stopped: every call to the per-call probes from now on
 * (STAGE_ON_PERCALL: a thread key that does not check out). Returns 0 or -errno. */
int staging__per_call(pid_t pid, uint64_t stage);

/* What was staged and not yet copied out when the recording stopped. */
struct staging_rest {
	uint32_t tid;	/* the thread whose records they are */
	uint32_t from;	/* where they start in the staging buffer */
	uint32_t bytes;
	uint8_t *data;	/* malloc'd */
};

/* Where the BPF side stands (bpf/stage.bpf.h): the records of batch gen from byte r on are not
 * copied yet; owner made them. */
struct staging_pos {
	uint64_t r, gen;
	uint32_t owner;
};

/*
 * Process stopped: staging off (the page only passes calls through from now on), and the
 * records pos says were not copied, if the batch staged now is still that one, into *rest.
 * Returns 0 or -errno.
 */
int staging__stop(pid_t pid, uint64_t stage, const struct staging_pos *pos,
		  struct staging_rest *rest);

#endif /* __PYUPROF_STAGING_H */
