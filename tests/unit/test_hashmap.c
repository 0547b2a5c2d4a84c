/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/base/hashmap.c: the map against a plain model under inserts and deletes (keys
 * hashed, and addresses kept in order by page: by_address), and array growth at its limit (a
 * need past 2^31 elements is refused, not doubled to 0 for ever). An alarm turns a hang into a
 * failure.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/hashmap.h"
#include "test.h"

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "#   timed out: array_grow looped\n0 passed, 1 failed\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

TEST(grow_doubles_from_64)
{
	char *arr = NULL;
	uint32_t cap = 0;

	REQUIRE(array_grow((void **)&arr, &cap, 1, 1) == 0);
	CHECK(cap == 64);
	REQUIRE(array_grow((void **)&arr, &cap, 1, 65) == 0);
	CHECK(cap == 128);
	REQUIRE(array_grow((void **)&arr, &cap, 1, 1000) == 0);
	CHECK(cap == 1024);
	REQUIRE(array_grow((void **)&arr, &cap, 1, 10) == 0);
	CHECK(cap == 1024);
	free(arr);
}

TEST(grow_past_2_31_is_refused)
{
	char *arr = NULL, *before;
	uint32_t cap = 0;

	REQUIRE(array_grow((void **)&arr, &cap, 1, 8) == 0);
	before = arr;
	alarm(10);
	CHECK(array_grow((void **)&arr, &cap, 1, 0x80000001u) == -ENOMEM);
	CHECK(array_grow((void **)&arr, &cap, 1, UINT32_MAX) == -ENOMEM);
	alarm(0);
	/* the array is unchanged */
	CHECK(arr == before && cap == 64);
	free(arr);
}

/* The map against a model under random inserts and deletes of keys key_of(0 .. N - 1). */
enum { N = 5000 };

static void against_a_model(bool by_address, uint64_t (*key_of)(size_t k))
{
	static uint64_t model[N]; /* model[k]: value of key_of(k), 0 = absent */
	struct u64_map m;
	uint64_t *v, x = 88172645463325252ull;
	size_t i, len = 0;

	memset(model, 0, sizeof(model));
	u64_map__init(&m);
	m.by_address = by_address;
	for (i = 0; i < 200000; i++) {
		uint64_t k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % N;
		if (x >> 62) {
			v = u64_map__upsert(&m, key_of(k));
			REQUIRE(v);
			len += !model[k];
			*v = model[k] = x | 1;
		} else {
			u64_map__del(&m, key_of(k));
			len -= !!model[k];
			model[k] = 0;
		}
	}
	CHECK(m.len == len);
	CHECK(m.by_address == by_address); /* (kept as it grew) */
	for (i = 0; i < N; i++) {
		v = u64_map__get(&m, key_of(i));
		CHECK(model[i] ? v && *v == model[i] : !v);
	}
	u64_map__free(&m);
}

static uint64_t small_key(size_t k)
{
	return k + 1;
}

/* Addresses packed as tightly as they can be: every 16-byte unit of every third page, the
 * longest runs of taken slots by_address makes. */
static uint64_t packed_address(size_t k)
{
	return 0x7f3a12340000ull + (k / 256) * 3 * 4096 + (k % 256) * 16;
}

TEST(map_matches_a_model)
{
	against_a_model(false, small_key);
}

TEST(map_by_address_matches_a_model)
{
	against_a_model(true, packed_address);
	against_a_model(true, small_key);
}

/* The point of by_address: objects of one page, looked up in address order, are in ascending
 * slots (neighbouring cache lines) rather than scattered. */
TEST(map_by_address_keeps_a_page_in_order)
{
	struct u64_map m;
	uint64_t *v, *prev = NULL;
	size_t i, cap, up = 0;

	u64_map__init(&m);
	m.by_address = true;
	for (i = 0; i < 2000; i++) /* other pages: the map outgrows a page's 256 slots */
		REQUIRE(u64_map__upsert(&m, 0x7f0000000000ull + i * 7 * 4096 + (i % 97) * 16));
	for (i = 0; i < 20; i++) /* code objects of 200 bytes, one after another */
		*u64_map__upsert(&m, 0x7f5500001000ull + 16 + i * 208) = i + 1;
	cap = m.cap;
	for (i = 0; i < 20; i++) {
		v = u64_map__get(&m, 0x7f5500001000ull + 16 + i * 208);
		REQUIRE(v && *v == i + 1);
		/* (ascending modulo the map's size; a taken slot moves one a little on) */
		up += prev && (size_t)(v - prev) % cap < 32;
		prev = v;
	}
	CHECK(up == 19);
	u64_map__free(&m);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(grow_doubles_from_64),
		TEST_CASE(grow_past_2_31_is_refused),
		TEST_CASE(map_matches_a_model),
		TEST_CASE(map_by_address_matches_a_model),
		TEST_CASE(map_by_address_keeps_a_page_in_order),
	};

	signal(SIGALRM, on_alarm);
	return test_run(cases, TEST_COUNT(cases));
}
