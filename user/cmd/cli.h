/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command line: subcommands, their options, and the settings they produce. */
#ifndef __PYUPROF_CLI_H
#define __PYUPROF_CLI_H

#include "base/env.h"

#define DEFAULT_TOP 20
#define DEFAULT_NODE_THRES 0.5 /* percent, as gprof2dot */
#define DEFAULT_EDGE_THRES 0.1

enum command { CMD_RECORD = 1, CMD_REPORT, CMD_TOP, CMD_DUMP };

/* Parses argv; exits 64 (EX_USAGE) on a usage error, 0 after --help. Returns the command. */
enum command cli__parse(int argc, char **argv);

#endif /* __PYUPROF_CLI_H */
