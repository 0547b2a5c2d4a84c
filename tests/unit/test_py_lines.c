// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * py_lines__line() against CPython itself: on every interpreter present, the line of every
 * instruction of every code object of three stdlib modules (lines_truth.py prints the tables
 * and co_lines()' or dis.findlinestarts()' answers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pythons.h"
#include "target/py_lines.h"
#include "test.h"

static uint8_t table[LINE_TABLE_MAX];

static size_t unhex(const char *s)
{
	size_t n = 0;
	unsigned b;

	if (!strcmp(s, "-"))
		return 0;
	while (n < sizeof(table) && sscanf(s + 2 * n, "%2x", &b) == 1)
		table[n++] = (uint8_t)b;
	return n;
}

/* Returns the number of instructions checked, or -1 if the oracle did not run. */
static long check_python(const char *py, long *wrong)
{
	static char line[4 * LINE_TABLE_MAX];
	char cmd[PATH_MAX * 2], hex[4 * LINE_TABLE_MAX];
	unsigned minor = 0;
	int first = 0, addr, want, got;
	size_t n = 0;
	long checked = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s tests/unit/lines_truth.py", py);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "C %u %d %s", &minor, &first, hex) == 3) {
			n = unhex(hex);
		} else if (sscanf(line, "A %d %d", &addr, &want) == 2) {
			got = py_lines__line(minor, table, n, first, addr);
			if (got != want && (*wrong)++ < 5)
				printf("#   %s: 3.%u, first line %d, addr %d: %d, CPython says %d\n",
				       py, minor, first, addr, got, want);
			checked++;
		}
	}
	return pclose(f) ? -1 : checked;
}

TEST(lines_match_cpython_on_every_interpreter)
{
	long checked, wrong;

	find_pythons();
	REQUIRE(n_pythons > 0);
	for (int i = 0; i < n_pythons; i++) {
		wrong = 0;
		checked = check_python(pythons[i], &wrong);
		printf("#   %s: %ld instructions, %ld wrong\n", pythons[i], checked, wrong);
		CHECK(checked > 1000);
		CHECK(wrong == 0);
	}
}

TEST(not_started_is_the_first_line)
{
	static const uint8_t t[] = { 2, 1 };

	CHECK(py_lines__line(8, t, sizeof(t), 10, -1) == 10);
	CHECK(py_lines__line(13, t, 0, 10, -2) == 10);
}

TEST(layouts_for_every_supported_minor)
{
	for (unsigned m = 8; m <= 13; m++)
		CHECK(py_lines__layout(m) != NULL);
	CHECK(py_lines__layout(7) == NULL);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(lines_match_cpython_on_every_interpreter),
		TEST_CASE(not_started_is_the_first_line),
		TEST_CASE(layouts_for_every_supported_minor),
	};

	return test_run(cases, TEST_COUNT(cases));
}
