// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Overhead compensation in the profile builder (user/profile/profile.c), on synthetic event streams
 * with known costs: a call tree is played once with no probe cost (the truth) and once with
 * every probe costing a known time before and after its timestamp; compensated with the two
 * figures that cost model implies, the second must give the first's numbers exactly.
 */
#include <errno.h>
#include <linux/types.h>
#include <string.h>
#include "profile/profile.h"
#include "record/calibrate.h"
#include "test.h"

/* A function of the synthetic program: its own time before, between and after its calls. */
struct node {
	uint64_t code;
	uint64_t before, between, after;
	const struct node *const *calls; /* NULL-terminated */
	uint32_t flags;			 /* CALL_GEN_CREATE: no call in cProfile's terms */
	bool c;				 /* a C call (code: its key), with no callees */
};

/* Probe cost model: an entry costs entry_pre before its timestamp and entry_post after it, a
 * return ret_pre before and ret_post after. */
struct cost {
	uint64_t entry_pre, entry_post, ret_pre, ret_post;
};

struct sim {
	struct profile *p;
	struct cost c, cc; /* a Python call's probes, a C call's records */
	uint64_t now, frames;
	/* the inside cost of each call of code 3 (b) is off by this much, below and above the
	 * model in turn (below first): noise around the calibrated figure */
	uint64_t jitter, b_calls;
};

static void play(struct sim *s, const struct node *n, uint64_t caller, uint64_t caller_code,
		 uint64_t grand, uint64_t grand_code)
{
	__u64 chain[CHAIN_LEN] = { caller, grand }, codes[CHAIN_LEN] = { caller_code, grand_code };
	uint64_t frame = ++s->frames * 16;
	int64_t off = 0;

	if (s->jitter && n->code == 3)
		off = s->b_calls++ % 2 ? (int64_t)s->jitter : -(int64_t)s->jitter;
	if (n->c) {
		s->now += s->cc.entry_pre;
		CHECK(!profile__ccall(s->p, 1, s->now, n->code, caller));
		s->now += s->cc.entry_post + n->before + s->cc.ret_pre;
		CHECK(!profile__creturn(s->p, 1, s->now, caller));
		s->now += s->cc.ret_post;
		return;
	}
	s->now += s->c.entry_pre;
	CHECK(!profile__call(s->p, 1, s->now, n->code, frame, chain, codes, 0, n->flags));
	s->now += s->c.entry_post + off + n->before;
	for (const struct node *const *k = n->calls; k && *k; k++) {
		play(s, *k, frame, n->code, caller, caller_code);
		s->now += n->between;
	}
	s->now += n->after + s->c.ret_pre;
	CHECK(!profile__return(s->p, 1, s->now));
	s->now += s->c.ret_post;
}

/* a C call's records cost these (run_jitter) */
static struct cost c_cost;

/* speed gauge readings (ps) the recording's thread gives before its first call (run_jitter) */
static const uint64_t *gauge_readings;
static uint32_t ngauge_readings;

static struct profile *run_jitter(const struct node *root, const struct cost *c,
				  const struct compensation *comp, uint64_t jitter)
{
	struct sim s = { .p = profile__new(), .now = 1000, .jitter = jitter };
	static const char *names[] = { "main", "a", "b", "r", "gen" };


	profile__set_compensation(comp ? comp : &(struct compensation){ 0 });
	for (uint32_t i = 0; i < ngauge_readings; i++)
		CHECK(!profile__gauge(s.p, 1, s.now, gauge_readings[i]));
	for (uint64_t code = 1; code <= 5; code++)
		profile__code(s.p, code, "synthetic.py", names[code - 1], (int)code);
	profile__cfunc(s.p, 6, "<built-in method builtins.abs>");
	if (c) {
		s.c = *c;
		s.cc = c_cost;
	}
	play(&s, root, 0, 0, 0, 0);
	profile__finish(s.p, s.now);
	profile__set_compensation(&(struct compensation){ 0 });
	return s.p;
}

static struct profile *run(const struct node *root, const struct cost *c,
			   const struct compensation *comp)
{
	return run_jitter(root, c, comp, 0);
}

static uint32_t func(const struct profile *p, const char *name)
{
	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name))
			return i;
	return NO_ID;
}

/* Every function's and edge's numbers and every call-tree node's times, equal. */
static void check_same(const struct profile *a, const struct profile *b)
{
	REQUIRE(a->nfuncs == b->nfuncs && a->nedges == b->nedges && a->tree.n == b->tree.n);
	for (uint32_t i = 0; i < a->nfuncs; i++) {
		CHECK(!memcmp(&a->funcs[i].st, &b->funcs[i].st, sizeof(a->funcs[i].st)));
		if (memcmp(&a->funcs[i].st, &b->funcs[i].st, sizeof(a->funcs[i].st)))
			fprintf(stderr, "  %s: tottime %llu vs %llu, cumtime %llu vs %llu\n",
				a->funcs[i].name, (unsigned long long)a->funcs[i].st.inline_ns,
				(unsigned long long)b->funcs[i].st.inline_ns,
				(unsigned long long)a->funcs[i].st.total_ns,
				(unsigned long long)b->funcs[i].st.total_ns);
	}
	for (uint32_t i = 0; i < a->nedges; i++)
		CHECK(!memcmp(&a->edges[i].st, &b->edges[i].st, sizeof(a->edges[i].st)));
	for (uint32_t i = 0; i < a->tree.n; i++) {
		CHECK(a->tree.nodes[i].total_ns == b->tree.nodes[i].total_ns);
		CHECK(a->tree.nodes[i].self_ns == b->tree.nodes[i].self_ns);
	}
}

/* main -> a x3 (-> b x2), main -> b, main -> r -> r -> r (recursion), main -> a generator's
 * creation frame (a probed frame that is no call) */
static const struct node b = { .code = 3, .before = 10 };
static const struct node *const a_calls[] = { &b, &b, NULL };
static const struct node a = { .code = 2, .before = 50, .between = 7, .after = 3,
			       .calls = a_calls };
static const struct node r3 = { .code = 4, .before = 5 };
static const struct node *const r3_calls[] = { &r3, NULL };
static const struct node r2 = { .code = 4, .before = 6, .after = 1, .calls = r3_calls };
static const struct node *const r2_calls[] = { &r2, NULL };
static const struct node r1 = { .code = 4, .before = 8, .after = 2, .calls = r2_calls };
static const struct node gen = { .code = 5, .before = 4, .flags = CALL_GEN_CREATE };
static const struct node *const main_calls[] = { &a, &b, &a, &gen, &r1, &a, NULL };
static const struct node prog = { .code = 1, .before = 100, .between = 20, .after = 9,
				  .calls = main_calls };

TEST(compensated_costs_give_the_cost_free_numbers)
{
	const struct cost c = { .entry_pre = 700, .entry_post = 400, .ret_pre = 300,
				.ret_post = 600 };
	/* inside: after the entry's timestamp and before the return's */
	const struct compensation comp = { .call_ns = 2000, .inside_ns = 700 };
	struct profile *truth = run(&prog, NULL, NULL), *got = run(&prog, &c, &comp);

	REQUIRE(truth && got);
	check_same(truth, got);
	/* and the costs are large enough that it matters */
	{
		struct profile *raw = run(&prog, &c, &(struct compensation){ 0 });
		uint32_t m = func(raw, "main");

		CHECK(raw->funcs[m].st.inline_ns > truth->funcs[m].st.inline_ns + 5000);
		profile__free(raw);
	}
	profile__free(truth);
	profile__free(got);
}

/* main -> a' (b, abs, b), abs x3, a': C calls among the Python ones */
static const struct node cx = { .code = 6, .before = 15, .c = true };
static const struct node *const ac_calls[] = { &b, &cx, &b, NULL };
static const struct node ac = { .code = 2, .before = 30, .between = 4, .after = 2,
				.calls = ac_calls };
static const struct node *const mainc_calls[] = { &cx, &ac, &cx, &cx, &ac, NULL };
static const struct node progc = { .code = 1, .before = 60, .between = 11, .after = 5,
				   .calls = mainc_calls };

/*
 * A C call's records (the page's profile function on 3.8-3.11, sys.monitoring's callbacks on
 * 3.12+) cost their own, other than a Python call's probes: taken out with the C figures, the
 * numbers are the cost-free ones; with a Python call's figures only (before: C calls left as
 * recorded), a C function's time keeps its inside part and its caller's the rest.
 */
TEST(c_calls_compensated_by_their_own_figures)
{
	const struct cost c = { .entry_pre = 700, .entry_post = 400, .ret_pre = 300,
				.ret_post = 600 };
	const struct compensation comp = { .call_ns = 2000, .inside_ns = 700, .ccall_ns = 900,
					   .cinside_ns = 300 };
	const struct compensation py_only = { .call_ns = 2000, .inside_ns = 700 };
	struct profile *truth, *got, *half;
	uint32_t ci, mi;

	c_cost = (struct cost){ .entry_pre = 200, .entry_post = 100, .ret_pre = 200,
				.ret_post = 400 };
	truth = run(&progc, NULL, NULL);
	got = run(&progc, &c, &comp);
	half = run(&progc, &c, &py_only);
	c_cost = (struct cost){ 0 };
	REQUIRE(truth && got && half);
	check_same(truth, got);
	ci = func(half, "<built-in method builtins.abs>");
	mi = func(half, "main");
	REQUIRE(ci != NO_ID && mi != NO_ID);
	CHECK(half->funcs[ci].st.calls == 5);
	CHECK(half->funcs[ci].st.inline_ns == truth->funcs[ci].st.inline_ns + 5 * 300);
	/* main makes 3 of them: their 600 outside each stays in its own time */
	CHECK(half->funcs[mi].st.inline_ns == truth->funcs[mi].st.inline_ns + 3 * 600);
	profile__free(truth);
	profile__free(got);
	profile__free(half);
}

TEST(no_compensation_leaves_the_recorded_times)
{
	const struct cost c = { .entry_pre = 11, .entry_post = 13, .ret_pre = 17, .ret_post = 19 };
	struct profile *p = run(&prog, &c, NULL);
	uint32_t bi = func(p, "b"), ai = func(p, "a");

	REQUIRE(p && bi != NO_ID && ai != NO_ID);
	/* b: 10 of its own plus its inside probe parts, 7 calls */
	CHECK(p->funcs[bi].st.calls == 7);
	CHECK(p->funcs[bi].st.inline_ns == 7 * (10 + 13 + 17));
	CHECK(p->funcs[bi].st.total_ns == 7 * (10 + 13 + 17));
	/* a: 50 + 7 + 7 + 3 of its own, its inside parts, and the outside parts of its 2 calls */
	CHECK(p->funcs[ai].st.inline_ns == 3 * (67 + 13 + 17 + 2 * (11 + 19)));
	profile__free(p);
}

TEST(overcompensation_stops_at_zero)
{
	const struct compensation comp = { .call_ns = 1000000, .inside_ns = 500000 };
	struct profile *p = run(&prog, NULL, &comp);

	REQUIRE(p);
	for (uint32_t i = 0; i < p->nfuncs; i++) {
		CHECK(p->funcs[i].st.inline_ns == 0);
		CHECK(p->funcs[i].st.total_ns == 0);
	}
	profile__free(p);
}

TEST(overcompensated_times_still_add_up)
{
	/* the probes cost less than the figures say: parents would lose more than they have */
	const struct cost c = { .entry_pre = 100, .entry_post = 100, .ret_pre = 100,
				.ret_post = 100 };
	const struct compensation comp = { .call_ns = 900, .inside_ns = 0 };
	struct profile *p = run(&prog, &c, &comp);

	REQUIRE(p);
	/* a function's cumtime covers what its callees spent under it, tree nodes alike */
	for (uint32_t i = 0; i < p->nedges; i++) {
		const struct edge *e = &p->edges[i];

		if (e->caller == e->callee)
			continue;
		CHECK(p->funcs[e->caller].st.total_ns >= e->st.total_ns);
	}
	for (uint32_t i = 0; i < p->tree.n; i++) {
		const struct ct_node *n = &p->tree.nodes[i];

		if (n->parent != CT_NONE && p->tree.nodes[n->parent].func != CT_NONE)
			CHECK(p->tree.nodes[n->parent].total_ns >= n->total_ns);
	}
	profile__free(p);
}

/* main -> b x100: b's own time (10 ns) is far below the noise of its probes' cost (300 ns) */
static const struct node *const many_b[] = {
	&b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b,
	&b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b,
	&b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b,
	&b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b,
	&b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, &b, NULL
};
static const struct node prog_b = { .code = 1, .before = 100, .between = 5, .after = 9,
				    .calls = many_b };

TEST(noise_around_the_figure_cancels_out)
{
	const struct cost c = { .entry_pre = 700, .entry_post = 400, .ret_pre = 300,
				.ret_post = 600 };
	const struct compensation comp = { .call_ns = 2000, .inside_ns = 700 };
	struct profile *truth = run(&prog_b, NULL, NULL), *got = run_jitter(&prog_b, &c, &comp, 300);
	uint32_t bi, mi;

	REQUIRE(truth && got);
	bi = func(got, "b");
	mi = func(got, "main");
	REQUIRE(bi != NO_ID && mi != NO_ID);
	/* half of b's calls come out at -290 ns, half at +310: floored one by one they would sum
	 * to 50 x 310 ns, 15x b's 1000; each shortfall is taken from the next call instead */
	CHECK(got->funcs[bi].st.inline_ns == truth->funcs[bi].st.inline_ns);
	CHECK(got->funcs[bi].st.inline_ns == 100 * 10);
	CHECK(got->funcs[bi].st.total_ns == truth->funcs[bi].st.total_ns);
	CHECK(got->funcs[mi].st.inline_ns == truth->funcs[mi].st.inline_ns);
	CHECK(got->funcs[mi].st.total_ns == truth->funcs[mi].st.total_ns);
	CHECK(got->funcs[bi].debt_ns == 0);
	profile__free(truth);
	profile__free(got);
}

TEST(cpu_clock_closes_open_calls_at_their_threads_last_event)
{
	struct profile *p = profile__new();
	__u64 none[CHAIN_LEN] = { 0 }, chain[CHAIN_LEN] = { 16, 0 }, codes[CHAIN_LEN] = { 1, 0 };

	REQUIRE(p);
	profile__set_cpu_clock(true);
	profile__code(p, 1, "cpu.py", "outer", 1);
	profile__code(p, 2, "cpu.py", "inner", 2);
	/* outer seeded at attach (a wall timestamp, not a CPU time): starts at the first event */
	CHECK(!profile__seed(p, 1, 5000000000ull, 16, 1));
	CHECK(!profile__call(p, 1, 100, 2, 32, chain, codes, 0, 0));
	CHECK(!profile__return(p, 1, 130));
	CHECK(!profile__call(p, 2, 40, 2, 48, none, none, 0, 0));
	/* the stop, in wall time, far beyond any CPU time */
	profile__finish(p, 9000000000ull);
	profile__set_cpu_clock(false);
	CHECK(p->funcs[0].st.total_ns == 30); /* 100 .. 130 */
	CHECK(p->funcs[0].st.inline_ns == 0);
	CHECK(p->funcs[1].st.total_ns == 30 + 0); /* thread 2's inner closes at its own 40 */
	CHECK(p->funcs[1].st.calls == 2);
	profile__free(p);
}

/*
 * A coroutine awaiting coroutines and generators that return (3.12+ batch mode): the return
 * of each costs the awaiting caller done after its timestamp, as CPython's generic SEND does
 * under a hook. Compensated, the caller keeps its own time only; a generator returning None,
 * or a return to a caller that is no generator, costs nothing more and is not charged.
 */
TEST(generator_returns_charge_their_awaiting_caller)
{
	const uint64_t done = 50, own = 100;
	__u64 none[CHAIN_LEN] = { 0 }, chain[CHAIN_LEN] = { 16, 0 }, codes[CHAIN_LEN] = { 1, 0 };
	struct profile *p = profile__new();
	uint64_t t = 1000;

	REQUIRE(p);
	profile__set_compensation(&(struct compensation){ .done_ns = done });
	profile__code(p, 1, "g.py", "awaiting", 1);
	profile__code(p, 2, "g.py", "coro", 2);
	profile__code(p, 3, "g.py", "gen", 3);
	profile__code(p, 4, "g.py", "plain", 4);
	CHECK(!profile__code_flags(p, 1, 0x80));
	CHECK(!profile__code_flags(p, 2, 0x80));
	CHECK(!profile__code_flags(p, 3, 0x20));
	CHECK(!profile__code_flags(p, 4, 0));
	CHECK(profile__code_flags(p, 9, 0) == -ENOENT);
	CHECK(!profile__call(p, 1, t, 1, 16, none, none, 0, 0));
	t += own;
	/* a coroutine returning None: charged (a coroutine's return always raises) */
	CHECK(!profile__call(p, 1, t, 2, 32, chain, codes, 0, 0));
	t += 10;
	CHECK(!profile__gen_return(p, 1, t, true));
	t += done + own;
	/* a generator returning a value: charged; returning None: not */
	CHECK(!profile__call(p, 1, t, 3, 48, chain, codes, 0, 0));
	t += 10;
	CHECK(!profile__gen_return(p, 1, t, false));
	t += done + own;
	CHECK(!profile__call(p, 1, t, 3, 64, chain, codes, 0, 0));
	t += 10;
	CHECK(!profile__gen_return(p, 1, t, true));
	t += own;
	/* a plain function's frame never comes as a generator's return; a plain caller is no
	 * await: its coroutine's return is not charged */
	CHECK(!profile__call(p, 1, t, 4, 80, chain, codes, 0, 0));
	t += 10;
	{
		__u64 c4[CHAIN_LEN] = { 80, 16 }, k4[CHAIN_LEN] = { 4, 1 };

		CHECK(!profile__call(p, 1, t, 2, 96, c4, k4, 0, 0));
	}
	t += 10;
	CHECK(!profile__gen_return(p, 1, t, true));
	t += 10;
	CHECK(!profile__return(p, 1, t));
	t += own;
	CHECK(!profile__return(p, 1, t));
	profile__finish(p, t);
	profile__set_compensation(&(struct compensation){ 0 });
	CHECK(p->funcs[0].st.inline_ns == 5 * own);		 /* awaiting: two charges taken */
	CHECK(p->funcs[0].st.total_ns == 5 * own + 5 * 10 + 10);  /* its callees: 10 each */
	CHECK(p->funcs[3].st.inline_ns == 20);			 /* plain: not charged */
	CHECK(p->funcs[1].st.calls == 2 && p->funcs[2].st.calls == 2);
	profile__free(p);
}

/*
 * The probes' cost follows the speed of the CPU the calls run on (the test VM's two vCPUs run
 * 1.5-2x apart, which one is slow changing every few seconds), and the speed gauge at each
 * batch's start tells it (include/stage.h): figures that hold at a gauge reading of 300 ns,
 * on a thread whose readings say 540 (its CPU 1.8x slower, one reading a preemption's 5.4 µs,
 * the rest a TSC step apart), take out 1.8x their cost, and give the cost-free numbers; at
 * readings of 300, the figures as they are. Before, the figures were taken as they are
 * whatever the CPU: a slow CPU's calls kept 0.8x their probes' cost (a short fib section 2-2.6x
 * its native time), and a fast one's lost more than theirs.
 */
TEST(a_cpu_slower_by_its_gauge_has_that_much_more_taken_out)
{
	const struct cost slow = { .entry_pre = 1260, .entry_post = 720, .ret_pre = 540,
				   .ret_post = 1080 };
	const struct cost fast = { .entry_pre = 700, .entry_post = 400, .ret_pre = 300,
				   .ret_post = 600 };
	const struct compensation comp = { .call_ns = 2000, .inside_ns = 700, .done_ns = 0,
					   .gauge_ps = 300000 };
	static const uint64_t slow_readings[] = { 530000, 5400000, 550000, 540000 };
	static const uint64_t fast_readings[] = { 300000, 290000, 310000 };
	struct profile *truth = run(&prog, NULL, NULL), *got, *unscaled;
	uint32_t m;

	REQUIRE(truth);
	gauge_readings = slow_readings;
	ngauge_readings = 4;
	got = run(&prog, &slow, &comp);
	REQUIRE(got);
	check_same(truth, got);
	CHECK(got->n.gauges == 4);
	CHECK(got->n.speed_max > 1.79 && got->n.speed_max < 1.81);
	/* the same recording without its readings: its calls keep 0.8x their cost */
	ngauge_readings = 0;
	unscaled = run(&prog, &slow, &comp);
	REQUIRE(unscaled);
	m = func(unscaled, "main");
	REQUIRE(m != NO_ID);
	CHECK(unscaled->funcs[m].st.inline_ns > truth->funcs[m].st.inline_ns + 5000);
	profile__free(got);
	profile__free(unscaled);
	/* readings far off (a vCPU taken away in every one): the scale stops at the bound */
	{
		static const uint64_t off[] = { 3000000, 3100000, 2900000 };
		struct profile *q;

		gauge_readings = off;
		ngauge_readings = 3;
		q = run(&prog, &slow, &comp);
		REQUIRE(q);
		CHECK(q->n.speed_max > PROFILE_SPEED_BOUND - 0.01 &&
		      q->n.speed_max < PROFILE_SPEED_BOUND + 0.01);
		profile__free(q);
	}
	/* at the figures' own reading: the figures as they are */
	gauge_readings = fast_readings;
	ngauge_readings = 3;
	got = run(&prog, &fast, &comp);
	ngauge_readings = 0;
	REQUIRE(got);
	check_same(truth, got);
	profile__free(got);
	profile__free(truth);
}

static void timings(struct calib_timings *t, double step_ns, const double *speed, double plain,
		    double probe, double tree, double done);

/*
 * The calibration's gauge: the mean reading of each round of the probed run over that round's
 * step of the call-free loop, the median over the rounds. The rounds alternate between CPUs
 * 1.8x apart; a reading caught by a preemption, or a round with no reading, changes nothing.
 */
TEST(calibration_gauge_per_step_holds_at_any_speed)
{
	double speed[CALIB_ROUNDS];
	struct calib_timings probed;
	uint64_t rounds[CALIB_ROUNDS], ts[4 * CALIB_ROUNDS], ps[4 * CALIB_ROUNDS];
	uint32_t n = 0;
	double g;

	for (uint32_t r = 0; r < CALIB_ROUNDS; r++)
		speed[r] = r % 2 ? 1.8 : 1;
	timings(&probed, 6, speed, 4, 200, 6, 13);
	for (uint32_t r = 0; r < CALIB_ROUNDS; r++) {
		rounds[r] = 1000000 + r * 10000000ull;
		if (r == 7)
			continue; /* (no batch began in it) */
		for (uint32_t i = 0; i < 4; i++) {
			ts[n] = rounds[r] + 1000 + i * 100000;
			/* 300 ns a reading at a step of 6 ns; one preempted (round 3) */
			ps[n++] = (uint64_t)(300000 * speed[r]) + (i == 2 && r == 3 ? 9000000 : 0) +
				  i * 2000 - 3000;
		}
	}
	g = calibrate__gauge(&probed, rounds, CALIB_ROUNDS, ts, ps, n);
	/* (round 1's loop was disturbed: timings adds 0.9 ms to it) */
	CHECK(g > 49900 && g < 50100);
	/* rounds that are not the probed run's: none */
	CHECK(calibrate__gauge(&probed, rounds, CALIB_ROUNDS - 1, ts, ps, n) == 0);
	CHECK(calibrate__gauge(&probed, rounds, CALIB_ROUNDS, ts, ps, 0) == 0);
}

/*
 * Timings of a run whose calls cost plain steps of the call-free loop, plus probe steps a call
 * when probed (tree more in a tree of calls, done more an await's return), made at a machine
 * speed that may move from round to round: round r's loop step is step_ns * speed[r]. Rounds
 * with noise (one disturbed round of each loop) that the medians must see through.
 */
static void timings(struct calib_timings *t, double step_ns, const double *speed, double plain,
		    double probe, double tree, double done)
{
	const double body = 40, await = 15, branch = 3;

	t->rounds = CALIB_ROUNDS;
	for (uint32_t r = 0; r < CALIB_ROUNDS; r++) {
		double k = step_ns * (speed ? speed[r] : 1);

		t->none[r] = (uint64_t)(CALIB_STEPS * k + (r == 1 ? 900000 : 0));
		t->empty[r] = (uint64_t)(CALIB_CALLS * (1 + plain + probe) * k +
					 (r == 3 ? 700000 : 0));
		t->body[r] = (uint64_t)(CALIB_CALLS * (1 + plain + body + probe) * k);
		/* two activations and a return a round's await */
		t->awaits[r] = (uint64_t)(CALIB_CALLS * (1 + 2 * plain + await + 2 * probe + done) *
					  k + (r == 4 ? 500000 : 0));
		t->trees[r] = (uint64_t)(CALIB_TREE_CALLS * (plain + branch + probe +
							     (probe ? tree : 0)) * k +
					 (r == 0 ? 800000 : 0));
		/* a loop's iteration 1.5 steps plain, 2 probed (a profile function's slower
		 * path); a C call 3 steps plain, its records half the probes' cost, CALIB_C_KINDS
		 * of them an iteration */
		t->iters[r] = (uint64_t)(CALIB_CALLS * (probe ? 2 : 1.5) * k);
		t->ccalls[r] = (uint64_t)((CALIB_CALLS / CALIB_C_KINDS * (probe ? 2 : 1.5) +
					   CALIB_CALLS * (3 + probe / 2)) * k +
					  (r == 5 ? 600000 : 0));
	}
}

/* Whether a figure is within a hundredth of a step of the truth. */
static bool near(double got, double want)
{
	return got > want - 0.01 && got < want + 0.01;
}

TEST(calibration_figures_from_known_timings)
{
	struct calib_timings plain, probed;
	struct calibration cal;
	char why[128] = "";

	/* steps of 10 ns: a plain call 4 steps, the probes 200 more, 6 more in a tree */
	timings(&plain, 10, NULL, 4, 0, 0, 0);
	timings(&probed, 10, NULL, 4, 200, 6, 13);
	/* recorded: 700 ns of probe time inside an empty call, and 20 of its own (half of 40) */
	/* and 300 ns inside a C call of 3 steps (30 ns): 285 of the records' */
	REQUIRE(!calibrate__figures(&plain, &probed, 720, 1120, 300, &cal, why, sizeof(why)));
	CHECK(near(cal.steps.call, 206) && cal.comp.call_ns == 2060); /* a call's in the trees */
	CHECK(near(cal.steps.ccall, 100) && cal.comp.ccall_ns == 1000); /* a C call's */
	CHECK(near(cal.steps.cplain, 3));
	CHECK(near(cal.steps.cinside, 28.5) && cal.comp.cinside_ns == 285);
	CHECK(near(cal.steps.flat, 200));			       /* and in the loop */
	CHECK(near(cal.steps.inside, 70) && cal.comp.inside_ns == 700);
	CHECK(near(cal.steps.plain, 4));
	CHECK(near(cal.steps.body, 200));
	CHECK(near(cal.steps.body_inside, 70));
	CHECK(near(cal.steps.done, 13) && cal.comp.done_ns == 130);
	CHECK(cal.measured_ns > 9.99 && cal.measured_ns < 10.01);
	/* an inside part beyond the whole is noise: capped */
	REQUIRE(!calibrate__figures(&plain, &probed, 50000, 54000, 0, &cal, why, sizeof(why)));
	CHECK(cal.comp.inside_ns == cal.comp.call_ns);
	CHECK(!cal.steps.tree_fallback);
	/* trees that measured nothing, a loop that did: the loop's figure */
	for (uint32_t r = 0; r < CALIB_ROUNDS; r++)
		probed.trees[r] = plain.trees[r] - CALIB_TREE_CALLS * 2;
	REQUIRE(!calibrate__figures(&plain, &probed, 720, 1120, 0, &cal, why, sizeof(why)));
	CHECK(cal.steps.tree_fallback && cal.comp.call_ns == 2000);
	/* probes that cost nothing measurable: refused, with a reason */
	CHECK(calibrate__figures(&plain, &plain, 30, 430, 0, &cal, why, sizeof(why)) == -ERANGE);
	CHECK(strstr(why, "no cost") != NULL);
}

/*
 * The machine's speed, which moves by ~1.3x for seconds on the test VM, changes neither figure
 * in steps: not when the plain run was made on a machine slower or faster than the recorded
 * one, nor when it moved from round to round; a figure in ns follows the speed it is given.
 * Taken in ns as two runs' difference, the probes of a recording made at 1.3x the plain run's
 * speed came out at a third of their cost, and of one made at 0.77x at twice (a short fib
 * recording near nothing against its native time, the no-harm issue's calibration point).
 */
TEST(calibration_figures_hold_at_any_speed)
{
	double moving[CALIB_ROUNDS], other[CALIB_ROUNDS];
	struct calib_timings plain, probed;
	struct calibration ref, cal;
	char why[128] = "";

	timings(&plain, 10, NULL, 4, 0, 0, 0);
	timings(&probed, 10, NULL, 4, 3.5, 0.5, 1);
	REQUIRE(!calibrate__figures(&plain, &probed, 40, 2000, 0, &ref, why, sizeof(why)));
	CHECK(near(ref.steps.call, 4));
	for (int slow = 0; slow < 2; slow++) {
		/* the plain run on a machine 1.3x slower, then 1.3x faster */
		timings(&plain, slow ? 13 : 10 / 1.3, NULL, 4, 0, 0, 0);
		REQUIRE(!calibrate__figures(&plain, &probed, 40, 2000, 0, &cal, why, sizeof(why)));
		CHECK(near(cal.steps.call, ref.steps.call));
		CHECK(near(cal.steps.flat, ref.steps.flat));
		CHECK(near(cal.steps.done, ref.steps.done));
		CHECK(near(cal.steps.inside, ref.steps.inside));
	}
	/* the speed moving between the rounds, differently in each run */
	for (uint32_t r = 0; r < CALIB_ROUNDS; r++) {
		moving[r] = r % 3 ? 1.0 : 1.3;
		other[r] = r % 2 ? 0.8 : 1.25;
	}
	timings(&plain, 10, moving, 4, 0, 0, 0);
	timings(&probed, 10, other, 4, 3.5, 0.5, 1);
	REQUIRE(!calibrate__figures(&plain, &probed, 40, 2000, 0, &cal, why, sizeof(why)));
	CHECK(near(cal.steps.call, ref.steps.call));
	CHECK(near(cal.steps.flat, ref.steps.flat));
	CHECK(near(cal.steps.done, ref.steps.done));
	/* in ns: at the speed given, whatever the speed it was measured at */
	calibrate__at_speed(&cal, 13);
	CHECK(cal.comp.call_ns == 52 && cal.comp.done_ns == 13);
	calibrate__at_speed(&cal, 10);
	CHECK(cal.comp.call_ns == 40 && cal.comp.done_ns == 10);
}

/*
 * A kept calibration at a speed run's step: at most the machine's fast step (the lowest of the
 * last speed runs', not the step its figures were measured at alone), and at least that over
 * CALIB_SPEED_BOUND. Measured at a slow moment (30 ns a step) on a machine mostly at 17: the
 * first fast run is held at the bound (20) and kept at it, the next taken as found; a slow
 * moment (25) or a disturbance (51, 3x) is taken at the fast step and leaves it where it was,
 * however many come (a speed run on the slower vCPU, again and again, must not make the slow
 * step the fast one); a failed speed run takes the fast step; one speed run found far too fast
 * (8) is held at the bound and moves the fast step by that bound at most. The probes' cost in
 * ns is never more than at the fast step: a short call-dense section is never compensated to
 * nothing by a slow moment of the speed run.
 */
TEST(a_speed_run_is_taken_at_the_machines_fast_step_at_most)
{
	struct calibration cal = { .steps = { .call = 3, .inside = 1 }, .measured_ns = 30 };
	bool bounded;

	cal.recent[0] = 30;
	cal.nrecent = 1;
	calibrate__at_speed_run(&cal, 17, &bounded);
	CHECK(bounded && near(cal.step_ns, 20) && cal.comp.call_ns == 60);
	CHECK(cal.nrecent == 2 && near(cal.recent[1], 20));
	calibrate__at_speed_run(&cal, 17, &bounded);
	CHECK(!bounded && near(cal.step_ns, 17));
	CHECK(near(calibrate__fast_step(&cal), 17));
	/* a slow moment, a disturbance: the fast step */
	calibrate__at_speed_run(&cal, 25, &bounded);
	CHECK(bounded && near(cal.step_ns, 17) && cal.comp.call_ns == 51);
	calibrate__at_speed_run(&cal, 51, &bounded);
	CHECK(bounded && near(cal.step_ns, 17));
	CHECK(near(calibrate__fast_step(&cal), 17));
	/* a faster one, within the bound: as found */
	calibrate__at_speed_run(&cal, 16, &bounded);
	CHECK(!bounded && near(cal.step_ns, 16));
	/* no speed run: the fast step (now 16), nothing recent added */
	calibrate__at_speed_run(&cal, 0, &bounded);
	CHECK(!bounded && near(cal.step_ns, 16) && cal.nrecent == 6);
	/* the slower vCPU, over and over (all the rest of the recent ones): still the fast step */
	for (int i = 0; i < CALIB_RECENT - 6; i++)
		calibrate__at_speed_run(&cal, 27, &bounded);
	CHECK(cal.nrecent == CALIB_RECENT && near(calibrate__fast_step(&cal), 16));
	calibrate__at_speed_run(&cal, 27, &bounded);
	CHECK(bounded && near(cal.step_ns, 16) && cal.comp.call_ns == 48);
	CHECK(near(calibrate__fast_step(&cal), 16));
	/* one far too fast: the bound, and the fast step moves by the bound at most */
	calibrate__at_speed_run(&cal, 8, &bounded);
	CHECK(bounded && near(cal.step_ns, 16 / CALIB_SPEED_BOUND));
	CHECK(near(calibrate__fast_step(&cal), 16 / CALIB_SPEED_BOUND));
	/* the oldest go: a machine slower for good is followed */
	for (int i = 0; i < CALIB_RECENT; i++)
		calibrate__at_speed_run(&cal, 22, &bounded);
	CHECK(cal.nrecent == CALIB_RECENT && near(calibrate__fast_step(&cal), 22));
	calibrate__at_speed_run(&cal, 22, &bounded);
	CHECK(!bounded && near(cal.step_ns, 22));
}

/*
 * Kept figures measured at a step over CALIB_KEPT_BOUND times the machine's fast one (the
 * lowest of its recent speed runs') came from a loaded machine and are measured again; the
 * slow vCPU alone (up to ~1.9x) is no reason to.
 */
TEST(kept_figures_from_a_loaded_machine_are_not_trusted)
{
	struct calibration cal = { .steps = { .call = 19.9 }, .measured_ns = 20.55 };

	/* only its own step known: nothing to judge it by */
	cal.recent[0] = 20.55;
	cal.nrecent = 1;
	CHECK(calibrate__kept_trusted(&cal));
	/* then speed runs at the machine's usual 6.3-6.5 */
	cal.recent[1] = 6.5;
	cal.recent[2] = 6.3;
	cal.nrecent = 3;
	CHECK(!calibrate__kept_trusted(&cal));
	/* measured on the slow vCPU */
	cal.measured_ns = cal.recent[0] = 11.3;
	CHECK(calibrate__kept_trusted(&cal));
	cal.measured_ns = cal.recent[0] = 2.0 * 6.3 + 0.01;
	CHECK(!calibrate__kept_trusted(&cal));
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(compensated_costs_give_the_cost_free_numbers),
		TEST_CASE(no_compensation_leaves_the_recorded_times),
		TEST_CASE(c_calls_compensated_by_their_own_figures),
		TEST_CASE(overcompensation_stops_at_zero),
		TEST_CASE(generator_returns_charge_their_awaiting_caller),
		TEST_CASE(overcompensated_times_still_add_up),
		TEST_CASE(noise_around_the_figure_cancels_out),
		TEST_CASE(cpu_clock_closes_open_calls_at_their_threads_last_event),
		TEST_CASE(calibration_figures_from_known_timings),
		TEST_CASE(calibration_figures_hold_at_any_speed),
		TEST_CASE(a_speed_run_is_taken_at_the_machines_fast_step_at_most),
		TEST_CASE(a_cpu_slower_by_its_gauge_has_that_much_more_taken_out),
		TEST_CASE(calibration_gauge_per_step_holds_at_any_speed),
		TEST_CASE(kept_figures_from_a_loaded_machine_are_not_trusted),
	};

	return test_run(cases, TEST_COUNT(cases));
}
