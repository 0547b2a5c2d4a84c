// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* base/cache.c: values kept by key, the newest of a key given back, a file that another user
 * could have written not read, a file's identity changing with its contents. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test.h"
#include "base/cache.h"

static char dir[] = "/tmp/pyuprof-test-cache-XXXXXX";

TEST(a_value_kept_is_given_back_by_its_key_the_newest_of_it)
{
	char v[64];

	CHECK(cache__get("figures", "a", v, sizeof(v)) == -ENOENT);
	cache__put("figures", "a", "1 2 3");
	cache__put("figures", "b", "4");
	REQUIRE(!cache__get("figures", "a", v, sizeof(v)));
	CHECK(!strcmp(v, "1 2 3"));
	cache__put("figures", "a", "5");
	REQUIRE(!cache__get("figures", "a", v, sizeof(v)));
	CHECK(!strcmp(v, "5"));
	REQUIRE(!cache__get("figures", "b", v, sizeof(v)));
	CHECK(!strcmp(v, "4"));
	/* another kind is another file; a key with a tab or a newline is never kept */
	CHECK(cache__get("other", "a", v, sizeof(v)) == -ENOENT);
	cache__put("figures", "c\td", "6");
	CHECK(cache__get("figures", "c\td", v, sizeof(v)) == -ENOENT);
	cache__put("figures", "e", "7\n8");
	CHECK(cache__get("figures", "e", v, sizeof(v)) == -ENOENT);
}

TEST(the_file_keeps_the_newest_keys)
{
	char k[16], v[16];

	for (int i = 0; i < CACHE_LINES + 10; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		snprintf(v, sizeof(v), "%d", i);
		cache__put("many", k, v);
	}
	CHECK(cache__get("many", "k0", v, sizeof(v)) == -ENOENT);
	CHECK(cache__get("many", "k9", v, sizeof(v)) == -ENOENT);
	REQUIRE(!cache__get("many", "k10", v, sizeof(v)));
	CHECK(!strcmp(v, "10"));
	snprintf(k, sizeof(k), "k%d", CACHE_LINES + 9);
	REQUIRE(!cache__get("many", k, v, sizeof(v)));
}

TEST(a_file_others_could_write_is_not_read)
{
	char path[128], v[16];

	cache__put("shared", "a", "1");
	snprintf(path, sizeof(path), "%s/shared", dir);
	REQUIRE(!chmod(path, 0666));
	CHECK(cache__get("shared", "a", v, sizeof(v)) == -ENOENT);
	REQUIRE(!chmod(path, 0644));
	CHECK(!cache__get("shared", "a", v, sizeof(v)));
}

TEST(a_file_id_changes_with_the_file)
{
	char path[128], a[160], b[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/interp", dir);
	REQUIRE((f = fopen(path, "w")) != NULL);
	fputs("one", f);
	fclose(f);
	REQUIRE(!cache__file_id(path, a, sizeof(a)));
	REQUIRE(!cache__file_id(path, b, sizeof(b)));
	CHECK(!strcmp(a, b));
	usleep(20000);
	REQUIRE((f = fopen(path, "a")) != NULL);
	fputs("two", f);
	fclose(f);
	REQUIRE(!cache__file_id(path, b, sizeof(b)));
	CHECK(strcmp(a, b));
	CHECK(cache__file_id("/nonexistent/interp", b, sizeof(b)) == -ENOENT);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(a_value_kept_is_given_back_by_its_key_the_newest_of_it),
		TEST_CASE(the_file_keeps_the_newest_keys),
		TEST_CASE(a_file_others_could_write_is_not_read),
		TEST_CASE(a_file_id_changes_with_the_file),
	};
	int status;

	if (!mkdtemp(dir))
		return 1;
	setenv("PYUPROF_CACHE_DIR", dir, 1);
	status = test_run(cases, TEST_COUNT(cases));
	if (!status) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	return status;
}
