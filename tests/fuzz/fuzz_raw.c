// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: raw recordings (user/profile/raw.c) and the event handler (user/record/recorder.c) into
 * the profile builder, the .prof encoder and the stack folding, as `pyuprof report` runs them.
 * The first input byte picks the mode:
 *   0      the rest is the whole file: header, gzip check, zlib, record framing;
 *   1      a valid header, then the rest gzip-compressed: the record framing and sizes;
 *   2..255 well-formed records built from the rest, hostile in content (huge string lengths,
 *          unknown kinds, returns without calls, code ids never sent, time going backwards,
 *          seeds and exits of frames never seen), through a gzip'd file (even) or handed
 *          to the handler directly as the ring buffer does (odd: also EV_THREAD and types
 *          the reader refuses).
 */
#include <errno.h>
#include <zlib.h>
#include "fuzz.h"
#include "inject/hook.h"
#include "output/out_collapsed.h"
#include "output/out_pstats.h"
#include "profile/profile.h"
#include "profile/raw.h"
#include "record/recorder.h"

#define MAX_RECORDS 4096

static uint64_t code_id(struct fuzz_in *in)
{
	uint8_t b = fuzz_u8(in);

	if (b == 0xff)
		return fuzz_u64(in); /* anything at all */
	return b ? 0x7f0000001000ull + (b % 24) * 0x100 : 0;
}

static uint64_t frame_id(struct fuzz_in *in)
{
	uint8_t b = fuzz_u8(in);

	return b ? 0x7e0000000000ull + (b % 40) * 0x60 : 0;
}

static uint32_t str_len(struct fuzz_in *in)
{
	uint8_t b = fuzz_u8(in);

	return b >= 0xf0 ? fuzz_u32(in) : b; /* sometimes far more than was copied */
}

/* One well-formed record of a type picked by the input; returns its size. */
static size_t make_record(struct fuzz_in *in, uint64_t *ts, void *rec, bool direct)
{
	static const uint8_t kinds[] = { STR_ASCII, STR_LATIN1, STR_UCS2, STR_UCS4, STR_UNREADABLE,
					 3 };
	uint8_t op = fuzz_u8(in) % (direct ? 11 : 9);
	uint32_t tid = 100 + fuzz_u8(in) % 4;

	*ts += (uint64_t)(int64_t)(int16_t)fuzz_u16(in); /* now and then backwards */
	memset(rec, 0, RAW_MAX_RECORD);
	switch (op) {
	case 0:
	case 1:
	case 2: {
		struct ev_call *c = rec;

		c->type = op == 0 ? EV_CALL : op == 1 ? EV_EXIT : EV_INLINE_CALL;
		c->tid = tid;
		c->ts_ns = *ts;
		c->code = code_id(in);
		c->frame = frame_id(in);
		for (int i = 0; i < CHAIN_LEN; i++) {
			c->chain[i] = frame_id(in);
			c->chain_code[i] = code_id(in);
		}
		c->back = frame_id(in);
		c->flags = fuzz_u8(in);
		return sizeof(*c);
	}
	case 3: {
		struct ev_return *r = rec;

		r->type = EV_RETURN;
		r->tid = tid;
		r->ts_ns = *ts;
		return sizeof(*r);
	}
	case 4: {
		struct ev_code *e = rec;

		e->type = EV_CODE;
		e->tid = tid;
		e->ts_ns = *ts;
		e->code = code_id(in);
		e->firstlineno = (int32_t)fuzz_u32(in);
		e->filename_len = str_len(in);
		e->name_len = str_len(in);
		e->filename_kind = kinds[fuzz_u8(in) % sizeof(kinds)];
		e->name_kind = kinds[fuzz_u8(in) % sizeof(kinds)];
		memcpy(e->type_name, fuzz_u8(in) == 0x42 ? "cake" : "code", 4);
		fuzz_copy(in, e->filename, fuzz_u8(in) % (sizeof(e->filename) + 1));
		fuzz_copy(in, e->name, fuzz_u8(in) % (sizeof(e->name) + 1));
		return sizeof(*e);
	}
	case 5: {
		struct raw_thread *t = rec;

		t->type = RAW_THREAD;
		t->tid = tid;
		fuzz_copy(in, t->name, fuzz_u8(in) % (sizeof(t->name) + 1));
		return sizeof(*t);
	}
	case 6: {
		struct raw_seed *s = rec;

		s->type = RAW_SEED;
		s->tid = tid;
		s->ts_ns = *ts;
		s->frame = frame_id(in);
		s->code = code_id(in);
		return sizeof(*s);
	}
	case 7: {
		struct ev_request *q = rec;

		q->type = EV_REQUEST;
		q->tid = tid;
		q->ts_ns = *ts;
		q->addr = fuzz_u64(in);
		q->what = fuzz_u8(in) % 6;
		q->signalled = fuzz_u8(in) & 1;
		return sizeof(*q);
	}
	case 8: { /* the end: what follows is never read */
		struct raw_end *e = rec;

		e->type = RAW_END;
		e->stop_ns = *ts;
		return sizeof(*e);
	}
	case 9: {
		struct ev_thread *t = rec;

		t->type = EV_THREAD;
		t->tid = tid;
		t->ts_ns = *ts;
		t->code = code_id(in);
		t->self = fuzz_u64(in);
		return sizeof(*t);
	}
	default: { /* a type nobody knows, of any size the ring buffer allows */
		struct ev_return *r = rec;

		r->type = 8 + fuzz_u8(in);
		r->tid = tid;
		r->ts_ns = *ts;
		return sizeof(*r) + fuzz_u8(in) % (RAW_MAX_RECORD - sizeof(*r) + 1);
	}
	}
}

/* What report does after reading: finish, encode the .prof, fold the stacks. */
static void conclude(struct profile *p, uint64_t stop_ns, bool per_thread)
{
	struct marshal_buf b;
	struct fold f;

	profile__finish(p, stop_ns);
	marshal__init(&b);
	pstats__encode(p, &b);
	marshal__free(&b);
	if (!fold__build(p, per_thread, &f))
		fold__free(&f);
}

static int read_file(const void *file, size_t len, bool per_thread)
{
	struct hook_state hooks = { 0 };
	struct recorder rec = { .hooks = &hooks, .target_version = "3.12" };
	struct raw_header h;
	struct raw_end end;
	char path[64], why[512];
	uint64_t records;
	int fd, err;

	fd = fuzz_memfile(file, len, path, sizeof(path));
	if (fd < 0)
		return 0;
	rec.prof = profile__new();
	if (rec.prof) {
		err = raw__read(path, &h, &end, recorder__handle, &rec, &records, why, sizeof(why));
		if (!err)
			conclude(rec.prof, end.stop_ns, per_thread);
		profile__free(rec.prof);
	}
	close(fd);
	return 0;
}

/* header + gzip(stream) into *out (malloc'd); returns its length, 0 on failure. A small
 * window and hash: the harness's own cost per input stays low */
static size_t make_file(const void *stream, size_t len, unsigned char **out)
{
	struct raw_header h = { .magic = RAW_MAGIC, .version = RAW_VERSION, .pid = 1,
				.python = "3.12.1", .clock = 1, .start_ns = 1000 };
	z_stream z = { 0 };
	unsigned char *buf;
	size_t cap;

	if (deflateInit2(&z, 1, Z_DEFLATED, 9 + 16, 1, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	cap = sizeof(h) + deflateBound(&z, (uLong)len);
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return 0;
	}
	memcpy(buf, &h, sizeof(h));
	z.next_in = (Bytef *)stream;
	z.avail_in = (uInt)len;
	z.next_out = buf + sizeof(h);
	z.avail_out = (uInt)(cap - sizeof(h));
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(buf);
		return 0;
	}
	deflateEnd(&z);
	*out = buf;
	return sizeof(h) + z.total_out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	_Alignas(8) unsigned char rec[RAW_MAX_RECORD];
	unsigned char *stream, *file = NULL;
	uint8_t mode = fuzz_u8(&in);
	size_t len = 0, n, file_len, cap;
	uint64_t ts = 1000;

	if (mode == 0)
		return read_file(in.p, in.n, false);
	if (mode == 1) {
		file_len = make_file(in.p, in.n, &file);
		if (file_len)
			read_file(file, file_len, true);
		free(file);
		return 0;
	}
	if (mode & 1) { /* straight to the handler, as from the ring buffer */
		struct hook_state hooks = { 0 };
		struct recorder r = { .hooks = &hooks, .target_version = "3.12" };

		r.prof = profile__new();
		for (n = 0; r.prof && in.n && n < MAX_RECORDS; n++) {
			size_t sz = make_record(&in, &ts, rec, true);

			if (recorder__handle(&r, rec, sz))
				break;
		}
		if (r.prof && !r.err)
			conclude(r.prof, ts, mode & 2);
		profile__free(r.prof);
		return 0;
	}
	/* records in the file are at most an ev_code: a bound from the input's length */
	cap = ((in.n < MAX_RECORDS ? in.n : MAX_RECORDS) + 1) *
	      (sizeof(uint32_t) + sizeof(struct ev_code));
	stream = malloc(cap);
	if (!stream)
		return 0;
	for (n = 0; in.n && n < MAX_RECORDS; n++) {
		uint32_t sz = (uint32_t)make_record(&in, &ts, rec, false);

		memcpy(stream + len, &sz, sizeof(sz));
		memcpy(stream + len + sizeof(sz), rec, sz);
		len += sizeof(sz) + sz;
	}
	if (!(mode & 2)) { /* most files end properly */
		struct raw_end e = { .type = RAW_END, .stop_ns = ts };
		uint32_t sz = sizeof(e);

		memcpy(stream + len, &sz, sizeof(sz));
		memcpy(stream + len + sizeof(sz), &e, sz);
		len += sizeof(sz) + sz;
	}
	file_len = make_file(stream, len, &file);
	if (file_len)
		read_file(file, file_len, mode & 4);
	free(file);
	free(stream);
	return 0;
}
