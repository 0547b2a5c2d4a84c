// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Raw recordings: header, then size-prefixed records in a gzip stream; every size checked. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "profile/raw.h"

int raw__begin(struct outfile *o, const struct raw_header *h)
{
	int err = outfile__write(o, h, sizeof(*h));
	int fd;

	if (err)
		return err;
	fd = dup(o->fd); /* gzclose closes its own */
	o->gz = fd < 0 ? NULL : gzdopen(fd, "wb1"); /* fast: it runs while recording */
	if (!o->gz) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	/* compressed by a thread of its own, not by the reader of the events (if it cannot
	 * start: by the reader, as before) */
	outfile__write_behind(o);
	return 0;
}

int raw__record(struct outfile *o, const void *data, uint32_t size)
{
	int err = outfile__write(o, &size, sizeof(size));

	return err ? err : outfile__write(o, data, size);
}

/* The only size a record of this type can have (0: no such type). */
_Static_assert(offsetof(struct raw_end, stats.lost_ccalls) == RAW_END_V4_SIZE, "raw_end layout");

static size_t size_of(__u32 type)
{
	switch (type) {
	case EV_CALL:
	case EV_INLINE_CALL:
	case EV_EXIT:
		return sizeof(struct ev_call);
	case EV_RETURN:
	case EV_RETURN_DONE:
	case EV_RETURN_DONE_NONE:
		return sizeof(struct ev_return);
	case EV_RESUME:
		return sizeof(struct ev_resume);
	case EV_CODE:
		return sizeof(struct ev_code);
	case EV_CFUNC:
		return sizeof(struct ev_cfunc);
	case EV_CCALL:
	case EV_CRETURN:
		return sizeof(struct ev_ccall);
	case EV_CSYNC:
		return sizeof(struct ev_return);
	case EV_REQUEST:
		return sizeof(struct ev_request);
	case RAW_THREAD:
		return sizeof(struct raw_thread);
	case RAW_END:
		return sizeof(struct raw_end);
	case RAW_SEED:
		return sizeof(struct raw_seed);
	case RAW_COMMAND:
		return sizeof(struct raw_command);
	case RAW_CALIB:
		return sizeof(struct raw_calib);
	case RAW_PAUSE:
	case RAW_FLUSH:
		return sizeof(struct raw_pause);
	case RAW_GAUGE:
		return sizeof(struct raw_gauge);
	default:
		return 0;
	}
}

/* Opens path and checks its header; returns the descriptor, at the records, or -errno. */
static int open_checked(const char *path, struct raw_header *h, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot read %s: %s", path, strerror(errno));
		return err;
	}
	if (read(fd, h, sizeof(*h)) != sizeof(*h) || memcmp(h->magic, RAW_MAGIC, 8)) {
		snprintf(why, why_len, "%s is not a pyuprof raw recording", path);
		close(fd);
		return -EBADMSG;
	}
	if (h->version < RAW_VERSION_MIN || h->version > RAW_VERSION) {
		snprintf(why, why_len, "%s is a raw recording of format %u; this pyuprof reads %u "
			 "to %u", path, h->version, RAW_VERSION_MIN, RAW_VERSION);
		close(fd);
		return -EBADMSG;
	}
	h->python[sizeof(h->python) - 1] = 0;
	return fd;
}

int raw__read_header(const char *path, struct raw_header *h, char *why, size_t why_len)
{
	int fd = open_checked(path, h, why, why_len);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* Decompressed bytes read ahead: one gzread per chunk, not two per record. */
#define READ_CHUNK (256 * 1024)

int raw__read(const char *path, struct raw_header *h, struct raw_end *end,
	     int (*fn)(void *ctx, void *data, size_t size), void *ctx, uint64_t *records,
	     char *why, size_t why_len)
{
	_Alignas(8) unsigned char rec[RAW_MAX_RECORD];
	unsigned char *buf = malloc(READ_CHUNK + RAW_MAX_RECORD + sizeof(__u32));
	size_t len = 0, pos = 0;
	bool more = true; /* the stream may hold more */
	unsigned char magic[2];
	gzFile gz = NULL;
	int fd, n, err = 0;
	__u32 size;

	*records = 0;
	if (!buf)
		return -ENOMEM;
	fd = open_checked(path, h, why, why_len);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	/* zlib reads data without a gzip header as it is: junk would be parsed as records */
	if (pread(fd, magic, sizeof(magic), sizeof(*h)) != sizeof(magic) ||
	    magic[0] != 0x1f || magic[1] != 0x8b) {
		snprintf(why, why_len, "%s is not a pyuprof raw recording: its events are not "
			 "compressed", path);
		close(fd);
		free(buf);
		return -EBADMSG;
	}
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		free(buf);
		return -ENOMEM;
	}
	gzbuffer(gz, READ_CHUNK);
	for (;;) {
		/* at least one whole record (or the stream's end) in buf[pos, len) */
		if (more && len - pos < sizeof(size) + RAW_MAX_RECORD) {
			memmove(buf, buf + pos, len - pos);
			len -= pos;
			pos = 0;
			n = gzread(gz, buf + len, READ_CHUNK);
			if (n < 0) {
				err = -EBADMSG;
				break;
			}
			len += (size_t)n;
			more = n > 0;
		}
		if (len - pos < sizeof(size)) {
			err = -ENODATA; /* no end record: the recording stopped short */
			break;
		}
		memcpy(&size, buf + pos, sizeof(size));
		if (size < sizeof(__u32) || size > sizeof(rec)) {
			err = -EBADMSG;
			break;
		}
		if (len - pos - sizeof(size) < size) {
			err = -ENODATA;
			break;
		}
		/* aligned for the handlers' struct access */
		memcpy(rec, buf + pos + sizeof(size), size);
		pos += sizeof(size) + size;
		if (size_of(*(__u32 *)rec) != size &&
		    !(*(__u32 *)rec == RAW_CALIB && raw_calib__size_ok(size)) &&
		    !(*(__u32 *)rec == RAW_END && size == RAW_END_V4_SIZE)) {
			err = -EBADMSG;
			break;
		}
		if (*(__u32 *)rec == RAW_END) {
			memset(end, 0, sizeof(*end));
			memcpy(end, rec, size);
			break;
		}
		++*records;
		err = fn(ctx, rec, size);
		if (err)
			break;
	}
	gzclose(gz);
	free(buf);
	if (err == -ENODATA)
		snprintf(why, why_len, "%s is truncated: it ends after %llu events, before the "
			 "recording's end", path, (unsigned long long)*records);
	else if (err == -EBADMSG)
		snprintf(why, why_len, "%s is corrupt after %llu events", path,
			 (unsigned long long)*records);
	return err;
}
