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
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/outfile.h"
#include "base/quiet_thread.h"

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
	o->wb = NULL;
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

/* Writes buf into o's file (through its gzip stream, if any). */
static int write_now(struct outfile *o, const void *buf, size_t len)
{
	const char *p = buf;

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

/*
 * Writing behind: the caller's bytes are copied into chunks, and full chunks are written (and
 * compressed) by a thread of their own, at the lowest priority: the caller (the reader of a
 * recording's events) then costs the target nothing more than the copy, where deflating 50-60
 * bytes a call at its pace took the CPU from the target's threads (a call in 4 threads ~300 ns
 * with --raw). At most WB_CHUNKS wait: a writer that falls that far behind makes the caller wait.
 */
#define WB_CHUNK (1u << 20)
#define WB_CHUNKS 64

struct write_behind {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *queue[WB_CHUNKS];
	size_t len[WB_CHUNKS];
	unsigned head, n; /* the queue's first chunk and its length */
	char *cur;	  /* the chunk being filled by the caller */
	size_t cur_len;
	bool closing;
	int err;	  /* the writer's first error */
};

static void *write_behind_run(void *arg)
{
	struct outfile *o = arg;
	struct write_behind *wb = o->wb;
	char *chunk;
	size_t len;
	int err;

	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&wb->lock);
	for (;;) {
		while (!wb->n && !wb->closing)
			pthread_cond_wait(&wb->cond, &wb->lock);
		if (!wb->n)
			break;
		chunk = wb->queue[wb->head];
		len = wb->len[wb->head];
		pthread_mutex_unlock(&wb->lock);
		err = wb->err ? 0 : write_now(o, chunk, len);
		free(chunk);
		pthread_mutex_lock(&wb->lock);
		if (err && !wb->err)
			wb->err = err;
		wb->head = (wb->head + 1) % WB_CHUNKS;
		wb->n--;
		pthread_cond_broadcast(&wb->cond);
	}
	pthread_mutex_unlock(&wb->lock);
	return NULL;
}

int outfile__write_behind(struct outfile *o)
{
	struct write_behind *wb = calloc(1, sizeof(*wb));

	if (!wb)
		return -ENOMEM;
	pthread_mutex_init(&wb->lock, NULL);
	pthread_cond_init(&wb->cond, NULL);
	o->wb = wb;
	if (quiet_thread__start(&wb->thread, write_behind_run, o)) {
		o->wb = NULL;
		free(wb);
		return -EAGAIN;
	}
	return 0;
}

/* Queues the chunk being filled (waiting for room). Returns the writer's error, if any. */
static int queue_chunk(struct write_behind *wb)
{
	int err;

	pthread_mutex_lock(&wb->lock);
	while (wb->n == WB_CHUNKS && !wb->err)
		pthread_cond_wait(&wb->cond, &wb->lock);
	err = wb->err;
	if (!err && wb->cur_len) {
		wb->queue[(wb->head + wb->n) % WB_CHUNKS] = wb->cur;
		wb->len[(wb->head + wb->n) % WB_CHUNKS] = wb->cur_len;
		wb->n++;
		wb->cur = NULL;
		wb->cur_len = 0;
		pthread_cond_broadcast(&wb->cond);
	}
	pthread_mutex_unlock(&wb->lock);
	return err;
}

static int write_behind(struct write_behind *wb, const void *buf, size_t len)
{
	const char *p = buf;
	int err;

	while (len) {
		size_t n;

		if (!wb->cur && !(wb->cur = malloc(WB_CHUNK)))
			return -ENOMEM;
		n = WB_CHUNK - wb->cur_len < len ? WB_CHUNK - wb->cur_len : len;
		memcpy(wb->cur + wb->cur_len, p, n);
		wb->cur_len += n;
		p += n;
		len -= n;
		if (wb->cur_len == WB_CHUNK && (err = queue_chunk(wb)))
			return err;
	}
	return 0;
}

/* Ends writing behind: what is queued written (drop: thrown away). Returns the writer's error. */
static int end_write_behind(struct outfile *o, bool drop)
{
	struct write_behind *wb = o->wb;
	int err;

	if (!wb)
		return 0;
	err = drop ? 0 : queue_chunk(wb);
	pthread_mutex_lock(&wb->lock);
	if (drop && !wb->err)
		wb->err = -ECANCELED; /* (the writer skips the rest) */
	wb->closing = true;
	pthread_cond_broadcast(&wb->cond);
	pthread_mutex_unlock(&wb->lock);
	pthread_join(wb->thread, NULL);
	if (!err && !drop)
		err = wb->err;
	free(wb->cur);
	pthread_mutex_destroy(&wb->lock);
	pthread_cond_destroy(&wb->cond);
	free(wb);
	o->wb = NULL;
	return err;
}

int outfile__write(struct outfile *o, const void *buf, size_t len)
{
	o->bytes += len;
	return o->wb ? write_behind(o->wb, buf, len) : write_now(o, buf, len);
}

int outfile__commit(struct outfile *o)
{
	int err = end_write_behind(o, false);

	if (o->gz && gzclose(o->gz) != Z_OK && !err)
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
	end_write_behind(o, true);
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
