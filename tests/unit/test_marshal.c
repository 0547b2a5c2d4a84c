/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/output/marshal.c. A few encodings are checked byte by byte; everything else is
 * written to a temporary file and read back by every CPython 3.8-3.13 found under pyenv plus
 * Debian's /usr/bin/python3.11. marshal.loads must give exactly the expected value (passed as
 * Python source), and the file must equal marshal.dumps(expected, 2), which has no refs or short
 * forms. A pstats-shaped profile must load in pstats.Stats and print recursive counts as "nc/cc".
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/marshal.h"
#include "pythons.h"
#include "test.h"

#define OUT_MAX 4096

/* Strict comparison: marshal must not turn ints into floats, -0.0 into 0.0 or reorder dicts. */
static const char LOADS_SCRIPT[] =
	"import marshal, struct, sys\n"
	"def same(a, b):\n"
	"    if type(a) is not type(b):\n"
	"        return False\n"
	"    if type(a) is float:\n"
	"        return struct.pack('<d', a) == struct.pack('<d', b)\n"
	"    if type(a) is tuple:\n"
	"        if set(map(type, a)) == set(map(type, b)) == {int}:\n"
	"            return a == b  # fast path for the 3M-int tuple\n"
	"        return len(a) == len(b) and all(map(same, a, b))\n"
	"    if type(a) is dict:\n"
	"        return len(a) == len(b) and all(map(same, a.items(), b.items()))\n"
	"    return a == b\n"
	"data = open(sys.argv[1], 'rb').read()\n"
	"got = marshal.loads(data)\n"
	"exp = eval(sys.argv[2])\n"
	"if not same(got, exp):\n"
	"    sys.exit('value differs: got %.300r' % (got,))\n"
	"# loads() ignores trailing bytes; this also catches those.\n"
	"if marshal.dumps(exp, 2) != data:\n"
	"    sys.exit('bytes differ from marshal.dumps(expected, 2)')\n";

/* argv[2:] are strings that must appear in the printed profile. */
static const char PSTATS_SCRIPT[] =
	"import io, pstats, sys\n"
	"out = io.StringIO()\n"
	"st = pstats.Stats(sys.argv[1], stream=out)\n"
	"st.sort_stats('cumulative').print_stats()\n"
	"st.print_callers()\n"
	"text = out.getvalue()\n"
	"if (st.total_calls, st.prim_calls) != (178, 2):\n"
	"    sys.exit('calls %d/%d' % (st.total_calls, st.prim_calls))\n"
	"for want in sys.argv[2:]:\n"
	"    if want not in text:\n"
	"        sys.exit('%r not in output:\\n%s' % (want, text))\n";

/* Runs argv with stdout and stderr captured into out. Returns the exit status, or -errno. */
static int run(char *const argv[], char *out, size_t size)
{
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	int fds[2], err, status;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err) {
		close(fds[0]);
		return -err;
	}
	/* Keep reading past a full buffer so the child never blocks on the pipe. */
	for (;;) {
		char sink[512];

		if (len + 1 < size)
			r = read(fds[0], out + len, size - 1 - len);
		else
			r = read(fds[0], sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (len + 1 < size)
			len += r;
	}
	out[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Writes the buffer to a fresh temporary file whose name goes to path. Returns 0 or -errno. */
static int write_tmp(const struct marshal_buf *b, char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	size_t off = 0;
	ssize_t w;
	int fd;

	snprintf(path, size, "%s/test_marshal.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	while (off < b->len) {
		w = write(fd, b->data + off, b->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			w = -errno;
			close(fd);
			unlink(path);
			return w;
		}
		off += w;
	}
	if (close(fd)) {
		unlink(path);
		return -errno;
	}
	return 0;
}

/* Shows a child's output as "#" lines, so it cannot be mistaken for test results. */
static void print_output(const char *python, int rc, char *out)
{
	char *line, *save = NULL;

	printf("#   %s: exit %d\n", python, rc);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("#     %.200s\n", line);
}

/*
 * Runs script (with the temp file as argv[1], then args) under every interpreter found; each one
 * must exit 0. Failures print the interpreter and what it said.
 */
static void check_with_pythons(const struct marshal_buf *b, const char *script,
			       const char *const *args, int n_args)
{
	char path[PATH_MAX], out[OUT_MAX];
	char *argv[16];
	int i, j, rc;

	REQUIRE(b->err == 0);
	REQUIRE(n_pythons > 0);
	REQUIRE(n_args <= 10);
	REQUIRE(write_tmp(b, path, sizeof(path)) == 0);
	for (i = 0; i < n_pythons; i++) {
		argv[0] = pythons[i];
		argv[1] = "-I"; /* isolated: no PYTHON* variables, no user site */
		argv[2] = "-c";
		argv[3] = (char *)script;
		argv[4] = path;
		for (j = 0; j < n_args; j++)
			argv[5 + j] = (char *)args[j];
		argv[5 + n_args] = NULL;
		rc = run(argv, out, sizeof(out));
		if (rc != 0)
			print_output(pythons[i], rc, out);
		CHECK(rc == 0);
	}
	unlink(path);
}

static void check_loads(const struct marshal_buf *b, const char *expected_py)
{
	const char *args[] = { expected_py };

	check_with_pythons(b, LOADS_SCRIPT, args, 1);
}

static int bytes_are(const struct marshal_buf *b, const char *bytes, size_t n)
{
	return b->err == 0 && b->len == n && memcmp(b->data, bytes, n) == 0;
}

#define BYTES_ARE(b, lit) bytes_are(b, lit, sizeof(lit) - 1)

/* Encodes one int into a fresh buffer and compares the bytes. */
static int int_is(int64_t v, const char *bytes, size_t n)
{
	struct marshal_buf b;
	int ok;

	marshal__init(&b);
	marshal__int(&b, v);
	ok = bytes_are(&b, bytes, n);
	marshal__free(&b);
	return ok;
}

#define INT_IS(v, lit) int_is(v, lit, sizeof(lit) - 1)

TEST(test_bytes_exact)
{
	struct marshal_buf b;

	CHECK(INT_IS(0, "i\0\0\0\0"));
	CHECK(INT_IS(-1, "i\xff\xff\xff\xff"));
	CHECK(INT_IS(INT32_MAX, "i\xff\xff\xff\x7f"));
	CHECK(INT_IS(INT32_MIN, "i\0\0\0\x80"));
	/* 2^31 = 2 * (2^15)^2: three 15-bit digits 0, 0, 2. */
	CHECK(INT_IS(INT64_C(2147483648), "l\3\0\0\0" "\0\0" "\0\0" "\2\0"));
	CHECK(INT_IS(-INT64_C(2147483649), "l\xfd\xff\xff\xff" "\1\0" "\0\0" "\2\0"));
	/* 2^63 = 8 * (2^15)^4 */
	CHECK(INT_IS(INT64_MIN, "l\xfb\xff\xff\xff" "\0\0\0\0\0\0\0\0" "\x08\0"));
	CHECK(INT_IS(INT64_MAX, "l\5\0\0\0" "\xff\x7f\xff\x7f\xff\x7f\xff\x7f" "\x07\0"));

	marshal__init(&b);
	marshal__float(&b, 1.0);
	marshal__float(&b, -0.0);
	CHECK(BYTES_ARE(&b, "g\0\0\0\0\0\0\xf0\x3f" "g\0\0\0\0\0\0\0\x80"));
	marshal__free(&b);

	marshal__init(&b);
	marshal__dict_begin(&b);
	marshal__str(&b, "ab", 2);
	marshal__tuple_begin(&b, 0);
	marshal__str(&b, "", 0);
	marshal__dict_begin(&b);
	marshal__dict_end(&b);
	marshal__dict_end(&b);
	CHECK(BYTES_ARE(&b, "{u\2\0\0\0ab(\0\0\0\0u\0\0\0\0{00"));
	marshal__free(&b);
	CHECK(b.data == NULL && b.len == 0 && b.err == 0);
}

TEST(test_errors_sticky)
{
	struct marshal_buf b;

	/* Counts above INT32_MAX would read back negative; the pointer is never read. */
	marshal__init(&b);
	marshal__str(&b, "x", (size_t)INT32_MAX + 1);
	CHECK(b.err == -EOVERFLOW && b.len == 0);
	marshal__int(&b, 1);
	CHECK(b.err == -EOVERFLOW && b.len == 0);
	marshal__free(&b);

	marshal__init(&b);
	marshal__tuple_begin(&b, UINT32_C(0x80000000));
	CHECK(b.err == -EOVERFLOW && b.len == 0);
	marshal__free(&b);

	/* A real allocation failure: pretend 2^62 bytes are in use, so growth asks realloc for
	 * more address space than exists. */
	marshal__init(&b);
	b.len = (size_t)1 << 62;
	marshal__float(&b, 1.0);
	CHECK(b.err == -ENOMEM && b.data == NULL);
	b.len = 0;
	marshal__int(&b, 1);
	marshal__dict_begin(&b);
	CHECK(b.err == -ENOMEM && b.len == 0 && b.data == NULL);
	marshal__free(&b);

	/* size_t overflow of len + n is reported as -ENOMEM too. */
	marshal__init(&b);
	b.len = SIZE_MAX - 2;
	marshal__int(&b, 1);
	CHECK(b.err == -ENOMEM);
	marshal__free(&b);
}

TEST(test_pythons_found)
{
	int i;

	for (i = 0; i < n_pythons; i++)
		printf("#   using %s\n", pythons[i]);
	CHECK(n_pythons > 0);
}

TEST(test_ints)
{
	static const int64_t vals[] = {
		0,
		-1,
		1,
		INT32_MAX,
		INT64_C(2147483648),
		-INT64_C(2147483648),
		-INT64_C(2147483649),
		INT64_C(3000000000),
		INT64_C(32767),
		INT64_C(1) << 45,
		(INT64_C(1) << 45) - 1,
		-(INT64_C(1) << 60),
		INT64_MAX,
		INT64_MIN,
		INT64_MIN + 1,
	};
	struct marshal_buf b;
	size_t i;

	marshal__init(&b);
	marshal__tuple_begin(&b, sizeof(vals) / sizeof(vals[0]));
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		marshal__int(&b, vals[i]);
	check_loads(&b, "(0, -1, 1, 2**31-1, 2**31, -2**31, -2**31-1, 3000000000, 32767,"
			" 2**45, 2**45-1, -2**60, 2**63-1, -2**63, -2**63+1)");
	marshal__free(&b);
}

TEST(test_floats)
{
	static const double vals[] = { 0.1, 1e-9, -0.0, 0.0, 1.5, -2.5e300, 5e-324, HUGE_VAL };
	struct marshal_buf b;
	size_t i;

	marshal__init(&b);
	marshal__tuple_begin(&b, sizeof(vals) / sizeof(vals[0]));
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		marshal__float(&b, vals[i]);
	check_loads(&b, "(0.1, 1e-9, -0.0, 0.0, 1.5, -2.5e300, 5e-324, float('inf'))");
	marshal__free(&b);
}

TEST(test_strings)
{
	static char big[100000];
	struct marshal_buf b;

	/* Longer than the initial capacity, so the buffer has to grow mid-string. */
	memset(big, 'z', sizeof(big));
	marshal__init(&b);
	marshal__tuple_begin(&b, 6);
	marshal__str(&b, "", 0);
	marshal__str(&b, "größe", strlen("größe"));
	marshal__str(&b, "関数", strlen("関数"));
	marshal__str(&b, "a\0b", 3);
	marshal__str(&b, "<module>", 8);
	marshal__str(&b, big, sizeof(big));
	/* Escapes keep the expected source ASCII, independent of the child's locale. */
	check_loads(&b, "('', 'gr\\u00f6\\u00dfe', '\\u95a2\\u6570', 'a\\x00b', '<module>',"
			" 'z' * 100000)");
	marshal__free(&b);
}

static void put_key(struct marshal_buf *b, const char *file, int64_t line, const char *func)
{
	marshal__tuple_begin(b, 3);
	marshal__str(b, file, strlen(file));
	marshal__int(b, line);
	marshal__str(b, func, strlen(func));
}

/* A pstats dict: {key: (cc, nc, tt, ct, {caller key: (nc, cc, tt, ct)})}. */
TEST(test_nested_pstats_dict)
{
	struct marshal_buf b;

	marshal__init(&b);
	marshal__dict_begin(&b);

	put_key(&b, "/src/größe.py", 10, "関数");
	marshal__tuple_begin(&b, 5);
	marshal__int(&b, 1);
	marshal__int(&b, INT64_C(3000000000));
	marshal__float(&b, 0.1);
	marshal__float(&b, 12.5);
	marshal__dict_begin(&b);
	put_key(&b, "/src/größe.py", 10, "関数");
	marshal__tuple_begin(&b, 4);
	marshal__int(&b, INT64_C(2999999999));
	marshal__int(&b, 0);
	marshal__float(&b, 1e-9);
	marshal__float(&b, -0.0);
	put_key(&b, "~", 0, "<built-in method builtins.exec>");
	marshal__tuple_begin(&b, 4);
	marshal__int(&b, 1);
	marshal__int(&b, 1);
	marshal__float(&b, 0.1);
	marshal__float(&b, 12.5);
	marshal__dict_end(&b);

	put_key(&b, "~", 0, "<built-in method builtins.exec>");
	marshal__tuple_begin(&b, 5);
	marshal__int(&b, 1);
	marshal__int(&b, 1);
	marshal__float(&b, 0.0);
	marshal__float(&b, 12.5);
	marshal__dict_begin(&b);
	marshal__dict_end(&b);

	marshal__dict_end(&b);
	check_loads(&b,
		    "{('/src/gr\\u00f6\\u00dfe.py', 10, '\\u95a2\\u6570'):"
		    "  (1, 3000000000, 0.1, 12.5, {"
		    "    ('/src/gr\\u00f6\\u00dfe.py', 10, '\\u95a2\\u6570'):"
		    "      (2999999999, 0, 1e-9, -0.0),"
		    "    ('~', 0, '<built-in method builtins.exec>'): (1, 1, 0.1, 12.5)}),"
		    " ('~', 0, '<built-in method builtins.exec>'): (1, 1, 0.0, 12.5, {})}");
	marshal__free(&b);
}

#define BIG_N 3000000
#define BIG_LONGS 3000

/*
 * Size and speed: 3M int32 values spanning the whole 'i' range, then 3000 'l' longs (i * 10^10
 * needs 3 digits of 15 bits). Expressed with range() so the interpreters build it quickly.
 */
TEST(test_big_tuple)
{
	struct marshal_buf b;
	int64_t i;

	marshal__init(&b);
	marshal__tuple_begin(&b, BIG_N + BIG_LONGS);
	for (i = 0; i < BIG_N; i++)
		marshal__int(&b, i * 1000 - INT64_C(1500000000));
	for (i = 1; i <= BIG_LONGS; i++)
		marshal__int(&b, i * INT64_C(10000000000));
	printf("#   %zu bytes\n", b.len);
	CHECK(b.len == 5 + (size_t)BIG_N * 5 + (size_t)BIG_LONGS * (5 + 3 * 2));
	check_loads(&b, "tuple(range(-1500000000, 1500000000, 1000))"
			" + tuple(i * 10**10 for i in range(1, 3001))");
	marshal__free(&b);
}

/* Internals §10.3: fib recursing under main; callers values are (nc, cc, tt, ct). */
TEST(test_pstats_print_callers)
{
	const char *const want[] = {
		"177/1",          /* print_stats: fib's nc/cc */
		"176/2",          /* print_callers: fib <- fib, the recursive edge */
		"work.py:5(fib)", /* pstats' func_std_string */
		"work.py:1(main)",
	};
	struct marshal_buf b;

	marshal__init(&b);
	marshal__dict_begin(&b);
	put_key(&b, "work.py", 1, "main");
	marshal__tuple_begin(&b, 5);
	marshal__int(&b, 1);
	marshal__int(&b, 1);
	marshal__float(&b, 0.01);
	marshal__float(&b, 0.26);
	marshal__dict_begin(&b);
	marshal__dict_end(&b);

	put_key(&b, "work.py", 5, "fib");
	marshal__tuple_begin(&b, 5);
	marshal__int(&b, 1);
	marshal__int(&b, 177);
	marshal__float(&b, 0.25);
	marshal__float(&b, 0.25);
	marshal__dict_begin(&b);
	put_key(&b, "work.py", 1, "main");
	marshal__tuple_begin(&b, 4);
	marshal__int(&b, 1);
	marshal__int(&b, 1);
	marshal__float(&b, 0.0014);
	marshal__float(&b, 0.25);
	put_key(&b, "work.py", 5, "fib");
	marshal__tuple_begin(&b, 4);
	marshal__int(&b, 176);
	marshal__int(&b, 2);
	marshal__float(&b, 0.2486);
	marshal__float(&b, 0.2486);
	marshal__dict_end(&b);
	marshal__dict_end(&b);

	check_with_pythons(&b, PSTATS_SCRIPT, want, sizeof(want) / sizeof(want[0]));
	marshal__free(&b);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_bytes_exact),
		TEST_CASE(test_errors_sticky),
		TEST_CASE(test_pythons_found),
		TEST_CASE(test_ints),
		TEST_CASE(test_floats),
		TEST_CASE(test_strings),
		TEST_CASE(test_nested_pstats_dict),
		TEST_CASE(test_big_tuple),
		TEST_CASE(test_pstats_print_callers),
	};

	int i, rc;

	find_pythons();
	rc = test_run(cases, TEST_COUNT(cases));
	for (i = 0; i < n_pythons; i++)
		free(pythons[i]);
	return rc;
}
