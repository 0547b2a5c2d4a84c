// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython's compact str kinds (1, 2 or 4 bytes per character) to UTF-8. */
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include "pyuprof.h"
#include "target/pystr.h"

static size_t put_utf8(uint32_t c, char *o)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static size_t unreadable(char *out, size_t out_len)
{
	snprintf(out, out_len, "<unreadable>");
	return strlen(out);
}

size_t pystr__to_utf8(const void *raw, size_t raw_bytes, uint32_t len, uint8_t kind, char *out,
		     size_t out_len)
{
	const unsigned char *s = raw;
	size_t width = kind == STR_ASCII ? 1 : kind, i, n = 0, have;

	if (!out_len)
		return 0;
	if (kind == STR_UNREADABLE || (width != 1 && width != 2 && width != 4))
		return unreadable(out, out_len);
	have = raw_bytes / width;
	if (have > len)
		have = len;
	for (i = 0; i < have && n + 8 < out_len; i++) {
		uint32_t c;

		if (width == 1)
			c = s[i];
		else if (width == 2)
			c = s[2 * i] | (uint32_t)s[2 * i + 1] << 8;
		else
			c = s[4 * i] | (uint32_t)s[4 * i + 1] << 8 | (uint32_t)s[4 * i + 2] << 16 |
			    (uint32_t)s[4 * i + 3] << 24;
		if (c > 0x10ffff)
			return unreadable(out, out_len);
		n += put_utf8(c, out + n);
	}
	if (i < len && n + 4 < out_len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = 0;
	return n;
}
