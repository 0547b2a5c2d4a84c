// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * TSC to CLOCK_MONOTONIC: two pairs of readings 20 ms apart give the rate (the error of a pair
 * is the few tens of ns between its reads, so the rate is good to a few parts per million), the
 * first pair the offset. Both clocks run from one crystal on an invariant TSC: the conversion
 * holds for the recording.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "stage.h"
#include "tsc.h"

static struct {
	bool done;
	uint64_t tsc0, ns0;
	uint64_t mult; /* ns per tick, 32.32 fixed point */
} conv;

static uint64_t rdtsc(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

bool tsc__usable(char *why, size_t why_len)
{
	char line[4096];
	bool constant = false, nonstop = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "flags", 5))
				continue;
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
		fclose(f);
	}
	if (!constant || !nonstop) {
		snprintf(why, why_len, "this CPU's time stamp counter is not invariant (no %s in "
				       "/proc/cpuinfo)",
			 constant ? "nonstop_tsc" : "constant_tsc");
		return false;
	}
	/* a staged record keeps its kind in the TSC's top bits (include/stage.h) */
	if (rdtsc() >= STAGE_TSC_LIMIT) {
		snprintf(why, why_len, "this CPU's time stamp counter reads %#llx, past what a staged "
				       "record holds",
			 (unsigned long long)rdtsc());
		return false;
	}
	return true;
}

/* A TSC reading and the monotonic time between its two halves, from the closest of a few. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX, a, b, m;

	for (int i = 0; i < 16; i++) {
		a = rdtsc();
		m = clock__mono_ns();
		b = rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = m;
		}
	}
}

int tsc__calibrate(void)
{
	struct timespec gap = { .tv_nsec = 20 * 1000 * 1000 };
	uint64_t t1, n1;

	if (conv.done)
		return 0;
	pair(&conv.tsc0, &conv.ns0);
	nanosleep(&gap, NULL);
	pair(&t1, &n1);
	if (t1 <= conv.tsc0 || n1 <= conv.ns0)
		return -EINVAL;
	conv.mult = (uint64_t)(((unsigned __int128)(n1 - conv.ns0) << 32) / (t1 - conv.tsc0));
	conv.done = true;
	return 0;
}

uint64_t tsc__to_ns(uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - conv.tsc0);
	__int128 off = ((__int128)d * (__int128)conv.mult) >> 32;

	return (uint64_t)((__int128)conv.ns0 + off);
}

uint64_t tsc__ticks(uint64_t ns)
{
	return conv.mult ? (uint64_t)(((unsigned __int128)ns << 32) / conv.mult) : UINT64_MAX;
}
