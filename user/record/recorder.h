/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Dispatch of ring-buffer records to the profile builder, and what was learnt on the way. */
#ifndef __PYUPROF_RECORDER_H
#define __PYUPROF_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "base/outfile.h"
#include "inject/hook.h"
#include "inject/ptrace_hold.h"
#include "profile/profile.h"
#include "profile/run_info.h"
#include "pyuprof.h"
#include "stage.h"
#include "target/py_target.h"

#define CODE_CHECKS 8 /* code objects whose type is checked: all must be "code" */
#define BOOTSTRAP_CODES 8 /* threading's _bootstrap(_inner) code objects remembered */

struct recorder {
	struct profile *prof;
	const char *target_version; /* for messages */
	struct hook_state *hooks;
	struct ptrace_hold *held; /* NULL unless the target is held under ptrace */
	uint64_t stop_ns; /* once set, the recording window is closed: later calls are ignored */
	pid_t live_pid;	  /* 0 when replaying a raw recording */
	const struct py_target *target; /* live: where thread names are read; else NULL */
	uint64_t bootstrap[BOOTSTRAP_CODES]; /* code objects whose frames hold their Thread */
	int nbootstrap;
	struct outfile *raw; /* if set, every record is kept there (record --raw) */
	struct run_info *run; /* report: gets the command line of the raw recording */
	int checks_ok, checks_bad;
	/* a staged entry whose chain record is still to come (the next batch, if split) */
	struct ev_call staged_entry;
	bool has_staged_entry;
	uint64_t staged_bad; /* staged records that made no sense (counted, skipped) */
	/* the first bytes of a record a chunk ended inside: the next chunk of thread cut_tid's
	 * batch, from cut_end, has the rest */
	uint64_t cut[STAGE_ENTRY_BYTES / 8];
	uint32_t cut_bytes, cut_tid, cut_end;
	/* live batch mode: the staging area, for the records a thread stopped over
	 * (REQ_STAGE_REST); 0 otherwise */
	uint64_t stage;
	/* the BPF side found a thread whose key is not its id (REQ_STAGE_KEY): the calls go to
	 * the per-call probes once the thread stands (proc_rec__stage_per_call) */
	bool key_bad;
	int err; /* first fatal error (-ENOMEM, or -EINVAL when the offsets do not fit) */
	/* live: tells the BPF side how to read the names of the Thread class at type itself
	 * (probes__thread_name_path), so that its later threads need not stand for them */
	void (*name_path)(void *ctx, uint64_t type, const struct thread_name_path *path);
	void *name_path_ctx;
};

/* ring_buffer_sample_fn, and raw_read's: ctx is a struct recorder. */
int recorder__handle(void *ctx, void *data, size_t size);

/* size bytes of records thread tid staged (include/stage.h), from offset from of the staging
 * buffer: a chunk the BPF side copied out, or records user space read from the target
 * itself; first if they begin a copy (at a record's head: ev_batch.first). Returns 0 or
 * -errno. */
int recorder__staged(struct recorder *r, uint32_t tid, uint32_t from, bool first,
		     const void *bytes, uint32_t size);
/* No record comes after this: the entry staged last, whose chain record (if it has one) came
 * or would have come next, is handled now. Returns 0 or -errno. */
int recorder__staged_end(struct recorder *r);

#endif /* __PYUPROF_RECORDER_H */
