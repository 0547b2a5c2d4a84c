// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stack and statistics builder (user/profile/profile.c), fed event streams. The truth for the
 * cProfile rules is cProfile itself: tests/unit/lsprof_truth.py records a workload's calls and
 * returns and then runs it under cProfile with a timer that counts events, so both sides see
 * event i at time i. The repair cases (missing returns, unseen frames) are small hand-made
 * streams.
 */
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "test.h"

static const char *python(void)
{
	const char *py = getenv("PYUPROF_TEST_PYTHON");

	return py ? py : "python3";
}

static uint32_t find_func(struct profile *p, const char *name)
{
	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name))
			return i;
	return NO_ID;
}

static struct edge *find_edge(struct profile *p, const char *callee, const char *caller)
{
	uint32_t ce = find_func(p, callee), cr = find_func(p, caller);

	for (uint32_t i = 0; i < p->nedges; i++)
		if (p->edges[i].callee == ce && p->edges[i].caller == cr)
			return &p->edges[i];
	return NULL;
}

/* Replays lsprof_truth.py's events (with C calls if args says --builtins) and compares with
 * its cProfile stats. */
static void check_against_cprofile_args(const char *workload, const char *args)
{
	char cmd[512], line[512], name[128], caller[128];
	struct profile *p = profile__new();
	uint64_t ts = 2; /* tick 1 is the harness's lambda, entered before the stream */
	int stats = 0, edges = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s tests/unit/lsprof_truth.py %s %s", python(), workload, args);
	f = popen(cmd, "r");
	REQUIRE(f && p);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long code, frame, c0, cc0, c1, cc1, back, ncalls, pcalls;
		double tt, ct;

		if (sscanf(line, "call %llu %llu %llu %llu %llu %llu %llu %127s", &code, &frame, &c0,
			   &cc0, &c1, &cc1, &back, name) == 8) {
			__u64 chain[CHAIN_LEN] = { c0, c1 }, chain_code[CHAIN_LEN] = { cc0, cc1 };

			profile__code(p, code, __FILE__, name, (int)code);
			/* a caller never entered in the stream is the harness's */
			if (cc0 && !u64_map__get(&p->func_by_code, cc0))
				profile__code(p, cc0, __FILE__, "<harness>", (int)cc0);
			CHECK(!profile__call(p, 1, ts++, code, frame, chain, chain_code, back, false));
		} else if (sscanf(line, "ccall %llu %llu %127s", &code, &frame, name) == 3) {
			profile__cfunc(p, code, name);
			CHECK(!profile__ccall(p, 1, ts++, code, frame));
		} else if (!strncmp(line, "cret", 4)) {
			CHECK(!profile__creturn(p, 1, ts++, 0));
		} else if (!strncmp(line, "ret", 3)) {
			CHECK(!profile__return(p, 1, ts++));
		} else if (sscanf(line, "stat %127s %llu %llu %lf %lf", name, &pcalls, &ncalls, &tt,
				  &ct) == 5) {
			uint32_t id = find_func(p, name);

			stats++;
			REQUIRE(id != NO_ID);
			CHECK(p->funcs[id].st.calls == ncalls);
			CHECK(p->funcs[id].st.calls - p->funcs[id].st.rec_calls == pcalls);
			CHECK(p->funcs[id].st.inline_ns == (uint64_t)tt);
			CHECK(p->funcs[id].st.total_ns == (uint64_t)ct);
		} else if (sscanf(line, "edge %127s %127s %llu %llu %lf %lf", name, caller, &ncalls,
				  &pcalls, &tt, &ct) == 6) {
			struct edge *e = find_edge(p, name, caller);

			edges++;
			REQUIRE(e);
			if (e->st.calls - e->st.rec_calls != pcalls || e->st.total_ns != (uint64_t)ct)
				printf("#   edge %s <- %s: ours %llu/%llu %llu %llu, cProfile %s", name,
				       caller, (unsigned long long)e->st.calls,
				       (unsigned long long)(e->st.calls - e->st.rec_calls),
				       (unsigned long long)e->st.inline_ns,
				       (unsigned long long)e->st.total_ns, line);
			CHECK(e->st.calls == ncalls);
			CHECK(e->st.calls - e->st.rec_calls == pcalls);
			CHECK(e->st.inline_ns == (uint64_t)tt);
			CHECK(e->st.total_ns == (uint64_t)ct);
		}
		if (!strncmp(line, "stat", 4) && stats == 1)
			profile__finish(p, ts);
	}
	CHECK(pclose(f) == 0);
	CHECK(stats > 0 && edges > 0);
	CHECK(p->n.closed_unseen == 0 && p->n.unmatched_returns == 0);
	CHECK(p->n.c_closed == 0 && p->n.c_unmatched == 0);
	profile__free(p);
}

static void check_against_cprofile(const char *workload)
{
	check_against_cprofile_args(workload, "");
}

TEST(recursion_matches_cprofile) { check_against_cprofile("fib"); }
TEST(mutual_recursion_matches_cprofile) { check_against_cprofile("mutual"); }
TEST(generator_matches_cprofile) { check_against_cprofile("generator"); }
TEST(exceptions_match_cprofile) { check_against_cprofile("exceptions"); }
TEST(indirect_recursion_matches_cprofile) { check_against_cprofile("indirect"); }
/* C functions (cProfile's builtins=True): a C call above the frame that made it; sorted's key,
 * map's function and a generator sum() consumes called from inside it */
TEST(c_functions_match_cprofile) { check_against_cprofile_args("cfuncs", "--builtins"); }

static const __u64 none[CHAIN_LEN];

static void call(struct profile *p, uint64_t ts, uint64_t code, uint64_t frame, uint64_t c0,
		 uint64_t c0code, uint64_t c1, uint64_t c1code, uint64_t back)
{
	__u64 chain[CHAIN_LEN] = { c0, c1 }, codes[CHAIN_LEN] = { c0code, c1code };

	CHECK(!profile__call(p, 7, ts, code, frame, chain, codes, back, false));
}

static bool has_edge(const struct profile *p, uint32_t caller, uint32_t callee)
{
	for (uint32_t i = 0; i < p->nedges; i++)
		if (p->edges[i].caller == caller && p->edges[i].callee == callee)
			return p->edges[i].st.calls > 0;
	return false;
}

static struct profile *with_funcs(void)
{
	struct profile *p = profile__new();

	profile__code(p, 100, "m.py", "f", 1);
	profile__code(p, 200, "m.py", "g", 2);
	profile__code(p, 300, "m.py", "h", 3);
	profile__code(p, 400, "__init__", "__init__", 0); /* 3.13's _Py_InitCleanup shim */
	return p;
}

TEST(return_before_any_entry_is_ignored)
{
	struct profile *p = with_funcs();

	CHECK(!profile__return(p, 7, 1));
	CHECK(!profile__call(p, 7, 2, 100, 1, none, none, 0, false));
	CHECK(!profile__return(p, 7, 5));
	CHECK(p->n.unmatched_returns == 1);
	CHECK(p->funcs[0].st.calls == 1 && p->funcs[0].st.total_ns == 3);
	profile__free(p);
}

TEST(calls_open_at_stop_are_closed_there)
{
	struct profile *p = with_funcs();

	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	call(p, 2, 200, 2, 1, 100, 0, 0, 0);
	profile__finish(p, 10);
	CHECK(p->n.open_at_stop == 2);
	CHECK(p->funcs[1].st.calls == 1 && p->funcs[1].st.total_ns == 8 && p->funcs[1].st.inline_ns == 8);
	CHECK(p->funcs[0].st.calls == 1 && p->funcs[0].st.total_ns == 9 && p->funcs[0].st.inline_ns == 1);
	profile__free(p);
}

TEST(lost_return_is_closed_at_the_next_entry)
{
	struct profile *p = with_funcs();

	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	call(p, 2, 200, 2, 1, 100, 0, 0, 0);
	/* g's return is lost; h is entered from f */
	call(p, 5, 300, 3, 1, 100, 0, 0, 0);
	CHECK(!profile__return(p, 7, 6));
	CHECK(!profile__return(p, 7, 8));
	CHECK(p->n.closed_unseen == 1);
	CHECK(p->funcs[1].st.calls == 1 && p->funcs[1].st.total_ns == 3);
	CHECK(find_edge(p, "h", "f") && !find_edge(p, "h", "g"));
	CHECK(p->funcs[0].st.total_ns == 7 && p->funcs[0].st.inline_ns == 3);
	profile__free(p);
}

TEST(frame_entered_unseen_is_recovered)
{
	struct profile *p = with_funcs();

	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	/* g ran inline (no event); h is entered from it */
	call(p, 4, 300, 3, 2, 200, 1, 100, 0);
	CHECK(!profile__return(p, 7, 5)); /* h */
	call(p, 6, 300, 4, 1, 100, 0, 0, 0); /* g returned unseen: closed here */
	profile__finish(p, 9);
	CHECK(p->n.recovered == 1);
	CHECK(p->funcs[1].st.calls == 1);
	CHECK(find_edge(p, "g", "f") && find_edge(p, "h", "g") && find_edge(p, "h", "f"));
	CHECK(p->funcs[2].st.calls == 2);
	profile__free(p);
}

TEST(init_shim_and_inlined_init_are_recovered_once)
{
	struct profile *p = with_funcs();

	profile__code(p, 500, "m.py", "__init__", 5);
	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	/* f -> shim (frame 2) -> __init__ (frame 3), both inline; h entered from __init__ */
	call(p, 3, 300, 4, 3, 500, 2, 400, 1);
	CHECK(!profile__return(p, 7, 4));
	profile__finish(p, 6);
	CHECK(p->n.recovered == 1);
	CHECK(p->funcs[4].st.calls == 1); /* m.py's __init__ */
	CHECK(p->funcs[3].st.calls == 0); /* the shim is no call */
	CHECK(p->nedges == 2 && has_edge(p, 4, 2) && has_edge(p, 0, 4));
	profile__free(p);
}

TEST(inline_calls_known_by_code_are_counted_once)
{
	struct profile *p = with_funcs();

	profile__code(p, 500, "m.py", "__init__", 5);
	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	CHECK(!profile__inline_call(p, 7, 2, 500, 0, 1)); /* leaf: ends at the next one */
	CHECK(!profile__inline_call(p, 7, 4, 500, 0, 1));
	/* the second one calls h: its frame (3) is recovered onto the inline entry */
	call(p, 5, 300, 4, 3, 500, 2, 400, 1);
	CHECK(!profile__return(p, 7, 6)); /* h */
	CHECK(!profile__return(p, 7, 9)); /* f: the inline __init__ returned before it */
	CHECK(p->n.inline_calls == 2 && p->n.recovered == 0);
	CHECK(p->funcs[4].st.calls == 2 && p->funcs[4].st.rec_calls == 0);
	CHECK(p->funcs[4].st.total_ns == 2 + 5);
	CHECK(p->funcs[0].st.calls == 1 && p->funcs[0].st.total_ns == 8);
	CHECK(has_edge(p, 0, 4) && has_edge(p, 4, 2) && !has_edge(p, 4, 4));
	profile__free(p);
}

/* 3.11's inline __getitem__: seen with its frame. The frame slot is reused by the next one
 * (the first returned unseen), and a call the second makes names it as its caller. */
TEST(inline_calls_with_a_frame_end_when_the_frame_is_reused)
{
	struct profile *p = with_funcs();

	profile__code(p, 500, "m.py", "__getitem__", 5);
	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	CHECK(!profile__inline_call(p, 7, 2, 500, 3, 0)); /* caller not given: the top */
	CHECK(!profile__inline_call(p, 7, 4, 500, 3, 0));
	call(p, 5, 300, 4, 3, 500, 1, 100, 0); /* h from the second */
	CHECK(!profile__return(p, 7, 6));	/* h */
	CHECK(!profile__return(p, 7, 9));	/* f: the inline one returned before it */
	profile__finish(p, 10);
	CHECK(p->n.inline_calls == 2 && p->n.recovered == 0);
	CHECK(p->funcs[4].st.calls == 2 && p->funcs[4].st.rec_calls == 0);
	CHECK(p->funcs[4].st.total_ns == 2 + 5);
	CHECK(has_edge(p, 0, 4) && has_edge(p, 4, 2) && !has_edge(p, 4, 4));
	profile__free(p);
}

/* A thread that waited for pyuprof (the batch mode's full ring): the wait is in none of its
 * calls, the open ones at the stop included. */
TEST(a_wait_is_taken_out_of_the_thread_time)
{
	struct profile *p = with_funcs();

	call(p, 10, 100, 1, 0, 0, 0, 0, 0);	 /* f */
	call(p, 20, 200, 2, 1, 100, 0, 0, 0);	 /* g from f */
	CHECK(!profile__pause(p, 7, 1000));	 /* g's thread waits 1000 ns */
	CHECK(!profile__return(p, 7, 1030));	 /* g: 10 ns of its own after the wait */
	profile__finish(p, 1050);		 /* f still open: 40 ns in all */
	CHECK(p->n.waits == 1 && p->n.waited_ns == 1000);
	CHECK(p->funcs[1].st.total_ns == 10);
	CHECK(p->funcs[0].st.total_ns == 40 && p->funcs[0].st.inline_ns == 30);
	profile__free(p);
}

/* A thread that waited for room in a code flush: the flush's time, taken out too, holds that
 * wait; it is taken out once. A flush with no wait before it is taken out whole. */
TEST(a_wait_within_a_code_flush_is_taken_out_once)
{
	struct profile *p = with_funcs();
	const struct compensation comp = { .call_ns = 1 }, none = { 0 };

	profile__set_compensation(&comp);
	call(p, 10, 100, 1, 0, 0, 0, 0, 0);	 /* f */
	CHECK(!profile__pause(p, 7, 1000));	 /* waits 1000 ns in a code flush */
	CHECK(!profile__flush(p, 7, 1200));	 /* of 1200 ns in all */
	call(p, 1300, 200, 2, 1, 100, 0, 0, 0);	 /* g from f, 90 ns of f's after the flush */
	CHECK(!profile__return(p, 7, 1400));	 /* g: 100 ns */
	CHECK(!profile__flush(p, 7, 50));	 /* a flush without a wait */
	CHECK(!profile__return(p, 7, 1460));	 /* f: 10 ns more */
	profile__finish(p, 1500);
	CHECK(p->n.waited_ns == 1000 && p->n.flushed_ns == 200 + 50);
	CHECK(p->funcs[1].st.calls == 1 && p->funcs[0].st.calls == 1);
	/* f: 90 ns of its own before g, g's 100, 10 after (less a call's 1 ns for g) */
	CHECK(p->funcs[1].st.total_ns == 100);
	CHECK(p->funcs[0].st.total_ns == 90 + 100 + 10 - 1);
	profile__set_compensation(&none);
	profile__free(p);
}

TEST(generator_creation_is_not_a_call)
{
	struct profile *p = with_funcs();
	__u64 chain[CHAIN_LEN] = { 1 }, codes[CHAIN_LEN] = { 100 };

	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	CHECK(!profile__call(p, 7, 2, 200, 9, chain, codes, 0, CALL_GEN_CREATE));
	CHECK(!profile__return(p, 7, 3));
	CHECK(!profile__call(p, 7, 4, 200, 9, chain, codes, 0, false)); /* first resume */
	CHECK(!profile__return(p, 7, 5));
	CHECK(!profile__return(p, 7, 6));
	CHECK(p->n.not_calls == 1 && p->n.calls == 2);
	CHECK(p->funcs[1].st.calls == 1 && p->funcs[1].st.total_ns == 1);
	CHECK(p->funcs[0].st.total_ns == 5 && p->funcs[0].st.inline_ns == 4);
	profile__free(p);
}

/*
 * 3.12+: f (frame 1) calls g (frame 2); g returns and its clearing runs h (a __del__), called
 * from f in cProfile's terms; then g's activation ret comes, then f's. g ends when h starts.
 */
TEST(calls_made_while_a_returned_frame_is_cleared_belong_to_its_caller)
{
	struct profile *p = with_funcs();
	__u64 chain[CHAIN_LEN] = { 1 }, codes[CHAIN_LEN] = { 100 };

	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	call(p, 2, 200, 2, 1, 100, 0, 0, 0);
	CHECK(!profile__call(p, 7, 4, 300, 3, chain, codes, 0, CALL_AFTER_RETURN));
	CHECK(!profile__return(p, 7, 5)); /* h */
	CHECK(!profile__return(p, 7, 6)); /* g's activation: owed, f stays */
	CHECK(!profile__return(p, 7, 9)); /* f */
	CHECK(has_edge(p, 0, 2) && !has_edge(p, 1, 2));
	CHECK(p->funcs[1].st.calls == 1 && p->funcs[1].st.total_ns == 2);
	CHECK(p->funcs[0].st.calls == 1 && p->funcs[0].st.total_ns == 8);
	CHECK(p->n.closed_unseen == 0 && p->n.unmatched_returns == 0);
	profile__free(p);
}

/* A C call whose return went to a profile function of the program's own is closed by its
 * caller's return or by a sync; a return with no C call open is counted, and changes nothing. */
TEST(c_calls_whose_returns_went_elsewhere_are_closed)
{
	struct profile *p = with_funcs();
	uint32_t c;

	REQUIRE(p && !profile__cfunc(p, 9000, "<built-in method sys.setprofile>"));
	c = find_func(p, "<built-in method sys.setprofile>");
	REQUIRE(c != NO_ID && p->funcs[c].cfunc);
	CHECK(!strcmp(p->funcs[c].qualname, "{built-in method sys.setprofile}"));
	call(p, 1, 100, 1, 0, 0, 0, 0, 0);
	CHECK(!profile__ccall(p, 7, 2, 9000, 1));
	/* f calls g: g's caller is the C call open above f (it is in it) */
	call(p, 3, 200, 2, 1, 100, 0, 0, 0);
	CHECK(!profile__return(p, 7, 4));
	CHECK(has_edge(p, c, 1));
	/* a sync: that C call is over */
	CHECK(!profile__csync(p, 7, 5));
	CHECK(p->n.c_closed == 1 && p->funcs[c].st.calls == 1 && p->funcs[c].st.total_ns == 3);
	call(p, 6, 200, 2, 1, 100, 0, 0, 0);
	CHECK(!profile__return(p, 7, 7));
	CHECK(has_edge(p, 0, 1));
	/* another whose return never comes: closed when f returns */
	CHECK(!profile__ccall(p, 7, 8, 9000, 1));
	CHECK(!profile__return(p, 7, 10));
	CHECK(p->n.c_closed == 2 && p->funcs[c].st.calls == 2 && p->funcs[0].st.calls == 1);
	CHECK(!profile__creturn(p, 7, 11, 0));
	CHECK(p->n.c_unmatched == 1 && p->n.closed_unseen == 0);
	/* a key whose identity never came */
	call(p, 12, 100, 1, 0, 0, 0, 0, 0);
	CHECK(!profile__ccall(p, 7, 13, 9999, 1));
	CHECK(!profile__creturn(p, 7, 14, 0));
	CHECK(p->n.c_unknown == 1 && find_func(p, "<unknown C function>") != NO_ID);
	profile__free(p);
}

TEST(threads_have_their_own_stacks_and_recursion_levels)
{
	struct profile *p = with_funcs();

	/* f runs in two threads at once: neither is a recursive call */
	CHECK(!profile__call(p, 1, 1, 100, 1, none, none, 0, false));
	CHECK(!profile__call(p, 2, 2, 100, 2, none, none, 0, false));
	CHECK(!profile__return(p, 1, 3));
	CHECK(!profile__return(p, 2, 5));
	CHECK(p->funcs[0].st.calls == 2 && p->funcs[0].st.rec_calls == 0);
	CHECK(p->funcs[0].st.total_ns == 5 && p->nthreads == 2);
	profile__free(p);
}

/* greenlet: the driver f (frame 10) runs g (11, 12, ...) and switches to a worker whose
 * first frame h (20, no caller) runs g (21); their returns come named (EV_RESUME) where the
 * thread ran the other stack since */
TEST(greenlets_have_their_own_stacks_and_recursion_levels)
{
	struct profile *p = with_funcs();
	const uint32_t f = 0, g = 1, h = 2;
	uint64_t ts = 1;

	call(p, ts++, 100, 10, 0, 0, 0, 0, 0);	     /* f */
	for (int i = 0; i < 3; i++) {
		call(p, ts++, 200, 11, 10, 100, 0, 0, 0); /* g from f */
		CHECK(!profile__return(p, 7, ts++));
		if (!i)
			call(p, ts++, 300, 20, 0, 0, 0, 0, 0); /* h starts: no caller */
		call(p, ts++, 200, 21, 20, 300, 0, 0, 0);	/* g from h */
		CHECK(!profile__return(p, 7, ts++));
		/* back in f: its next call names it */
	}
	/* h returns after a switch: named */
	CHECK(!profile__resume(p, 7, 20));
	CHECK(!profile__return(p, 7, ts++));
	/* and f, whose stack the thread runs again */
	CHECK(!profile__resume(p, 7, 10));
	CHECK(!profile__return(p, 7, ts++));
	profile__finish(p, ts);
	CHECK(has_edge(p, f, g) && has_edge(p, h, g) && !has_edge(p, f, h) && !has_edge(p, g, g));
	CHECK(p->funcs[g].st.calls == 6 && p->funcs[g].st.rec_calls == 0);
	CHECK(p->funcs[f].st.calls == 1 && p->funcs[h].st.calls == 1);
	/* f ran from 1 to the end, h within it: neither was closed at the other's calls */
	CHECK(p->funcs[f].st.total_ns == ts - 2);
	CHECK(p->funcs[h].st.total_ns < p->funcs[f].st.total_ns && p->funcs[h].st.total_ns > 6);
	CHECK(p->n.open_at_stop == 0 && p->n.closed_unseen == 0 && p->n.unmatched_returns == 0);
	CHECK(p->n.switches >= 6 && p->n.most_parked == 1);
	profile__free(p);
}

/* the same function running in two greenlets at once is two calls, not a recursion; one still
 * waiting at the stop is closed there */
TEST(a_function_in_two_greenlets_is_no_recursion)
{
	struct profile *p = with_funcs();

	call(p, 1, 100, 10, 0, 0, 0, 0, 0); /* f in the first */
	call(p, 2, 100, 20, 0, 0, 0, 0, 0); /* f in a second, started meanwhile */
	CHECK(!profile__resume(p, 7, 10));
	CHECK(!profile__return(p, 7, 4));
	profile__finish(p, 9);
	CHECK(p->funcs[0].st.calls == 2 && p->funcs[0].st.rec_calls == 0);
	CHECK(p->funcs[0].st.total_ns == 3 + 7);
	CHECK(p->n.open_at_stop == 1);
	profile__free(p);
}

/* gevent: a greenlet's first frame has the frame that started it, the hub's loop f (10), as its
 * caller, so it is stacked on the hub's; the hub's next call from f shows the hub running again:
 * the greenlet (h, 30) waits, parked, and is neither closed there nor recovered when it goes on
 * (its h was counted twice) */
TEST(a_greenlet_started_from_the_hub_waits_when_the_hub_runs)
{
	struct profile *p = with_funcs();
	const uint32_t f = 0, g = 1, h = 2;

	call(p, 1, 100, 10, 0, 0, 0, 0, 0);	  /* the hub's f */
	call(p, 2, 300, 20, 0, 0, 0, 0, 0);	  /* a first greenlet's h: no caller */
	call(p, 3, 200, 11, 10, 100, 0, 0, 0);	  /* the hub again: g from f */
	CHECK(!profile__return(p, 7, 4));
	call(p, 5, 300, 30, 10, 100, 0, 0, 0);	  /* a greenlet the hub starts: h "from" f */
	call(p, 6, 200, 31, 30, 300, 10, 100, 0); /* g from it */
	CHECK(!profile__return(p, 7, 7));
	call(p, 8, 200, 12, 10, 100, 0, 0, 0);	  /* the hub: g from f */
	CHECK(!profile__return(p, 7, 9));
	call(p, 10, 200, 32, 30, 300, 10, 100, 0); /* the greenlet goes on */
	CHECK(!profile__return(p, 7, 11));
	CHECK(!profile__return(p, 7, 12));	   /* its h returns */
	profile__finish(p, 13);
	CHECK(p->funcs[h].st.calls == 2 && p->funcs[g].st.calls == 4 && p->funcs[f].st.calls == 1);
	CHECK(p->n.recovered == 0 && p->n.closed_unseen == 0);
	/* the second h ran from 5 to 12 */
	CHECK(p->funcs[h].st.total_ns >= 12 - 5);
	CHECK(has_edge(p, f, g) && has_edge(p, h, g));
	profile__free(p);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(recursion_matches_cprofile),
		TEST_CASE(mutual_recursion_matches_cprofile),
		TEST_CASE(generator_matches_cprofile),
		TEST_CASE(exceptions_match_cprofile),
		TEST_CASE(indirect_recursion_matches_cprofile),
		TEST_CASE(c_functions_match_cprofile),
		TEST_CASE(c_calls_whose_returns_went_elsewhere_are_closed),
		TEST_CASE(return_before_any_entry_is_ignored),
		TEST_CASE(calls_open_at_stop_are_closed_there),
		TEST_CASE(calls_made_while_a_returned_frame_is_cleared_belong_to_its_caller),
		TEST_CASE(lost_return_is_closed_at_the_next_entry),
		TEST_CASE(frame_entered_unseen_is_recovered),
		TEST_CASE(init_shim_and_inlined_init_are_recovered_once),
		TEST_CASE(inline_calls_known_by_code_are_counted_once),
		TEST_CASE(inline_calls_with_a_frame_end_when_the_frame_is_reused),
		TEST_CASE(a_wait_is_taken_out_of_the_thread_time),
		TEST_CASE(a_wait_within_a_code_flush_is_taken_out_once),
		TEST_CASE(generator_creation_is_not_a_call),
		TEST_CASE(threads_have_their_own_stacks_and_recursion_levels),
		TEST_CASE(greenlets_have_their_own_stacks_and_recursion_levels),
		TEST_CASE(a_function_in_two_greenlets_is_no_recursion),
		TEST_CASE(a_greenlet_started_from_the_hub_waits_when_the_hub_runs),
	};

	return test_run(cases, TEST_COUNT(cases));
}
