// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* argp parsers: the top-level command table, `pyuprof record`, `report` and `top`. */
#include <argp.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "cmd/cli.h"
#include "pyuprof.h"
#include "record/probes.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_RINGBUF_MB 2048
#define MAX_DURATION_S 1e9 /* 31 years */

struct env env = {
	.ringbuf_mb = DEFAULT_RINGBUF_MB,
	.top = DEFAULT_TOP,
	.node_thres = DEFAULT_NODE_THRES,
	.edge_thres = DEFAULT_EDGE_THRES,
	.interval = 1.0,
};

const char *argp_program_version = "pyuprof 0.1";
const char *argp_program_bug_address = "the pyuprof issue tracker";

enum {
	OPT_RINGBUF = 0x100,
	OPT_DEBUG,
	OPT_TOP,
	OPT_SVG,
	OPT_FLAMEGRAPH,
	OPT_COLLAPSED,
	OPT_TRACE,
	OPT_TRACE_MIN,
	OPT_RAW,
	OPT_THREADS,
	OPT_NODE_THRES,
	OPT_EDGE_THRES,
	OPT_ROOT,
	OPT_SUBPROCESSES,
	OPT_EXITS,
	OPT_INTERVAL,
	OPT_PPROF,
	OPT_JSON,
	OPT_NO_COMPENSATION,
	OPT_CLOCK,
	OPT_NO_BUILTINS,
	OPT_RECALIBRATE,
};

static const char record_doc[] =
	"Record every Python call of a CPython 3.8-3.15 process and write a cProfile-compatible "
	"profile.\n\n"
	"  pyuprof record [OPTIONS] -- COMMAND [ARGS...]   start COMMAND and record it\n"
	"  pyuprof record [OPTIONS] -p PID [-d SECONDS]    record a running process\n\n"
	"Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE). Every call of a Python function "
	"is counted, with tottime, cumtime and callers as cProfile computes them, and so is every "
	"call of a C function (builtins, methods of C types, extensions' functions), as cProfile's "
	"default counts them (--no-builtins leaves them out). "
	"pyuprof maps a small page of its own code into the target, its probe trampoline, and sets "
	"it as each interpreter's PEP 523 eval_frame hook while it records (restored when it stops; "
	"the page stays); on 3.11+ that also switches off the inlining of Python-to-Python "
	"calls.\n\n"
	"When recording ends the profile is written (load it with `python3 -m pstats FILE`, "
	"snakeviz or gprof2dot), with any of the pictures asked for, and the top functions by "
	"cumulative time are printed on stderr. With --raw the events themselves are kept, and "
	"`pyuprof report` draws every output again from them later.";

static const char record_examples[] =
	"Examples:\n"
	"  sudo pyuprof record -o train.prof -- python3 train.py --epochs 1\n"
	"  sudo pyuprof record -p 1234 -d 60 -o job.prof\n"
	"Exit status: the program's own in launch mode (128+N if killed by signal N); "
	"0 in attach mode; 1 if pyuprof failed; 64 on a usage error.";

/*
 * The outputs record and report share (an argp child of both): argp sorts options by group and
 * name, so they show among each command's own "Output" options.
 */
static const struct argp_option output_options[] = {
	{ "svg", OPT_SVG, "FILE", 0, "Also draw the call graph (graphviz) as SVG", 2 },
	{ "node-thres", OPT_NODE_THRES, "PCT", 0,
	  "Leave out of the call graph functions under PCT% of the total time (default "
	  STR(DEFAULT_NODE_THRES) ")", 2 },
	{ "edge-thres", OPT_EDGE_THRES, "PCT", 0,
	  "Leave out of the call graph calls under PCT% of the total time (default "
	  STR(DEFAULT_EDGE_THRES) ")", 2 },
	{ "root", OPT_ROOT, "FUNC", 0,
	  "Draw in the call graph only FUNC and the calls made under it, as shares of FUNC's "
	  "total time, from the exact stacks (default: the whole profile). FUNC: a function's "
	  "name or qualified name as its box shows it (main, Tracer.trace), or FILE:NAME to "
	  "tell apart functions of one name (train.py:main)", 2 },
	{ "flamegraph", OPT_FLAMEGRAPH, "FILE", 0,
	  "Also draw an interactive flame graph (SVG) of the exact stacks", 2 },
	{ "threads", OPT_THREADS, NULL, 0,
	  "One root per thread in the flame graph and collapsed stacks, named as threading "
	  "names it, else by the kernel (default: merged)", 2 },
	{ "collapsed", OPT_COLLAPSED, "FILE", 0,
	  "Also write folded stacks (self time in µs) for flamegraph.pl, inferno, speedscope", 2 },
	{ "pprof", OPT_PPROF, "FILE", 0,
	  "Also write a pprof profile (gzipped profile.proto: calls and self wall time per "
	  "call path) for go tool pprof, Pyroscope, Parca", 2 },
	{ "trace", OPT_TRACE, "FILE", 0,
	  "Also write a Chrome trace (JSON; gzip if FILE ends in .gz) for Perfetto", 2 },
	{ "trace-min-us", OPT_TRACE_MIN, "N", 0,
	  "Leave calls shorter than N µs out of the trace (default 0)", 2 },
	{ "no-compensation", OPT_NO_COMPENSATION, NULL, 0,
	  "Times as recorded, the probes' own cost included (default: the cost of a call's "
	  "probes, calibrated at the start of the recording, is subtracted)", 2 },
	{},
};

static const struct argp_option record_options[] = {
	{ NULL, 0, NULL, 0, "Target:", 1 },
	{ "pid", 'p', "PID", 0, "Attach to the running Python process PID", 1 },
	{ "duration", 'd', "SECONDS", 0,
	  "Stop after SECONDS (decimals allowed); default: until Ctrl-C, SIGTERM, SIGHUP, "
	  "SIGQUIT or the target exits", 1 },
	{ "subprocesses", OPT_SUBPROCESSES, NULL, 0,
	  "Also record the processes the target starts (fork, fork+exec, multiprocessing, "
	  "subprocess), each from its first call: one profile per process (FILE.PID.prof, and "
	  "PPROF.PID.pb.gz with --pprof) and their merge in FILE; the pictures show the merge. "
	  "Not with --trace or --raw", 1 },
	{ NULL, 0, NULL, 0, "Output:", 2 },
	{ "output", 'o', "FILE", 0, "Write the pstats profile to FILE (default pyuprof-PID.prof)", 2 },
	{ "top", OPT_TOP, "N", 0, "Print the top N functions by cumulative time (default "
	  STR(DEFAULT_TOP) ", 0 for none)", 2 },
	{ "clock", OPT_CLOCK, "wall|cpu", 0,
	  "Time calls by wall time (default) or by their thread's CPU time, leaving out time "
	  "spent blocked (sleep, I/O, locks, the GIL). Not with --trace", 2 },
	{ "no-builtins", OPT_NO_BUILTINS, NULL, 0,
	  "Leave C functions (builtins, methods of C types, extension functions) out of the profile, "
	  "their time in their callers', as cProfile's builtins=False (default: each is an entry "
	  "of its own)", 2 },
	{ "raw", OPT_RAW, "FILE", 0,
	  "Also keep the recorded events (compressed), for `pyuprof report`", 2 },
	{ NULL, 0, NULL, 0, "Tuning and messages:", 3 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0,
	  "Size of the BPF ring buffer in MiB, a power of two up to " STR(MAX_RINGBUF_MB)
	  " (default " STR(DEFAULT_RINGBUF_MB) "); raise it if events are lost (the batch mode "
	  "loses none: a full one makes the target wait)", 3 },
	{ "exits", OPT_EXITS, "HOW", 0,
	  "Where calls and returns are probed: batch (pyuprof's code page in the target, set as "
	  "the PEP 523 hook, stages calls and returns there and the kernel copies them out once "
	  "per batch: tens of ns a call; needs an invariant TSC), trampoline (the same page with "
	  "a probe before and after each call: ~1 us a call), uretprobe (the entry and a "
	  "uretprobe: returns past 64 nested calls are closed from the callers), ret (the entry "
	  "and the ret instruction, single-stepped: ~10 us), usdt (Debian's 3.11 frame exit). "
	  "Default: batch; usdt where the build has the probe; trampoline where batch is not "
	  "possible (--clock cpu, no invariant TSC); a page that cannot be placed falls back to "
	  "uretprobe, with a warning", 3 },
	{ "recalibrate", OPT_RECALIBRATE, NULL, 0,
	  "Measure the probes' cost again (default: as measured for this interpreter, recording "
	  "mode, CPU, kernel and pyuprof build by an earlier recording, kept in /var/cache/pyuprof, "
	  "and scaled by the machine's speed now)", 3 },
	{ "quiet", 'q', NULL, 0,
	  "Print nothing but errors (no live status line, table or summary)", 3 },
	{ "verbose", 'v', NULL, 0, "Print progress details", 3 },
	{ "debug", OPT_DEBUG, NULL, 0, "Print libbpf and tracer debug output", 3 },
	{},
};

/* Our own usage errors: one "pyuprof: " line, argp's hint, exit 64 (EX_USAGE, as argp). */
static void __attribute__((format(printf, 2, 3), noreturn))
usage_error(struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("pyuprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	argp_state_help(state, stderr, ARGP_HELP_STD_ERR);
	exit(64); /* not reached: ARGP_HELP_STD_ERR exits */
}

static long parse_long(struct argp_state *state, const char *what, const char *arg, long min,
		       long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		usage_error(state, "invalid %s: %s", what, arg);
	return v;
}

static double parse_pct(struct argp_state *state, const char *what, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0 || v > 100)
		usage_error(state, "invalid %s: %s (want a percentage from 0 to 100)", what, arg);
	return v;
}

/* The shared output options (output_options). */
static error_t output_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_SVG:
		env.svg = arg;
		break;
	case OPT_FLAMEGRAPH:
		env.flamegraph = arg;
		break;
	case OPT_COLLAPSED:
		env.collapsed = arg;
		break;
	case OPT_PPROF:
		env.pprof = arg;
		break;
	case OPT_TRACE:
		env.trace = arg;
		break;
	case OPT_TRACE_MIN:
		env.trace_min_us = (unsigned)parse_long(state, "--trace-min-us value", arg, 0,
							 INT_MAX);
		break;
	case OPT_THREADS:
		env.threads = true;
		break;
	case OPT_NO_COMPENSATION:
		env.no_compensation = true;
		break;
	case OPT_NODE_THRES:
		env.node_thres = parse_pct(state, "--node-thres", arg);
		break;
	case OPT_EDGE_THRES:
		env.edge_thres = parse_pct(state, "--edge-thres", arg);
		break;
	case OPT_ROOT:
		if (!*arg)
			usage_error(state, "empty --root");
		env.root = arg;
		break;
	case ARGP_KEY_END:
		/* the flame graph has its own way there: click the function */
		if (env.root && !env.svg)
			usage_error(state, "--root draws the call graph: give --svg too");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp output_argp = { .options = output_options, .parser = output_parse };

static const struct argp_child output_children[] = {
	{ &output_argp, 0, NULL, 0 },
	{},
};

/* Options several commands have, each with its own help text (-o, --top, -q, -v, --debug):
 * what record's and report's parsers do not know themselves. */
static error_t common_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'o':
		if (!*arg)
			usage_error(state, "empty output path");
		env.output = arg;
		break;
	case OPT_TOP:
		env.top = (unsigned)parse_long(state, "--top value", arg, 0, 100000);
		break;
	case 'q':
		env.quiet = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case OPT_DEBUG:
		env.debug = env.verbose = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	char *end;
	long v;

	switch (key) {
	case 'p':
		env.pid = (pid_t)parse_long(state, "PID", arg, 1, INT_MAX);
		break;
	case 'd':
		errno = 0;
		env.duration = strtod(arg, &end);
		/* at most MAX_DURATION_S: the deadline in ns must fit in 64 bits */
		if (errno || end == arg || *end || !isfinite(env.duration) || env.duration <= 0 ||
		    env.duration > MAX_DURATION_S)
			usage_error(state, "invalid duration: %s (want seconds > 0, at most %g)", arg,
				    MAX_DURATION_S);
		break;
	case OPT_RINGBUF:
		/* the map's size in bytes is a u32: 2048 MiB is the largest power of two */
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > MAX_RINGBUF_MB || (v & (v - 1)))
			usage_error(state, "invalid ring buffer size: %s (want a power of two from 1 "
				    "to " STR(MAX_RINGBUF_MB) " MiB)", arg);
		env.ringbuf_mb = (unsigned)v;
		break;
	case OPT_RAW:
		env.raw = arg;
		break;
	case OPT_SUBPROCESSES:
		env.subprocesses = true;
		break;
	case OPT_RECALIBRATE:
		env.recalibrate = true;
		break;
	case OPT_EXITS:
		env.exits = exits__parse(arg);
		if (env.exits < 0)
			usage_error(state, "invalid --exits: %s (want trampoline, batch, uretprobe, "
				    "ret or usdt)", arg);
		break;
	case OPT_NO_BUILTINS:
		env.no_builtins = true;
		break;
	case OPT_CLOCK:
		if (strcmp(arg, "wall") && strcmp(arg, "cpu"))
			usage_error(state, "invalid --clock: %s (want wall or cpu)", arg);
		env.cpu_clock = !strcmp(arg, "cpu");
		break;
	case ARGP_KEY_ARG:
		/* the first word that is not an option starts the command; the rest is its own */
		env.command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (env.pid && env.command)
			usage_error(state, "give either --pid or a command, not both");
		if (!env.pid && !env.command)
			usage_error(state, "nothing to record: give --pid PID or -- COMMAND");
		/* a timeline needs one clock for all threads */
		if (env.cpu_clock && env.trace)
			usage_error(state, "--trace draws wall time: not with --clock cpu");
		/* both stream the events of one process as they come */
		if (env.subprocesses && (env.trace || env.raw))
			usage_error(state, "--subprocesses cannot be combined with %s yet",
				    env.trace ? "--trace" : "--raw");
		break;
	default:
		return common_parse(key, arg, state);
	}
	return 0;
}

static const struct argp record_argp = {
	.options = record_options,
	.parser = record_parse,
	.args_doc = "[-- COMMAND [ARGS...]]",
	.doc = NULL,
	.children = output_children,
};

static const struct argp_option report_options[] = {
	{ NULL, 0, NULL, 0, "Outputs (any combination):", 2 },
	{ "output", 'o', "FILE", 0, "Write the pstats profile to FILE", 2 },
	{ "top", OPT_TOP, "N", 0, "Print the top N functions by cumulative time (default "
	  STR(DEFAULT_TOP) ", 0 for none)", 2 },
	{ NULL, 0, NULL, 0, "Messages:", 3 },
	{ "quiet", 'q', NULL, 0, "Print nothing but errors", 3 },
	{ "verbose", 'v', NULL, 0, "Print progress details", 3 },
	{ "debug", OPT_DEBUG, NULL, 0, "Print debug output", 3 },
	{},
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_ARG:
		if (env.input)
			usage_error(state, "one raw recording at a time");
		env.input = arg;
		break;
	case ARGP_KEY_END:
		if (!env.input)
			usage_error(state, "give the raw recording to report on (record it with --raw)");
		break;
	default:
		return common_parse(key, arg, state);
	}
	return 0;
}

static const struct argp report_argp = {
	.options = report_options,
	.parser = report_parse,
	.args_doc = "FILE.raw",
	.children = output_children,
	.doc = "Draw the outputs of `pyuprof record` again from a raw recording (--raw): the same "
	       "files, byte for byte. Needs neither root nor the target.\v"
	       "Example:\n  pyuprof report run.raw -o run.prof --flamegraph run.svg",
};

static const struct argp_option top_options[] = {
	{ "pid", 'p', "PID", 0, "The running Python process to watch (required)", 1 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0, "Redraw every SECONDS (default 1)", 1 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0,
	  "Size of the BPF ring buffer in MiB, a power of two (default " STR(DEFAULT_RINGBUF_MB)
	  ")", 2 },
	{ "verbose", 'v', NULL, 0, "Print progress details (after the view closes)", 2 },
	{ "debug", OPT_DEBUG, NULL, 0, "Print libbpf and tracer debug output", 2 },
	{},
};

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'p':
	case OPT_RINGBUF:
		return record_parse(key, arg, state);
	case 'v':
	case OPT_DEBUG:
		return common_parse(key, arg, state);
	case OPT_INTERVAL:
		errno = 0;
		env.interval = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(env.interval) || env.interval < 0.1 ||
		    env.interval > 3600)
			usage_error(state, "invalid interval: %s (want 0.1 to 3600 seconds)", arg);
		break;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument: %s (pyuprof top watches a running "
				   "process: -p PID)", arg);
	case ARGP_KEY_END:
		if (!env.pid)
			usage_error(state, "nothing to watch: give --pid PID");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option dump_options[] = {
	{ "pid", 'p', "PID", 0, "The running Python process to look at", 1 },
	{ "json", OPT_JSON, NULL, 0, "Print JSON: a list of threads with their frames", 1 },
	{ "verbose", 'v', NULL, 0, "Also say how long the target was stopped (on stderr)", 1 },
	{},
};

static error_t dump_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		env.pid = (pid_t)parse_long(state, "PID", arg, 1, INT_MAX);
		break;
	case OPT_JSON:
		env.json = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument: %s", arg);
		break;
	case ARGP_KEY_END:
		if (!env.pid)
			usage_error(state, "give the process to dump: --pid PID");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp top_argp = {
	.options = top_options,
	.parser = top_parse,
	.doc = "Watch a running Python process live: a full-screen view, redrawn every interval, "
	       "of its functions by own time (tottime) and by calls over the last interval and in "
	       "total, with calls per second and lost events. Every call is counted, as `record` "
	       "counts it; times show when a call returns. Keys: o, c, t, n choose the order (own "
	       "time or calls, last interval or total); q quits: pyuprof detaches and the process "
	       "runs on as before. Nothing is written. Needs root, and a terminal.\v"
	       "Example:\n  sudo pyuprof top -p 1234",
};

static const struct argp dump_argp = {
	.options = dump_options,
	.parser = dump_parse,
	.doc = "Print every thread's Python stack in a running CPython 3.8-3.15 process, as "
	       "`py-spy dump` does: per thread its kernel tid, whether it was running (active) "
	       "or waiting (idle) and whether it held the GIL, its threading name, then its "
	       "frames, innermost first, each as `function (file:line)` with the line running "
	       "now. The target's threads are stopped (ptrace) only while their frames are read, "
	       "then let go. Needs root (or CAP_SYS_PTRACE).\v"
	       "Example:\n  sudo pyuprof dump -p 1234\n"
	       "Exit status: 0; 1 if the stacks could not be read; 64 on a usage error.",
};

static char *join_doc(void)
{
	static char buf[sizeof(record_doc) + sizeof(record_examples) + 2];

	snprintf(buf, sizeof(buf), "%s\v%s", record_doc, record_examples);
	return buf;
}

static void top_usage(FILE *f)
{
	fprintf(f, "Usage: pyuprof COMMAND [OPTIONS]\n\n"
		   "A profiler for CPython built on eBPF uprobes: exact call counts and times of "
		   "every Python call,\nrecorded from outside the process.\n\n"
		   "Commands:\n"
		   "  record    record a Python process, or a command it starts\n"
		   "  report    draw the outputs again from a raw recording (record --raw)\n"
		   "  top       watch a running Python process live, full screen\n"
		   "  dump      print every thread's Python stack in a running process now\n\n"
		   "Run 'pyuprof COMMAND --help' for the options.\n");
}

enum command cli__parse(int argc, char **argv)
{
	struct argp argp = record_argp;

	if (argc < 2) {
		top_usage(stderr);
		exit(64);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		top_usage(stdout);
		exit(0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", argp_program_version);
		exit(0);
	}
	if (!strcmp(argv[1], "report")) {
		argv[1] = "pyuprof report";
		argp_parse(&report_argp, argc - 1, argv + 1, 0, NULL, NULL);
		return CMD_REPORT;
	}
	if (!strcmp(argv[1], "top")) {
		argv[1] = "pyuprof top";
		argp_parse(&top_argp, argc - 1, argv + 1, 0, NULL, NULL);
		env.live = true;
		return CMD_TOP;
	}
	if (!strcmp(argv[1], "dump")) {
		argv[1] = "pyuprof dump";
		argp_parse(&dump_argp, argc - 1, argv + 1, 0, NULL, NULL);
		return CMD_DUMP;
	}
	if (strcmp(argv[1], "record")) {
		fprintf(stderr, "pyuprof: unknown command '%s' (try 'pyuprof --help')\n", argv[1]);
		exit(64);
	}
	argp.doc = join_doc();
	argv[1] = "pyuprof record"; /* argp names the program after it in usage and hints */
	/* ARGP_IN_ORDER: options after the command's name belong to the command */
	argp_parse(&argp, argc - 1, argv + 1, ARGP_IN_ORDER, NULL, NULL);
	return CMD_RECORD;
}
