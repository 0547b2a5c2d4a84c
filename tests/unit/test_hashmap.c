/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/hashmap.c: the map against a plain model under inserts and deletes,
 * and array growth at its limit (a need past 2^31 elements is refused, not doubled to 0 for
 * ever). An alarm turns a hang into a failure.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hashmap.h"
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

TEST(map_matches_a_model)
{
	enum { N = 5000 };
	static uint64_t model[N]; /* model[k]: value of key k + 1, 0 = absent */
	struct u64_map m;
	uint64_t *v, x = 88172645463325252ull;
	size_t i, len = 0;

	u64_map__init(&m);
	for (i = 0; i < 200000; i++) {
		uint64_t k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % N;
		if (x >> 62) {
			v = u64_map__upsert(&m, k + 1);
			REQUIRE(v);
			len += !model[k];
			*v = model[k] = x | 1;
		} else {
			u64_map__del(&m, k + 1);
			len -= !!model[k];
			model[k] = 0;
		}
	}
	CHECK(m.len == len);
	for (i = 0; i < N; i++) {
		v = u64_map__get(&m, i + 1);
		CHECK(model[i] ? v && *v == model[i] : !v);
	}
	u64_map__free(&m);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(grow_doubles_from_64),
		TEST_CASE(grow_past_2_31_is_refused),
		TEST_CASE(map_matches_a_model),
	};

	signal(SIGALRM, on_alarm);
	return test_run(cases, TEST_COUNT(cases));
}
