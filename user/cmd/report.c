// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyuprof report: the outputs of a recording again, from its raw file (--raw), byte for byte. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "base/log.h"
#include "cmd/cli.h"
#include "cmd/report.h"
#include "inject/hook.h"
#include "output/outputs.h"
#include "profile/raw.h"
#include "record/recorder.h"
#include "record/summary.h"

static bool calibrated; /* the raw file held a calibration, and it is applied */

/* report's raw_read callback: the calibration is taken (or left, --no-compensation) before the
 * events it applies to; everything else is the recorder's */
static int replay_record(void *ctx, void *data, size_t size)
{
	const struct raw_calib *rc = data;

	if (size < sizeof(__u32) || rc->type != RAW_CALIB)
		return recorder__handle(ctx, data, size);
	if (!raw_calib__size_ok(size))
		return -EBADMSG;
	if (!env.no_compensation) {
		struct raw_calib all = { 0 };
		struct compensation comp;

		memcpy(&all, rc, size); /* (an older one: what it lacks is 0) */
		comp = (struct compensation){ .call_ns = all.call_ns, .inside_ns = all.inside_ns,
					      .done_ns = all.done_ns, .ccall_ns = all.ccall_ns,
					      .cinside_ns = all.cinside_ns,
					      .gauge_ps = all.gauge_ps };

		profile__set_compensation(&comp);
		summary__compensation(&comp);
		calibrated = true;
	}
	return 0;
}

/* pyuprof report: the same outputs again, from a raw recording; no root, no target. */
int report__run(void)
{
	struct output_paths paths = {
		.prof = env.output, .svg = env.svg, .flamegraph = env.flamegraph,
		.collapsed = env.collapsed, .pprof = env.pprof, .trace = env.trace,
	};
	struct hook_state hooks = { 0 };
	struct recorder rec = { .hooks = &hooks };
	struct raw_header h;
	struct raw_end end;
	struct outputs out;
	const char *failed = NULL;
	char why[512] = "";
	uint64_t records;
	int err;

	err = outputs__open(&out, &paths, &failed);
	if (err) {
		if (failed)
			elog("cannot write %s: %s", failed, strerror(-err));
		return 1;
	}
	rec.prof = profile__new();
	if (!rec.prof) {
		outputs__abort(&out);
		return 1;
	}
	/* the trace needs the header's pid and start before the first event */
	err = raw__read_header(env.input, &h, why, sizeof(why));
	rec.target_version = h.python;
	rec.run = &out.run;
	out.run.pid = h.pid;
	rec.prof->pid = err ? 0 : h.pid;
	profile__set_cpu_clock(h.clock == RAW_CLOCK_THREAD_CPU);
	if (!err && h.clock == RAW_CLOCK_THREAD_CPU && env.trace) {
		snprintf(why, sizeof(why), "%s was recorded with --clock cpu: no --trace from it",
			 env.input);
		err = -EINVAL;
	}
	if (!err)
		err = outputs__start_trace(&out, rec.prof, h.pid, h.start_ns, env.trace_min_us);
	if (!err)
		err = raw__read(env.input, &h, &end, replay_record, &rec, &records, why,
			       sizeof(why));
	/* recorded with --no-compensation, or by a pyuprof that did not calibrate */
	if (!err && !env.no_compensation && !calibrated)
		wlog("%s holds no calibration: times are as recorded, probe cost included",
		     env.input);
	if (err) {
		if (*why)
			elog("%s", why);
		else if (rec.err)
			err = rec.err;
		else
			elog("cannot report on %s: %s", env.input, strerror(-err));
	} else {
		profile__finish(rec.prof, end.stop_ns);
		err = summary__conclude(&out, rec.prof, &hooks, &end.stats, h.python,
					h.flags & RAW_FLAG_EXIT_PROBE,
					(end.stop_ns - h.start_ns) / 1e9, NULL, 0, NULL);
	}
	outputs__abort(&out);
	profile__free(rec.prof);
	return err ? 1 : 0;
}

