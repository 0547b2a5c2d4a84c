// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: the string decoders. pystr__to_utf8 (user/target/pystr.c) turns the raw
 * characters BPF copied out of a str (any kind, any claimed length, cut anywhere) into UTF-8;
 * thread_name__is_bootstrap (user/target/thread_name.c) matches decoded names. The output must be
 * NUL-terminated within the buffer, valid UTF-8 (surrogates as marshal's surrogatepass
 * writes them, which Python decodes), and the same for the same input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "fuzz.h"
#include "pyuprof.h"
#include "target/pystr.h"
#include "target/thread_name.h"

/* UTF-8 as CPython's surrogatepass accepts it: well-formed sequences, surrogates allowed. */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i], k, cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		k = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 0;
		if (!k || c > 0xf4 || i + k >= n)
			return false;
		cp = c & (0x3f >> k);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t kinds[] = { STR_ASCII, STR_LATIN1, STR_UCS2, STR_UCS4,
					 STR_UNREADABLE };
	struct fuzz_in in = { data, size };
	uint8_t kind_b = fuzz_u8(&in), out_b = fuzz_u8(&in);
	uint32_t len = fuzz_u32(&in);
	uint8_t kind = kind_b < 0xf0 ? kinds[kind_b % sizeof(kinds)] : kind_b;
	size_t out_len = out_b % 2 ? out_b : FUNCNAME_BYTES * 4 + 8, n, m;
	char *out = malloc(out_len + 1), *again = malloc(out_len + 1);
	/* the raw bytes in a buffer of their own size: ASan sees any read past them */
	uint8_t *raw = malloc(in.n ? in.n : 1);

	if (!out || !again || !raw)
		goto done;
	memcpy(raw, in.p, in.n);
	out[out_len] = 'X';
	n = pystr__to_utf8(raw, in.n, len, kind, out, out_len);
	if (out_len) {
		/* (a NUL character of the str may come first: names are C strings after) */
		if (n >= out_len || out[n] || out[out_len] != 'X')
			abort();
		if (!utf8_ok((const unsigned char *)out, n))
			abort();
		m = pystr__to_utf8(raw, in.n, len, kind, again, out_len);
		if (m != n || memcmp(out, again, n))
			abort();
		(void)thread_name__is_bootstrap(out, out);
		(void)thread_name__is_bootstrap("/usr/lib/python3.12/threading.py", out);
	}
done:
	free(out);
	free(again);
	free(raw);
	return 0;
}
