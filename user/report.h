/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The text summary: pstats' print_stats layout, sorted by cumulative time. */
#ifndef __PYUPROF_REPORT_H
#define __PYUPROF_REPORT_H

#include <stdio.h>
#include "profile.h"

/* Prints the top functions by cumtime as pstats.Stats(...).sort_stats("cumulative")
 * .print_stats(top) would. Returns 0 or -ENOMEM. */
int report_print(FILE *f, const struct profile *p, unsigned top);

#endif /* __PYUPROF_REPORT_H */
