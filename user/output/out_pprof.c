// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profile.proto, written field by field with protobuf.c. Field numbers are profile.proto's
 * (google/pprof, proto/profile.proto): Profile 1 sample_type, 2 sample, 4 location, 5 function,
 * 6 string_table, 10 duration_nanos, 11 period_type, 12 period, 14 default_sample_type;
 * ValueType 1 type, 2 unit; Sample 1 location_id (packed, leaf first), 2 value (packed),
 * 3 label; Label 1 key, 2 str, 3 num; Location 1 id, 4 line; Line 1 function_id, 2 line;
 * Function 1 id, 2 name, 4 filename, 5 start_line. Strings are indices into string_table,
 * whose entry 0 must be "". system_name is left empty: pprof demangles a function whose
 * system_name equals its name, and its C++ simplification cuts "<module>" and "<lambda>" to "".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/hashmap.h"
#include "output/out_pprof.h"
#include "output/protobuf.h"

/* The string table: each distinct string once, in order of first use. */
struct strtab {
	const char **s;
	uint32_t n, cap;
	struct u64_map index; /* hash -> id + 1, probed on odd steps on a collision */
};

static int64_t intern(struct strtab *t, const char *s)
{
	uint64_t k = hash_bytes(s, strlen(s), 0) | 1, *slot;

	for (;; k += 2) {
		slot = u64_map__get(&t->index, k);
		if (!slot)
			break;
		if (!strcmp(t->s[*slot - 1], s))
			return (int64_t)(*slot - 1);
	}
	if (array_grow((void **)&t->s, &t->cap, sizeof(*t->s), t->n + 1))
		return -ENOMEM;
	slot = u64_map__upsert(&t->index, k);
	if (!slot)
		return -ENOMEM;
	t->s[t->n] = s;
	*slot = ++t->n;
	return t->n - 1;
}

/* A ValueType {type, unit} as field `field` of the profile. */
static void value_type(struct pb_buf *b, struct pb_buf *m, uint32_t field, int64_t type,
		       int64_t unit)
{
	m->len = 0;
	pb__uint(m, 1, (uint64_t)type);
	pb__uint(m, 2, (uint64_t)unit);
	pb__bytes(b, field, m->data, m->len);
}

static void label(struct pb_buf *b, struct pb_buf *m, int64_t key, int64_t str, int64_t num)
{
	m->len = 0;
	pb__uint(m, 1, (uint64_t)key);
	if (str >= 0)
		pb__uint(m, 2, (uint64_t)str);
	else
		pb__uint(m, 3, (uint64_t)num);
	pb__bytes(b, 3, m->data, m->len);
}

static int encode(const struct profile *p, struct pb_buf *b)
{
	struct strtab st = { 0 };
	struct pb_buf m, sub, ids;
	int64_t s_calls, s_count, s_wall, s_ns, k_thread, k_tid, k_pid, *thread_str = NULL;
	uint32_t i, j;
	int err = -ENOMEM;

	pb__init(&m);
	pb__init(&sub);
	pb__init(&ids);
	u64_map__init(&st.index);
	thread_str = calloc(p->nthreads + 1, sizeof(*thread_str));
	if (!thread_str || intern(&st, "") < 0)
		goto out;
	s_calls = intern(&st, "calls");
	s_count = intern(&st, "count");
	/* the clock the times were taken with (record --clock) */
	s_wall = intern(&st, profile__cpu_clock() ? "cpu" : "wall");
	s_ns = intern(&st, "nanoseconds");
	k_thread = intern(&st, "thread");
	k_tid = intern(&st, "tid");
	k_pid = intern(&st, "pid");
	if (s_calls < 0 || s_count < 0 || s_wall < 0 || s_ns < 0 || k_thread < 0 || k_tid < 0 ||
	    k_pid < 0)
		goto out;
	/* a thread without a name keeps only its tid label */
	for (i = 0; i < p->nthreads; i++) {
		thread_str[i] = p->threads[i]->name[0] ? intern(&st, p->threads[i]->name) : -1;
		if (thread_str[i] < -1)
			goto out;
	}
	value_type(b, &m, 1, s_calls, s_count);
	value_type(b, &m, 1, s_wall, s_ns);

	/* one sample per call path: its frames from the leaf up, values [calls, self ns] */
	for (i = 0; i < p->tree.n; i++) {
		const struct ct_node *n = &p->tree.nodes[i];
		const struct thread *t = p->threads[n->thread];

		if (n->func == CT_NONE || (!n->calls && !n->self_ns))
			continue;
		m.len = ids.len = 0;
		for (j = i; j != CT_NONE && p->tree.nodes[j].func != CT_NONE;
		     j = p->tree.nodes[j].parent)
			pb__varint(&ids, (uint64_t)p->tree.nodes[j].func + 1);
		pb__bytes(&m, 1, ids.data, ids.len);
		ids.len = 0;
		pb__varint(&ids, n->calls);
		pb__varint(&ids, n->self_ns);
		pb__bytes(&m, 2, ids.data, ids.len);
		if (thread_str[n->thread] >= 0)
			label(&m, &sub, k_thread, thread_str[n->thread], 0);
		label(&m, &sub, k_tid, -1, t->tid);
		if (t->pid || p->pid)
			label(&m, &sub, k_pid, -1, t->pid ? t->pid : p->pid);
		pb__bytes(b, 2, m.data, m.len);
	}
	/* location i + 1 is function i + 1 at its first line */
	for (i = 0; i < p->nfuncs; i++) {
		m.len = sub.len = 0;
		pb__uint(&m, 1, (uint64_t)i + 1);
		pb__uint(&sub, 1, (uint64_t)i + 1);
		pb__uint(&sub, 2, (uint64_t)(int64_t)p->funcs[i].firstlineno);
		pb__bytes(&m, 4, sub.data, sub.len);
		pb__bytes(b, 4, m.data, m.len);
	}
	for (i = 0; i < p->nfuncs; i++) {
		int64_t name = intern(&st, p->funcs[i].name);
		int64_t file = intern(&st, p->funcs[i].filename);

		if (name < 0 || file < 0)
			goto out;
		m.len = 0;
		pb__uint(&m, 1, (uint64_t)i + 1);
		pb__uint(&m, 2, (uint64_t)name);
		pb__uint(&m, 4, (uint64_t)file);
		pb__uint(&m, 5, (uint64_t)(int64_t)p->funcs[i].firstlineno);
		pb__bytes(b, 5, m.data, m.len);
	}
	for (i = 0; i < st.n; i++)
		pb__bytes(b, 6, st.s[i], strlen(st.s[i]));
	if (p->last_ns > p->first_ns)
		pb__uint(b, 10, p->last_ns - p->first_ns);
	value_type(b, &m, 11, s_wall, s_ns);
	pb__uint(b, 12, 1);
	pb__uint(b, 14, (uint64_t)s_wall);
	err = b->err ? b->err : m.err ? m.err : sub.err ? sub.err : ids.err;
out:
	free(thread_str);
	free(st.s);
	u64_map__free(&st.index);
	pb__free(&m);
	pb__free(&sub);
	pb__free(&ids);
	return err;
}

int pprof__encode(const struct profile *p, unsigned char **buf, size_t *len)
{
	struct pb_buf b;
	int err;

	pb__init(&b);
	err = encode(p, &b);
	if (err) {
		pb__free(&b);
		return err;
	}
	*buf = b.data;
	*len = b.len;
	return 0;
}

/* gzip of len bytes into *out (malloc'd); the header has no name and time 0, as gzip -n. */
static int gzip_buf(const unsigned char *in, size_t len, unsigned char **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap;
	int ret;

	if (len > UINT32_MAX / 2) /* zlib counts in uInt */
		return -EFBIG;
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	ret = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

int pprof__write(const struct profile *p, struct outfile *out)
{
	unsigned char *raw = NULL, *gz = NULL;
	size_t len = 0, gz_len = 0;
	int err = pprof__encode(p, &raw, &len);

	if (!err && out->gz) /* the file compresses what is written */
		err = outfile__write(out, raw, len);
	else if (!err && !(err = gzip_buf(raw, len, &gz, &gz_len)))
		err = outfile__write(out, gz, gz_len);
	free(raw);
	free(gz);
	return err;
}
