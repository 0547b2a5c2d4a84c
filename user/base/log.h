/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Logging to stderr (stdout may carry the profiled program's output). Every line starts with
 * "pyuprof: ". elog always prints, wlog unless --quiet, vlog with -v, dlog with --debug.
 */
#ifndef __PYUPROF_LOG_H
#define __PYUPROF_LOG_H

#include <bpf/libbpf.h>
#include <stdarg.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_VERBOSE, LOG_DEBUG };

extern enum log_level log_level;

void log__msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define elog(...) log__msg(LOG_ERROR, __VA_ARGS__)
#define wlog(...) log__msg(LOG_WARN, __VA_ARGS__)
#define ilog(...) log__msg(LOG_INFO, __VA_ARGS__)
#define vlog(...) log__msg(LOG_VERBOSE, __VA_ARGS__)
#define dlog(...) log__msg(LOG_DEBUG, __VA_ARGS__)

/*
 * With --debug: a line that says when a step of a recording's start or end was done, in ms since
 * pyuprof started (log__start), so that the fixed part of a recording's cost can be read step by
 * step from one run (bench/whole_command.sh).
 */
void log__start(void);
void log__step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define dlog_step(...) log__step(__VA_ARGS__)

/* Text for a negative errno, including libbpf's own codes. */
const char *log__errstr(int err);

/* For libbpf_set_print: libbpf's debug output only with --debug. */
int log__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args);

#endif /* __PYUPROF_LOG_H */
