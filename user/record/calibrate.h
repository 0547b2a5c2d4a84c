/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Overhead calibration: what the probes of this recording cost a call, measured at its start
 * on the machine at hand, with the target's interpreter binary and the recording's own probes.
 * A short snippet (an empty function and one with a known body, each called N times, R
 * rounds) runs twice: plain, and recorded through the session's own code path. The snippet
 * times its loops itself; the recording gives each call's duration between its two
 * timestamps. Then:
 *   call_ns   = (probed loop - plain loop) / N, minus the empty loop's change: all a call adds
 *   inside_ns = median recorded duration of the empty function - half its plain call cost:
 *               the part of call_ns between the call's own timestamps
 *   done_ns   = (probed - plain) / N of a loop awaiting a coroutine that returns at once, less
 *               two call_ns (the coroutine made, then run): what its return costs the caller
 *               beyond them (3.12+ under any hook: profile__gen_return)
 * Medians over rounds for the loops (by the thread's CPU time: the probes' own work, not the
 * waits for a CPU that a loaded machine adds) and over calls for the durations (by the
 * recording's clock).
 */
#ifndef __PYUPROF_CALIBRATE_H
#define __PYUPROF_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "inject/launch.h"
#include "profile/profile.h"

/* each round: CALIB_CALLS calls in each of four loops (an await: two activations), ~0.1 ms
 * a loop on the batch path, ~36 ms at 12 µs a call (ret-site uprobes) */
#define CALIB_CALLS 3000 /* calls per loop and round: several batches (a flush per ~680) */
#define CALIB_ROUNDS 5
/* the trees of calls (calibrate__figures): of this depth, as many as make CALIB_CALLS calls */
#define CALIB_TREE_DEPTH 5
#define CALIB_TREE_SIZE ((2 << CALIB_TREE_DEPTH) - 1) /* calls in a tree */
#define CALIB_TREE_CALLS (CALIB_CALLS / CALIB_TREE_SIZE * CALIB_TREE_SIZE)

/* The snippet's own timings of one run: each round's loop times (ns of its thread's CPU). */
struct calib_timings {
	uint32_t rounds;
	uint64_t none[CALIB_ROUNDS];  /* for _ in range(N): pass */
	uint64_t empty[CALIB_ROUNDS]; /* N calls of an empty function */
	uint64_t body[CALIB_ROUNDS];  /* N calls of a function with a short loop in it */
	uint64_t awaits[CALIB_ROUNDS]; /* N awaits of a coroutine that returns at once */
	uint64_t trees[CALIB_ROUNDS];  /* CALIB_TREE_CALLS calls in trees of CALIB_TREE_DEPTH */
};

struct calibration {
	struct compensation comp;
	uint64_t flat_call_ns;	/* the probes' cost a call in the loop of empty calls */
	bool tree_fallback;	/* the trees measured no cost: call_ns is the loop's */
	uint64_t plain_call_ns; /* what a call of the empty function costs unprobed */
	uint64_t body_call_ns;	/* call_ns as the known-body function measures it (a check) */
	uint64_t body_inside_ns; /* inside_ns as it measures it (a check) */
	double took_s;		/* the calibration's own cost, both runs */
};

struct calib_run; /* one calibration under way: the recorded calls of its functions */

/*
 * Records argv, a command to launch where and as whom as says, as the session records its
 * target (same probes, same options), with calibrate__watch(run, its profile) called before
 * its first event. Returns 0 when it ran and was recorded, else -errno.
 */
typedef int (*calib_record_fn)(void *ctx, char **argv, const struct launch_as *as,
			       struct calib_run *run);

/* Lets run see the calls p records (its on_call hook). */
void calibrate__watch(struct calib_run *run, struct profile *p);

/*
 * Calibrates for the interpreter binary python (its path in as->root, if any), run where and as
 * whom as says (the target's root and user); cpu_clock: times are thread CPU times. Returns 0
 * with *out filled, or -errno with why set (then nothing is to be subtracted).
 */
int calibrate__run(const char *python, const struct launch_as *as, bool cpu_clock,
		   calib_record_fn record, void *ctx, struct calibration *out, char *why, size_t why_len);

/*
 * The figures from the two runs' timings and the median recorded durations of the empty and
 * the known-body function. Returns 0, or -ERANGE with why set when they make no sense.
 */
int calibrate__figures(const struct calib_timings *plain, const struct calib_timings *probed,
		       uint64_t empty_median, uint64_t body_median, struct calibration *out,
		       char *why, size_t why_len);

#endif /* __PYUPROF_CALIBRATE_H */
