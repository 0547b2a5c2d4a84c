/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Minimal unit-test harness. Declare cases with TEST(name), list them with TEST_CASE(name) in an
 * array and return test_run(cases, n) from main(). CHECK() records a failure and carries on;
 * REQUIRE() also leaves the case. Prints one "ok"/"not ok" line per case, then exactly
 * "N passed, N failed" (scripts/run-tests.sh reads that line); exit status 1 if any case failed.
 */
#ifndef __PYUPROF_TEST_H
#define __PYUPROF_TEST_H

#include <stdio.h>
#include <stdlib.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

static int test__failed; /* set by CHECK() in the running case */

#define TEST(name) static void name(void)
#define TEST_CASE(name) { #name, name }
#define TEST_COUNT(cases) (sizeof(cases) / sizeof((cases)[0]))

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond))                                                               \
			test__fail(__FILE__, __LINE__, #cond);                             \
	} while (0)

/* Like CHECK(), but leaves the (void) test function on failure. */
#define REQUIRE(cond)                                                                      \
	do {                                                                               \
		if (!(cond)) {                                                             \
			test__fail(__FILE__, __LINE__, #cond);                             \
			return;                                                            \
		}                                                                          \
	} while (0)

static void __attribute__((unused)) test__fail(const char *file, int line, const char *expr)
{
	printf("#   %s:%d: failed: %s\n", file, line, expr);
	test__failed = 1;
}

static int __attribute__((unused)) test_run(const struct test_case *cases, size_t n)
{
	size_t i, passed = 0;

	for (i = 0; i < n; i++) {
		test__failed = 0;
		cases[i].fn();
		passed += !test__failed;
		printf("%s %zu - %s\n", test__failed ? "not ok" : "ok", i + 1, cases[i].name);
		/* Flush so lines stay in order with output of child processes a case spawns. */
		fflush(stdout);
	}
	printf("%zu passed, %zu failed\n", passed, n - passed);
	return passed == n ? 0 : 1;
}

#endif /* __PYUPROF_TEST_H */
