// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Overhead calibration (calibrate.h): the snippet, its plain and recorded runs taking turns (the
 * recorded one through the caller's record function), the figures in steps of the call-free
 * loop, the speed run that turns them into ns, and their keeping. The probed run is recorded by
 * the same code that records the target, so whatever probes that code places (ret sites,
 * uretprobes, a trampoline) are what is measured, on this interpreter binary and this machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/cache.h"
#include "base/clock.h"
#include "base/log.h"
#include "record/calibrate.h"

#define EMPTY_NAME "_pyuprof_calib_empty"
#define NONE_NAME "_pyuprof_calib_none" /* the call-free loop: each round's first call */
#define BODY_NAME "_pyuprof_calib_body"
#define LEAF_NAME "_pyuprof_calib_leaf"
#define TREE_NAME "_pyuprof_calib_tree"
/* the C function the snippet calls (cProfile's name for it, as the profile has it) */
/* the C calls of the snippet's loop of them, as cProfile names them (c_of) */
static const char *const c_names[] = {
	"<built-in method builtins.abs>", "<built-in method builtins.len>",
	"<built-in method builtins.isinstance>", "<method 'append' of 'list' objects>",
	"<method 'get' of 'dict' objects>",
};
_Static_assert(sizeof(c_names) / sizeof(*c_names) == CALIB_C_KINDS, "one name a kind");
#define PLAIN_TIMEOUT_S 20
#define SPEED_TIMEOUT_S 5
#define KEPT_KIND "calibration"

/*
 * argv: OUT CLOCK N R D IN TO FIRST MODE. OUT is a descriptor it inherits (a file already
 * unlinked: nothing is left behind whatever happens to pyuprof, and the snippet needs no right
 * to any path); CLOCK is passed for the record; D is the trees' depth. IN and TO are the turns'
 * pipes (-1: none): a run waits on IN for the other's round before its own, and writes a byte
 * to TO after it; the FIRST run goes first, and the other writes no turn after its last round,
 * so that neither writes to a pipe whose reader has gone. A run whose other run has gone (the
 * pipe's end) stops with status 3. MODE "speed": the call-free loop alone, a round a
 * millisecond (a moment's disturbance of the machine takes a round, not the run).
 * The call-free loop runs in C (sum over a range: no bytecode a step), so that what the probes
 * do to the interpreter's bytecode leaves it alone: on 3.8-3.11 a profile function (pyuprof's for
 * C functions) sends every instruction down the interpreter's tracing path, and a bytecode loop
 * ran 1.5x slower probed than plain on Debian's 3.11 (9.7-11 ns a step, 14.9 probed; the C loop
 * 6.6-8 either way): counted in the probed run's own slow steps, the probes' cost came out at
 * two thirds, and the slowing of the calls' own bytecode at nothing.
 * Functions are called through a local (LOAD_FAST) so that the loops differ only by the call.
 * Each loop function is itself one call, in every loop alike. The loops are timed by the
 * thread's CPU time whatever the recording's clock: the probes' work is the thread's own,
 * while the time a thread waits for a CPU on a loaded machine (pyuprof's consumer among the
 * contenders) changes from one second to the next, and subtracting it as measured at the start
 * over-compensated by up to 5x on the test VM (bench/FIDELITY.md); it is left in the wall-clock
 * times.
 */
static const char snippet[] =
	"import sys, time, os\n"
	"out, clock, N, R, D = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), "
	"int(sys.argv[5])\n"
	"tin, tout, first, mode = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8] == '1', "
	"sys.argv[9]\n"
	"now = time.thread_time_ns\n"
	"def " EMPTY_NAME "():\n"
	"    pass\n"
	"def " BODY_NAME "():\n"
	"    for _ in range(16):\n"
	"        pass\n"
	"def " NONE_NAME "(n, s=sum, r=range):\n"
	"    s(r(n))\n"
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
	"def iters(n):\n"
	"    for _ in range(n):\n"
	"        pass\n"
	"def ccalls(n, f=abs, g=len, h=isinstance, t=int):\n"
	"    l, d = [], {}\n"
	"    for _ in range(n // 5):\n"
	"        f(0); g(l); h(0, t); l.append(0); d.get(0)\n"
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
	"    if tin >= 0 and (r or not first) and not os.read(tin, 1):\n"
	"        sys.exit(3)\n"
	"    t0 = now(); " NONE_NAME "(8 * N); t1 = now()\n"
	"    if mode == 'speed':\n"
	"        rows.append('%d 0 0 0 0 0 0' % (t1 - t0))\n"
	"        time.sleep(0.001)\n"
	"        continue\n"
	"    empty(N); t2 = now(); body(N); t3 = now()\n"
	"    awaits(N); t4 = now(); trees(N); t5 = now(); ccalls(N); t6 = now()\n"
	"    iters(N); t7 = now()\n"
	"    rows.append('%d %d %d %d %d %d %d' % (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, "
	"t6 - t5, t7 - t6))\n"
	"    if tout >= 0 and (first or r < R - 1):\n"
	"        os.write(tout, b'.')\n"
	"with open(int(out), 'w', closefd=False) as f:\n"
	"    f.write('\\n'.join(rows) + '\\n')\n";

struct durations {
	uint64_t *v;
	uint32_t n, cap;
};

struct calib_run {
	struct profile *p;
	uint32_t empty_id, body_id, c_id[CALIB_C_KINDS], none_id;
	struct durations empty, body, c;
	struct durations rounds;	    /* when each round's call-free loop began */
	struct durations gauge_ts, gauge_ps; /* the speed gauge's readings (profile__gauge) */
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (n <= CALIB_ROUNDS), which are left as they were. */
static double median_of(const double *v, uint32_t n)
{
	double c[CALIB_ROUNDS];

	if (!n)
		return 0;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

/* Whether func is one of the snippet's C calls, bound (c_bind). */
static bool c_of(const struct calib_run *run, uint32_t func)
{
	for (uint32_t i = 0; i < CALIB_C_KINDS; i++)
		if (run->c_id[i] == func)
			return true;
	return false;
}

/* Binds the C function func if name is one of the snippet's C calls'. */
static bool c_bind(struct calib_run *run, uint32_t func, const char *name)
{
	for (uint32_t i = 0; i < CALIB_C_KINDS; i++)
		if (run->c_id[i] == NO_ID && !strcmp(name, c_names[i])) {
			run->c_id[i] = func;
			return true;
		}
	return false;
}

static void on_call(void *ctx, uint32_t thread, uint32_t func, uint64_t t0, uint64_t t1)
{
	struct calib_run *run = ctx;
	const char *name;

	(void)thread;
	if (run->err || func >= run->p->nfuncs)
		return;
	if (func == run->none_id || (run->none_id == NO_ID &&
				     !strcmp(run->p->funcs[func].name, NONE_NAME))) {
		run->none_id = func;
		run->err = durations_add(&run->rounds, t0);
		return;
	}
	if (func != run->empty_id && func != run->body_id && !c_of(run, func)) {
		name = run->p->funcs[func].name;
		if (!strcmp(name, EMPTY_NAME))
			run->empty_id = func;
		else if (!strcmp(name, BODY_NAME))
			run->body_id = func;
		else if (!run->p->funcs[func].cfunc || !c_bind(run, func, name))
			return;
	}
	run->err = durations_add(func == run->empty_id  ? &run->empty
				 : func == run->body_id ? &run->body
							: &run->c,
				 t1 > t0 ? t1 - t0 : 0);
}

static void on_gauge(void *ctx, uint64_t ts_ns, uint64_t ps)
{
	struct calib_run *run = ctx;

	if (!run->err)
		run->err = durations_add(&run->gauge_ts, ts_ns);
	if (!run->err)
		run->err = durations_add(&run->gauge_ps, ps);
}

void calibrate__watch(struct calib_run *run, struct profile *p)
{
	run->p = p;
	p->on_call = on_call;
	p->on_call_ctx = run;
	p->on_gauge = on_gauge;
	p->on_gauge_ctx = run;
}

/* The mean of v's values within 1.5x of their lower median (as profile__gauge takes a
 * window), 0 if none; v is sorted on the way. */
static double robust_mean(uint64_t *v, uint32_t n)
{
	uint64_t med;
	double sum = 0;
	uint32_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	med = v[(n - 1) / 2]; /* (the lower: a disturbance only ever lengthens a reading) */
	for (uint32_t i = 0; i < n; i++)
		if (v[i] * 2 <= med * 3 && v[i] * 3 >= med * 2) {
			sum += (double)v[i];
			k++;
		}
	return k ? sum / k : 0;
}

double calibrate__gauge(const struct calib_timings *probed, const uint64_t *round_ns,
			uint32_t nrounds, const uint64_t *gauge_ts, const uint64_t *gauge_ps,
			uint32_t ngauges)
{
	double per[CALIB_ROUNDS];
	uint64_t w[4096];
	uint32_t n = 0, g = 0;

	if (nrounds != probed->rounds || !ngauges)
		return 0;
	for (uint32_t r = 0; r < nrounds; r++) {
		uint64_t end = r + 1 < nrounds ? round_ns[r + 1] : UINT64_MAX;
		uint32_t k = 0;
		double mean;

		while (g < ngauges && gauge_ts[g] < round_ns[r])
			g++;
		for (; g < ngauges && gauge_ts[g] < end; g++)
			if (k < sizeof(w) / sizeof(*w))
				w[k++] = gauge_ps[g];
		mean = robust_mean(w, k);
		if (mean > 0 && probed->none[r])
			per[n++] = mean / ((double)probed->none[r] / CALIB_STEPS);
	}
	return median_of(per, n);
}

/* The timings a run wrote into fd: 0 when it gave want rounds, else -ENODATA with why. */
static int read_timings(int fd, uint32_t want, struct calib_timings *t, char *why, size_t why_len)
{
	int dfd = lseek(fd, 0, SEEK_SET) ? -1 : dup(fd);
	FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
	unsigned long long a, b, c, d, e, g, h;

	memset(t, 0, sizeof(*t));
	while (f && t->rounds < want &&
	       fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &a, &b, &c, &d, &e, &g, &h) == 7) {
		t->none[t->rounds] = a;
		t->empty[t->rounds] = b;
		t->body[t->rounds] = c;
		t->awaits[t->rounds] = d;
		t->trees[t->rounds] = e;
		t->ccalls[t->rounds] = g;
		t->iters[t->rounds++] = h;
	}
	if (f)
		fclose(f);
	else if (dfd >= 0)
		close(dfd);
	if (t->rounds == want)
		return 0;
	snprintf(why, why_len, "the calibration snippet gave %u of %u rounds", t->rounds, want);
	return -ENODATA;
}

/* A plain run: its pid, and a pidfd for it (-1: none), which stays its own whoever reaps it
 * (the hold of a session recording meanwhile reaps every child of pyuprof's that ends). */
struct plain_run {
	pid_t pid;
	int pidfd;
};

/* Starts argv plainly (no probes, output to /dev/null), where and as whom as says; it dies
 * with pyuprof, whatever ends pyuprof (SIGKILL included). keep: descriptors it inherits (-1:
 * none). (The thread that starts it is the one that drains a hold: nothing reaps it before its
 * pidfd is taken.) */
static int spawn_plain(char **argv, const struct launch_as *as, const int keep[2],
		       struct plain_run *run, char *why, size_t why_len)
{
	pid_t parent = getpid();
	int err, fd;

	run->pidfd = -1;
	run->pid = fork();
	if (run->pid < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot run %s: %s", argv[0], strerror(-err));
		run->pid = 0;
		return err;
	}
	if (run->pid == 0) {
		/* (the death signal after the switch of user, which clears it) */
		if (launch__become(as) || prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		for (int i = 0; i < 2; i++)
			if (keep[i] >= 0 && fcntl(keep[i], F_SETFD, 0))
				_exit(127);
		fd = open("/dev/null", O_RDWR);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		if (fd > STDOUT_FILENO)
			close(fd);
		execvp(argv[0], argv);
		_exit(127); /* the wait below says the snippet failed */
	}
	run->pidfd = (int)syscall(SYS_pidfd_open, run->pid, 0);
	return 0;
}

/* Ends run at once (it is not waited for any more). */
static void kill_plain(struct plain_run *run)
{
	siginfo_t si;

	if (!run->pid)
		return;
	if (run->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0);
		waitid(P_PIDFD, (id_t)run->pidfd, &si, WEXITED);
		close(run->pidfd);
	} else {
		kill(run->pid, SIGKILL);
		waitpid(run->pid, NULL, 0);
	}
	run->pid = 0;
	run->pidfd = -1;
}

/*
 * Waits at most timeout_s for a plain run to end well. Reaped by a hold meanwhile, its status
 * is not known: its timings say whether it ran (read_timings).
 */
static int wait_plain(struct plain_run *run, int timeout_s, char *why, size_t why_len)
{
	struct pollfd pfd = { .fd = run->pidfd, .events = POLLIN };
	uint64_t deadline = clock__mono_ns() + (uint64_t)timeout_s * 1000000000ull;
	siginfo_t si = { 0 };
	int st, r;

	if (run->pidfd < 0) { /* (a kernel without pidfds: as before them) */
		while ((r = waitpid(run->pid, &st, WNOHANG)) == 0 && clock__mono_ns() < deadline)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		if (r == 0) {
			kill_plain(run);
			snprintf(why, why_len, "the calibration snippet ran over %d s", timeout_s);
			return -ETIMEDOUT;
		}
		r = r == run->pid && (!WIFEXITED(st) || WEXITSTATUS(st));
		run->pid = 0;
		if (r) {
			snprintf(why, why_len, "the calibration snippet failed without probes");
			return -ECHILD;
		}
		return 0;
	}
	for (;;) {
		uint64_t now = clock__mono_ns();

		r = now < deadline ? poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) : 0;
		if (r > 0)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		kill_plain(run);
		snprintf(why, why_len, "the calibration snippet ran over %d s", timeout_s);
		return -ETIMEDOUT;
	}
	r = waitid(P_PIDFD, (id_t)run->pidfd, &si, WEXITED);
	close(run->pidfd);
	run->pid = 0;
	run->pidfd = -1;
	if (!r && (si.si_code != CLD_EXITED || si.si_status)) {
		snprintf(why, why_len, "the calibration snippet failed without probes");
		return -ECHILD;
	}
	return 0;
}

/* A round's loop in steps of the same run and round's call-free loop. */
static double in_steps(const struct calib_timings *t, const uint64_t *loop, uint32_t r)
{
	return (double)loop[r] * CALIB_STEPS / (double)(t->none[r] ? t->none[r] : 1);
}

int calibrate__figures(const struct calib_timings *plain, const struct calib_timings *probed,
		       uint64_t empty_median, uint64_t body_median, uint64_t c_median,
		       struct calibration *out, char *why, size_t why_len)
{
	double call[CALIB_ROUNDS], flat[CALIB_ROUNDS], d_empty[CALIB_ROUNDS], body[CALIB_ROUNDS],
		d_body[CALIB_ROUNDS], done[CALIB_ROUNDS], p_step[CALIB_ROUNDS], q_step[CALIB_ROUNDS],
		ccall[CALIB_ROUNDS], d_c[CALIB_ROUNDS];
	uint32_t n = plain->rounds < probed->rounds ? plain->rounds : probed->rounds, r;
	struct calib_steps *s = &out->steps;
	double q_step_ns;

	memset(s, 0, sizeof(*s));
	if (!n) {
		snprintf(why, why_len, "the calibration snippet gave no rounds");
		return -ERANGE;
	}
	/*
	 * Round r of either run, in steps of its own call-free loop, the two rounds taken one
	 * after the other: a loop less the call-free loop's steps is what its calls cost; the
	 * probed run's less the plain run's is what the probes add to them.
	 *
	 * The call cost compensated is a call's in a tree of calls (the trees' own work is in
	 * both runs). A loop of calls of an empty function is the probes' cheapest shape, every
	 * branch predicted the same way each time; calls nested in calls, the shape of programs,
	 * cost the same probes more. Measured on the 2-vCPU test VM (bench/tree_calls.sh;
	 * bench/FIDELITY.md, History, 2026-11-27T00:22Z), ns a call over the empty loop's: 6-9 on
	 * 3.12 and 3.13, 4-6 on Debian's 3.11, 1-3 on 3.8, about the same at depths 2 to 11 and in
	 * fib.
	 * Calibrated on the loop, fib's section came out 1.30-1.42 of its native time on 3.11+
	 * and compile's 1.09.
	 */
	for (r = 0; r < n; r++) {
		double pe = in_steps(plain, plain->empty, r), qe = in_steps(probed, probed->empty, r);
		double pb = in_steps(plain, plain->body, r), qb = in_steps(probed, probed->body, r);
		double pa = in_steps(plain, plain->awaits, r);
		double qa = in_steps(probed, probed->awaits, r);
		/* a C call: its loop less a loop of as many iterations (a fifth of the plain
		 * loop's: five C calls an iteration), plain and probed (on 3.8-3.11 the profile
		 * function slows each iteration's own instructions too: not the C call's) */
		double pc = in_steps(plain, plain->ccalls, r) -
			    in_steps(plain, plain->iters, r) / CALIB_C_KINDS;
		double qc = in_steps(probed, probed->ccalls, r) -
			    in_steps(probed, probed->iters, r) / CALIB_C_KINDS;

		call[r] = (in_steps(probed, probed->trees, r) - in_steps(plain, plain->trees, r)) /
			  CALIB_TREE_CALLS;
		flat[r] = (qe - pe) / CALIB_CALLS;
		d_empty[r] = (pe - CALIB_CALLS) / CALIB_CALLS; /* (the loop's own step, less) */
		body[r] = (qb - pb) / CALIB_CALLS;
		d_body[r] = (pb - CALIB_CALLS) / CALIB_CALLS;
		/* (an await is two activations and a return: past two of the loop's calls) */
		done[r] = (qa - pa) / CALIB_CALLS - 2 * flat[r];
		ccall[r] = (qc - pc) / CALIB_CALLS;
		d_c[r] = pc / CALIB_CALLS;
		p_step[r] = (double)plain->none[r] / CALIB_STEPS;
		q_step[r] = (double)probed->none[r] / CALIB_STEPS;
	}
	s->call = median_of(call, n);
	s->flat = median_of(flat, n);
	s->plain = median_of(d_empty, n) > 0 ? median_of(d_empty, n) : 0;
	s->body = median_of(body, n) > 0 ? median_of(body, n) : 0;
	s->done = median_of(done, n) > 0 ? median_of(done, n) : 0;
	/* (no C calls recorded, --no-builtins: nothing, give or take noise) */
	s->ccall = median_of(ccall, n) > 0 ? median_of(ccall, n) : 0;
	s->cplain = median_of(d_c, n) > 0 ? median_of(d_c, n) : 0;
	out->measured_ns = median_of(p_step, n);
	q_step_ns = median_of(q_step, n);
	if (!(s->flat > 0) || !(out->measured_ns > 0) || !(q_step_ns > 0)) {
		snprintf(why, why_len, "the probes measured no cost (%.2f steps of the call-free "
			 "loop a call probed, %.2f plain; %.2f more a call in a tree of calls)",
			 s->flat + s->plain, s->plain, s->call - s->flat);
		return -ERANGE;
	}
	/* the trees, noise of a few steps either way, can come out at nothing where the probes
	 * cost little: the loop's figure then, rather than no compensation at all */
	s->tree_fallback = !(s->call > 0);
	if (s->tree_fallback)
		s->call = s->flat;
	/*
	 * Between an empty function's two timestamps (the probed run's, at its speed) lie the
	 * probes' inside part and some of the call's own work; how the unprobed call cost splits
	 * between caller and callee cannot be seen from here: half of it is taken as the
	 * callee's.
	 */
	s->inside = (double)empty_median / q_step_ns - s->plain / 2;
	if (s->inside < 0)
		s->inside = 0;
	if (s->inside > s->call)
		s->inside = s->call;
	/* the same inside part seen through the known body: its recorded duration less the
	 * body's plain cost (its call's, less the empty call's) and the call's own half */
	s->body_inside = (double)body_median / q_step_ns - (median_of(d_body, n) - s->plain) -
			 s->plain / 2;
	if (s->body_inside < 0)
		s->body_inside = 0;
	/* a C call's part between its own two records, as the empty function's */
	s->cinside = c_median ? (double)c_median / q_step_ns - s->cplain / 2 : 0;
	if (s->cinside < 0)
		s->cinside = 0;
	if (s->cinside > s->ccall)
		s->cinside = s->ccall;
	calibrate__at_speed(out, out->measured_ns);
	return 0;
}

void calibrate__at_speed(struct calibration *cal, double step_ns)
{
	const struct calib_steps *s = &cal->steps;

	cal->step_ns = step_ns;
	cal->comp.call_ns = (uint64_t)(s->call * step_ns + 0.5);
	cal->comp.inside_ns = (uint64_t)(s->inside * step_ns + 0.5);
	cal->comp.done_ns = (uint64_t)(s->done * step_ns + 0.5);
	cal->comp.ccall_ns = (uint64_t)(s->ccall * step_ns + 0.5);
	cal->comp.cinside_ns = (uint64_t)(s->cinside * step_ns + 0.5);
	cal->comp.gauge_ps = (uint64_t)(s->gauge * step_ns + 0.5);
}

double calibrate__fast_step(const struct calibration *cal)
{
	double c[CALIB_RECENT];
	uint32_t n = cal->nrecent;

	if (!n)
		return cal->measured_ns;
	memcpy(c, cal->recent, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	return c[0];
}

bool calibrate__kept_trusted(const struct calibration *cal)
{
	return cal->measured_ns <= CALIB_KEPT_BOUND * calibrate__fast_step(cal);
}

void calibrate__at_speed_run(struct calibration *cal, double found_ns, bool *bounded)
{
	double fast = calibrate__fast_step(cal), step = found_ns > 0 ? found_ns : fast;

	*bounded = step > fast || step < fast / CALIB_SPEED_BOUND;
	if (step > fast)
		step = fast;
	else if (step < fast / CALIB_SPEED_BOUND)
		step = fast / CALIB_SPEED_BOUND;
	calibrate__at_speed(cal, step);
	if (!(found_ns > 0))
		return;
	if (cal->nrecent == CALIB_RECENT)
		memmove(cal->recent, cal->recent + 1, --cal->nrecent * sizeof(*cal->recent));
	/* (a disturbance moves the fast step by the bound at most) */
	cal->recent[cal->nrecent++] = found_ns < fast / CALIB_SPEED_BOUND ?
					      fast / CALIB_SPEED_BOUND : found_ns;
}

/* The snippet's argv (python: its path where it runs). The strings it points to are args'. */
struct snippet_args {
	char *argv[16];
	char n[16], r[16], d[16], out[16], in[16], to[16];
};

static char **snippet_argv(struct snippet_args *a, const char *python, bool cpu_clock, int out,
			   uint32_t rounds, int in, int to, bool first, const char *mode)
{
	char **v = a->argv;
	int i = 0;

	snprintf(a->n, sizeof(a->n), "%d", CALIB_CALLS);
	snprintf(a->r, sizeof(a->r), "%u", rounds);
	snprintf(a->d, sizeof(a->d), "%d", CALIB_TREE_DEPTH);
	snprintf(a->out, sizeof(a->out), "%d", out);
	snprintf(a->in, sizeof(a->in), "%d", in);
	snprintf(a->to, sizeof(a->to), "%d", to);
	v[i++] = (char *)python;
	v[i++] = "-I";
	v[i++] = "-S";
	v[i++] = "-c";
	v[i++] = (char *)snippet;
	v[i++] = a->out;
	v[i++] = cpu_clock ? "cpu" : "wall";
	v[i++] = a->n;
	v[i++] = a->r;
	v[i++] = a->d;
	v[i++] = a->in;
	v[i++] = a->to;
	v[i++] = first ? "1" : "0";
	v[i++] = (char *)mode;
	v[i] = NULL;
	return v;
}

/* An unlinked file in /tmp for a run's timings: its descriptor, or -errno with why. */
static int timings_file(char *why, size_t why_len)
{
	char path[] = "/tmp/pyuprof-calib-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		snprintf(why, why_len, "cannot create a file in /tmp: %s", strerror(errno));
		return -errno;
	}
	unlink(path);
	return fd;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int calibrate__run(const char *python, const struct launch_as *as, bool cpu_clock,
		   calib_record_fn record, void *ctx, struct calibration *out, char *why, size_t why_len)
{
	/* the turns: the plain run reads a[0] and writes b[1], the recorded one the others */
	int a[2] = { -1, -1 }, b[2] = { -1, -1 }, fd1 = -1, fd2 = -1, err;
	struct calib_run run = { .empty_id = NO_ID, .body_id = NO_ID, .none_id = NO_ID };
	struct snippet_args pa, qa;
	struct calib_timings plain, probed;
	uint64_t t0 = clock__mono_ns();
	struct plain_run plain_run = { 0 };

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < CALIB_C_KINDS; i++)
		run.c_id[i] = NO_ID;
	fd1 = timings_file(why, why_len);
	fd2 = fd1 < 0 ? fd1 : timings_file(why, why_len);
	if (fd2 < 0) {
		err = fd2;
		goto out;
	}
	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC)) {
		err = -errno;
		snprintf(why, why_len, "cannot make the calibration's pipes: %s", strerror(errno));
		goto out;
	}
	/* the plain run waits for the recorded one's first round, however long its start */
	err = spawn_plain(snippet_argv(&pa, python, cpu_clock, fd1, CALIB_ROUNDS, a[0], b[1], false,
				       "calib"),
			  as, (int[2]){ a[0], b[1] }, &plain_run, why, why_len);
	close_fd(&a[0]);
	close_fd(&b[1]);
	if (err)
		goto out;
	/* the recorded run's ends, for its launch (its end is theirs: the plain run's reads and
	 * writes then fail, and it stops) */
	if (fcntl(b[0], F_SETFD, 0) || fcntl(a[1], F_SETFD, 0)) {
		err = -errno;
		snprintf(why, why_len, "cannot pass the calibration's pipes: %s", strerror(errno));
		goto out;
	}
	err = record(ctx, snippet_argv(&qa, python, cpu_clock, fd2, CALIB_ROUNDS, b[0], a[1], true,
				       "calib"),
		     as, &run);
	close_fd(&b[0]);
	close_fd(&a[1]);
	if (err) {
		snprintf(why, why_len, "recording the calibration snippet failed: %s",
			 strerror(-err));
		goto out;
	}
	err = wait_plain(&plain_run, PLAIN_TIMEOUT_S, why, why_len);
	if (!err)
		err = read_timings(fd1, CALIB_ROUNDS, &plain, why, why_len);
	if (!err)
		err = run.err ? run.err : read_timings(fd2, CALIB_ROUNDS, &probed, why, why_len);
	if (err)
		goto out;
	if (run.empty.n < CALIB_CALLS * CALIB_ROUNDS || run.body.n < CALIB_CALLS * CALIB_ROUNDS) {
		snprintf(why, why_len, "the recording saw %u and %u of the snippet's %u calls",
			 run.empty.n, run.body.n, CALIB_CALLS * CALIB_ROUNDS);
		err = -ENODATA;
		goto out;
	}
	err = calibrate__figures(&plain, &probed, median(run.empty.v, run.empty.n),
				 median(run.body.v, run.body.n), median(run.c.v, run.c.n), out, why,
				 why_len);
	if (!err) {
		out->steps.gauge = calibrate__gauge(&probed, run.rounds.v, run.rounds.n,
						    run.gauge_ts.v, run.gauge_ps.v, run.gauge_ts.n);
		calibrate__at_speed(out, out->measured_ns);
	}
	out->took_s = (clock__mono_ns() - t0) / 1e9;
out:
	kill_plain(&plain_run); /* (if its other half never ran, it waits for nothing now) */
	close_fd(&a[0]);
	close_fd(&a[1]);
	close_fd(&b[0]);
	close_fd(&b[1]);
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	free(run.empty.v);
	free(run.body.v);
	free(run.c.v);
	free(run.rounds.v);
	free(run.gauge_ts.v);
	free(run.gauge_ps.v);
	return err;
}

int calibrate__speed_start(const char *python, const struct launch_as *as,
			   struct calib_speed *sp, char *why, size_t why_len)
{
	struct plain_run run = { 0 };
	struct snippet_args sa;
	int err;

	memset(sp, 0, sizeof(*sp));
	sp->t0 = clock__mono_ns();
	sp->fd = timings_file(why, why_len);
	if (sp->fd < 0)
		return sp->fd;
	err = spawn_plain(snippet_argv(&sa, python, false, sp->fd, CALIB_SPEED_ROUNDS, -1, -1, false,
				       "speed"),
			  as, (int[2]){ -1, -1 }, &run, why, why_len);
	if (err) {
		close_fd(&sp->fd);
		memset(sp, 0, sizeof(*sp));
		return err;
	}
	sp->pid = run.pid;
	sp->pidfd = run.pidfd;
	return 0;
}

int calibrate__speed_end(struct calib_speed *sp, double *step_ns, char *why, size_t why_len)
{
	struct plain_run run = { .pid = sp->pid, .pidfd = sp->pidfd };
	double steps[CALIB_ROUNDS];
	struct calib_timings t;
	int err;

	if (!sp->pid) {
		snprintf(why, why_len, "no speed run");
		return -ECHILD;
	}
	err = wait_plain(&run, SPEED_TIMEOUT_S, why, why_len);
	if (!err)
		err = read_timings(sp->fd, CALIB_SPEED_ROUNDS, &t, why, why_len);
	close_fd(&sp->fd);
	memset(sp, 0, sizeof(*sp));
	if (err)
		return err;
	for (uint32_t r = 0; r < t.rounds; r++)
		steps[r] = (double)t.none[r] / CALIB_STEPS;
	*step_ns = median_of(steps, t.rounds);
	/* tests: a speed run made at a moment the machine was this many times slower */
	if (getenv("PYUPROF_TEST_SPEED_SLOWER"))
		*step_ns *= atof(getenv("PYUPROF_TEST_SPEED_SLOWER"));
	return *step_ns > 0 ? 0 : -ERANGE;
}

void calibrate__speed_abort(struct calib_speed *sp)
{
	struct plain_run run = { .pid = sp->pid, .pidfd = sp->pidfd };

	if (!sp->pid)
		return;
	kill_plain(&run);
	close_fd(&sp->fd);
	memset(sp, 0, sizeof(*sp));
}

/* The CPU's model name, as /proc/cpuinfo says it (the steps are this CPU's). */
static void cpu_model(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(out, len, "?");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += strspn(colon + 1, " ") + 1;
		colon[strcspn(colon, "\n")] = 0;
		snprintf(out, len, "%s", colon);
		break;
	}
	if (f)
		fclose(f);
}

int calibrate__key(const char *file, const char *python, const char *mode, char *key,
		   size_t len)
{
	char id[160], cpu[160];
	int err = cache__file_id(file, id, sizeof(id));

	if (err)
		return err;
	cpu_model(cpu, sizeof(cpu));
	/* (c-kinds: figures kept from the C calls of abs alone are measured again) */
	snprintf(key, len, "%s %s %s cpus=%ld cpu=%s c-kinds=%d", id, python, mode,
		 sysconf(_SC_NPROCESSORS_ONLN), cpu, CALIB_C_KINDS);
	return 0;
}

int calibrate__kept(const char *key, struct calibration *out)
{
	struct calib_steps *s = &out->steps;
	char value[512], when[32];
	int fallback, at = 0, more;
	double step;

	memset(out, 0, sizeof(*out));
	if (cache__get(KEPT_KIND, key, value, sizeof(value)) ||
	    sscanf(value, "%31s %lf %lf %lf %lf %lf %lf %lf %lf %d %lf %lf %lf %lf%n", when,
		   &out->measured_ns, &s->call, &s->inside, &s->done, &s->flat, &s->plain, &s->body,
		   &s->body_inside, &fallback, &s->ccall, &s->cinside, &s->cplain, &s->gauge,
		   &at) != 14 || s->gauge < 0 ||
	    !(out->measured_ns > 0) || !(s->call > 0) || s->inside < 0 || s->inside > s->call ||
	    s->done < 0 || s->ccall < 0 || s->cinside < 0 || s->cinside > s->ccall) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	s->tree_fallback = fallback;
	/* then the recent steps, if any */
	while (out->nrecent < CALIB_RECENT && sscanf(value + at, "%lf%n", &step, &more) == 1 &&
	       step > 0) {
		out->recent[out->nrecent++] = step;
		at += more;
	}
	snprintf(out->when, sizeof(out->when), "%s", when);
	out->kept = true;
	calibrate__at_speed(out, out->measured_ns);
	return 0;
}

void calibrate__keep(const char *key, const struct calibration *cal)
{
	const struct calib_steps *s = &cal->steps;
	char value[512], when[32];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	if (cal->when[0]) /* (kept already: when its steps were measured) */
		snprintf(when, sizeof(when), "%s", cal->when);
	else
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%MZ", gmtime_r(&now, &tm));
	n = snprintf(value, sizeof(value),
		     "%s %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %d %.4f %.4f %.4f %.4f", when,
		     cal->measured_ns, s->call, s->inside, s->done, s->flat, s->plain, s->body,
		     s->body_inside, s->tree_fallback, s->ccall, s->cinside, s->cplain, s->gauge);
	for (uint32_t i = 0; i < cal->nrecent && n > 0 && n < (int)sizeof(value); i++)
		n += snprintf(value + n, sizeof(value) - n, " %.4f", cal->recent[i]);
	cache__put(KEPT_KIND, key, value);
}
