// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Overhead calibration (calibrate.h): the snippet, its plain run, its recorded run through the
 * caller's record function, and the figures. The probed run is recorded by the same code that
 * records the target, so whatever probes that code places (ret sites, uretprobes, a
 * trampoline) are what is measured, on this interpreter binary and this machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/log.h"
#include "record/calibrate.h"

#define EMPTY_NAME "_pyuprof_calib_empty"
#define BODY_NAME "_pyuprof_calib_body"
#define LEAF_NAME "_pyuprof_calib_leaf"
#define TREE_NAME "_pyuprof_calib_tree"
#define PLAIN_TIMEOUT_S 20

/*
 * argv: OUT CLOCK N R D (the trees' depth); OUT is a descriptor it inherits (a file already unlinked: nothing is
 * left behind whatever happens to pyuprof, and the snippet needs no right to any path).
 * Functions are called through a local (LOAD_FAST) so that the loops differ only by the call.
 * The call cost compensated is the trees' (calibrate__figures says why), the empty loop's
 * gives the part inside a call and the await's extra.
 * Each loop function is itself one call, in every loop alike. The loops are timed by the
 * thread's CPU time whatever the recording's clock (CLOCK is passed for the
 * record): the probes' work is the thread's own, while the time a thread waits for a CPU on a
 * loaded machine (pyuprof's consumer among the contenders) changes from one second to the
 * next, and subtracting it as measured at the start over-compensated by up to 5x on the test
 * VM (bench/FIDELITY.md); it is left in the wall-clock times.
 */
static const char snippet[] =
	"import sys, time\n"
	"out, clock, N, R, D = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), "
	"int(sys.argv[5])\n"
	"now = time.thread_time_ns\n"
	"def " EMPTY_NAME "():\n"
	"    pass\n"
	"def " BODY_NAME "():\n"
	"    for _ in range(16):\n"
	"        pass\n"
	"def none(n):\n"
	"    for _ in range(n):\n"
	"        pass\n"
	"def empty(n, f=" EMPTY_NAME "):\n"
	"    for _ in range(n):\n"
	"        f()\n"
	"def body(n, f=" BODY_NAME "):\n"
	"    for _ in range(n):\n"
	"        f()\n"
	"def " TREE_NAME "(d):\n"
	"    if d:\n"
	"        " TREE_NAME "(d - 1)\n"
	"        " TREE_NAME "(d - 1)\n"
	"def trees(n, f=" TREE_NAME "):\n"
	"    for _ in range(n // (2 ** (D + 1) - 1)):\n"
	"        f(D)\n"
	"async def " LEAF_NAME "():\n"
	"    return 1\n"
	"async def awaiting(n, f=" LEAF_NAME "):\n"
	"    for _ in range(n):\n"
	"        await f()\n"
	"def awaits(n):\n"
	"    try:\n"
	"        awaiting(n).send(None)\n"
	"    except StopIteration:\n"
	"        pass\n"
	"rows = []\n"
	"for r in range(R):\n"
	"    t0 = now(); none(N); t1 = now(); empty(N); t2 = now(); body(N); t3 = now()\n"
	"    awaits(N); t4 = now(); trees(N); t5 = now()\n"
	"    rows.append('%d %d %d %d %d' % (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4))\n"
	"with open(int(out), 'w', closefd=False) as f:\n"
	"    f.write('\\n'.join(rows) + '\\n')\n";

struct durations {
	uint64_t *v;
	uint32_t n, cap;
};

struct calib_run {
	struct profile *p;
	uint32_t empty_id, body_id;
	struct durations empty, body;
	int err;
};

static int durations_add(struct durations *d, uint64_t ns)
{
	if (array_grow((void **)&d->v, &d->cap, sizeof(*d->v), d->n + 1))
		return -ENOMEM;
	d->v[d->n++] = ns;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, uint32_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

/* The median of a loop's rounds: a loaded machine slows the recording it calibrates for as
 * much as a typical round, not as little as the least disturbed one. */
static uint64_t loop_time(const uint64_t *v, uint32_t n)
{
	uint64_t c[CALIB_ROUNDS];

	n = n < CALIB_ROUNDS ? n : CALIB_ROUNDS;
	memcpy(c, v, n * sizeof(*c));
	return median(c, n);
}

static void on_call(void *ctx, uint32_t thread, uint32_t func, uint64_t t0, uint64_t t1)
{
	struct calib_run *run = ctx;
	const char *name;

	(void)thread;
	if (run->err || func >= run->p->nfuncs)
		return;
	if (func != run->empty_id && func != run->body_id) {
		name = run->p->funcs[func].name;
		if (!strcmp(name, EMPTY_NAME))
			run->empty_id = func;
		else if (!strcmp(name, BODY_NAME))
			run->body_id = func;
		else
			return;
	}
	run->err = durations_add(func == run->empty_id ? &run->empty : &run->body,
				 t1 > t0 ? t1 - t0 : 0);
}

void calibrate__watch(struct calib_run *run, struct profile *p)
{
	run->p = p;
	p->on_call = on_call;
	p->on_call_ctx = run;
}

static int read_timings(int fd, struct calib_timings *t, char *why, size_t why_len)
{
	int dfd = lseek(fd, 0, SEEK_SET) ? -1 : dup(fd);
	FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
	unsigned long long a, b, c, d, e;

	memset(t, 0, sizeof(*t));
	while (f && t->rounds < CALIB_ROUNDS &&
	       fscanf(f, "%llu %llu %llu %llu %llu", &a, &b, &c, &d, &e) == 5) {
		t->none[t->rounds] = a;
		t->empty[t->rounds] = b;
		t->body[t->rounds] = c;
		t->awaits[t->rounds] = d;
		t->trees[t->rounds++] = e;
	}
	if (f)
		fclose(f);
	else if (dfd >= 0)
		close(dfd);
	if (t->rounds == CALIB_ROUNDS)
		return 0;
	snprintf(why, why_len, "the calibration snippet gave %u of %u rounds", t->rounds,
		 CALIB_ROUNDS);
	return -ENODATA;
}

/* Starts argv plainly (no probes, output to /dev/null), where and as whom as says; it dies
 * with pyuprof, whatever ends pyuprof (SIGKILL included). */
static int spawn_plain(char **argv, const struct launch_as *as, pid_t *pid, char *why,
		       size_t why_len)
{
	pid_t parent = getpid();
	int err, fd;

	*pid = fork();
	if (*pid < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot run %s: %s", argv[0], strerror(-err));
		return err;
	}
	if (*pid == 0) {
		/* (the death signal after the switch of user, which clears it) */
		if (launch__become(as) || prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		fd = open("/dev/null", O_RDWR);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		if (fd > STDOUT_FILENO)
			close(fd);
		execvp(argv[0], argv);
		_exit(127); /* the wait below says the snippet failed */
	}
	return 0;
}

/* Waits at most PLAIN_TIMEOUT_S for the plain run to end well. */
static int wait_plain(pid_t pid, char *why, size_t why_len)
{
	int st, i;

	for (i = 0; i < PLAIN_TIMEOUT_S * 100; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			snprintf(why, why_len, "waiting for the calibration run: %s",
				 strerror(errno));
			return -errno;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (i == PLAIN_TIMEOUT_S * 100) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		snprintf(why, why_len, "the calibration snippet ran over %d s", PLAIN_TIMEOUT_S);
		return -ETIMEDOUT;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(why, why_len, "the calibration snippet failed without probes");
		return -ECHILD;
	}
	return 0;
}

/* What one iteration of a loop adds to the loop without calls (its typical round). */
static double per_call(const struct calib_timings *t, const uint64_t *loop)
{
	return ((double)loop_time(loop, t->rounds) - (double)loop_time(t->none, t->rounds)) /
	       CALIB_CALLS;
}

int calibrate__figures(const struct calib_timings *plain, const struct calib_timings *probed,
		       uint64_t empty_median, uint64_t body_median, struct calibration *out,
		       char *why, size_t why_len)
{
	/* a loop's typical round, less the loop without calls: calls alone */
	double d_empty = per_call(plain, plain->empty), d_body = per_call(plain, plain->body);
	double p_empty = per_call(probed, probed->empty), p_body = per_call(probed, probed->body);
	/* an await of a coroutine that returns at once: two activations (made, run) and the
	 * return, which under the hook costs its awaiting caller more (profile__gen_return) */
	double d_await = per_call(plain, plain->awaits), p_await = per_call(probed, probed->awaits);
	double flat = p_empty - d_empty, inside, done, call;

	/*
	 * The call cost compensated is a call's in a tree of calls (each loop's round less the
	 * plain one, over its calls: the trees' own work is in both). A loop of calls of an
	 * empty function is the probes' cheapest shape, every branch predicted the same way
	 * each time; calls nested in calls, the shape of programs, cost the same probes more.
	 * Measured on the 2-vCPU test VM (bench/tree_calls.sh; bench/FIDELITY.md, History,
	 * 2026-11-27T00:22Z), ns a call over the empty loop's: 6-9 on 3.12 and 3.13, 4-6 on
	 * Debian's 3.11, 1-3 on 3.8, about the same at depths 2 to 11 and in fib. Calibrated on
	 * the loop, fib's section came out 1.30-1.42 of its native time on 3.11+ and compile's
	 * 1.09; a loop of calls of an empty function now comes out short (0.64-0.82 on 3.11+).
	 */
	call = ((double)loop_time(probed->trees, probed->rounds) -
		(double)loop_time(plain->trees, plain->rounds)) / CALIB_TREE_CALLS;
	if (d_empty < 0)
		d_empty = 0;
	/*
	 * Between an empty function's two timestamps lie the probes' inside part and some of
	 * the call's own work; how the unprobed call cost (tens of ns) splits between caller
	 * and callee cannot be seen from here: half of it is taken as the callee's.
	 */
	inside = (double)empty_median - d_empty / 2;
	if (!(flat > 0)) {
		snprintf(why, why_len, "the probes measured no cost (%.0f ns a call probed, %.0f "
			 "plain; %.0f more a call in a tree of calls)", p_empty, d_empty, call);
		return -ERANGE;
	}
	/* the trees, timed in two runs, can come out at nothing where a VM's speed moves by more
	 * than the probes' cost between the runs (seen on a 2-vCPU AMD VM: -2 ns a call on 3.8,
	 * whose probes cost ~30): the loop's figure then, rather than no compensation at all */
	out->tree_fallback = !(call > 0);
	if (out->tree_fallback)
		call = flat;
	if (inside < 0)
		inside = 0;
	if (inside > call)
		inside = call;
	out->comp.call_ns = (uint64_t)(call + 0.5);
	out->comp.inside_ns = (uint64_t)(inside + 0.5);
	/* (the await is a loop's too: what it costs past two of the loop's calls) */
	done = p_await - d_await - 2 * flat;
	out->comp.done_ns = done > 0 ? (uint64_t)(done + 0.5) : 0;
	out->flat_call_ns = (uint64_t)(flat + 0.5);
	out->plain_call_ns = (uint64_t)(d_empty + 0.5);
	out->body_call_ns = p_body - d_body > 0 ? (uint64_t)(p_body - d_body + 0.5) : 0;
	/* the same inside part seen through the known body: its recorded duration less the
	 * body's plain cost (its call's, less the empty call's) and the call's own half */
	inside = (double)body_median - (d_body - d_empty) - d_empty / 2;
	out->body_inside_ns = inside > 0 ? (uint64_t)(inside + 0.5) : 0;
	return 0;
}

int calibrate__run(const char *python, const struct launch_as *as, bool cpu_clock,
		   calib_record_fn record, void *ctx, struct calibration *out, char *why, size_t why_len)
{
	char plain_path[] = "/tmp/pyuprof-calib-XXXXXX", probed_path[] = "/tmp/pyuprof-calib-XXXXXX";
	char n_arg[16], r_arg[16], d_arg[16], plain_arg[16], probed_arg[16];
	char *cmd[] = { (char *)python, "-I", "-S", "-c", (char *)snippet, plain_arg,
			cpu_clock ? "cpu" : "wall", n_arg, r_arg, d_arg, NULL };
	const int out_arg = 5;
	struct calib_run run = { .empty_id = NO_ID, .body_id = NO_ID };
	struct calib_timings plain, probed;
	uint64_t t0 = clock__mono_ns();
	int fd1 = mkstemp(plain_path), fd2 = mkstemp(probed_path), err;
	pid_t plain_pid;

	memset(out, 0, sizeof(*out));
	if (fd1 < 0 || fd2 < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot create a file in /tmp: %s", strerror(errno));
		goto out;
	}
	unlink(plain_path);
	unlink(probed_path);
	snprintf(plain_arg, sizeof(plain_arg), "%d", fd1);
	snprintf(probed_arg, sizeof(probed_arg), "%d", fd2);
	snprintf(n_arg, sizeof(n_arg), "%d", CALIB_CALLS);
	snprintf(r_arg, sizeof(r_arg), "%d", CALIB_ROUNDS);
	snprintf(d_arg, sizeof(d_arg), "%d", CALIB_TREE_DEPTH);
	/* one after the other: the session reaps any child of pyuprof's it sees end */
	err = spawn_plain(cmd, as, &plain_pid, why, why_len);
	if (!err)
		err = wait_plain(plain_pid, why, why_len);
	if (!err)
		err = read_timings(fd1, &plain, why, why_len);
	if (err)
		goto out;
	cmd[out_arg] = probed_arg;
	err = record(ctx, cmd, as, &run);
	if (err) {
		snprintf(why, why_len, "recording the calibration snippet failed: %s",
			 strerror(-err));
		goto out;
	}
	err = run.err ? run.err : read_timings(fd2, &probed, why, why_len);
	if (err)
		goto out;
	if (run.empty.n < CALIB_CALLS * CALIB_ROUNDS || run.body.n < CALIB_CALLS * CALIB_ROUNDS) {
		snprintf(why, why_len, "the recording saw %u and %u of the snippet's %u calls",
			 run.empty.n, run.body.n, CALIB_CALLS * CALIB_ROUNDS);
		err = -ENODATA;
		goto out;
	}
	err = calibrate__figures(&plain, &probed, median(run.empty.v, run.empty.n),
				 median(run.body.v, run.body.n), out, why, why_len);
	out->took_s = (clock__mono_ns() - t0) / 1e9;
out:
	if (fd1 >= 0)
		close(fd1);
	else if (fd2 >= 0)
		unlink(probed_path); /* the other was never made */
	if (fd2 >= 0)
		close(fd2);
	else if (fd1 >= 0)
		unlink(plain_path);
	free(run.empty.v);
	free(run.body.v);
	return err;
}
