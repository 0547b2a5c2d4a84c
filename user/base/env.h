/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The settings of one run of pyuprof, as the command line gave them (cmd/cli.c fills them). */
#ifndef __PYUPROF_ENV_H
#define __PYUPROF_ENV_H

#include <stdbool.h>
#include <sys/types.h>

struct env {
	pid_t pid;	   /* attach mode: the target */
	char **command;	   /* launch mode: argv of the program, NULL-terminated */
	const char *input; /* report: the raw recording */
	double duration;   /* seconds; 0 = until stopped */
	const char *output; /* record: NULL = pyuprof-<pid>.prof; report: NULL = none */
	const char *svg, *flamegraph, *collapsed, *pprof, *trace, *raw;
	double node_thres, edge_thres;
	const char *root; /* --root: the call graph of the calls under this function */
	unsigned trace_min_us;
	bool threads;
	bool subprocesses; /* record: follow the processes the target starts */
	unsigned ringbuf_mb;
	int exits; /* record --exits: enum exits (probes.h) */
	bool no_compensation; /* times as recorded, probe cost included (calibrate.h) */
	bool recalibrate;     /* calibrate again, whatever figures are kept (calibrate.h) */
	bool cpu_clock;	      /* record --clock cpu: calls timed by their thread's CPU time */
	bool no_builtins;     /* record --no-builtins: no C functions (cProfile's builtins=False) */
	unsigned top;
	bool json; /* dump: JSON instead of text */
	bool quiet, verbose, debug;
	bool live;	 /* pyuprof top: a live view instead of outputs */
	double interval; /* pyuprof top: seconds between redraws */
};

extern struct env env;

#endif /* __PYUPROF_ENV_H */
