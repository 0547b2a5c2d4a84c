// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Logging: one-line messages on stderr, filtered by the level chosen on the command line. */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include "base/clock.h"
#include "base/log.h"

enum log_level log_level = LOG_INFO;
static uint64_t start_ns;

void log__start(void)
{
	start_ns = clock__mono_ns();
}

void log__msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	flockfile(stderr); /* (one line whole: a load logs from a thread of its own) */
	fputs("pyuprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}

void log__step(const char *fmt, ...)
{
	uint64_t now = clock__mono_ns();
	va_list ap;

	if (log_level < LOG_DEBUG)
		return;
	va_start(ap, fmt);
	flockfile(stderr);
	fprintf(stderr, "pyuprof: +%.1f ms: ", (now - start_ns) / 1e6);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}

const char *log__errstr(int err)
{
	static __thread char buf[128];

	if (err < 0)
		err = -err;
	if (libbpf_strerror(-err, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "%s", strerror(err));
	return buf;
}

int log__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_DEBUG)
		return 0;
	if (level == LIBBPF_INFO && log_level < LOG_VERBOSE)
		return 0;
	int n;

	flockfile(stderr);
	fputs("pyuprof: ", stderr); /* libbpf adds its own "libbpf: " */
	n = vfprintf(stderr, fmt, args);
	funlockfile(stderr);
	return n;
}
