// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: the marshal writer (user/output/marshal.c) round trip. Values (ints of every
 * size, floats of any bits, strs of any code points including lone surrogates, tuples, dicts
 * with tuple keys, nested) are built from the input and encoded; each is also described in a
 * canonical text as it is built. The oracle is a decoder written here for the subset, strict
 * as CPython's marshal.c is (counts, normalised long digits, UTF-8 with surrogatepass, no
 * bytes left over): its description of the bytes must equal the builder's.
 * With FUZZ_MARSHAL_PRINT=1 set, each input prints "HEX DESCRIPTION" instead, and
 * tests/fuzz/marshal_check.py has Python's own marshal.loads decode HEX and describe it the
 * same way (run-fuzz.sh does it for the corpus on every interpreter present).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include "fuzz.h"
#include "output/marshal.h"

struct desc {
	char *p;
	size_t n, cap;
};

static void dput(struct desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dput(struct desc *d, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (d->n + (size_t)k + 1 > d->cap) {
		d->cap = (d->n + (size_t)k + 1) * 2;
		d->p = realloc(d->p, d->cap);
		if (!d->p)
			abort();
	}
	va_start(ap, fmt);
	vsnprintf(d->p + d->n, (size_t)k + 1, fmt, ap);
	va_end(ap);
	d->n += (size_t)k;
}

static void dhex(struct desc *d, const unsigned char *s, size_t n)
{
	dput(d, "s");
	for (size_t i = 0; i < n; i++)
		dput(d, "%02x", s[i]);
	dput(d, ";");
}

/* ----- the builder ----- */

static const int64_t edges[] = { INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX,
				 (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1, 0, -1,
				 1ll << 45, -(1ll << 60), 32767, 32768 };

static void gen_scalar(struct fuzz_in *in, struct marshal_buf *b, struct desc *d, uint8_t op)
{
	switch (op % 4) {
	case 0: {
		uint64_t u = fuzz_u64(in) >> (fuzz_u8(in) % 64);
		/* negated as unsigned: -INT64_MIN is no int64_t (UBSan found it in CI) */
		int64_t v = (int64_t)(fuzz_u8(in) & 1 ? 0 - u : u);

		marshal__int(b, v);
		dput(d, "i%" PRId64 ";", v);
		break;
	}
	case 1: {
		int64_t v = edges[fuzz_u8(in) % (sizeof(edges) / sizeof(edges[0]))];

		marshal__int(b, v);
		dput(d, "i%" PRId64 ";", v);
		break;
	}
	case 2: {
		uint64_t bits = fuzz_u64(in);
		double v;

		memcpy(&v, &bits, sizeof(v));
		marshal__float(b, v);
		dput(d, "f%016" PRIx64 ";", bits);
		break;
	}
	default: {
		unsigned char s[4 * 40];
		size_t n = 0, k = fuzz_u8(in) % 40;

		for (size_t i = 0; i < k; i++) {
			uint8_t cls = fuzz_u8(in);
			uint32_t c = fuzz_u32(in);

			c = cls % 4 == 0 ? c % 0x80 : cls % 4 == 1 ? 0x80 + c % 0x780 :
			    cls % 4 == 2 ? 0x800 + c % 0xf800 : 0x10000 + c % 0x100000;
			if (c < 0x80) {
				s[n++] = (unsigned char)c;
			} else if (c < 0x800) {
				s[n++] = 0xc0 | c >> 6;
				s[n++] = 0x80 | (c & 0x3f);
			} else if (c < 0x10000) { /* surrogates too: surrogatepass */
				s[n++] = 0xe0 | c >> 12;
				s[n++] = 0x80 | ((c >> 6) & 0x3f);
				s[n++] = 0x80 | (c & 0x3f);
			} else {
				s[n++] = 0xf0 | c >> 18;
				s[n++] = 0x80 | ((c >> 12) & 0x3f);
				s[n++] = 0x80 | ((c >> 6) & 0x3f);
				s[n++] = 0x80 | (c & 0x3f);
			}
		}
		marshal__str(b, (const char *)s, n);
		dhex(d, s, n);
	}
	}
}

static void gen(struct fuzz_in *in, struct marshal_buf *b, struct desc *d, int depth)
{
	uint8_t op = fuzz_u8(in);
	uint32_t n, i;

	if (depth >= 6 || op % 6 < 4) {
		gen_scalar(in, b, d, op);
	} else if (op % 6 == 4) {
		n = fuzz_u8(in) % 6;
		marshal__tuple_begin(b, n);
		dput(d, "(");
		for (i = 0; i < n; i++)
			gen(in, b, d, depth + 1);
		dput(d, ")");
	} else {
		/* keys (i, scalar): distinct, so Python keeps every pair in order */
		n = fuzz_u8(in) % 5;
		marshal__dict_begin(b);
		dput(d, "{");
		for (i = 0; i < n; i++) {
			marshal__tuple_begin(b, 2);
			marshal__int(b, i);
			dput(d, "(i%u;", i);
			gen_scalar(in, b, d, fuzz_u8(in));
			dput(d, "):");
			gen(in, b, d, depth + 1);
		}
		marshal__dict_end(b);
		dput(d, "}");
	}
}

/* ----- the oracle: a strict decoder of the subset ----- */

struct rd {
	const unsigned char *p;
	size_t n;
};

static bool take(struct rd *r, size_t k, const unsigned char **out)
{
	if (r->n < k)
		return false;
	*out = r->p;
	r->p += k;
	r->n -= k;
	return true;
}

static bool le32(struct rd *r, int32_t *v)
{
	const unsigned char *p;

	if (!take(r, 4, &p))
		return false;
	*v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		       (uint32_t)p[3] << 24);
	return true;
}

/* UTF-8 as Python decodes it with surrogatepass */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], k = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
		uint32_t cp = c & (0x7f >> k);

		if ((c >= 0x80 && c < 0xc2) || c > 0xf4 || i + k >= n + (k == 0))
			return false;
		for (unsigned j = 1; j <= k; j++) {
			if (i + j >= n || (s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += k + 1;
	}
	return true;
}

static bool decode(struct rd *r, struct desc *d, int depth)
{
	const unsigned char *p;
	int32_t n;

	if (depth > 64 || !take(r, 1, &p))
		return false;
	switch (*p) {
	case 'i':
		if (!le32(r, &n))
			return false;
		dput(d, "i%" PRId32 ";", n);
		return true;
	case 'l': {
		unsigned __int128 mag = 0;
		int32_t k;

		if (!le32(r, &n) || n == 0 || n > 5 || n < -5)
			return false;
		k = n < 0 ? -n : n;
		if (!take(r, 2 * (size_t)k, &p))
			return false;
		for (int32_t i = k - 1; i >= 0; i--) {
			unsigned dg = p[2 * i] | p[2 * i + 1] << 8;

			if (dg > 0x7fff || (i == k - 1 && dg == 0)) /* as CPython refuses */
				return false;
			mag = mag << 15 | dg;
		}
		if (n > 0 ? mag > (unsigned __int128)INT64_MAX :
			    mag > (unsigned __int128)INT64_MAX + 1)
			return false;
		dput(d, "i%" PRId64 ";", n > 0 ? (int64_t)mag : (int64_t)(0 - (uint64_t)mag));
		return true;
	}
	case 'g': {
		uint64_t bits = 0;

		if (!take(r, 8, &p))
			return false;
		for (int i = 7; i >= 0; i--)
			bits = bits << 8 | p[i];
		dput(d, "f%016" PRIx64 ";", bits);
		return true;
	}
	case 'u':
		if (!le32(r, &n) || n < 0 || !take(r, (size_t)n, &p) || !utf8_ok(p, (size_t)n))
			return false;
		dhex(d, p, (size_t)n);
		return true;
	case '(':
		if (!le32(r, &n) || n < 0)
			return false;
		dput(d, "(");
		for (int32_t i = 0; i < n; i++)
			if (!decode(r, d, depth + 1))
				return false;
		dput(d, ")");
		return true;
	case '{':
		dput(d, "{");
		for (;;) {
			if (r->n && *r->p == '0') {
				r->p++, r->n--;
				dput(d, "}");
				return true;
			}
			if (!decode(r, d, depth + 1))
				return false;
			dput(d, ":");
			if (!decode(r, d, depth + 1))
				return false;
		}
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int print = -1;
	struct fuzz_in in = { data, size };
	struct desc want = { 0 }, got = { 0 };
	struct marshal_buf b;
	struct rd r;

	if (print < 0)
		print = getenv("FUZZ_MARSHAL_PRINT") != NULL;
	marshal__init(&b);
	dput(&want, "%s", "");
	dput(&got, "%s", "");
	gen(&in, &b, &want, 0);
	if (b.err)
		abort(); /* nothing here is too large */
	if (print) {
		for (size_t i = 0; i < b.len; i++)
			printf("%02x", b.data[i]);
		printf(" %s\n", want.p);
	} else {
		r = (struct rd){ b.data, b.len };
		if (!decode(&r, &got, 0) || r.n || strcmp(got.p, want.p)) {
			fprintf(stderr, "marshal round trip:\n want %s\n got  %s\n", want.p, got.p);
			abort();
		}
	}
	marshal__free(&b);
	free(want.p);
	free(got.p);
	return 0;
}
