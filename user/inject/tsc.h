/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The time stamp counter, which the trampoline's batch path stamps its records with (a read
 * costs nanoseconds, a kernel clock a kernel entry), converted to the monotonic clock of every
 * other record (clock.h).
 */
#ifndef __PYUPROF_TSC_H
#define __PYUPROF_TSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the TSC ticks at one rate on every CPU, in every power state (constant_tsc and
 * nonstop_tsc), so that one conversion holds; why not, if not. */
bool tsc__usable(char *why, size_t why_len);
/* Takes the first readings of the conversion: early, so that tsc__calibrate need not wait. */
void tsc__begin(void);
/* Measures the conversion (once: later calls return at once), from the readings tsc__begin took
 * and others 1 ms after them at least: a rough rate, good enough to compare the CPUs' counters
 * (tsc__cpus_agree). Returns 0 or -errno. */
int tsc__calibrate(void);
/* Makes the conversion exact, from readings 20 ms apart at least (waiting for the rest if
 * needed): before the first reading is converted or a span is turned into ticks for a target.
 * Returns 0 or -errno. */
int tsc__settle(void);
/* Whether every CPU pyuprof may run on reads the same counter, within what one conversion
 * for all of them allows (checked once, after tsc__calibrate). Returns 0, or -errno and why. */
int tsc__cpus_agree(char *why, size_t why_len);
/* A TSC reading as CLOCK_MONOTONIC ns, and a span of ns in ticks (after tsc__calibrate). */
uint64_t tsc__to_ns(uint64_t tsc);
uint64_t tsc__ticks(uint64_t ns);
/* A span of ticks in ps (the speed gauge's: a few hundred ns, where ns would round by 0.2%). */
uint64_t tsc__ps(uint64_t ticks);

#endif /* __PYUPROF_TSC_H */
