/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/output/json_writer.c and user/output/out_chrome.c. The writer's layout, numbers and
 * escaping are compared byte by byte, its bad-UTF-8 handling with Python's own
 * decode("utf-8", "replace"), and misuse must give -EINVAL instead of broken JSON. Chrome
 * traces come from synthetic call streams fed through the real profile builder
 * (profile.on_call) and are checked by tests/unit/chrome_check.py with real Python: the JSON
 * parses (gunzipped for .gz), events nest per thread, per-function counts equal the calls
 * fed, names are escaped, thread names and the calls left out under min_us are recorded.
 * PYUPROF_TEST_PYTHON picks the interpreter (default python3 from PATH).
 */
#include <errno.h>
#include <linux/types.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/outfile.h"
#include "output/json_writer.h"
#include "output/out_chrome.h"
#include "profile/profile.h"
#include "test.h"

#define CHECKER "tests/unit/chrome_check.py"
#define MAX_ARGS 64
#define MAX_DEPTH 64

extern char **environ;

static char tmpdir[] = "/tmp/test_chrome.XXXXXX";
static char path[256];

static const char *python(void)
{
	const char *py = getenv("PYUPROF_TEST_PYTHON");

	return py ? py : "python3";
}

static const char *tmp_path(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* Runs argv (argv[0] looked up in PATH); prints its output as comments if it fails. */
static int run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	char buf[4096];
	int fds[2], err, status;
	size_t len = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err) {
		close(fds[0]);
		printf("#   cannot run %s: %s\n", argv[0], strerror(err));
		return -err;
	}
	/* keep reading past a full buffer so the child never blocks on the pipe */
	for (;;) {
		char sink[512];

		if (len < sizeof(buf) - 1)
			r = read(fds[0], buf + len, sizeof(buf) - 1 - len);
		else
			r = read(fds[0], sink, sizeof(sink));
		if (r <= 0)
			break;
		if (len < sizeof(buf) - 1)
			len += (size_t)r;
	}
	close(fds[0]);
	buf[len] = '\0';
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (status) {
		char *line, *save = NULL;

		printf("#   %s exited with %d:\n", argv[1] ? argv[1] : argv[0], status);
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("#   | %s\n", line);
	}
	return status;
}

/* chrome_check.py on file with the given options (a NULL-terminated list). */
static int check_trace(const char *file, const char *const opts[])
{
	char *argv[MAX_ARGS];
	int n = 0;

	argv[n++] = (char *)python();
	argv[n++] = (char *)CHECKER;
	argv[n++] = (char *)file;
	while (opts && *opts && n < MAX_ARGS - 1)
		argv[n++] = (char *)*opts++;
	argv[n] = NULL;
	return run(argv);
}

/* Python code run on file: 0 if it exits 0. */
static int check_py(const char *code, const char *file, const char *const args[])
{
	char *argv[MAX_ARGS];
	int n = 0;

	argv[n++] = (char *)python();
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)code;
	argv[n++] = (char *)file;
	while (args && *args && n < MAX_ARGS - 1)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	return run(argv);
}

/* The whole file, NUL-terminated (it may hold NULs of its own); NULL if unreadable. */
static char *slurp(const char *file, size_t *len)
{
	FILE *f = fopen(file, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else if (buf) {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static bool file_has(const char *file, const char *what)
{
	char *buf = slurp(file, NULL);
	bool found = buf && strstr(buf, what);

	if (!found)
		printf("#   %s does not contain %s\n", file, what);
	free(buf);
	return found;
}

static bool file_is(const char *file, const char *want, size_t want_len)
{
	size_t len = 0;
	char *buf = slurp(file, &len);
	bool same = buf && len == want_len && !memcmp(buf, want, len);

	if (!same)
		printf("#   %s is \"%.*s\", expected \"%.*s\"\n", file, buf ? (int)len : 0,
		       buf ? buf : "", (int)want_len, want);
	free(buf);
	return same;
}

/* A writer into a fresh file in tmpdir; the test finishes with close_jw(). */
static struct json_writer *open_jw(struct outfile *out, const char *name, unsigned int lines)
{
	if (outfile__open(out, tmp_path(name)))
		return NULL;
	return json_writer__new(out, lines);
}

static int close_jw(struct outfile *out, struct json_writer *w)
{
	int err = json_writer__close(w);

	if (!err)
		err = outfile__commit(out);
	outfile__abort(out);
	return err;
}

TEST(jw_layout_is_exact)
{
	static const char want[] = "{\n\"a\":1,\n\"b\":[true,false,null,\"x\",{\"k\":[]}],\n"
				   "\"c\":{},\n\"d\":[],\n\"e\":-5,\n\"f\":-0.001\n}\n";
	struct outfile out;
	struct json_writer *w = open_jw(&out, "layout.json", 1);

	REQUIRE(w);
	json_writer__object_begin(w);
	json_writer__u64_field(w, "a", 1);
	json_writer__name(w, "b");
	json_writer__array_begin(w);
	json_writer__bool(w, true);
	json_writer__bool(w, false);
	json_writer__null(w);
	json_writer__string(w, "x");
	json_writer__object_begin(w);
	json_writer__name(w, "k");
	json_writer__array_begin(w);
	json_writer__array_end(w);
	json_writer__object_end(w);
	json_writer__array_end(w);
	json_writer__name(w, "c");
	json_writer__object_begin(w);
	json_writer__object_end(w);
	json_writer__name(w, "d");
	json_writer__array_begin(w);
	json_writer__array_end(w);
	json_writer__name(w, "e");
	json_writer__s64(w, -5);
	json_writer__milli_field(w, "f", -1);
	json_writer__object_end(w);
	REQUIRE(close_jw(&out, w) == 0);
	CHECK(file_is(tmp_path("layout.json"), want, sizeof(want) - 1));
}

TEST(jw_numbers_are_exact)
{
	static const char want[] =
		"[0.000,0.999,1.000,1234.567,-0.001,-1.000,9223372036854775.807,"
		"-9223372036854775.808,-9223372036854775808,9223372036854775807,0,"
		"18446744073709551615]\n";
	static const int64_t milli[] = { 0, 999, 1000, 1234567, -1, -1000, INT64_MAX, INT64_MIN };
	struct outfile out;
	struct json_writer *w = open_jw(&out, "numbers.json", 0);
	size_t i;

	REQUIRE(w);
	json_writer__array_begin(w);
	for (i = 0; i < sizeof(milli) / sizeof(milli[0]); i++)
		json_writer__milli(w, milli[i]);
	json_writer__s64(w, INT64_MIN);
	json_writer__s64(w, INT64_MAX);
	json_writer__u64(w, 0);
	json_writer__u64(w, UINT64_MAX);
	json_writer__array_end(w);
	REQUIRE(close_jw(&out, w) == 0);
	CHECK(file_is(tmp_path("numbers.json"), want, sizeof(want) - 1));
}

TEST(jw_escapes_controls_quotes_and_backslashes_only)
{
	/* "/" and DEL need no escape; UTF-8 (2, 3 and 4 bytes) passes through */
	static const char in[] = "\x01\t\n\x1f\"\\/\x7f\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
	static const char want[] = "{\"k\\\"\\\\\\u000a\":\"\\u0001\\u0009\\u000a\\u001f\\\"\\\\/"
				   "\x7f\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\\u0000x\"}\n";
	struct outfile out;
	struct json_writer *w = open_jw(&out, "escape.json", 0);

	REQUIRE(w);
	json_writer__object_begin(w);
	json_writer__name(w, "k\"\\\n");
	json_writer__string_begin(w);
	json_writer__string_part(w, in, sizeof(in) - 1);
	json_writer__string_part(w, "\0x", 2); /* a NUL inside a counted part */
	json_writer__string_end(w);
	json_writer__object_end(w);
	REQUIRE(close_jw(&out, w) == 0);
	CHECK(file_is(tmp_path("escape.json"), want, sizeof(want) - 1));
}

static int unhex(const char *hex, char *out)
{
	int n = 0;
	unsigned int b;

	while (hex[0] && hex[1] && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = (char)b;
		hex += 2;
	}
	return n;
}

TEST(jw_invalid_utf8_is_replaced_as_python_does)
{
	static const char *const cases[] = {
		"ff", "fe", "c0af", "c1bf", "c3", "80", "80bf41", "e080af", "e0a0", "e0a080",
		"eda080", "edbfbf", "ed9fbf", "ee8080", "efbfbf", "e282", "e28241", "f0808080",
		"f0908080", "f09f908d", "f4908080", "f48fbfbf", "f5808080", "f88080808080", "f09f90",
		"f09f9041", "41c3a9ff42e282ac43", "efbbbf", "c3a9c3", "00", "1f7f", NULL
	};
	static const char code[] =
		"import json, sys\n"
		"got = json.load(open(sys.argv[1], encoding='utf-8'))\n"
		"exp = [bytes.fromhex(h).decode('utf-8', 'replace') for h in sys.argv[2:]]\n"
		"for h, g, e in zip(sys.argv[2:], got, exp):\n"
		"    if g != e:\n"
		"        print('%s: got %a, expected %a' % (h, g, e))\n"
		"sys.exit(got != exp)\n";
	struct outfile out;
	struct json_writer *w = open_jw(&out, "utf8.json", 0);
	char bytes[64];
	int i;

	REQUIRE(w);
	json_writer__array_begin(w);
	for (i = 0; cases[i]; i++) {
		json_writer__string_begin(w);
		json_writer__string_part(w, bytes, (size_t)unhex(cases[i], bytes));
		json_writer__string_end(w);
	}
	json_writer__array_end(w);
	REQUIRE(close_jw(&out, w) == 0);
	CHECK(check_py(code, tmp_path("utf8.json"), cases) == 0);
}

TEST(jw_long_strings_cross_the_buffer)
{
	static const char code[] =
		"import json, sys\n"
		"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
		"ok = d['x'] == 'x' * 200000 and d['q'] == '\"\\\\' * 50000\n"
		"ok = ok and d['e'] == '\\u00e9' * 100000 and d['n'] == list(range(30000))\n"
		"sys.exit(not ok)\n";
	struct outfile out;
	struct json_writer *w = open_jw(&out, "long.json", 0);
	char *x = malloc(200001), *q = malloc(100001), *e = malloc(200001);
	int i;

	REQUIRE(w && x && q && e);
	memset(x, 'x', 200000);
	x[200000] = '\0';
	for (i = 0; i < 100000; i += 2)
		memcpy(q + i, "\"\\", 2);
	q[100000] = '\0';
	for (i = 0; i < 200000; i += 2)
		memcpy(e + i, "\xc3\xa9", 2);
	e[200000] = '\0';
	json_writer__object_begin(w);
	json_writer__string_field(w, "x", x);
	json_writer__string_field(w, "q", q);
	json_writer__string_field(w, "e", e);
	json_writer__name(w, "n");
	json_writer__array_begin(w);
	for (i = 0; i < 30000; i++)
		json_writer__u64(w, (uint64_t)i);
	json_writer__array_end(w);
	json_writer__object_end(w);
	free(x);
	free(q);
	free(e);
	REQUIRE(close_jw(&out, w) == 0);
	CHECK(check_py(code, tmp_path("long.json"), NULL) == 0);
}

/* Each misuse makes the document invalid: the writer refuses with -EINVAL, and keeps it. */
TEST(jw_misuse_is_an_error_not_bad_json)
{
	struct outfile out = { .fd = -1 }; /* never written: errors come before any flush */
	struct json_writer *w;
	int i, err;

	for (i = 0; i < 11; i++) {
		w = json_writer__new(&out, 0);
		REQUIRE(w);
		switch (i) {
		case 0: /* a value in an object without a name */
			json_writer__object_begin(w);
			json_writer__u64(w, 1);
			break;
		case 1: /* a name in an array */
			json_writer__array_begin(w);
			json_writer__name(w, "a");
			break;
		case 2: /* a name at the top */
			json_writer__name(w, "a");
			break;
		case 3: /* mismatched end */
			json_writer__object_begin(w);
			json_writer__array_end(w);
			break;
		case 4: /* two top-level values */
			json_writer__u64(w, 1);
			json_writer__u64(w, 2);
			break;
		case 5: /* unclosed */
			json_writer__array_begin(w);
			break;
		case 6: /* nothing at all */
			break;
		case 7: /* a string part outside a string */
			json_writer__string_part(w, "a", 1);
			break;
		case 8: /* a name waiting for its value */
			json_writer__object_begin(w);
			json_writer__name(w, "a");
			json_writer__object_end(w);
			break;
		case 9: /* an end with nothing open */
			json_writer__array_end(w);
			break;
		case 10: /* a value inside an unfinished string */
			json_writer__string_begin(w);
			json_writer__u64(w, 1);
			break;
		}
		if (i != 5 && i != 6) {
			/* found at once, and sticky: what follows does not clear it */
			CHECK(json_writer__err(w) == -EINVAL);
			json_writer__array_begin(w);
			json_writer__array_end(w);
		}
		err = json_writer__close(w);
		if (err != -EINVAL)
			printf("#   misuse %d: %d\n", i, err);
		CHECK(err == -EINVAL);
	}
}

TEST(jw_nesting_is_limited)
{
	struct outfile out = { .fd = -1 };
	struct json_writer *w = json_writer__new(&out, 0);
	int i;

	REQUIRE(w);
	for (i = 0; i < 33; i++)
		json_writer__array_begin(w);
	CHECK(json_writer__err(w) == -E2BIG);
	json_writer__free(w);
}

TEST(jw_write_errors_are_returned)
{
	struct outfile out = { .fd = -1 }; /* write(2) fails with EBADF */
	struct json_writer *w = json_writer__new(&out, 0);
	int i;

	REQUIRE(w);
	json_writer__array_begin(w);
	for (i = 0; i < 100000; i++) /* past the buffer: flushed, and failing, mid-way */
		json_writer__u64(w, (uint64_t)i);
	CHECK(json_writer__err(w) == -EBADF);
	json_writer__array_end(w);
	CHECK(json_writer__close(w) == -EBADF);
}

/* A synthetic thread of the target: its stack of frames, to give the builder real chains. */
struct sim_thread {
	uint32_t tid;
	int depth;
	uint64_t frame[MAX_DEPTH], code[MAX_DEPTH];
};

static uint64_t next_frame = 0x1000;

static int sim_call(struct profile *p, struct sim_thread *t, uint64_t ts, uint64_t code)
{
	__u64 chain[CHAIN_LEN] = { 0 }, chain_code[CHAIN_LEN] = { 0 };
	uint64_t back = 0;
	int k;

	if (t->depth == MAX_DEPTH)
		return -E2BIG;
	for (k = 0; k < CHAIN_LEN && k < t->depth; k++) {
		chain[k] = t->frame[t->depth - 1 - k];
		chain_code[k] = t->code[t->depth - 1 - k];
	}
	if (t->depth > CHAIN_LEN)
		back = t->frame[t->depth - 1 - CHAIN_LEN];
	t->frame[t->depth] = next_frame++;
	t->code[t->depth] = code;
	t->depth++;
	return profile__call(p, t->tid, ts, code, t->frame[t->depth - 1], chain, chain_code, back,
			     false);
}

static int sim_return(struct profile *p, struct sim_thread *t, uint64_t ts)
{
	t->depth--;
	return profile__return(p, t->tid, ts);
}

/* Opens file and starts a trace of p into it (p->on_call set). */
static struct chrome_trace *start_trace(struct outfile *out, const char *file,
					struct profile *p, uint64_t base_ns, uint64_t min_ns)
{
	struct chrome_trace *ct;

	if (outfile__open(out, file))
		return NULL;
	ct = chrome_trace__open(out, p, 4242, base_ns, min_ns);
	if (!ct) {
		outfile__abort(out);
		return NULL;
	}
	p->on_call = chrome_trace__on_call;
	p->on_call_ctx = ct;
	return ct;
}

static int end_trace(struct outfile *out, struct chrome_trace *ct, struct profile *p)
{
	int err = chrome_trace__close(ct, p, NULL, NULL);

	if (!err)
		err = outfile__commit(out);
	outfile__abort(out);
	return err;
}

TEST(chrome_nested_calls_have_exact_times)
{
	static const char *const opts[] = {
		"--pid", "4242", "--count", "main (m.py:1)=1", "--count", "work (m.py:5)=2",
		"--thread", "1=thread-1", "--left-out", "0", "--min-us", "0.000", NULL
	};
	const uint64_t base = 1000000000ull;
	struct sim_thread t = { .tid = 1 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;

	REQUIRE(p);
	profile__code(p, 100, "m.py", "main", 1);
	profile__code(p, 200, "m.py", "work", 5);
	file = tmp_path("nested.json");
	ct = start_trace(&out, file, p, base, 0);
	REQUIRE(ct);
	CHECK(sim_call(p, &t, base, 100) == 0);
	CHECK(sim_call(p, &t, base + 10, 200) == 0);
	CHECK(sim_return(p, &t, base + 90) == 0);
	CHECK(sim_call(p, &t, base + 90, 200) == 0); /* begins where its sibling ended */
	CHECK(sim_return(p, &t, base + 1234567) == 0);
	CHECK(sim_return(p, &t, base + 1234567) == 0); /* ends with its child */
	profile__finish(p, base + 2000000);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(file, opts) == 0);
	CHECK(file_has(file, "{\"name\":\"work (m.py:5)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":0.010,\"dur\":0.080,\"pid\":4242,\"tid\":1,"
			     "\"args\":{\"file\":\"m.py\",\"line\":5}},\n"));
	CHECK(file_has(file, "\"ts\":0.090,\"dur\":1234.477,"));
	CHECK(file_has(file, "\"ts\":0.000,\"dur\":1234.567,"));
	CHECK(file_has(file, "\"displayTimeUnit\":\"ns\""));
	CHECK(file_has(file, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4242,"));
	profile__free(p);
}

/* The ops of fib(n) (+1 call, -1 return) appended at ops[*n_ops]; returns its calls. */
static int fib_ops(int n, int *ops, int *n_ops, int code)
{
	int calls = 1;

	ops[(*n_ops)++] = code;
	if (n >= 2) {
		calls += fib_ops(n - 1, ops, n_ops, code);
		calls += fib_ops(n - 2, ops, n_ops, code);
	}
	ops[(*n_ops)++] = 0;
	return calls;
}

TEST(chrome_threads_interleave_and_stay_nested)
{
	static const char *const opts[] = {
		"--count", "fib (f.py:3)=464", /* fib(10) + fib(11) */
		"--count", "leaf (f.py:9)=144", "--count", "run (f.py:1)=3",
		"--thread", "101=MainThread", "--thread", "102=worker-\xc3\xbc",
		"--thread", "103=thread-103", NULL
	};
	struct sim_thread th[3] = { { .tid = 101 }, { .tid = 102 }, { .tid = 103 } };
	static int ops[3][2000];
	int n_ops[3] = { 0 }, pos[3] = { 0 }, i, k;
	struct profile *p = profile__new();
	uint64_t ts = 5000, rnd = 12345;
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;

	REQUIRE(p);
	profile__code(p, 1, "f.py", "run", 1);
	profile__code(p, 2, "f.py", "fib", 3);
	profile__code(p, 3, "f.py", "leaf", 9);
	for (i = 0; i < 3; i++)
		ops[i][n_ops[i]++] = 1; /* run() */
	fib_ops(10, ops[0], &n_ops[0], 2);
	fib_ops(11, ops[1], &n_ops[1], 2);
	for (k = 0; k < 144; k++) {
		ops[2][n_ops[2]++] = 3;
		ops[2][n_ops[2]++] = 0;
	}
	for (i = 0; i < 3; i++)
		ops[i][n_ops[i]++] = 0;
	snprintf(profile__thread(p, 101)->name, THREAD_NAME_LEN, "MainThread");
	snprintf(profile__thread(p, 102)->name, THREAD_NAME_LEN, "worker-\xc3\xbc");
	file = tmp_path("threads.json");
	ct = start_trace(&out, file, p, 0, 0);
	REQUIRE(ct);
	/* a few ops of a thread at a time; steps of 0 ns give calls that begin or end together */
	for (;;) {
		bool left = false;

		for (i = 0; i < 3; i++) {
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			for (k = (int)(rnd >> 60) % 4; k >= 0 && pos[i] < n_ops[i]; k--) {
				int op = ops[i][pos[i]++];

				ts += (rnd >> 40) % 3 * 7;
				if (op)
					CHECK(sim_call(p, &th[i], ts, (uint64_t)op) == 0);
				else
					CHECK(sim_return(p, &th[i], ts) == 0);
			}
			left |= pos[i] < n_ops[i];
		}
		if (!left)
			break;
	}
	profile__finish(p, ts);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(file, opts) == 0);
	profile__free(p);
}

TEST(chrome_names_are_escaped_and_utf8_kept)
{
	static const char *const opts[] = {
		"--count", "a\"b\\c (we\"ird\\p.py:3)=2",
		"--count", "gr\xc3\xb6\xc3\x9f" "e (\xc3\xbc.py:7)=1",
		"--count", "tab\there\x01 (\xf0\x9f\x90\x8d.py:0)=1",
		"--count", "bad\xff\xc3( (x.py:-1)=1", /* the checker decodes with "replace" too */
		"--thread", "7=na\"me\\",
		NULL
	};
	struct sim_thread t = { .tid = 7 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;

	REQUIRE(p);
	profile__code(p, 1, "dir/we\"ird\\p.py", "a\"b\\c", 3);
	profile__code(p, 2, "\xc3\xbc.py", "gr\xc3\xb6\xc3\x9f" "e", 7);
	profile__code(p, 3, "\xf0\x9f\x90\x8d.py", "tab\there\x01", 0);
	profile__code(p, 4, "x.py", "bad\xff\xc3(", -1);
	snprintf(profile__thread(p, 7)->name, THREAD_NAME_LEN, "na\"me\\");
	file = tmp_path("names.json");
	ct = start_trace(&out, file, p, 0, 0);
	REQUIRE(ct);
	CHECK(sim_call(p, &t, 10, 1) == 0);
	CHECK(sim_call(p, &t, 20, 2) == 0);
	CHECK(sim_call(p, &t, 30, 3) == 0);
	CHECK(sim_call(p, &t, 40, 4) == 0);
	CHECK(sim_return(p, &t, 50) == 0);
	CHECK(sim_return(p, &t, 60) == 0);
	CHECK(sim_call(p, &t, 70, 1) == 0); /* recursive */
	CHECK(sim_return(p, &t, 80) == 0);
	CHECK(sim_return(p, &t, 90) == 0);
	CHECK(sim_return(p, &t, 100) == 0);
	profile__finish(p, 100);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(file, opts) == 0);
	CHECK(file_has(file, "\"name\":\"a\\\"b\\\\c (we\\\"ird\\\\p.py:3)\""));
	CHECK(file_has(file, "\"args\":{\"file\":\"dir/we\\\"ird\\\\p.py\",\"line\":3}"));
	CHECK(file_has(file, "\"name\":\"gr\xc3\xb6\xc3\x9f" "e (\xc3\xbc.py:7)\""));
	CHECK(file_has(file, "\"name\":\"tab\\u0009here\\u0001 (\xf0\x9f\x90\x8d.py:0)\""));
	CHECK(file_has(file, "\"name\":\"bad\xef\xbf\xbd\xef\xbf\xbd( (x.py:-1)\""));
	profile__free(p);
}

/*
 * main calls children of 999, 1000, 1001 and 5000 ns; the 5000 ns one has two 400 ns children.
 * With min 1000 ns the 999 and 400 ns calls are left out and counted; 1000 ns is kept.
 */
static void feed_durations(struct profile *p)
{
	struct sim_thread t = { .tid = 3 };
	static const uint64_t durs[] = { 999, 1000, 1001, 5000 };
	uint64_t ts = 100;
	size_t i;

	profile__code(p, 1, "d.py", "main", 1);
	profile__code(p, 2, "d.py", "child", 2);
	profile__code(p, 3, "d.py", "grandchild", 3);
	CHECK(sim_call(p, &t, ts, 1) == 0);
	for (i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
		CHECK(sim_call(p, &t, ts, 2) == 0);
		if (durs[i] == 5000) {
			CHECK(sim_call(p, &t, ts + 100, 3) == 0);
			CHECK(sim_return(p, &t, ts + 500) == 0);
			CHECK(sim_call(p, &t, ts + 500, 3) == 0);
			CHECK(sim_return(p, &t, ts + 900) == 0);
		}
		ts += durs[i];
		CHECK(sim_return(p, &t, ts) == 0);
	}
	CHECK(sim_return(p, &t, ts + 1) == 0);
	profile__finish(p, ts + 1);
}

TEST(chrome_min_us_leaves_out_short_calls_and_counts_them)
{
	static const char *const opts[] = {
		"--count", "main (d.py:1)=1", "--count", "child (d.py:2)=3", "--left-out", "3",
		"--min-us", "1.000", NULL
	};
	static const char *const opts0[] = {
		"--count", "main (d.py:1)=1", "--count", "child (d.py:2)=4",
		"--count", "grandchild (d.py:3)=2", "--left-out", "0", "--min-us", "0.000", NULL
	};
	static const char *const opts_odd[] = {
		"--count", "main (d.py:1)=1", "--count", "child (d.py:2)=1", "--left-out", "5",
		"--min-us", "1.002", NULL
	};
	struct profile *p = profile__new(), *p0 = profile__new(), *p2 = profile__new();
	struct chrome_trace *ct;
	struct outfile out;

	REQUIRE(p && p0 && p2);
	ct = start_trace(&out, tmp_path("min.json"), p, 0, 1000);
	REQUIRE(ct);
	feed_durations(p);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(tmp_path("min.json"), opts) == 0);
	CHECK(file_has(tmp_path("min.json"),
		       "\"otherData\":{\n\"pyuprof_calls_left_out\":3,\n\"pyuprof_min_us\":1.000\n}"));

	ct = start_trace(&out, tmp_path("min0.json"), p0, 0, 0);
	REQUIRE(ct);
	feed_durations(p0);
	REQUIRE(end_trace(&out, ct, p0) == 0);
	CHECK(check_trace(tmp_path("min0.json"), opts0) == 0);

	/* a threshold that is not whole µs: 1002 ns keeps only the 5000 ns child (and main) */
	ct = start_trace(&out, tmp_path("min_odd.json"), p2, 0, 1002);
	REQUIRE(ct);
	feed_durations(p2);
	REQUIRE(end_trace(&out, ct, p2) == 0);
	CHECK(check_trace(tmp_path("min_odd.json"), opts_odd) == 0);
	profile__free(p);
	profile__free(p0);
	profile__free(p2);
}

TEST(chrome_gz_is_gzip_and_parses)
{
	static const char *const opts[] = { "--count", "f (g.py:1)=20000", "--count",
					    "g (g.py:2)=20000", NULL };
	struct sim_thread t = { .tid = 9 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;
	unsigned char magic[2] = { 0 };
	uint64_t ts = 1;
	FILE *f;
	int i;

	REQUIRE(p);
	profile__code(p, 1, "g.py", "f", 1);
	profile__code(p, 2, "g.py", "g", 2);
	file = tmp_path("trace.json.gz");
	ct = start_trace(&out, file, p, 0, 0);
	REQUIRE(ct);
	for (i = 0; i < 20000; i++) {
		CHECK(sim_call(p, &t, ts++, 1) == 0);
		CHECK(sim_call(p, &t, ts++, 2) == 0);
		CHECK(sim_return(p, &t, ts++) == 0);
		CHECK(sim_return(p, &t, ts++) == 0);
	}
	profile__finish(p, ts);
	REQUIRE(end_trace(&out, ct, p) == 0);
	f = fopen(file, "rb");
	REQUIRE(f);
	CHECK(fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
	fclose(f);
	CHECK(check_trace(file, opts) == 0);
	profile__free(p);
}

TEST(chrome_calls_open_at_stop_end_there)
{
	static const char *const opts[] = { "--count", "outer (o.py:1)=1", "--count",
					    "inner (o.py:2)=2", NULL };
	struct sim_thread t = { .tid = 5 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;

	REQUIRE(p);
	profile__code(p, 1, "o.py", "outer", 1);
	profile__code(p, 2, "o.py", "inner", 2);
	file = tmp_path("open.json");
	ct = start_trace(&out, file, p, 0, 0);
	REQUIRE(ct);
	CHECK(sim_call(p, &t, 1000, 1) == 0);
	CHECK(sim_call(p, &t, 2000, 2) == 0);
	CHECK(sim_return(p, &t, 3000) == 0);
	CHECK(sim_call(p, &t, 4000, 2) == 0);
	profile__finish(p, 9000);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(file, opts) == 0);
	CHECK(file_has(file, "\"name\":\"inner (o.py:2)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":4.000,\"dur\":5.000,"));
	CHECK(file_has(file, "\"name\":\"outer (o.py:1)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":1.000,\"dur\":8.000,"));
	profile__free(p);
}

/*
 * Calls that begin at the same ns as their parent are written after it (chrome://tracing
 * nests ties in file order), also when the parent never ends and only close writes them.
 */
TEST(chrome_same_begin_parents_come_first)
{
	static const char *const opts[] = {
		"--count", "a (s.py:1)=1", "--count", "b (s.py:2)=2", "--count", "c (s.py:3)=3",
		"--count", "d (s.py:4)=1", "--count", "y (s.py:6)=1", "--count", "u (s.py:7)=1",
		NULL
	};
	struct sim_thread t = { .tid = 11 }, t2 = { .tid = 12 };
	__u64 chain[CHAIN_LEN] = { 9000 }, chain_code[CHAIN_LEN] = { 1 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;

	REQUIRE(p);
	profile__code(p, 1, "s.py", "a", 1);
	profile__code(p, 2, "s.py", "b", 2);
	profile__code(p, 3, "s.py", "c", 3);
	profile__code(p, 4, "s.py", "d", 4);
	profile__code(p, 5, "s.py", "x", 5);
	profile__code(p, 6, "s.py", "y", 6);
	profile__code(p, 7, "s.py", "u", 7);
	file = tmp_path("same.json");
	ct = start_trace(&out, file, p, 0, 0);
	REQUIRE(ct);
	CHECK(sim_call(p, &t, 100, 1) == 0); /* a [100, 200] */
	CHECK(sim_call(p, &t, 100, 2) == 0); /* b [100, 150] */
	CHECK(sim_call(p, &t, 100, 3) == 0); /* c [100, 100] twice */
	CHECK(sim_return(p, &t, 100) == 0);
	CHECK(sim_call(p, &t, 100, 3) == 0);
	CHECK(sim_return(p, &t, 100) == 0);
	CHECK(sim_call(p, &t, 100, 4) == 0); /* d [100, 120] */
	CHECK(sim_return(p, &t, 120) == 0);
	CHECK(sim_return(p, &t, 150) == 0);
	CHECK(sim_call(p, &t, 150, 2) == 0); /* b [150, 170]: its parent began earlier */
	CHECK(sim_call(p, &t, 150, 3) == 0); /* c [150, 160] */
	CHECK(sim_return(p, &t, 160) == 0);
	CHECK(sim_return(p, &t, 170) == 0);
	CHECK(sim_return(p, &t, 200) == 0);
	/* tid 12: x never ends (no profile__finish), y [500, 600] inside it */
	CHECK(sim_call(p, &t2, 500, 5) == 0);
	CHECK(sim_call(p, &t2, 500, 6) == 0);
	CHECK(sim_return(p, &t2, 600) == 0);
	/* tid 13: u's caller began before recording: not a call, and nothing to wait for */
	CHECK(profile__call(p, 13, 700, 7, 9001, chain, chain_code, 0, false) == 0);
	CHECK(profile__return(p, 13, 800) == 0);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(file, opts) == 0);
	CHECK(file_has(file, "\"name\":\"a (s.py:1)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":0.100,\"dur\":0.100,\"pid\":4242,\"tid\":11,"
			     "\"args\":{\"file\":\"s.py\",\"line\":1}},\n"
			     "{\"name\":\"b (s.py:2)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":0.100,\"dur\":0.050,\"pid\":4242,\"tid\":11,"
			     "\"args\":{\"file\":\"s.py\",\"line\":2}},\n"));
	CHECK(file_has(file, "\"name\":\"u (s.py:7)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":0.700,\"dur\":0.100,\"pid\":4242,\"tid\":13,"
			     "\"args\":{\"file\":\"s.py\",\"line\":7}},\n"
			     "{\"name\":\"y (s.py:6)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":0.500,\"dur\":0.100,\"pid\":4242,\"tid\":12,"
			     "\"args\":{\"file\":\"s.py\",\"line\":6}},\n"));
	profile__free(p);
}

/* Many calls at one instant (a clock's tie, or a recording's wait taken out twice, as one was):
 * each is written once, parents first, and a call ending holds none of them up. */
TEST(chrome_many_calls_at_one_instant_are_written_once_parents_first)
{
	static const char *const opts[] = {
		"--count", "a (s.py:1)=1", "--count", "b (s.py:2)=3000", "--count", "c (s.py:3)=3000",
		"--count", "d (s.py:4)=1", NULL
	};
	struct sim_thread t = { .tid = 11 }, t2 = { .tid = 12 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	const char *file;
	int i;

	REQUIRE(p);
	profile__code(p, 1, "s.py", "a", 1);
	profile__code(p, 2, "s.py", "b", 2);
	profile__code(p, 3, "s.py", "c", 3);
	profile__code(p, 4, "s.py", "d", 4);
	file = tmp_path("instant.json");
	ct = start_trace(&out, file, p, 0, 0);
	REQUIRE(ct);
	CHECK(sim_call(p, &t, 100, 1) == 0); /* a [100, 200] */
	for (i = 0; i < 3000; i++) {
		CHECK(sim_call(p, &t, 100, 2) == 0); /* b [100, 100], c [100, 100] in it */
		CHECK(sim_call(p, &t, 100, 3) == 0);
		CHECK(sim_return(p, &t, 100) == 0);
		CHECK(sim_return(p, &t, 100) == 0);
		if (i == 0) { /* another thread's call at that instant, written at once */
			CHECK(sim_call(p, &t2, 100, 4) == 0);
			CHECK(sim_return(p, &t2, 150) == 0);
		}
	}
	CHECK(sim_return(p, &t, 200) == 0);
	REQUIRE(end_trace(&out, ct, p) == 0);
	CHECK(check_trace(file, opts) == 0);
	/* a, then every b in the order they ran, then the c's */
	CHECK(file_has(file, "\"name\":\"a (s.py:1)\",\"cat\":\"python\",\"ph\":\"X\","
			     "\"ts\":0.100,\"dur\":0.100,\"pid\":4242,\"tid\":11,"
			     "\"args\":{\"file\":\"s.py\",\"line\":1}},\n"
			     "{\"name\":\"b (s.py:2)\","));
	profile__free(p);
}

TEST(chrome_thrown_away_trace_leaves_no_file)
{
	struct sim_thread t = { .tid = 5 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	struct outfile out;
	struct stat st;

	REQUIRE(p);
	profile__code(p, 1, "o.py", "outer", 1);
	ct = start_trace(&out, tmp_path("abort.json"), p, 0, 0);
	REQUIRE(ct);
	CHECK(sim_call(p, &t, 1000, 1) == 0);
	CHECK(sim_return(p, &t, 2000) == 0);
	CHECK(chrome_trace__close(ct, NULL, NULL, NULL) == 0);
	CHECK(chrome_trace__close(NULL, p, NULL, NULL) == 0);
	outfile__abort(&out);
	CHECK(stat(tmp_path("abort.json"), &st) < 0 && errno == ENOENT);
	profile__free(p);
}

TEST(chrome_write_errors_are_returned)
{
	struct outfile out = { .fd = -1 };
	struct sim_thread t = { .tid = 5 };
	struct profile *p = profile__new();
	struct chrome_trace *ct;
	int i;

	REQUIRE(p);
	profile__code(p, 1, "o.py", "outer", 1);
	ct = chrome_trace__open(&out, p, 1, 0, 0);
	REQUIRE(ct);
	p->on_call = chrome_trace__on_call;
	p->on_call_ctx = ct;
	for (i = 0; i < 2000; i++) {
		CHECK(sim_call(p, &t, (uint64_t)i * 2, 1) == 0);
		CHECK(sim_return(p, &t, (uint64_t)i * 2 + 1) == 0);
	}
	profile__finish(p, 5000);
	CHECK(chrome_trace__close(ct, p, NULL, NULL) == -EBADF);
	profile__free(p);
}

/* Removes tmpdir and what the tests left in it. */
static void cleanup(void)
{
	static const char *const names[] = { "layout.json", "numbers.json", "escape.json",
					     "utf8.json", "long.json", "nested.json",
					     "threads.json", "names.json", "min.json", "min0.json",
					     "min_odd.json", "trace.json.gz", "open.json", "same.json",
					     "instant.json", NULL };
	int i;

	for (i = 0; names[i]; i++)
		unlink(tmp_path(names[i]));
	if (rmdir(tmpdir))
		printf("# %s not removed: %s\n", tmpdir, strerror(errno));
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(jw_layout_is_exact),
		TEST_CASE(jw_numbers_are_exact),
		TEST_CASE(jw_escapes_controls_quotes_and_backslashes_only),
		TEST_CASE(jw_invalid_utf8_is_replaced_as_python_does),
		TEST_CASE(jw_long_strings_cross_the_buffer),
		TEST_CASE(jw_misuse_is_an_error_not_bad_json),
		TEST_CASE(jw_nesting_is_limited),
		TEST_CASE(jw_write_errors_are_returned),
		TEST_CASE(chrome_nested_calls_have_exact_times),
		TEST_CASE(chrome_threads_interleave_and_stay_nested),
		TEST_CASE(chrome_names_are_escaped_and_utf8_kept),
		TEST_CASE(chrome_min_us_leaves_out_short_calls_and_counts_them),
		TEST_CASE(chrome_gz_is_gzip_and_parses),
		TEST_CASE(chrome_calls_open_at_stop_end_there),
		TEST_CASE(chrome_same_begin_parents_come_first),
		TEST_CASE(chrome_many_calls_at_one_instant_are_written_once_parents_first),
		TEST_CASE(chrome_thrown_away_trace_leaves_no_file),
		TEST_CASE(chrome_write_errors_are_returned),
	};
	int ret;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (access(CHECKER, R_OK)) {
		printf("# %s not found: run from the top of the repository\n", CHECKER);
		return 1;
	}
	ret = test_run(cases, TEST_COUNT(cases));
	if (getenv("PYUPROF_TEST_KEEP"))
		printf("# files kept in %s\n", tmpdir);
	else
		cleanup();
	return ret;
}
