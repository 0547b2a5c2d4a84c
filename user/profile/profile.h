/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile builder: rebuilds each thread's call stack from entry/return events and keeps
 * cProfile's statistics (_lsprof's rules: cpython-internals.md 10.2) per function and per
 * caller->callee edge. Output writers read the finished struct profile.
 */
#ifndef __PYUPROF_PROFILE_H
#define __PYUPROF_PROFILE_H

#include <stdbool.h>
#include <linux/types.h>
#include <stdint.h>
#include "base/hashmap.h"
#include "profile/calltree.h"
#include "pyuprof.h" /* CHAIN_LEN */

#define NO_ID UINT32_MAX

/* cProfile's numbers, for a function and for a caller->callee edge alike */
struct call_stats {
	uint64_t calls, rec_calls; /* nc, and calls nested in an active call of the same one */
	uint64_t inline_ns, total_ns; /* tottime, cumtime */
};

struct func {
	char *filename; /* UTF-8 */
	char *name;	/* co_name: the .prof's key, as cProfile's */
	char *qualname; /* co_qualname (3.11+) where it says more than name; else NULL */
	int firstlineno;
	struct call_stats st;
	/* compensation: what was subtracted from its calls beyond their own time (probe costs
	 * vary call to call around the calibrated figure), taken from its later calls' time */
	uint64_t debt_ns;
	bool shim; /* CPython's _Py_InitCleanup (3.13): runs as a frame, is not a call */
	bool cfunc; /* a C function (include/cfuncs.h): key ("~", 0, cProfile's name for it) */
	uint32_t co_flags; /* its code's (the CO_GENERATOR kinds matter: profile__gen_return) */
};

struct edge {
	uint32_t caller, callee;
	struct call_stats st;
};

struct frame_entry {
	uint64_t frame; /* address of the target's frame, to resync against; 0 = not known */
	uint64_t t0, subt;
	int64_t subt_est; /* compensation: its callees' estimated times, below 0 when over-taken */
	uint32_t func;	/* NO_ID: a frame that is not a call (generator creation, unreadable) */
	uint32_t edge;	/* NO_ID: no caller */
	uint32_t node;	/* its call path in the call tree */
	bool counted;	/* false for frames that began before recording (seen as callers only) */
	bool inlined;	/* ran inline (recovered, or an inline call): no return event will come */
	bool seeded;	/* entered before recording (attach): its return may come unseen */
	bool c;		/* a C call (profile__ccall): no frame of its own; frame is 0 */
	uint32_t owed;	/* rets still to come of activations above it, closed at their return */
	uint64_t probed_ns; /* compensation: the probes' whole cost of the calls that ended inside
			     * it, each at the figures of its end (C calls' at theirs) */
	uint64_t done_ns; /* compensation: the generator returns' cost inside it (gen_return) */
};

#define THREAD_NAME_LEN 64
/* the speed gauge's readings a thread's speed is taken from (profile__gauge): up to 8 batches,
 * ~0.5 ms of a call-dense section, where the test VM's vCPUs change speed every few seconds */
#define PROFILE_GAUGE_WINDOW 8
/* and the most it scales the figures by, either way */
#define PROFILE_SPEED_BOUND 3.0

/*
 * A stack of frames a thread is not running now: greenlet (gevent) switches a thread from one
 * C stack, and the Python frames on it, to another without a return, and back later. Each keeps
 * its own recursion levels, as a thread does: the greenlets that run one function at a time
 * are that many calls of it, not one recursion. Its frames' time runs on while it waits, as a
 * blocked thread's does (cumtime is wall time from entry to return).
 */
struct strand {
	struct frame_entry *stack;
	uint32_t depth, cap;
	uint32_t owed;
	uint32_t *func_level, *edge_level;
	uint32_t func_level_cap, edge_level_cap;
};

struct thread {
	uint32_t tid;
	uint32_t pid; /* its process when known (a merge's threads), else 0: the profile's */
	uint32_t root; /* its call-tree root */
	char name[THREAD_NAME_LEN]; /* as the recorder learnt it; "" if unknown */
	struct frame_entry *stack;
	uint32_t depth, cap;
	uint64_t last_ns;
	uint32_t owed; /* rets still to come of activations closed with nothing below them */
	bool t0_pending; /* CPU clock: seeded frames start at the thread's first event */
	uint64_t paused_ns; /* time it stood waiting for pyuprof (batch mode): not its own */
	uint64_t wait_open_ns; /* a wait (profile__pause) with no event of the thread after it
				* yet: a code flush it stood in counts it too (profile__flush) */
	/* recursion level per function and per edge in this thread, indexed by their ids */
	uint32_t *func_level, *edge_level;
	uint32_t func_level_cap, edge_level_cap;
	/* the strands it is not running (stack, depth, owed and the levels above are the one it
	 * runs); parked_top: each one's top frame -> its index + 1 */
	struct strand *parked;
	uint32_t nparked, parked_cap;
	struct u64_map parked_top;
	/* the speed gauge's last readings on this thread (profile__gauge), ps, and what they make
	 * of the probes' cost: its figures times speed (0: no reading yet) */
	uint64_t gauge_ps[PROFILE_GAUGE_WINDOW];
	uint32_t ngauge;
	double speed;
};

/* Anything the builder had to repair or could not attribute; all printed in the summary. */
struct profile_counters {
	uint64_t calls;		  /* calls counted */
	uint64_t recovered;	  /* frames entered without an event, recovered from the chain */
	uint64_t inline_calls;	  /* calls seen only by the probe of an inlining path (3.13.0) */
	uint64_t closed_unseen;	  /* frames closed at a later entry: returned without an event */
	uint64_t unmatched_returns; /* returns of frames never seen (entered before recording) */
	uint64_t unknown_code;	  /* calls whose code object identity never arrived */
	uint64_t not_calls;	  /* generator-creation entries (3.11+), not calls in cProfile */
	uint64_t reordered;	  /* events stamped before their thread's previous one */
	uint64_t open_at_stop;	  /* calls still running when recording stopped */
	uint64_t no_return;	  /* entered past the uretprobe depth limit: closed from callers */
	uint64_t seeded;	  /* frames running at attach, put on the stacks (seed.h) */
	uint64_t waits, waited_ns; /* threads stopped until pyuprof read their staged records */
	uint64_t flushes, flushed_ns; /* code flushes taken out of the times (profile__flush) */
	uint64_t switches;	  /* a thread went on with frames of another stack (greenlet) */
	uint32_t most_parked;	  /* the most stacks a thread had waiting at once */
	uint64_t c_calls;	  /* C calls counted (also in calls) */
	uint64_t c_closed;	  /* C calls whose return went elsewhere: closed at their caller's
				   * next event that shows them over */
	uint64_t c_unmatched;	  /* C returns with no C call open on top */
	uint64_t c_unknown;	  /* C calls whose function's identity never arrived */
	uint64_t gauges;	  /* speed gauge readings (profile__gauge) */
	double speed_min, speed_max; /* the speeds they made of the figures (0: none) */
};

struct profile {
	struct func *funcs;
	uint32_t nfuncs, funcs_cap;
	struct edge *edges;
	uint32_t nedges, edges_cap;
	struct thread **threads;
	uint32_t nthreads, threads_cap;
	struct u64_map func_by_key;   /* hash of (filename, line, name) -> id + 1 */
	struct u64_map func_by_code;  /* code object address -> id + 1 */
	struct u64_map func_by_cfunc; /* a C function's key (its PyMethodDef) -> id + 1 */
	struct u64_map edge_by_pair;  /* (caller + 1) << 32 | callee -> id + 1 */
	uint32_t *node_edge;	      /* by call-tree node: its edge (NO_ID: not looked up yet) */
	uint32_t node_edge_cap;
	struct u64_map thread_by_tid; /* tid -> index + 1 */
	struct thread *last_thread;   /* the thread of the last event */
	struct calltree tree;
	uint64_t first_ns, last_ns;
	uint32_t pid; /* the process recorded, for the outputs that name it; 0 for a merge */
	struct profile_counters n;
	double speed; /* the last speed any thread's gauge gave (a thread's first, before its own) */
	/* if set, told of every gauge reading (profile__gauge), ps at ts_ns */
	void (*on_gauge)(void *ctx, uint64_t ts_ns, uint64_t ps);
	void *on_gauge_ctx;
	/* if set, told of every call as it ends (thread is an index into threads[]) */
	void (*on_call)(void *ctx, uint32_t thread, uint32_t func, uint64_t t0_ns,
			uint64_t t1_ns);
	void *on_call_ctx;
};

/* What the pictures and the trace call a function: its qualified name where known; a C
 * function as pstats prints it, "{built-in method builtins.len}" (its qualname). */
static inline const char *func__label(const struct func *f)
{
	return f->qualname ? f->qualname : f->name;
}

/* Where the pictures say a C function is, in place of its file and line ("~:0" in the .prof) */
#define CFUNC_PLACE "C function"


/*
 * Overhead compensation (calibrate.h): the probe time one call adds to the times, and the part
 * of it that falls between the call's own two timestamps (the rest lands in its caller). A
 * call's cumtime loses its inside part and a whole call_ns per probed call below it; its
 * tottime loses the inside part and the outside part of each call it makes (never below 0).
 * done_ns: what a generator's or coroutine's return costs its awaiting (yield from) caller
 * beyond that, under any eval_frame hook on 3.12+ (profile__gen_return).
 * Zero leaves the recorded times as they are, to the byte.
 */
struct compensation {
	uint64_t call_ns, inside_ns, done_ns;
	uint64_t ccall_ns, cinside_ns; /* a C call's (profile__ccall), as call_ns and inside_ns */
	/* the speed gauge's reading (include/stage.h) at which these figures hold, ps: a call's
	 * figures are scaled by its thread's readings over this (profile__gauge); 0: taken as
	 * they are */
	uint64_t gauge_ps;
};

/* For every profile of this run, set before any event: the figures to subtract, and whether
 * ts values are a thread's CPU time (--clock cpu: calls open at the stop end at their thread's
 * last event, seeded ones start at its first). */
void profile__set_compensation(const struct compensation *c);
void profile__set_cpu_clock(bool on);
bool profile__cpu_clock(void);

struct profile *profile__new(void);
void profile__free(struct profile *p);

/* Binds a code object address to a function (UTF-8 strings). Returns 0 or -ENOMEM. */
int profile__code(struct profile *p, uint64_t code, const char *filename, const char *name,
		  int firstlineno);
/* The qualified name of the function bound to code (after profile__code); one equal to its
 * name or empty is not kept. Returns 0, -ENOENT (code not bound) or -ENOMEM. */
int profile__qualname(struct profile *p, uint64_t code, const char *qualname);
/* The co_flags of the function bound to code. Returns 0 or -ENOENT (code not bound). */
int profile__code_flags(struct profile *p, uint64_t code, uint32_t co_flags);

/* Binds a C function's key to the function ("~", 0, name): cProfile's key for it; a key bound
 * already keeps its first name, as in cProfile. Returns 0 or -ENOMEM. */
int profile__cfunc(struct profile *p, uint64_t key, const char *name);
/*
 * A C call (include/cfuncs.h) of the function key, made by frame (0: unknown, the thread's
 * top). Calls the C function makes back into Python are its callees; it ends at its
 * profile__creturn, or at the latest when an event shows its caller running on (an entry whose
 * caller is a frame above it ends it too: its return went unseen). Returns 0 or -ENOMEM.
 */
int profile__ccall(struct profile *p, uint32_t tid, uint64_t ts, uint64_t key, uint64_t frame);
/* The return (or exception) of the C call open right above frame (on the stack the thread
 * switched to, if another: greenlet), what ran above it returned too; with frame 0 or not
 * found, of the thread's innermost C call. Returns 0 or -ENOMEM. */
int profile__creturn(struct profile *p, uint32_t tid, uint64_t ts, uint64_t frame);
/* The thread's C calls open above its innermost Python frame are over: their returns went to
 * a profile function of the program's own. Returns 0 or -ENOMEM. */
int profile__csync(struct profile *p, uint32_t tid, uint64_t ts);

/*
 * One entry. chain[0] is the frame running when it was entered (0 if none), chain[1] that
 * frame's caller, chain_code[] their code objects (0 if unknown), back the frame below
 * chain[1]. flags are ev_call's CALL_* bits. Returns 0 or -ENOMEM.
 */
int profile__call(struct profile *p, uint32_t tid, uint64_t ts, uint64_t code, uint64_t frame,
		  const __u64 chain[CHAIN_LEN], const __u64 chain_code[CHAIN_LEN], uint64_t back,
		  uint32_t flags);
int profile__return(struct profile *p, uint32_t tid, uint64_t ts);
/*
 * The frame that thread tid's next return is of (its stack switched since that frame's last
 * event, as greenlet switches them): the stack that holds it becomes the one the thread runs,
 * and what is above it there returned unseen. A frame on no stack of the thread changes
 * nothing. Returns 0 or -ENOMEM.
 */
int profile__resume(struct profile *p, uint32_t tid, uint64_t frame);
/*
 * A return of a generator's or coroutine's frame that ended (not a yield; none: it returned
 * None), 3.12+ in the batch mode. Under any eval_frame hook CPython no longer resumes such a
 * frame inline from its caller's await or yield from (SEND), and the generic SEND takes the
 * value through StopIteration: a coroutine's always, a generator's unless it is None. That
 * cost is the caller's, and compensated there (compensation.done_ns) when the caller is a
 * generator or coroutine itself (the one that awaits). Returns 0 or -ENOMEM.
 */
int profile__gen_return(struct profile *p, uint32_t tid, uint64_t ts, bool none);

/*
 * A frame exit (3.11 USDT), of frame (0 if unknown: a plain return) running code, called by
 * caller. A frame not on the stack ran inline unseen: it is counted as a call from caller,
 * started at most at the thread's last event. Returns 0 or -ENOMEM.
 */
int profile__exit(struct profile *p, uint32_t tid, uint64_t ts, uint64_t frame, uint64_t code,
		  uint64_t caller);

/* A call CPython runs inline: 3.13.0's specialised class call, seen before its frame exists
 * (frame 0), or 3.11's inline __getitem__, seen with its frame. caller is the calling frame if
 * known (else the top is taken); the call returns at the latest at the next event that shows
 * it gone. Returns 0 or -ENOMEM. */
int profile__inline_call(struct profile *p, uint32_t tid, uint64_t ts, uint64_t code,
			 uint64_t frame, uint64_t caller);

/* Thread tid stood ns waiting for pyuprof (the batch mode's ring was full): its later events
 * are taken as ns earlier, so that the wait is in none of its calls. Returns 0 or -ENOMEM. */
int profile__pause(struct profile *p, uint32_t tid, uint64_t ns);
/* Thread tid spent ns in a code flush (the batch mode: a code object's identity sent at its
 * first call): taken out as a pause when compensating (the calibration spreads only the
 * other flushes over the calls), kept otherwise. Returns 0 or -ENOMEM. */
int profile__flush(struct profile *p, uint32_t tid, uint64_t ns);
/* The speed gauge ran on thread tid as a batch began (at ts_ns), and took ps: the thread's
 * later calls are compensated at its recent readings (the robust mean of the last
 * PROFILE_GAUGE_WINDOW) over the figures' own (compensation.gauge_ps). */
int profile__gauge(struct profile *p, uint32_t tid, uint64_t ts_ns, uint64_t ps);

/* A frame running when recording began (outermost first per thread): a call from ts on.
 * Returns 0 or -ENOMEM. */
int profile__seed(struct profile *p, uint32_t tid, uint64_t ts, uint64_t frame, uint64_t code);

/* Closes every call still open at stop_ns, as cProfile does when it is disabled. */
void profile__finish(struct profile *p, uint64_t stop_ns);

/*
 * Adds a finished profile (another process's) into dst: functions by (file, line, name), their
 * edges, threads and call paths. Call profile__finish on dst again afterwards. Returns 0 or
 * -ENOMEM.
 */
int profile__merge(struct profile *dst, const struct profile *src);
/* The thread for tid, added if new; NULL on ENOMEM. */
struct thread *profile__thread(struct profile *p, uint32_t tid);
bool profile__has_thread(const struct profile *p, uint32_t tid);
/* A new thread for tid, which the kernel gave again after the one that had it ended: events
 * of tid go to it from now on. NULL on ENOMEM. */
struct thread *profile__thread_new(struct profile *p, uint32_t tid);
/* Whether t has had events and is in no call now: a thread start on its tid is another life. */
bool thread__lived(const struct thread *t);

#endif /* __PYUPROF_PROFILE_H */
