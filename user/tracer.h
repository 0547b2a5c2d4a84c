/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The BPF side's lifecycle: open, configure for one target, load, attach, poll, detach. */
#ifndef __PYUPROF_TRACER_H
#define __PYUPROF_TRACER_H

#include <bpf/libbpf.h>
#include "hook.h"
#include "pyuprof.h"
#include "py_target.h"

struct tracer;

/* For every tracer started from now on: events carry their thread's CPU time (--clock cpu)
 * instead of CLOCK_MONOTONIC. */
void tracer__set_cpu_clock(bool on);
/* Loads and attaches everything for t. Returns 0 or -errno (reported by the caller). */
int tracer__start(struct tracer **out, const struct py_target *t, unsigned ringbuf_mb,
		  ring_buffer_sample_fn handler, void *ctx);
/* A descriptor that becomes readable when events are waiting. */
int tracer__epoll_fd(struct tracer *tr);
/* Handles every event waiting. Returns events handled or -errno. */
int tracer__consume(struct tracer *tr);
/* Whether a thread that asks for a write is stopped by REQUEST_SIGNAL (target held). */
void tracer__signal_requests(struct tracer *tr, bool on);
/* Stops asking for the eval_frame switch: from now on nothing rewrites it. */
void tracer__stop_hook(struct tracer *tr);
/* Detaches every probe and hands over whatever is left in the ring buffer. */
void tracer__detach(struct tracer *tr);
void tracer__counters(struct tracer *tr, struct pyuprof_stats *out);
/* Time spent in the BPF program and its runs, counted while kernel.bpf_stats_enabled is 1
 * (0 otherwise): the cost of pyuprof's own probe work. Returns 0 or -errno. */
int tracer__run_time(struct tracer *tr, uint64_t *run_ns, uint64_t *runs);
void tracer__free(struct tracer *tr);

#endif /* __PYUPROF_TRACER_H */
