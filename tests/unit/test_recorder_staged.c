// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reading of staged records (user/record/recorder.c, recorder__staged): records of three lengths
 * (include/stage.h) arrive in chunks the BPF side cuts by size, not by record, so a record may
 * begin in one chunk and end in the next. Checked against the calls the stream was built from:
 * fed whole, and fed in pieces of every length from one word to a few records, the profile has
 * the same calls, callers and times, with no record taken for nonsense; a piece that does not
 * go on where the cut one ended (its rest was lost) drops the cut record, counted, and the next
 * batch reads as ever.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>
#include "inject/tsc.h"
#include "profile/profile.h"
#include "record/recorder.h"
#include "stage.h"
#include "test.h"

enum { CODE_A = 0x1000, CODE_B = 0x2000, CODE_C = 0x3000 };
enum { FRAME_A = 0x7000, FRAME_B = 0x7100, FRAME_C = 0x7200 };
#define ROUNDS 50

struct stream {
	uint64_t w[1024];
	uint32_t n; /* words */
	uint64_t tsc;
};

static void put(struct stream *s, uint64_t w)
{
	s->w[s->n++] = w;
}

/* the next stamp, as the trampoline writes it below a tag */
static uint64_t stamp(struct stream *s, uint64_t tag)
{
	s->tsc += 1000;
	return s->tsc | tag << STAGE_TAG_SHIFT;
}

/* A code flush's pause; A (from B, whose code a chain names) calling C ROUNDS times, C under
 * A without a chain (A on top), every other C returning a generator's None; A returns. With
 * lead, an exit between the pause and A's entry (so that A's entry is 8 bytes further on). */
static void build_lead(struct stream *s, bool lead)
{
	memset(s, 0, sizeof(*s));
	s->tsc = __rdtsc();
	put(s, stamp(s, STAGE_TAG_PAUSE));
	put(s, s->tsc + 500);
	if (lead)
		put(s, stamp(s, STAGE_TAG_EXIT));
	put(s, stamp(s, STAGE_TAG_ENTRY));
	put(s, FRAME_A);
	put(s, CODE_A);
	put(s, FRAME_B);
	put(s, CODE_B | STAGE_CHAIN);
	put(s, 0);
	put(s, 0);
	put(s, 0);
	for (int i = 0; i < ROUNDS; i++) {
		put(s, stamp(s, STAGE_TAG_ENTRY));
		put(s, FRAME_C);
		put(s, CODE_C);
		put(s, FRAME_A);
		put(s, stamp(s, i & 1 ? STAGE_TAG_EXIT_NONE : STAGE_TAG_EXIT));
	}
	put(s, stamp(s, STAGE_TAG_EXIT));
}

static void build(struct stream *s)
{
	build_lead(s, false);
}

struct run {
	struct hook_state hooks;
	struct recorder r;
};

static int run_up(struct run *u)
{
	memset(u, 0, sizeof(*u));
	u->r.hooks = &u->hooks;
	u->r.target_version = "3.12";
	u->r.prof = profile__new();
	if (!u->r.prof)
		return -1;
	profile__code(u->r.prof, CODE_A, "/srv/a.py", "a", 1);
	profile__code(u->r.prof, CODE_B, "/srv/a.py", "b", 2);
	profile__code(u->r.prof, CODE_C, "/srv/a.py", "c", 3);
	return 0;
}

static const struct call_stats *stats(struct run *u, const char *name)
{
	struct profile *p = u->r.prof;

	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name))
			return &p->funcs[i].st;
	return NULL;
}

/* The stream fed in pieces of piece bytes (0: whole), from offset base of the buffer. */
static int feed(struct run *u, const struct stream *s, uint32_t piece, uint32_t base)
{
	uint32_t bytes = s->n * 8, at = 0, n;
	int err = 0;

	while (!err && at < bytes) {
		n = piece && bytes - at > piece ? piece : bytes - at;
		err = recorder__staged(&u->r, 1, base + at, at == 0, (const uint8_t *)s->w + at, n);
		at += n;
	}
	return err ? err : recorder__staged_end(&u->r);
}

TEST(records_cut_between_chunks_read_as_whole_ones)
{
	struct stream s;
	struct run whole, cut;
	const struct call_stats *a, *c, *ca, *cc;

	REQUIRE(!tsc__settle());
	build(&s);
	REQUIRE(!run_up(&whole));
	REQUIRE(!feed(&whole, &s, 0, 0));
	profile__finish(whole.r.prof, UINT64_MAX);
	a = stats(&whole, "a");
	c = stats(&whole, "c");
	REQUIRE(a && c);
	CHECK(whole.r.staged_bad == 0);
	CHECK(a->calls == 1 && c->calls == ROUNDS);
	CHECK(a->total_ns > c->total_ns && c->total_ns > 0);
	for (uint32_t piece = 8; piece <= 3 * STAGE_ENTRY_BYTES; piece += 8) {
		REQUIRE(!run_up(&cut));
		CHECK(!feed(&cut, &s, piece, 0));
		profile__finish(cut.r.prof, UINT64_MAX);
		ca = stats(&cut, "a");
		cc = stats(&cut, "c");
		CHECK(cut.r.staged_bad == 0);
		CHECK(ca && ca->calls == a->calls && ca->total_ns == a->total_ns &&
		      ca->inline_ns == a->inline_ns);
		CHECK(cc && cc->calls == c->calls && cc->total_ns == c->total_ns &&
		      cc->inline_ns == c->inline_ns);
		CHECK(cut.r.prof->nedges == whole.r.prof->nedges);
		profile__free(cut.r.prof);
	}
	profile__free(whole.r.prof);
}

TEST(a_cut_record_whose_rest_was_lost_is_dropped)
{
	struct stream s;
	struct run u;
	const struct call_stats *c;

	REQUIRE(!tsc__settle());
	build(&s);
	REQUIRE(!run_up(&u));
	/* the pause and the first 8 bytes of A's entry; its rest never comes */
	CHECK(!recorder__staged(&u.r, 1, 0, true, s.w, STAGE_PAUSE_BYTES + 8));
	CHECK(u.r.cut_bytes == 8);
	/* the next batch, from the start of the buffer: the stream again */
	CHECK(!feed(&u, &s, 40, 0));
	profile__finish(u.r.prof, UINT64_MAX);
	CHECK(u.r.staged_bad == 1);
	c = stats(&u, "c");
	CHECK(c && c->calls == ROUNDS);
	profile__free(u.r.prof);
	/* another thread's records in between: the same */
	REQUIRE(!run_up(&u));
	CHECK(!recorder__staged(&u.r, 1, 0, true, s.w, STAGE_PAUSE_BYTES + 8));
	CHECK(!recorder__staged(&u.r, 2, STAGE_PAUSE_BYTES + 8, false, s.w + 3, 24));
	CHECK(u.r.staged_bad >= 1 && u.r.cut_bytes == 0);
	profile__free(u.r.prof);
}

/* A copy whose rest found no room, then a later batch's copy (its first chunk) that begins at
 * the very offset the cut ended at: not the rest. Before, the two were joined into a record of
 * words of both, and everything after it in the chunk read out of step (calls that were never
 * made, on top of the lost ones counted). */
TEST(a_copy_starting_where_a_cut_ended_is_not_its_rest)
{
	struct stream s, later;
	struct run u;
	const struct call_stats *a, *c;
	uint32_t cut = STAGE_PAUSE_BYTES + 8, bytes;

	REQUIRE(!tsc__settle());
	build(&s);
	build_lead(&later, true); /* A's entry at offset cut */
	REQUIRE(!run_up(&u));
	CHECK(!recorder__staged(&u.r, 1, 0, true, s.w, cut));
	CHECK(u.r.cut_bytes == 8);
	/* the later batch's records from offset cut on: whole records, a copy of their own */
	bytes = later.n * 8 - cut;
	CHECK(!recorder__staged(&u.r, 1, cut, true, (const uint8_t *)later.w + cut, bytes));
	CHECK(!recorder__staged_end(&u.r));
	profile__finish(u.r.prof, UINT64_MAX);
	CHECK(u.r.staged_bad == 1);
	a = stats(&u, "a");
	c = stats(&u, "c");
	CHECK(a && a->calls == 1);
	CHECK(c && c->calls == ROUNDS);
	profile__free(u.r.prof);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(records_cut_between_chunks_read_as_whole_ones),
		TEST_CASE(a_cut_record_whose_rest_was_lost_is_dropped),
		TEST_CASE(a_copy_starting_where_a_cut_ended_is_not_its_rest),
	};

	return test_run(cases, TEST_COUNT(cases));
}
