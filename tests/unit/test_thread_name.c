/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/target/thread_name.c on live interpreters: every CPython 3.8-3.13 under pyenv
 * and Debian's /usr/bin/python3.11 starts threads whose attributes sit in each of the places
 * an instance keeps them (values, a materialised dict, a subclass with more attributes), and
 * prints each Thread's address and name; the names read from outside must be the same.
 * Objects that are not Threads, bad addresses, and a Thread whose _native_id is another
 * thread's, must give an error and nothing else.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pythons.h"
#include "target/thread_name.h"
#include "test.h"

extern char **environ;

/* Each line: "name ADDR HEX-UTF8" for a Thread, "bad ADDR" for what is not one. */
static const char script[] =
	"import sys, threading, time\n"
	"ev = threading.Event()\n"
	"def work(): ev.wait(60)\n"
	"class Sub(threading.Thread):\n"
	"    def __init__(self):\n"
	"        self.extra, self.more = 'x', 1\n"
	"        super().__init__(name='sub-\\u00fc')\n"
	"    def run(self): ev.wait(60)\n"
	"ts = [threading.Thread(name='loader-1', target=work), threading.Thread(target=work),\n"
	"      threading.Thread(name='donn\\u00e9es-\\u540d\\u524d-\\U0001F600', target=work),\n"
	"      Sub(), threading.Thread(name='x' * 100, target=work)]\n"
	"m = threading.Thread(name='materialised', target=work); m.__dict__; ts.append(m)\n"
	"for t in ts: t.start()\n"
	"r = threading.Thread(name='first', target=work); r.start(); r.name = 'renamed'\n"
	"for t in ts + [r, threading.main_thread()]:\n"
	"    print('name %x %d %s' % (id(t), t.native_id, t.name.encode('utf-8').hex()))\n"
	"for o in (12345678901, object(), {'_name': 'x'}, 'str'):\n"
	"    print('bad %x' % id(o))\n"
	"print('bad 1000')\n"
	"print('end', flush=True)\n"
	"sys.stdin.read()\n"
	"ev.set()\n";

static void unhex(const char *hex, char *out, size_t size)
{
	size_t n = 0;
	unsigned c;

	while (n + 1 < size && sscanf(hex + 2 * n, "%2x", &c) == 1)
		out[n++] = (char)c;
	out[n] = 0;
}

/* One interpreter: every name printed must be read back; every bad address must fail. */
static void check_python(const char *python)
{
	char *argv[] = { (char *)python, "-c", (char *)script, NULL };
	char line[512], want[256], got[64], got2[64], why[256];
	posix_spawn_file_actions_t fa;
	int out[2], in[2], names = 0, bads = 0, err;
	unsigned long long addr;
	unsigned tid;
	struct py_target t;
	pid_t pid;
	FILE *f;

	printf("# %s\n", python);
	REQUIRE(!pipe(out) && !pipe(in));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	err = posix_spawn(&pid, python, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(in[0]);
	REQUIRE(!err);
	f = fdopen(out[0], "r");
	/* the first line comes once the interpreter is loaded */
	err = fgets(line, sizeof(line), f) ? py_target__find(pid, &t, why, sizeof(why)) : -EIO;
	if (err)
		printf("#   %s\n", why);
	while (!err && strncmp(line, "end", 3)) {
		char hex[400] = "";

		if (sscanf(line, "name %llx %u %399s", &addr, &tid, hex) == 3) {
			unhex(hex, want, sizeof(want));
			got[0] = 0;
			CHECK(thread_name__of_object(&t, addr, tid, got, sizeof(got)) == 0);
			/* a Thread that says it runs in another thread is refused */
			CHECK(thread_name__of_object(&t, addr, tid + 1, got2, sizeof(got2)) ==
			      -ESTALE);
			if (strlen(want) < 40) {
				CHECK(!strcmp(got, want));
			} else { /* cut, with "..." */
				size_t n = strlen(got);

				CHECK(n > 3 && !strcmp(got + n - 3, "...") &&
				      !strncmp(got, want, n - 3));
			}
			if (strncmp(got, want, strlen(got) > 3 ? strlen(got) - 3 : 0))
				printf("#   want '%s', got '%s'\n", want, got);
			names++;
		} else if (sscanf(line, "bad %llx", &addr) == 1) {
			CHECK(thread_name__of_object(&t, addr, 0, got, sizeof(got)) < 0);
			bads++;
		}
		if (!fgets(line, sizeof(line), f))
			break;
	}
	CHECK(!err);
	CHECK(names == 8);
	CHECK(bads == 5);
	if (!err)
		py_target__free(&t);
	kill(pid, SIGKILL); /* its threads would wait a minute */
	close(in[1]);
	fclose(f);
	waitpid(pid, NULL, 0);
}

TEST(test_is_bootstrap)
{
	CHECK(thread_name__is_bootstrap("/usr/lib/python3.11/threading.py", "_bootstrap"));
	CHECK(thread_name__is_bootstrap("threading.py", "_bootstrap_inner"));
	CHECK(!thread_name__is_bootstrap("/usr/lib/python3.11/threading.py", "run"));
	CHECK(!thread_name__is_bootstrap("/x/my_threading.py", "_bootstrap"));
	CHECK(!thread_name__is_bootstrap("/x/threading.pyc", "_bootstrap"));
	CHECK(!thread_name__is_bootstrap("", ""));
}

TEST(test_live_threads)
{
	int i;

	find_pythons();
	REQUIRE(n_pythons > 0);
	for (i = 0; i < n_pythons; i++)
		check_python(pythons[i]);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_is_bootstrap),
		TEST_CASE(test_live_threads),
	};

	return test_run(cases, TEST_COUNT(cases));
}
