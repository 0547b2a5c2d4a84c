// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Temporary file + rename, so a reader never sees a partial profile; an existing file is
 * replaced in one step, and an existing symlink to one is replaced, not followed. A character
 * device or a FIFO (/dev/null, /dev/stdout, a named pipe) is written to as it is: renaming
 * over it would put a regular file in its place, for a root pyuprof /dev/null's for the whole
 * machine. Anything else that is not a regular file (a directory, a block device) is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/outfile.h"

/* Under sudo, the files belong to the user who ran it, not to root. */
static void give_to_sudo_user(int fd)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	char *end;
	long u, g;

	if (!uid || !gid || geteuid() != 0)
		return;
	u = strtol(uid, &end, 10);
	if (*end || u < 0)
		return;
	g = strtol(gid, &end, 10);
	if (*end || g < 0)
		return;
	/* a file system without ownership (vfat): the file stays root's, no harm */
	(void)!fchown(fd, (uid_t)u, (gid_t)g);
}

int outfile__open(struct outfile *o, const char *path)
{
	size_t len = strlen(path);
	struct stat st;
	mode_t mask;

	o->fd = -1;
	o->gz = NULL;
	o->tmp[0] = 0;
	o->bytes = 0;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path))
		return -ENAMETOOLONG;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
			return -EINVAL;
		/* a FIFO nobody reads fails (ENXIO) instead of blocking the start */
		o->fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (o->fd < 0 || fcntl(o->fd, F_SETFL, 0)) {
			int err = -errno;

			outfile__abort(o);
			return err;
		}
	} else {
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
		give_to_sudo_user(o->fd);
	}
	if (len > 3 && !strcmp(path + len - 3, ".gz")) {
		int fd = dup(o->fd); /* gzclose closes its own */

		o->gz = fd < 0 ? NULL : gzdopen(fd, "wb");
		if (!o->gz) {
			if (fd >= 0)
				close(fd);
			outfile__abort(o);
			return -ENOMEM;
		}
	}
	return 0;
}

int outfile__write(struct outfile *o, const void *buf, size_t len)
{
	const char *p = buf;

	o->bytes += len;
	if (o->gz) {
		while (len) {
			unsigned n = len > (1u << 30) ? 1u << 30 : (unsigned)len;

			if (gzwrite(o->gz, p, n) != (int)n)
				return -EIO;
			p += n;
			len -= n;
		}
		return 0;
	}

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

	if (o->gz && gzclose(o->gz) != Z_OK)
		err = -EIO;
	o->gz = NULL;

	/* (a device or pipe written as it is has no temporary file, nothing to sync or rename) */
	if (!err && o->tmp[0] && fsync(o->fd) && errno != EINVAL)
		err = -errno;
	if (close(o->fd) && !err)
		err = -errno;
	o->fd = -1;
	if (!err && o->tmp[0] && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		outfile__abort(o);
	else
		o->tmp[0] = 0;
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (o->gz)
		gzclose(o->gz);
	o->gz = NULL;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}
