// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Temporary file + rename, so a reader never sees a partial profile. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "outfile.h"

int outfile__open(struct outfile *o, const char *path)
{
	mode_t mask;

	o->fd = -1;
	o->tmp[0] = 0;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path))
		return -ENAMETOOLONG;
	snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int err = -errno;

		o->tmp[0] = 0;
		return err;
	}
	/* mkstemp makes 0600; a profile is an ordinary file */
	mask = umask(0);
	umask(mask);
	fchmod(o->fd, 0666 & ~mask);
	return 0;
}

int outfile__write(struct outfile *o, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(o->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (fsync(o->fd) && errno != EINVAL)
		err = -errno;
	if (close(o->fd) && !err)
		err = -errno;
	o->fd = -1;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		outfile__abort(o);
	else
		o->tmp[0] = 0;
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}
