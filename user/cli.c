// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* argp parsers: the top-level command table and `pyuprof record`. */
#include <argp.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "cli.h"
#include "pyuprof.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct env env = {
	.ringbuf_mb = DEFAULT_RINGBUF_MB,
	.top = DEFAULT_TOP,
};

const char *argp_program_version = "pyuprof 0.1";
const char *argp_program_bug_address = "the pyuprof issue tracker";

enum { OPT_RINGBUF = 0x100, OPT_DEBUG, OPT_TOP };

static const char record_doc[] =
	"Record every Python call of a CPython 3.8-3.13 process and write a cProfile-compatible "
	"profile.\n\n"
	"  pyuprof record [OPTIONS] -- COMMAND [ARGS...]   start COMMAND and record it\n"
	"  pyuprof record [OPTIONS] -p PID [-d SECONDS]    record a running process\n\n"
	"Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE). Every call of a Python function "
	"is counted, with tottime, cumtime and callers as cProfile computes them; C functions "
	"(builtins) are not traced, so their time counts in the Python function that called them. "
	"On 3.11+ pyuprof switches off the interpreter's inlining of Python-to-Python calls while it "
	"records (through the PEP 523 eval_frame hook, which it restores when it stops).\n\n"
	"When recording ends the profile is written (load it with `python3 -m pstats FILE`, "
	"snakeviz or gprof2dot) and the top functions by cumulative time are printed on stderr.";

static const char record_examples[] =
	"Examples:\n"
	"  sudo pyuprof record -o train.prof -- python3 train.py --epochs 1\n"
	"  sudo pyuprof record -p 1234 -d 60 -o job.prof\n"
	"Exit status: the program's own in launch mode (128+N if killed by signal N); "
	"0 in attach mode; 1 if pyuprof failed; 64 on a usage error.";

static const struct argp_option record_options[] = {
	{ NULL, 0, NULL, 0, "Target:", 1 },
	{ "pid", 'p', "PID", 0, "Attach to the running Python process PID", 1 },
	{ "duration", 'd', "SECONDS", 0,
	  "Stop after SECONDS (decimals allowed); default: until Ctrl-C, SIGTERM, SIGHUP or the "
	  "target exits", 1 },
	{ NULL, 0, NULL, 0, "Output:", 2 },
	{ "output", 'o', "FILE", 0, "Write the pstats profile to FILE (default pyuprof-PID.prof)", 2 },
	{ "top", OPT_TOP, "N", 0, "Print the top N functions by cumulative time (default "
	  STR(DEFAULT_TOP) ", 0 for none)", 2 },
	{ NULL, 0, NULL, 0, "Tuning and messages:", 3 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0,
	  "Size of the BPF ring buffer in MiB, a power of two (default " STR(DEFAULT_RINGBUF_MB)
	  "); raise it if events are lost", 3 },
	{ "quiet", 'q', NULL, 0, "Print nothing but errors", 3 },
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
		if (errno || end == arg || *end || !isfinite(env.duration) || env.duration <= 0)
			usage_error(state, "invalid duration: %s (want seconds > 0)", arg);
		break;
	case 'o':
		if (!*arg)
			usage_error(state, "empty output path");
		env.output = arg;
		break;
	case OPT_TOP:
		env.top = (unsigned)parse_long(state, "--top value", arg, 0, 100000);
		break;
	case OPT_RINGBUF:
		v = parse_long(state, "ring buffer size", arg, 1, 4096);
		if (v & (v - 1))
			usage_error(state, "invalid ring buffer size: %s (want a power of two)", arg);
		env.ringbuf_mb = (unsigned)v;
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
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp record_argp = {
	.options = record_options,
	.parser = record_parse,
	.args_doc = "[-- COMMAND [ARGS...]]",
	.doc = NULL,
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
		   "  record    record a Python process, or a command it starts\n\n"
		   "Run 'pyuprof record --help' for the options.\n");
}

enum command cli_parse(int argc, char **argv)
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
