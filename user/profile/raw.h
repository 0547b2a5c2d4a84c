/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Raw recordings (record --raw, read by report): a fixed header, then a zlib (gzip) stream of
 * records, each a __u32 size and the record as it left the ring buffer, plus the records below
 * that only user space makes. Replayed through the same recorder, they give the same outputs.
 */
#ifndef __PYUPROF_RAW_H
#define __PYUPROF_RAW_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/outfile.h"
#include "profile/run_info.h"
#include "pyuprof.h"

#define RAW_MAGIC "PYUPROF\x01"
/* 3: ev_code carries co_qualname, RAW_COMMAND, RAW_CALIB, the CPU clock; older readers
 * refuse it by its number, and older recordings (a shorter ev_code) are refused here.
 * 4: EV_RETURN_DONE(_NONE), RAW_FLUSH, RAW_CALIB's done_ns (a version 3 RAW_CALIB is read
 * as done_ns 0).
 * 5: EV_RESUME
 * 6: C functions: EV_CFUNC, EV_CCALL, EV_CRETURN, EV_CSYNC
 * 7: RAW_CALIB's ccall_ns and cinside_ns (an older RAW_CALIB is read as 0: C calls as
 * recorded)
 * 8: RAW_GAUGE, RAW_CALIB's gauge_ps (an older RAW_CALIB is read as 0: its figures as they
 * are, whatever the gauges say) */
#define RAW_VERSION 8
#define RAW_VERSION_MIN 3
#define RAW_MAX_RECORD 4096

/* raw_header.clock of record --clock cpu: each thread's CPU time (not a clockid_t) */
#define RAW_CLOCK_THREAD_CPU 0x100

#define RAW_FLAG_EXIT_PROBE 1 /* returns came from USDT frame exits (3.11 builds with USDT) */

struct raw_header {
	char magic[8];
	__u32 version;
	__u32 pid;
	char python[32]; /* "3.12.1" */
	__u32 clock;	 /* the clock of every ts_ns: CLOCK_MONOTONIC, or RAW_CLOCK_THREAD_CPU */
	__u32 flags;
	__u64 start_ns;
};
_Static_assert(sizeof(struct raw_header) == 64, "raw_header layout");

enum raw_type {
	RAW_THREAD = 100, /* a thread's name (threading's, else comm), before its first event */
	RAW_END = 101,	  /* the stop, and what the BPF side counted */
	RAW_SEED = 102,	  /* a frame running at attach (seed.h), outermost first per thread */
	RAW_COMMAND = 103, /* the target's command line (run_info.h), after the header */
	RAW_CALIB = 104,   /* the overhead calibration (calibrate.h), before any event; absent
			    * in recordings made with --no-compensation */
	RAW_PAUSE = 105,   /* a thread waited for pyuprof (profile__pause), after its records */
	RAW_FLUSH = 106,   /* struct raw_pause: a code flush's time (profile__flush), before the
			    * call that made it */
	RAW_GAUGE = 107,   /* struct raw_gauge: the speed gauge at a batch's start (stage.h,
			    * profile__gauge), before the batch's records */
};

struct raw_gauge {
	__u32 type;
	__u32 tid;
	__u64 ts_ns; /* when it ran (where ev_call has its time) */
	__u64 ps;    /* how long it took, in ps */
};

struct raw_pause {
	__u32 type;
	__u32 tid;
	__u64 ns;
};

struct raw_command {
	__u32 type;
	__u32 pad;
	char command[RUN_COMMAND_LEN];
};

/* The events stay as recorded; report subtracts these unless told --no-compensation. */
struct raw_calib {
	__u32 type;
	__u32 pad;
	__u64 call_ns, inside_ns;
	__u64 done_ns; /* (version 4) */
	__u64 ccall_ns, cinside_ns; /* (version 7) */
	__u64 gauge_ps; /* (version 8) the gauge's reading the figures hold at (0: none) */
};
#define RAW_CALIB_V3_SIZE 24
#define RAW_CALIB_V4_SIZE 32
#define RAW_CALIB_V7_SIZE 48
/* Whether size is a struct raw_calib's of some version (an older one lacks the fields after). */
static inline bool raw_calib__size_ok(size_t size)
{
	return size == sizeof(struct raw_calib) || size == RAW_CALIB_V3_SIZE ||
	       size == RAW_CALIB_V4_SIZE || size == RAW_CALIB_V7_SIZE;
}

struct raw_seed {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 frame;
	__u64 code;
};

struct raw_thread {
	__u32 type;
	__u32 tid;
	char name[64];
};

struct raw_end {
	__u32 type;
	__u32 pad;
	__u64 stop_ns;
	struct pyuprof_stats stats;
};
#define RAW_END_V4_SIZE 72 /* (versions 3, 4: no lost C calls and returns) */

/* Writes the header and starts compressing. Returns 0 or -errno. */
int raw__begin(struct outfile *o, const struct raw_header *h);
/* Appends one record. Returns 0 or -errno. */
int raw__record(struct outfile *o, const void *data, uint32_t size);

/* Reads and checks path's header alone. Returns 0, -EBADMSG or -errno, with why set. */
int raw__read_header(const char *path, struct raw_header *h, char *why, size_t why_len);

/*
 * Reads path: checks the header (into *h), calls fn(ctx, record, size) for every record but
 * the end, which goes into *end. Returns 0; -EBADMSG (not a raw recording, or a corrupt
 * record), -ENODATA (truncated: *records tells how many were read), -errno from fn or I/O.
 * why gets one line for the user.
 */
int raw__read(const char *path, struct raw_header *h, struct raw_end *end,
	     int (*fn)(void *ctx, void *data, size_t size), void *ctx, uint64_t *records,
	     char *why, size_t why_len);

#endif /* __PYUPROF_RAW_H */
