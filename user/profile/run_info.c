// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The run's description for titles and legends: the target's command line, read once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "profile/run_info.h"

int run_info__read_command(struct run_info *r, int pid)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, r->command, sizeof(r->command) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	/* arguments end in NUL: spaces between them; control characters as '?' */
	while (n > 0 && !r->command[n - 1])
		n--;
	r->command[n] = 0;
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)r->command[i];

		if (!c)
			r->command[i] = ' ';
		else if (c < 0x20 || c == 0x7f)
			r->command[i] = '?';
	}
	return n ? 0 : -ENODATA;
}
