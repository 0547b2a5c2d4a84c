// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The staging area switched on and off, and its rest read, with the target stopped. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/proc.h"
#include "inject/staging.h"
#include "inject/tsc.h"
#include "stage.h"

int staging__start(pid_t pid, uint64_t stage, bool cfuncs)
{
	enum { CHUNK = 64 << 10, PAGE = 4096 };
	uint8_t *zero = calloc(1, CHUNK), *got = malloc(CHUNK);
	uint64_t bound = tsc__ticks(STAGING_BOUND_NS);
	uint32_t on = STAGE_ON_STAGING, cf = cfuncs;
	uint64_t at, n, p;
	int err = zero && got ? 0 : -ENOMEM;

	/* the area as a forked child has it (wiped), whatever an earlier recording left: above
	 * all its table, whose code objects this recording has not sent yet. Only the pages that
	 * are not zero are written: a page written is a page of the target's memory, and a new
	 * area's pages are zero until its page stages in them (a read does not make them its) */
	for (at = 0; !err && at < STAGE_SIZE; at += n) {
		n = STAGE_SIZE - at < CHUNK ? STAGE_SIZE - at : CHUNK;
		err = proc__read(pid, stage + at, got, n);
		for (p = 0; !err && p < n; p += PAGE)
			if (memcmp(got + p, zero, n - p < PAGE ? n - p : PAGE))
				err = proc__write(pid, stage + at + p, zero, n - p < PAGE ? n - p : PAGE);
	}
	free(zero);
	free(got);
	if (!err)
		err = proc__write(pid, stage + STAGE_BOUND, &bound, sizeof(bound));
	if (!err)
		err = proc__write(pid, stage + STAGE_CFUNCS, &cf, sizeof(cf));
	if (!err)
		err = proc__write(pid, stage + STAGE_ON, &on, sizeof(on));
	return err;
}

int staging__per_call(pid_t pid, uint64_t stage)
{
	uint32_t on = STAGE_ON_PERCALL;

	return proc__write(pid, stage + STAGE_ON, &on, sizeof(on));
}

int staging__stop(pid_t pid, uint64_t stage, const struct staging_pos *pos,
		  struct staging_rest *rest)
{
	uint64_t cw[(STAGE_GEN - STAGE_W) / 8 + 1], w, gen;
	uint32_t off = 0;
	int err;

	memset(rest, 0, sizeof(*rest));
	err = proc__write(pid, stage + STAGE_ON, &off, sizeof(off));
	if (!err) /* (the page's profile functions give their slots back at their next event) */
		err = proc__write(pid, stage + STAGE_CFUNCS, &off, sizeof(off));
	if (!err) /* the count and the generation, in one read */
		err = proc__read(pid, stage + STAGE_W, cw, sizeof(cw));
	if (err)
		return err;
	w = cw[0];
	gen = cw[(STAGE_GEN - STAGE_W) / 8];
	if (w > STAGE_BUF_BYTES)
		w = STAGE_BUF_BYTES;
	/* (another generation: a thread held right after its flush, whose batch was copied) */
	if (gen != pos->gen || w <= pos->r)
		return 0;
	rest->data = malloc(w - pos->r);
	if (!rest->data)
		return -ENOMEM;
	err = proc__read(pid, stage + STAGE_BUF + pos->r, rest->data, w - pos->r);
	if (err) {
		free(rest->data);
		rest->data = NULL;
		return err;
	}
	rest->tid = pos->owner;
	rest->from = (uint32_t)pos->r;
	rest->bytes = (uint32_t)(w - pos->r);
	return 0;
}
