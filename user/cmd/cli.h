/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command line: subcommands, their options, and the settings they produce. */
#ifndef __PYUPROF_CLI_H
#define __PYUPROF_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#define DEFAULT_TOP 20
#define DEFAULT_NODE_THRES 0.5 /* percent, as gprof2dot */
#define DEFAULT_EDGE_THRES 0.1

struct env {
	pid_t pid;	   /* attach mode: the target */
	char **command;	   /* launch mode: argv of the program, NULL-terminated */
	const char *input; /* report: the raw recording */
	double duration;   /* seconds; 0 = until stopped */
	const char *output; /* record: NULL = pyuprof-<pid>.prof; report: NULL = none */
	const char *svg, *flamegraph, *collapsed, *pprof, *trace, *raw;
	double node_thres, edge_thres;
	unsigned trace_min_us;
	bool threads;
	bool subprocesses; /* record: follow the processes the target starts */
	unsigned ringbuf_mb;
	int exits; /* record --exits: enum exits (probes.h) */
	bool no_compensation; /* times as recorded, probe cost included (calibrate.h) */
	bool cpu_clock;	      /* record --clock cpu: calls timed by their thread's CPU time */
	unsigned top;
	bool json; /* dump: JSON instead of text */
	bool quiet, verbose, debug;
	bool live;	 /* pyuprof top: a live view instead of outputs */
	double interval; /* pyuprof top: seconds between redraws */
};

extern struct env env;

enum command { CMD_RECORD = 1, CMD_REPORT, CMD_TOP, CMD_DUMP };

/* Parses argv; exits 64 (EX_USAGE) on a usage error, 0 after --help. Returns the command. */
enum command cli__parse(int argc, char **argv);

#endif /* __PYUPROF_CLI_H */
