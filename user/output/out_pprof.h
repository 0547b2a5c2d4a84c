/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pprof output: a gzipped profile.proto (github.com/google/pprof, proto/profile.proto), the
 * format of `go tool pprof`, Pyroscope, Parca and Cloud Profiler. One sample per distinct call
 * path of the call tree, valued [calls, wall nanoseconds of self time], labelled with its
 * thread's name, tid and pid; one function and one location per Python function.
 */
#ifndef __PYUPROF_OUT_PPROF_H
#define __PYUPROF_OUT_PPROF_H

#include <stddef.h>
#include "base/outfile.h"
#include "profile/profile.h"

/* Encodes the finished profile as profile.proto bytes (not compressed) into *buf (malloc'd).
 * Returns 0 or -ENOMEM. */
int pprof__encode(const struct profile *p, unsigned char **buf, size_t *len);

/* Writes it to out, gzipped (by out itself when its name ends in ".gz"). Returns 0 or -errno. */
int pprof__write(const struct profile *p, struct outfile *out);

#endif /* __PYUPROF_OUT_PPROF_H */
