/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Chrome trace event format (the JSON object form that Perfetto UI and chrome://tracing load):
 * one complete ("X") event per call ("qualname (file's base name:line)"; the file's path and
 * the line in args), streamed while recording, plus process and thread name
 * metadata and, in otherData, how many calls were left out for being shorter than min_ns.
 */
#ifndef __PYUPROF_OUT_CHROME_H
#define __PYUPROF_OUT_CHROME_H

#include <stdint.h>
#include "base/outfile.h"
#include "profile/profile.h"

struct chrome_trace;

/*
 * Starts the trace in out (opened by the caller, who commits or aborts it after close). p is
 * the profile whose calls are traced: on_call reads function names from it, so it must live
 * until close. Events carry pid; base_ns is written as ts 0 (a call that began earlier gets a
 * negative ts); calls shorter than min_ns are left out and counted. Then set p->on_call to
 * chrome_trace__on_call and p->on_call_ctx to the result. Returns NULL with errno set.
 */
struct chrome_trace *chrome_trace__open(struct outfile *out, const struct profile *p,
					uint32_t pid, uint64_t base_ns, uint64_t min_ns);
/*
 * A profile->on_call callback: ctx is the chrome_trace, thread and func index p's arrays. It
 * reads the thread's stack, which must no longer hold the call (profile.c's pop() order): a
 * call that began at the same ns as its caller is written after the caller.
 */
void chrome_trace__on_call(void *ctx, uint32_t thread, uint32_t func, uint64_t t0_ns,
			   uint64_t t1_ns);
/*
 * Writes the process name (process, e.g. its command line; "python" if NULL or empty), the
 * thread names (p's, which must be the profile given at open; "thread-TID" when unknown) and
 * the count of calls left out, and ends the JSON; *events (if events is set) gets the number
 * of calls written. Call it after the last call has ended (after profile__finish). With p NULL
 * nothing is written (the trace is being thrown away). Frees ct either way; NULL-safe.
 * Returns 0 or -errno.
 */
int chrome_trace__close(struct chrome_trace *ct, const struct profile *p, const char *process,
			uint64_t *events);

#endif /* __PYUPROF_OUT_CHROME_H */
