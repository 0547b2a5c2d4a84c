/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Overhead calibration: what the probes of this recording cost a call, measured on the machine
 * at hand, with the target's interpreter binary and the recording's own probes.
 *
 * A short snippet (an empty function, one with a known body, an await, trees of calls; each
 * called N times, in R rounds, every round beginning with a call-free loop) runs twice at once,
 * in the target's root and as its user: plain, and recorded through the session's own code path;
 * the two take turns, a round each, through two pipes. The snippet times its loops itself (by the thread's CPU time: the probes'
 * own work, not the waits for a CPU that a loaded machine adds); the recording gives each call's
 * duration between its two timestamps.
 *
 * Every figure is taken in steps of the call-free loop (`sum(range(n))`, in C) of the same
 * run and round: the test VM's speed moves by ~1.3x for seconds at a time, which moves a call,
 * its probes and the loop alike, so that a figure in steps holds at any speed, while one in ns
 * (the difference of two runs made at different speeds) could come out at twice the probes'
 * cost or at nothing. Per round, both runs:
 *   call   = (probed trees - plain trees) / their calls: all a call adds, in a tree of calls
 *   inside = median recorded duration of the empty function - half its plain call cost: the
 *            part of call between the call's own timestamps
 *   ccall  = (probed - plain) C calls (CALIB_C_KINDS kinds in turn), each less a loop of as
 *            many iterations of its own run and round: what a C call's records add (C functions
 *            are recorded by default: a profile function on 3.8-3.11, sys.monitoring's CALL
 *            and C_RETURN on 3.12+); cinside its part between the C call's own records, as
 *            inside (median recorded duration less half its plain cost)
 *   done   = (probed - plain) awaits of a coroutine that returns at once, less two flat calls
 *            (the coroutine made, then run): what its return costs the caller beyond them
 *            (3.12+ under any hook: profile__gen_return)
 * and the median over the rounds. Those steps are kept per interpreter binary, recording mode,
 * CPU model, kernel and pyuprof build (base/cache.h), and a recording turns them into ns by the
 * loop's step measured as it starts, in a plain run of the loop alone (calibrate__speed_*),
 * which runs while the probes load: the probes' cost at the machine's speed of the moment.
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
#define CALIB_STEPS (8 * CALIB_CALLS) /* steps of the call-free loop a round (its speed) */
#define CALIB_ROUNDS 21		      /* rounds of each run, the two runs taking turns */
#define CALIB_SPEED_ROUNDS 15	      /* rounds of the call-free loop alone (the speed run) */
/*
 * The speed run's step against the machine's fast one (the lowest of the last
 * CALIB_RECENT speed runs' steps, kept with the figures; the step they were measured at, at
 * first). The test VM's host moves it between speeds 1.3-1.7x apart (its loop timed by CPU
 * time: not another process's turn), for seconds or for milliseconds, so that the speed run's
 * moment need not be the program's (3 speed runs in 10 at 30 ns a step while the loop beside
 * the program's section ran at 19), and the speed run runs beside pyuprof's own BPF load (the
 * verifier on the other CPU), the program's section beside little (a stretch of speed runs
 * 1.75x slow: 0.07 µs a call for 0.04). At a step slower than the section's the probes are
 * charged more than they cost, and a short call-dense section comes out near nothing (fib on
 * 3.12, on the CPU: 0.33-0.38x native); at a faster one some of their cost stays in the times
 * (at most the machine's slowness: fib 1.5x in a slow stretch). The second is the lesser harm:
 * a step above the fast one is taken at it; one below, down to CALIB_SPEED_BOUND times faster,
 * as found (further: a disturbance, taken at that bound, and kept at it). -v says which. Not the step the
 * figures were measured at alone: measured at a slow moment, it held every later one at its
 * slowness (seen: 29.4 ns kept, 17 ns most speed runs since).
 * The speed is each vCPU's own, not the machine's: two busy loops on the two vCPUs at once read
 * 6.2 and 11 ns a step of the C loop (Debian's 3.11, 2026-11-28), and a loop that sleeps
 * between rounds reads ~1.8x slower than a busy one beside it. So a loop timed beside the
 * recording on the other CPU does not tell the program's speed (tried: a round every 10 ms
 * through the recording, its figures taken as found: 3 of 7 short fib recordings on Debian's
 * 3.11 came out at 0); only a timing on the program's own CPU, at its moment, could: the
 * batch mode's speed gauge (include/stage.h), which scales the figures call by call
 * (profile__gauge; calib_steps.gauge). The speed run's step holds where no gauge reading has
 * come yet (a thread's first batch) and in the modes without the batch.
 */
#define CALIB_SPEED_BOUND 1.5
/* 32, and their lowest: the speed run often lands on the slower vCPU (the other one verifies
 * pyuprof's BPF programs meanwhile), and the fast step, once the second lowest of the last 9,
 * came to be the slow vCPU's after a few such runs: a program on the fast one was then charged
 * 1.6x its probes' cost, and a short fib section came out at 0.00-0.05x native (10 of 200
 * recordings, 2026-11-28T13:48-13:54Z, Debian's 3.11 and 3.12, idle machine). The lowest errs
 * toward the lesser harm; a speed run found too fast is kept at the bound below the fast step,
 * so that one disturbance moves it by that much at most. */
#define CALIB_RECENT 32
/*
 * A kept calibration measured at a step this many times the machine's fast one is not trusted:
 * it was measured on a loaded machine, and its figures in steps with it (one kept 2026-11-28
 * at 20.55 ns a step, others 6.3-6.5: 19.9 steps a call, others 16.2; 52.9 a C call, others
 * 30-31), which every later recording of that build took, and a short function came out at
 * nothing. The two vCPUs alone are up to ~1.9x apart, and figures measured on the slow one hold
 * (fib's and the trees' probes 15.8-16.9 steps a call at 9.3-11.3 ns a step and at 6.3). It is
 * measured again, and its figures replace it.
 */
#define CALIB_KEPT_BOUND 2.0
/* the trees of calls (calibrate__figures): of this depth, as many as make CALIB_CALLS calls */
#define CALIB_TREE_DEPTH 5
#define CALIB_TREE_SIZE ((2 << CALIB_TREE_DEPTH) - 1) /* calls in a tree */
#define CALIB_TREE_CALLS (CALIB_CALLS / CALIB_TREE_SIZE * CALIB_TREE_SIZE)

/*
 * The C calls the ccall figure is measured on, in turn: abs, len, isinstance, list.append and
 * dict.get, the common ones (the snippet's c_names). Recorded, their cost differs by call: on
 * Debian's 3.11 abs's records cost 46 ns a call beyond its plain cost, len's 58, isinstance's
 * 69, append's and get's 75-76 (3.12: 51, 66, 63, 58, 63; 2026-11-28, the test VM, medians of 7
 * loops of 20,000): CPython's specialised forms of the others are left for the generic call
 * under a profile function or sys.monitoring, and a method descriptor's C call event on
 * 3.8-3.11 makes a bound method a call. abs alone (before) left 12-30 ns a C call in the times.
 */
#define CALIB_C_KINDS 5

/* The snippet's own timings of one run: each round's loop times (ns of its thread's CPU). */
struct calib_timings {
	uint32_t rounds;
	uint64_t none[CALIB_ROUNDS];  /* CALIB_STEPS steps of sum(range(n)) */
	uint64_t empty[CALIB_ROUNDS]; /* N calls of an empty function */
	uint64_t body[CALIB_ROUNDS];  /* N calls of a function with a short loop in it */
	uint64_t awaits[CALIB_ROUNDS]; /* N awaits of a coroutine that returns at once */
	uint64_t trees[CALIB_ROUNDS];  /* CALIB_TREE_CALLS calls in trees of CALIB_TREE_DEPTH */
	uint64_t ccalls[CALIB_ROUNDS]; /* N C calls, CALIB_C_KINDS kinds in turn */
	uint64_t iters[CALIB_ROUNDS];  /* N iterations of for _ in range(n): pass */
};

/* The probes' cost in steps of the call-free loop (see above). */
struct calib_steps {
	double call, inside, done;
	double flat;	    /* a call in the loop of empty calls */
	double plain;	    /* what a call of the empty function costs unprobed */
	double body;	    /* call as the known-body function measures it (a check) */
	double body_inside; /* inside as it measures it (a check) */
	bool tree_fallback; /* the trees measured no cost: call is the loop's */
	double ccall;	    /* all a C call adds (0: none recorded) */
	double cinside;	    /* the part of it between the C call's own two records */
	double cplain;	    /* what a C call of abs costs unprobed */
	/* the speed gauge (include/stage.h) against the call-free loop: ps of a reading per ns
	 * of a step, the median over the probed run's rounds of the mean reading in each over its
	 * step; 0: no readings (a mode without the batch: no gauge, the speed run's figures) */
	double gauge;
};

struct calibration {
	struct compensation comp; /* ns: steps times step_ns */
	struct calib_steps steps;
	double step_ns;	    /* the call-free loop's step at this recording, ns */
	double measured_ns; /* the same when the steps were measured */
	bool kept;	    /* the steps are an earlier recording's (base/cache.h) */
	bool speed_unknown; /* the speed run failed: step_ns is the fast one */
	char when[32];	    /* when the steps were measured (UTC) */
	/* the steps of the last speed runs, oldest first (with the step measured_ns, at first) */
	double recent[CALIB_RECENT];
	uint32_t nrecent;
	double took_s;	    /* the calibration's own cost (a kept one: its speed run's) */
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
 * with *out filled (at the speed of its own plain run), or -errno with why set (then nothing
 * is to be subtracted).
 */
int calibrate__run(const char *python, const struct launch_as *as, bool cpu_clock,
		   calib_record_fn record, void *ctx, struct calibration *out, char *why, size_t why_len);

/*
 * The figures from the two runs' timings (their rounds taken in turns) and the median recorded
 * durations of the empty and the known-body function and of the C calls (0: none recorded): out's steps, measured_ns (the plain
 * run's step) and comp at that speed. Returns 0, or -ERANGE with why set when they make no
 * sense.
 */
int calibrate__figures(const struct calib_timings *plain, const struct calib_timings *probed,
		       uint64_t empty_median, uint64_t body_median, uint64_t c_median,
		       struct calibration *out, char *why, size_t why_len);

/*
 * The gauge's readings against the probed run's loop (calib_steps.gauge): round_ns, when each
 * of its rounds' call-free loop began; the readings at gauge_ts (ascending), gauge_ps long.
 * 0 if the rounds are not the probed run's or no round had a reading.
 */
double calibrate__gauge(const struct calib_timings *probed, const uint64_t *round_ns,
			uint32_t nrounds, const uint64_t *gauge_ts, const uint64_t *gauge_ps,
			uint32_t ngauges);

/* cal's comp at a machine whose call-free loop takes step_ns a step (and the gauge reading
 * that step goes with: comp.gauge_ps). */
void calibrate__at_speed(struct calibration *cal, double step_ns);
/* The machine's fast step: the lowest of cal's recent ones (measured_ns if none). */
double calibrate__fast_step(const struct calibration *cal);
/* Whether kept figures can be taken: measured at a step within CALIB_KEPT_BOUND of the
 * machine's fast one. */
bool calibrate__kept_trusted(const struct calibration *cal);
/* A kept cal at the step a speed run found (0: none found): that step if at most the fast one
 * and at least that over CALIB_SPEED_BOUND, else the nearer of the two (*bounded: it was not
 * taken as found). The step found becomes the most recent. */
void calibrate__at_speed_run(struct calibration *cal, double found_ns, bool *bounded);

/* A plain run of the call-free loop alone, as a recording starts: the machine's speed then. */
struct calib_speed {
	pid_t pid; /* 0: none under way (then nothing else is set) */
	int pidfd; /* a pidfd for it, -1 if none */
	int fd;	   /* its timings */
	uint64_t t0;
};

/* Starts the speed run (python, where and as whom as says). Returns 0 or -errno with why
 * set. */
int calibrate__speed_start(const char *python, const struct launch_as *as,
			   struct calib_speed *sp, char *why, size_t why_len);
/* Waits for it to end (in seconds at most, a few) and gives its median step. Returns 0, or
 * -errno with why set; either way sp is over. */
int calibrate__speed_end(struct calib_speed *sp, double *step_ns, char *why, size_t why_len);
/* Ends a speed run still under way (pyuprof stops). */
void calibrate__speed_abort(struct calib_speed *sp);

/* The key of the steps measured for the interpreter python (its path as the target sees it;
 * file: a path to the same file that pyuprof can read, the target's /proc/PID/exe) in this
 * recording's mode (its exits and clock, as the caller words them). Returns 0 or -errno (no
 * such file: nothing to keep). */
int calibrate__key(const char *file, const char *python, const char *mode, char *key,
		   size_t len);
/* The steps kept for key: 0 with out's steps, measured_ns, when and the recent steps filled,
 * or -ENOENT. */
int calibrate__kept(const char *key, struct calibration *out);
/* Keeps cal's steps (and its recent steps) for key. */
void calibrate__keep(const char *key, const struct calibration *cal);

#endif /* __PYUPROF_CALIBRATE_H */
