/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The BPF side's lifecycle: open, configure for one target, load, attach, poll, detach. */
#ifndef __PYUPROF_PROBES_H
#define __PYUPROF_PROBES_H

#include <bpf/libbpf.h>
#include "inject/hook.h"
#include "inject/staging.h"
#include "pyuprof.h"
#include "target/py_target.h"

struct probes;

/* For every probes object started from now on: events carry their thread's CPU time (--clock cpu)
 * instead of CLOCK_MONOTONIC. */
void probes__set_cpu_clock(bool on);
bool probes__cpu_clock(void);
/* Where returns (and entries) are taken from: record --exits. */
enum exits {
	EXITS_AUTO = 0,	  /* the trampoline, or Debian's USDT exit where the build has one */
	EXITS_TRAMPOLINE, /* the trampoline's nops; calls that bypass it as EXITS_URETPROBE */
	EXITS_URETPROBE,  /* the entry and a uretprobe (none past 64 deep: closed from callers) */
	EXITS_RET,	  /* the entry and every ret instruction (single-stepped by the kernel) */
	EXITS_USDT,	  /* the entry and USDT python:function__return (Debian's 3.11) */
	EXITS_BATCH,	  /* the trampoline stages calls and returns, flushed in batches */
};
/* "trampoline", ... for messages; and back (-1 for anything else; "auto" is EXITS_AUTO). */
const char *exits__name(enum exits e);
int exits__parse(const char *s);
#define NSETS 3 /* probe sets, one link each: trampoline, interpreter object, uretprobe */

/*
 * Loads the BPF side for t's interpreter (its layout and sites), returns as exits says (not
 * AUTO). Reads nothing of the target's and needs nothing placed in it, so it needs no stop: an
 * attach loads with the target running, even before its trampoline is placed (the verifier
 * takes ~100 ms). warm_ring: the ring buffer's pages are written once first
 * (bpf/ring_warm.bpf.h: tens of ms, and the first 16 MiB of records then cost less on a host
 * that shadows page tables). Nothing is recorded until probes__aim. Returns 0 or -errno
 * (reported by the caller).
 */
int probes__load(struct probes **out, const struct py_target *t, enum exits exits,
		 unsigned ringbuf_mb, bool warm_ring, ring_buffer_sample_fn handler, void *ctx);
/* Aims tr at process pid: stage its staging area (EXITS_BATCH), hook_value what the hook is
 * kept at, thread_blocks whether its threads' blocks are glibc's as pyuprof's (the stack
 * guard's sizes). Before probes__attach. */
void probes__aim(struct probes *tr, pid_t pid, uint64_t stage, uint64_t hook_value,
		 bool thread_blocks);
/* Whether an object loaded for a with exits ea serves b with exits eb (the same one would be
 * built: the same layout, sites and probes). */
bool probes__fits(const struct py_target *a, enum exits ea, const struct py_target *b,
		  enum exits eb);
/* Who handles tr's records from now on (an object loaded as a spare, once taken). */
void probes__handle_with(struct probes *tr, ring_buffer_sample_fn handler, void *ctx);
/* Attaches tr's probes to t; tramp_path is the trampoline's file (EXITS_TRAMPOLINE,
 * EXITS_BATCH). Returns 0, or -errno: then tr is only fit for probes__free. */
int probes__attach(struct probes *tr, const struct py_target *t, const char *tramp_path);
/* EXITS_BATCH, target held: the BPF side copies no more staged records; where those it did
 * not copy start, in which batch, and whose they are (stage.bpf.h). */
void probes__stage_close(struct probes *tr, struct staging_pos *pos);
/* <= 3.10: stop asking for the trampoline hook (only someone else's is there). */
void probes__stop_tramp_watch(struct probes *tr);
/* A descriptor that becomes readable when events are waiting. */
int probes__epoll_fd(struct probes *tr);
/* Handles the events waiting, up to CONSUME_BUDGET of them (it returns that when more may
 * wait: call again). Returns events handled or -errno. */
#define CONSUME_BUDGET 65536
int probes__consume(struct probes *tr);
/* The same, up to max_bytes of records too (the one that crosses it is handled); *more says
 * whether a budget ended it. Returns events handled or -errno. */
int probes__consume_upto(struct probes *tr, uint64_t max_bytes, bool *more);
/* Whether the BPF side can tell of the target's new threads as they are made: batch mode,
 * pyuprof in the kernel's own PID namespace (the ids it reads are pyuprof's). */
bool probes__births_possible(enum exits exits);
/*
 * From now on the target's new threads may run before pyuprof seizes them (ptrace_hold.h,
 * async_threads): each is told to fn(ctx, b) at probes__births_consume as it is made, and
 * none is signalled until it is traced (bpf/thread_births.bpf.h; set however the rest goes).
 * Returns a descriptor that becomes readable when one was made, or -errno (then they are
 * seized only at the next stop).
 */
typedef void (*births_fn)(void *ctx, const struct thread_birth *b);
int probes__births(struct probes *tr, births_fn fn, void *ctx);
/* Returns how many were told, or -errno. */
int probes__births_consume(struct probes *tr);
/* Whether a thread that asks for a write is stopped by REQUEST_SIGNAL (target held). */
void probes__signal_requests(struct probes *tr, bool on);
/* Stops asking for the eval_frame switch: from now on nothing rewrites it. */
void probes__stop_hook(struct probes *tr);
/*
 * Detaches every probe and hands over whatever is left in the ring buffer. any_order: the
 * process has ended, so its last records are in the ring already, and its probes go all at
 * once, in threads that go on meanwhile (each removal waits for a grace period of the kernel's:
 * 20-60 ms); otherwise the entries go first, so that every call seen also has its return.
 */
void probes__detach(struct probes *tr, bool any_order);
/* Waits for the removals probes__detach left under way (before pyuprof exits). */
void probes__wait_detached(void);
/* How the BPF side reads the names of the Thread class at type itself (include/pyuprof.h).
 * Returns 0 or -errno. */
int probes__thread_name_path(struct probes *tr, uint64_t type,
			     const struct thread_name_path *path);
void probes__counters(struct probes *tr, struct pyuprof_stats *out);
void probes__exit_counters(struct probes *tr, struct pyuprof_exit_stats *out);
/* Time spent in the BPF program and its runs, counted while kernel.bpf_stats_enabled is 1
 * (0 otherwise): the cost of pyuprof's own probe work. Returns 0 or -errno. */
int probes__run_time(struct probes *tr, uint64_t *run_ns, uint64_t *runs);
void probes__free(struct probes *tr);

#endif /* __PYUPROF_PROBES_H */
