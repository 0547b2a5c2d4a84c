/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames already running at attach: read from each thread's frame chain while the target is
 * stopped, then put on the threads' stacks before the first event, so that calls made from
 * them get their real callers and the outer functions show the time since attach.
 */
#ifndef __PYUPROF_SEED_H
#define __PYUPROF_SEED_H

#include <linux/types.h>
#include <stdint.h>
#include "inject/ptrace_hold.h"
#include "record/recorder.h"
#include "target/py_target.h"

#define SEED_MAX_FRAMES 512 /* per thread, from the innermost */

struct seeds {
	struct ev_code *codes; /* identities of the code objects, as BPF would send them */
	uint32_t ncodes;
	struct raw_seed *frames; /* per thread, outermost first */
	uint32_t nframes;
};

/*
 * With every thread of the target stopped (held): reads each Python thread's frames. Threads
 * are matched to kernel tids through their FS base (pthread_self() on x86-64 glibc). Returns
 * 0 or -ENOMEM; frames that cannot be read are left out.
 */
int seeds__walk(struct seeds *s, const struct py_target *t, struct ptrace_hold *held, uint64_t ts);

/* Hands the seeds to the recorder (so a raw recording keeps them too). Returns 0 or -errno. */
int seeds__apply(const struct seeds *s, struct recorder *r);

void seeds__free(struct seeds *s);

#endif /* __PYUPROF_SEED_H */
