/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The monotonic clock, in ns: the clock of bpf_ktime_get_ns, so pyuprof's own times and the
 * probes' timestamps can be compared. */
#ifndef __PYUPROF_CLOCK_H
#define __PYUPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* __PYUPROF_CLOCK_H */
