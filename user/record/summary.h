/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What pyuprof says at the end of a recording or a report, on stderr: the top table, the
 * notes on what was repaired, lost or left out, and the summary line.
 */
#ifndef __PYUPROF_SUMMARY_H
#define __PYUPROF_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "inject/hook.h"
#include "output/outputs.h"
#include "profile/profile.h"
#include "record/calibrate.h"
#include "record/proc_rec.h"

/* Prints the top functions by cumtime as pstats.Stats(...).sort_stats("cumulative")
 * .print_stats(top) would. Returns 0 or -ENOMEM. */
int summary__top(FILE *f, const struct profile *p, unsigned top);

/* The summary line's word on the times: calibrated with c's figures, or (c NULL) not
 * compensated because the calibration failed. Unset: nothing is said. */
void summary__compensation(const struct compensation *c);

/* Everything that was repaired, lost or left out: nothing goes unreported. */
void summary__notes(const struct profile *p, const struct hook_state *h,
		    const struct pyuprof_stats *s, const char *version, bool exit_probe);

/*
 * Writes the outputs of a finished profile and prints the summary (with a line per process
 * when following: procs, else NULL; died: what ended the program, said on the summary line,
 * e.g. "pid 12 died of SIGSEGV", or NULL). Returns 0, or -errno when an output could not be
 * written or nothing was recorded.
 */
int summary__conclude(struct outputs *out, struct profile *p, const struct hook_state *h,
		      const struct pyuprof_stats *bs, const char *version, bool exit_probe,
		      double wall_s, struct proc_rec *const *procs, uint32_t nprocs,
		      const char *died);

#endif /* __PYUPROF_SUMMARY_H */
