// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * protobuf.c against the wire format's own examples (protobuf.dev, "Encoding": field 1 = 150
 * is 08 96 01, field 2 = "testing" is 12 07 74 65 73 74 69 6e 67) and varint boundaries. The
 * whole pprof file is checked by its real consumer, go tool pprof (tests/pprof.bats).
 */
#include <string.h>
#include "output/protobuf.h"
#include "test.h"

static int bytes_are(const struct pb_buf *b, const unsigned char *want, size_t n)
{
	return !b->err && b->len == n && !memcmp(b->data, want, n);
}

TEST(spec_examples)
{
	static const unsigned char f150[] = { 0x08, 0x96, 0x01 };
	static const unsigned char testing[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	struct pb_buf b;

	pb__init(&b);
	pb__uint(&b, 1, 150);
	CHECK(bytes_are(&b, f150, sizeof(f150)));
	b.len = 0;
	pb__bytes(&b, 2, "testing", 7);
	CHECK(bytes_are(&b, testing, sizeof(testing)));
	pb__free(&b);
}

TEST(varint_boundaries)
{
	static const unsigned char v0[] = { 0 }, v127[] = { 0x7f }, v128[] = { 0x80, 0x01 };
	static const unsigned char v300[] = { 0xac, 0x02 };
	static const unsigned char vmax[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0xff, 0x01 };
	struct pb_buf b;

	pb__init(&b);
	pb__varint(&b, 0);
	CHECK(bytes_are(&b, v0, 1));
	b.len = 0;
	pb__varint(&b, 127);
	CHECK(bytes_are(&b, v127, 1));
	b.len = 0;
	pb__varint(&b, 128);
	CHECK(bytes_are(&b, v128, 2));
	b.len = 0;
	pb__varint(&b, 300);
	CHECK(bytes_are(&b, v300, 2));
	b.len = 0;
	pb__varint(&b, UINT64_MAX);
	CHECK(bytes_are(&b, vmax, sizeof(vmax)));
	pb__free(&b);
}

TEST(large_fields_grow_the_buffer)
{
	static char big[100000];
	struct pb_buf b;

	memset(big, 'x', sizeof(big));
	pb__init(&b);
	pb__bytes(&b, 6, big, sizeof(big));
	/* tag, length 100000 = a0 8d 06, then the bytes */
	REQUIRE(!b.err && b.len == 1 + 3 + sizeof(big));
	CHECK(b.data[0] == 0x32 && b.data[1] == 0xa0 && b.data[2] == 0x8d && b.data[3] == 0x06);
	CHECK(!memcmp(b.data + 4, big, sizeof(big)));
	pb__free(&b);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(spec_examples),
		TEST_CASE(varint_boundaries),
		TEST_CASE(large_fields_grow_the_buffer),
	};

	return test_run(cases, TEST_COUNT(cases));
}
