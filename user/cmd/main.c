// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyuprof: the commands, as cli.c parses them, and what runs each. */
#include <bpf/libbpf.h>
#include "base/log.h"
#include "cmd/cli.h"
#include "cmd/dump.h"
#include "cmd/record.h"
#include "cmd/report.h"

static int dump(void)
{
	return dump__run(env.pid, env.json);
}

static const struct {
	enum command cmd;
	int (*run)(void);
} commands[] = {
	{ CMD_RECORD, record__run },
	{ CMD_TOP, record__run }, /* a recording shown live */
	{ CMD_REPORT, report__run },
	{ CMD_DUMP, dump },
};

int main(int argc, char **argv)
{
	enum command cmd;

	log__start();
	cmd = cli__parse(argc, argv);

	log_level = env.debug ? LOG_DEBUG : env.verbose ? LOG_VERBOSE : env.quiet ? LOG_ERROR
										: LOG_INFO;
	libbpf_set_print(log__libbpf_print);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].cmd == cmd)
			return commands[i].run();
	return 64; /* cli_parse returns only the commands above */
}
