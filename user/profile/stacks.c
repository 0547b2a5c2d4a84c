// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shadow stacks and cProfile accounting (the tables they fill in: profile.c). The events are
 * CPython's C-level eval entries and returns; each entry also names the frame that was
 * running when it happened, which lets a thread's stack be repaired when events are missing:
 * frames above the caller returned unseen, and a caller that is not on the stack but whose own
 * caller is was entered unseen (a call that CPython still ran inline, or a lost event) and is
 * recovered.
 *
 * One job, kept whole: every kind of event (Python calls, C calls, greenlet switches, inline
 * calls, exits) is a rule over the same few primitives (push, pop, find_frame, the strands),
 * static here so that the per-event path has them inlined; split by event kind, each would
 * call across files on that path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "profile/profile_tables.h"

static struct compensation comp; /* zero: none */

/* Whether anything is taken out of the times (the figures are set and not all zero). */
static bool compensating(void)
{
	return comp.call_ns || comp.inside_ns || comp.done_ns || comp.ccall_ns || comp.cinside_ns;
}
static bool cpu_clock;

void profile__set_compensation(const struct compensation *c)
{
	comp = *c;
}

void profile__set_cpu_clock(bool on)
{
	cpu_clock = on;
}

bool profile__cpu_clock(void)
{
	return cpu_clock;
}


/* The recursion level counter at id in *arr, grown (zeroed) to hold it; NULL on ENOMEM. An
 * array rather than a map: two increments per call and two decrements per return. */
static uint32_t *level_of(uint32_t **arr, uint32_t *cap, uint32_t id)
{
	uint32_t old = *cap;

	if (id >= old) {
		if (array_grow((void **)arr, cap, sizeof(**arr), id + 1))
			return NULL;
		memset(*arr + old, 0, (size_t)(*cap - old) * sizeof(**arr));
	}
	return &(*arr)[id];
}

/* The nearest entry below index i (exclusive) that is a function, or NULL. */
static struct frame_entry *real_below(struct thread *t, uint32_t i)
{
	while (i--)
		if (t->stack[i].func != NO_ID)
			return &t->stack[i];
	return NULL;
}

static int push(struct profile *p, struct thread *t, uint64_t frame, uint32_t func, uint64_t ts,
		bool counted)
{
	struct frame_entry *e, *parent;
	uint32_t *level;

	if (array_grow((void **)&t->stack, &t->cap, sizeof(*t->stack), t->depth + 1))
		return -ENOMEM;
	parent = real_below(t, t->depth);
	e = &t->stack[t->depth++];
	e->frame = frame;
	e->t0 = ts;
	e->subt = 0;
	e->subt_est = 0;
	e->func = func;
	e->edge = NO_ID;
	e->counted = counted && func != NO_ID;
	e->inlined = false;
	e->seeded = false;
	e->c = false;
	e->owed = 0;
	e->probed_ns = 0;
	e->done_ns = 0;
	/* its call path: under the nearest function below (a frame that is no call has none) */
	e->node = parent ? parent->node : t->root;
	if (func != NO_ID) {
		e->node = calltree__child(&p->tree, e->node, func);
		if (e->node == CT_NONE)
			return -ENOMEM;
	}
	if (!e->counted)
		return 0;
	/* cProfile's caller is the previous profiled call: a frame begun before recording is
	 * shown as a caller too, so the calls made from it keep their context */
	if (parent)
		e->edge = profile__node_edge(p, e->node, parent->func, func);
	level = level_of(&t->func_level, &t->func_level_cap, func);
	if (!level)
		return -ENOMEM;
	++*level;
	if (e->edge != NO_ID) {
		level = level_of(&t->edge_level, &t->edge_level_cap, e->edge);
		if (!level)
			return -ENOMEM;
		++*level;
	}
	p->n.calls++;
	return 0;
}

/* One call ends: cumtime only for the outermost of nested calls of the same one (_lsprof). */
static void account(struct call_stats *st, uint32_t *level, uint64_t tt, uint64_t it)
{
	if (level && --*level == 0)
		st->total_ns += tt;
	else
		st->rec_calls++;
	st->inline_ns += it;
	st->calls++;
}

/*
 * A call's own time once compensated, from its estimate (which the noise of the probes' cost
 * around the calibrated figure can put below 0): never below 0, and what was taken beyond its
 * own time is its function's debt, paid from the own time of its later calls. Flooring each
 * call alone would only ever round the noise up: a 40 ns function under a 4 us probe came out
 * 20x its native time. Its function's total stays the sum of its estimates, floored once.
 */
static uint64_t pay_debt(struct func *f, int64_t est)
{
	uint64_t own, paid;

	if (est < 0) {
		f->debt_ns += (uint64_t)-est;
		return 0;
	}
	own = (uint64_t)est;
	paid = own < f->debt_ns ? own : f->debt_ns;
	f->debt_ns -= paid;
	return own - paid;
}

/* What thread t's figures are multiplied by now: its gauge's, else the last any thread's gave
 * (a thread's first batch, before its first gauge reading), else 1. */
static double speed_of(const struct profile *p, const struct thread *t)
{
	if (!comp.gauge_ps)
		return 1;
	return t->speed > 0 ? t->speed : p->speed > 0 ? p->speed : 1;
}

/* A figure at a speed (as it is at 1: the figures stay exact where no gauge scales them). */
static uint64_t at_speed(uint64_t ns, double speed)
{
	return speed == 1 ? ns : (uint64_t)((double)ns * speed + 0.5);
}

/* Pops the top entry as returning at ts, with _lsprof's bookkeeping. */
static void pop(struct profile *p, struct thread *t, uint64_t ts)
{
	struct frame_entry *e = &t->stack[--t->depth], *parent;
	double speed = speed_of(p, t);
	/* a frame that ran inline had no probes of its own; every other frame, counted or
	 * not (a generator's creation), had its entry and return probed; a C call its two
	 * records */
	uint64_t whole = e->inlined ? 0 : at_speed(e->c ? comp.ccall_ns : comp.call_ns, speed);
	uint64_t inside = e->inlined ? 0 : at_speed(e->c ? comp.cinside_ns : comp.inside_ns, speed),
		 tt, it;
	int64_t est = 0;

	if (t->depth) {
		t->stack[t->depth - 1].probed_ns += e->probed_ns + whole;
		t->stack[t->depth - 1].done_ns += e->done_ns;
	}
	if (!e->counted)
		return;
	tt = ts > e->t0 ? ts - e->t0 : 0;
	if (compensating()) {
		/* the probe time inside it: its own inside part, and all of each probed call
		 * below it; its own time is that less its callees' estimates (not their floored
		 * times: a callee's shortfall is its own function's debt, not this one's) */
		est = (int64_t)tt - (int64_t)(inside + e->probed_ns + e->done_ns);
		it = pay_debt(&p->funcs[e->func], est - e->subt_est);
		/* a cumtime stays the sum of its tottime and its callees' times, in the .prof
		 * and in the pictures, whatever was taken off */
		tt = it + e->subt;
	} else {
		it = tt > e->subt ? tt - e->subt : 0;
	}
	parent = real_below(t, t->depth);
	if (parent) {
		parent->subt += tt;
		parent->subt_est += est;
	}

	/* counted calls raised these levels at their push: both arrays hold the ids */
	account(&p->funcs[e->func].st, &t->func_level[e->func], tt, it);
	p->tree.nodes[e->node].total_ns += tt;
	p->tree.nodes[e->node].self_ns += it;
	p->tree.nodes[e->node].calls++;
	if (p->on_call)
		p->on_call(p->on_call_ctx, p->tree.nodes[t->root].thread, e->func, e->t0, ts);
	if (e->edge != NO_ID)
		account(&p->edges[e->edge].st, &t->edge_level[e->edge], tt, it);
}

/*
 * CPU clock: a frame seeded at attach has no CPU timestamp of its own (the seed's is wall
 * time); it starts at its thread's first event, what ran on it before is not counted.
 */
static void start_seeded(struct thread *t, uint64_t ts)
{
	if (!t->t0_pending)
		return;
	for (uint32_t i = 0; i < t->depth; i++)
		if (!t->stack[i].t0)
			t->stack[i].t0 = ts;
	t->last_ns = ts;
	t->t0_pending = false;
}

/*
 * The time of a thread's event, in the thread's order: records from different clocks (the
 * batch mode's TSC stamps, the kernel's for the other probes) or vCPUs may be tens of ns apart,
 * and one stamped before its thread's previous event takes that one's time. Then the frames
 * seeded at attach start (start_seeded).
 */
static uint64_t event_time(struct profile *p, struct thread *t, uint64_t ts)
{
	t->wait_open_ns = 0;
	ts = ts > t->paused_ns ? ts - t->paused_ns : 0;
	if (!t->t0_pending && ts < t->last_ns) {
		p->n.reordered++;
		ts = t->last_ns;
	}
	start_seeded(t, ts);
	return ts;
}

/* Index of the topmost entry for frame, or -1. */
static int64_t find_frame(const struct thread *t, uint64_t frame)
{
	uint32_t i = t->depth;

	while (i--)
		if (t->stack[i].frame == frame)
			return i;
	return -1;
}

static void close_above(struct profile *p, struct thread *t, int64_t keep, uint64_t ts)
{
	while ((int64_t)t->depth > keep + 1) {
		if (t->stack[t->depth - 1].c)
			p->n.c_closed++;
		else
			p->n.closed_unseen++;
		pop(p, t, ts);
	}
}

/*
 * The strands (profile.h): the one the thread runs lives in struct thread's own fields; the
 * others are parked, found by their top frame. A thread switches strands when an event names
 * a frame of a parked one: a call whose caller is there, a resume record (an exit whose frame
 * is not the last one entered), or a call with no caller or an unknown one while the running
 * strand still holds frames (a greenlet's first, or one that waited since before recording).
 */
#define PARKED_DEEP_SCAN 64 /* parked strands searched below their top, at most */

static void strand_get(const struct thread *t, struct strand *s)
{
	s->stack = t->stack;
	s->depth = t->depth;
	s->cap = t->cap;
	s->owed = t->owed;
	s->func_level = t->func_level;
	s->edge_level = t->edge_level;
	s->func_level_cap = t->func_level_cap;
	s->edge_level_cap = t->edge_level_cap;
}

static void strand_set(struct thread *t, const struct strand *s)
{
	t->stack = s->stack;
	t->depth = s->depth;
	t->cap = s->cap;
	t->owed = s->owed;
	t->func_level = s->func_level;
	t->edge_level = s->edge_level;
	t->func_level_cap = s->func_level_cap;
	t->edge_level_cap = s->edge_level_cap;
}

static uint64_t strand_top(const struct strand *s)
{
	return s->depth ? s->stack[s->depth - 1].frame : 0;
}

/* Parks slot i's strand, s, under its top frame (one with none is found by a scan only). */
static void index_parked(struct thread *t, uint32_t i)
{
	uint64_t top = strand_top(&t->parked[i]), *slot;

	if (top && (slot = u64_map__upsert(&t->parked_top, top)))
		*slot = i + 1;
}

static void unindex_parked(struct thread *t, uint32_t i)
{
	uint64_t top = strand_top(&t->parked[i]), *slot;

	if (top && (slot = u64_map__get(&t->parked_top, top)) && *slot == i + 1)
		u64_map__del(&t->parked_top, top);
}

/* The running strand (it holds frames) is parked; the thread runs an empty one. */
static int park(struct profile *p, struct thread *t)
{
	struct strand none = { 0 };

	if (array_grow((void **)&t->parked, &t->parked_cap, sizeof(*t->parked), t->nparked + 1))
		return -ENOMEM;
	strand_get(t, &t->parked[t->nparked]);
	index_parked(t, t->nparked++);
	strand_set(t, &none);
	if (t->nparked > p->n.most_parked)
		p->n.most_parked = t->nparked;
	p->n.switches++;
	return 0;
}

/* Parked strand i becomes the running one; the running one takes its slot if it holds frames,
 * else it ends. */
static void unpark(struct profile *p, struct thread *t, uint32_t i)
{
	struct strand run;

	strand_get(t, &run);
	unindex_parked(t, i);
	strand_set(t, &t->parked[i]);
	p->n.switches++;
	if (run.depth) {
		t->parked[i] = run;
		index_parked(t, i);
		return;
	}
	free(run.stack);
	free(run.func_level);
	free(run.edge_level);
	if (i != --t->nparked) {
		unindex_parked(t, t->nparked);
		t->parked[i] = t->parked[t->nparked];
		index_parked(t, i);
	}
}

/* Index of frame on the strand the thread runs, after switching to the parked strand that
 * holds it if the running one does not; -1 if none does. */
static int64_t strand_of(struct profile *p, struct thread *t, uint64_t frame)
{
	int64_t i = find_frame(t, frame);
	uint64_t *slot;
	uint32_t j, k;

	if (i >= 0 || !t->nparked || !frame)
		return i;
	slot = u64_map__get(&t->parked_top, frame);
	if (slot) {
		unpark(p, t, (uint32_t)(*slot - 1));
		return (int64_t)t->depth - 1;
	}
	/* below a parked strand's top: its frames above returned unseen (bounded: a server's
	 * thousands of greenlets would make every unknown frame a long search) */
	for (j = 0; j < t->nparked && t->nparked <= PARKED_DEEP_SCAN; j++) {
		for (k = t->parked[j].depth; k--;) {
			if (t->parked[j].stack[k].frame != frame)
				continue;
			unpark(p, t, j);
			return k;
		}
	}
	return -1;
}

/*
 * Whether a frame above index keep will still have a return of its own: probed at its entry
 * and begun while recording (an inline call, or a frame begun before recording, returns
 * unseen).
 */
static bool returns_above(const struct thread *t, int64_t keep)
{
	for (uint32_t j = (uint32_t)(keep + 1); j < t->depth; j++)
		if (t->stack[j].counted && !t->stack[j].inlined && !t->stack[j].seeded)
			return true;
	return false;
}

/* The frames above index keep become a parked strand of their own, with their levels. */
static int split_above(struct profile *p, struct thread *t, int64_t keep)
{
	uint32_t from = (uint32_t)(keep + 1), n = t->depth - from, j;
	struct strand s = { 0 };
	const struct frame_entry *e;

	if (array_grow((void **)&s.stack, &s.cap, sizeof(*s.stack), n) ||
	    array_grow((void **)&t->parked, &t->parked_cap, sizeof(*t->parked), t->nparked + 1))
		goto nomem;
	memcpy(s.stack, t->stack + from, (size_t)n * sizeof(*s.stack));
	s.depth = n;
	/* room for every level first: on failure the running strand is as it was */
	for (j = 0; j < n; j++) {
		e = &s.stack[j];
		if (e->counted && (!level_of(&s.func_level, &s.func_level_cap, e->func) ||
				   (e->edge != NO_ID &&
				    !level_of(&s.edge_level, &s.edge_level_cap, e->edge))))
			goto nomem;
	}
	for (j = 0; j < n; j++) {
		e = &s.stack[j];
		if (!e->counted)
			continue;
		t->func_level[e->func]--;
		s.func_level[e->func]++;
		if (e->edge != NO_ID) {
			t->edge_level[e->edge]--;
			s.edge_level[e->edge]++;
		}
	}
	t->depth = from;
	t->parked[t->nparked] = s;
	index_parked(t, t->nparked++);
	if (t->nparked > p->n.most_parked)
		p->n.most_parked = t->nparked;
	p->n.switches++;
	return 0;
nomem:
	free(s.stack);
	free(s.func_level);
	free(s.edge_level);
	return -ENOMEM;
}

/*
 * An event shows the frame at index keep running again, with frames above it. On a thread
 * that switches greenlets, frames above that will still return are a greenlet's that waits:
 * a greenlet's first frame has as its caller the frame that started it, in another greenlet
 * (the hub's loop, for gevent), so its frames were stacked on that one's. They are parked as
 * a strand of their own. Otherwise they returned unseen.
 */
static int leave_above(struct profile *p, struct thread *t, int64_t keep, uint64_t ts)
{
	if (p->n.switches && returns_above(t, keep))
		return split_above(p, t, keep);
	close_above(p, t, keep, ts);
	return 0;
}

/*
 * The entry to keep when a call's caller frame is at index i: the caller itself, or the C call
 * it has open right above it, in which the call is made (sorted's key, map's function: a C
 * function calling back into Python). A C call's callees are always called from inside it:
 * its frame is blocked in it.
 */
static int64_t caller_index(const struct thread *t, int64_t i)
{
	return i + 1 < (int64_t)t->depth && t->stack[i + 1].c ? i + 1 : i;
}

/*
 * Recovers chain[n - 1] .. chain[0], frames that ran without an event, above index i. A call
 * already known by its code only (an inline call: address 0) takes its frame's address instead
 * of being counted twice; frames that are no call (3.13's __init__ shim) are left out.
 */
static int recover(struct profile *p, struct thread *t, uint64_t ts, int64_t i,
		   const __u64 *chain, const __u64 *chain_code, int n)
{
	uint32_t j = (uint32_t)(i + 1), func;
	int err;

	while (n-- > 0) {
		func = chain_code[n] ? profile__func_of_code(p, chain_code[n]) : NO_ID;
		if (func == NO_ID || p->funcs[func].shim)
			continue;
		if (j < t->depth && !t->stack[j].frame && t->stack[j].func == func) {
			t->stack[j++].frame = chain[n];
			continue;
		}
		close_above(p, t, (int64_t)j - 1, ts);
		/* started at most at the last event of this thread */
		p->n.recovered++;
		err = push(p, t, chain[n], func, t->last_ns, true);
		if (err)
			return err;
		t->stack[t->depth - 1].inlined = true;
		j = t->depth;
	}
	close_above(p, t, (int64_t)j - 1, ts);
	return 0;
}

/*
 * A call made while the frame on top of its activation was cleared after returning
 * (CALL_AFTER_RETURN): what is above its caller (at index keep, -1 for none) returned then, as
 * cProfile saw it. Closed without being counted as unseen; if an activation's frame is among
 * them, its ret is still to come and is owed to the caller.
 */
static void close_returned(struct profile *p, struct thread *t, int64_t keep, uint64_t ts)
{
	bool activation = false;

	while ((int64_t)t->depth > keep + 1) {
		activation |= !t->stack[t->depth - 1].inlined;
		pop(p, t, ts);
	}
	if (activation && keep >= 0)
		t->stack[keep].owed++;
	else if (activation)
		t->owed++;
}

/*
 * Makes the stack's top the caller frame, recovering the frames that ran without an event. A
 * generator's frame that is not on the stack (CALL_CHAIN_GEN) was linked by a throw, not run:
 * it is passed over, and what is below it is the caller.
 */
static int resync(struct profile *p, struct thread *t, uint64_t ts, uint64_t frame,
		  const __u64 *chain_in, const __u64 *code_in, uint64_t back_in, uint32_t flags)
{
	/* the chain from its first frame not passed over, then back */
	__u64 chain[CHAIN_LEN + 1] = { 0 }, chain_code[CHAIN_LEN + 1] = { 0 }, back;
	int64_t i;
	int k, skip = 0, n;

	while (skip < CHAIN_LEN && chain_in[skip] && (flags & CALL_CHAIN_GEN(skip)) &&
	       find_frame(t, chain_in[skip]) < 0)
		skip++;
	for (n = 0; skip + n < CHAIN_LEN; n++) {
		chain[n] = chain_in[skip + n];
		chain_code[n] = code_in[skip + n];
	}
	chain[n] = back_in; /* known by its address only */
	back = chain[CHAIN_LEN];
	/* (<= 3.10: a generator not running has no caller: the thrower is on top) */
	if (!chain[0] && skip)
		return 0;
	if (!chain[0]) {
		/* a frame with no caller: a stack's first. Where one on the stack had its address,
		 * that one and all above returned; else the stack waits (greenlet: a new one) */
		if (t->depth && find_frame(t, frame) < 0)
			return park(p, t);
		close_above(p, t, -1, ts);
		return 0;
	}
	i = strand_of(p, t, chain[0]);
	if (i >= 0)
		return leave_above(p, t, caller_index(t, i), ts);
	/* the nearest known ancestor: everything above it returned, the frames below the
	 * caller down to it were entered unseen */
	for (k = 1; k <= CHAIN_LEN; k++) {
		uint64_t anc = k < CHAIN_LEN ? chain[k] : back;

		if (!anc)
			break;
		i = find_frame(t, anc);
		if (i >= 0)
			return recover(p, t, ts, i, chain, chain_code, k);
	}
	if (!chain_code[0])
		return 0; /* nothing known about it: leave the stack as it is */
	/* a frame on no stack of the thread's: it began before recording (a greenlet's, waiting
	 * since; one entered unseen under more unseen frames). The stack the thread ran waits:
	 * its frames run on until an event shows them again, or the stop. Kept as a caller, not
	 * a call. */
	if (t->depth) {
		int err = park(p, t);

		if (err)
			return err;
	}
	return push(p, t, chain[0], profile__func_of_code(p, chain_code[0]), ts, false);
}

int profile__call(struct profile *p, uint32_t tid, uint64_t ts, uint64_t code, uint64_t frame,
		  const __u64 chain[CHAIN_LEN], const __u64 chain_code[CHAIN_LEN], uint64_t back,
		  uint32_t flags)
{
	struct thread *t = thread_of(p, tid);
	bool gen_create = flags & CALL_GEN_CREATE;
	int64_t i;
	int err;

	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	if (!p->first_ns)
		p->first_ns = ts;
	p->last_ns = ts;
	/* called from below a returned frame: that frame and whatever ran above it are done */
	if (flags & CALL_AFTER_RETURN) {
		i = chain[0] ? find_frame(t, chain[0]) : -1;
		if (i >= 0 || !chain[0])
			close_returned(p, t, i, ts);
	}
	err = resync(p, t, ts, frame, chain, chain_code, back, flags);
	t->last_ns = ts;
	if (err)
		return err;
	if (gen_create || !code) {
		p->n.not_calls += gen_create;
		err = push(p, t, frame, NO_ID, ts, false);
	} else {
		err = push(p, t, frame, profile__func_of_code(p, code), ts, true);
	}
	/* no return will come for it: it ends, as a frame run inline does, when the thread's
	 * next event shows it has returned */
	if (!err && (flags & CALL_NO_RETURN)) {
		t->stack[t->depth - 1].inlined = true;
		p->n.no_return++;
	}
	return err;
}

int profile__ccall(struct profile *p, uint32_t tid, uint64_t ts, uint64_t key, uint64_t frame)
{
	struct thread *t = thread_of(p, tid);
	int64_t i;
	int err;

	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	if (!p->first_ns)
		p->first_ns = ts;
	p->last_ns = t->last_ns = ts;
	/* its frame runs (on the stack the thread switched to, if another: greenlet): what is
	 * above it returned */
	i = frame ? strand_of(p, t, frame) : -1;
	if (i >= 0)
		close_above(p, t, i, ts);
	err = push(p, t, 0, profile__func_of_cfunc(p, key), ts, true);
	if (!err) {
		t->stack[t->depth - 1].c = true;
		p->n.c_calls += t->stack[t->depth - 1].counted;
	}
	return err;
}

int profile__creturn(struct profile *p, uint32_t tid, uint64_t ts, uint64_t frame)
{
	struct thread *t = thread_of(p, tid);
	int64_t at;
	uint32_t i;

	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	p->last_ns = t->last_ns = ts;
	at = frame ? strand_of(p, t, frame) : -1;
	if (at >= 0) {
		/* the C call its frame has open: whatever ran above it returned */
		i = (uint32_t)at + 2;
		if (i > t->depth || !t->stack[i - 1].c) {
			p->n.c_unmatched++;
			return 0;
		}
		while (t->depth >= i)
			pop(p, t, ts);
		return 0;
	}
	/* frames that ran inline inside it returned before it */
	for (i = t->depth; i && t->stack[i - 1].inlined; i--)
		;
	if (!i || !t->stack[i - 1].c) {
		p->n.c_unmatched++;
		return 0;
	}
	while (t->depth >= i)
		pop(p, t, ts);
	return 0;
}

int profile__csync(struct profile *p, uint32_t tid, uint64_t ts)
{
	struct thread *t = thread_of(p, tid);

	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	p->last_ns = t->last_ns = ts;
	while (t->depth && t->stack[t->depth - 1].c) {
		p->n.c_closed++;
		pop(p, t, ts);
	}
	return 0;
}

int profile__inline_call(struct profile *p, uint32_t tid, uint64_t ts, uint64_t code,
			 uint64_t frame, uint64_t caller)
{
	struct thread *t = thread_of(p, tid);
	int64_t i;
	int err;

	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	if (!p->first_ns)
		p->first_ns = ts;
	/* what ran above the caller (an earlier inline call) has returned */
	i = caller ? find_frame(t, caller) : -1;
	if (i >= 0)
		close_above(p, t, i, ts);
	/* so has a frame that ran at this one's address: it was freed for this one */
	i = frame ? find_frame(t, frame) : -1;
	if (i >= 0)
		close_above(p, t, i - 1, ts);
	p->last_ns = t->last_ns = ts;
	p->n.inline_calls++;
	/* (0: its frame is not made yet, the next chain that shows it names it) */
	err = push(p, t, frame, profile__func_of_code(p, code), ts, true);
	if (!err)
		t->stack[t->depth - 1].inlined = true;
	return err;
}

/* Thread t's later events are taken as ns earlier; count and total say how often and how
 * long in all. */
static void pause_thread(struct thread *t, uint64_t ns, uint64_t *count, uint64_t *total)
{
	t->paused_ns += ns;
	++*count;
	*total += ns;
}

int profile__pause(struct profile *p, uint32_t tid, uint64_t ns)
{
	struct thread *t = thread_of(p, tid);

	if (!t)
		return -ENOMEM;
	pause_thread(t, ns, &p->n.waits, &p->n.waited_ns);
	t->wait_open_ns += ns;
	return 0;
}

/*
 * A code flush's time comes as the first record of the batch after it (include/stage.h). If the
 * thread stood waiting for room in that flush, the wait, taken out already (profile__pause,
 * just before: no event of the thread comes between), lies within the flush's time: taken out
 * twice, it moved every later event of the thread that much earlier, and they all came out at
 * one instant (20,000 functions called in turn, whose first round is all code flushes). (A
 * wait in a full flush right before a code flush, no record between them, leaves that code
 * flush's few µs in the times.)
 */
int profile__flush(struct profile *p, uint32_t tid, uint64_t ns)
{
	struct thread *t = thread_of(p, tid);
	uint64_t waited;

	if (!t)
		return -ENOMEM;
	waited = t->wait_open_ns < ns ? t->wait_open_ns : ns;
	t->wait_open_ns = 0;
	if (compensating())
		pause_thread(t, ns - waited, &p->n.flushes, &p->n.flushed_ns);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A reading is one short loop: an interrupt or a preemption in it makes it several times
 * longer, and the TSC of the test VM ticks in steps of 26 (4% of a reading at the fast speed).
 * So a thread's speed is the mean of its last readings within 1.5x of their (lower) median: a
 * moment's disturbance drops out, the steps average out, and a change of the vCPU's speed
 * (1.5-2x) takes the window over within a few batches.
 */
int profile__gauge(struct profile *p, uint32_t tid, uint64_t ts_ns, uint64_t ps)
{
	struct thread *t = thread_of(p, tid);
	uint64_t w[PROFILE_GAUGE_WINDOW], med, sum = 0;
	uint32_t n, k = 0;

	if (!t)
		return -ENOMEM;
	if (p->on_gauge)
		p->on_gauge(p->on_gauge_ctx, ts_ns, ps);
	if (!ps)
		return 0;
	p->n.gauges++;
	t->gauge_ps[t->ngauge++ % PROFILE_GAUGE_WINDOW] = ps;
	n = t->ngauge < PROFILE_GAUGE_WINDOW ? t->ngauge : PROFILE_GAUGE_WINDOW;
	memcpy(w, t->gauge_ps, n * sizeof(*w));
	qsort(w, n, sizeof(*w), cmp_u64);
	med = w[(n - 1) / 2]; /* (the lower: a disturbance only ever lengthens a reading) */
	for (uint32_t i = 0; i < n; i++)
		if (w[i] * 2 <= med * 3 && w[i] * 3 >= med * 2) {
			sum += w[i];
			k++;
		}
	if (!comp.gauge_ps || !k)
		return 0;
	t->speed = (double)sum / k / (double)comp.gauge_ps;
	/* the test VM's vCPUs run at most ~2x apart: a window further off is disturbances (a
	 * vCPU the host took away again and again), not the CPU's speed */
	if (t->speed > PROFILE_SPEED_BOUND)
		t->speed = PROFILE_SPEED_BOUND;
	else if (t->speed < 1 / PROFILE_SPEED_BOUND)
		t->speed = 1 / PROFILE_SPEED_BOUND;
	p->speed = t->speed;
	if (!p->n.speed_min || t->speed < p->n.speed_min)
		p->n.speed_min = t->speed;
	if (t->speed > p->n.speed_max)
		p->n.speed_max = t->speed;
	return 0;
}

int profile__return(struct profile *p, uint32_t tid, uint64_t ts)
{
	struct thread *t = thread_of(p, tid);

	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	p->last_ns = ts;
	t->last_ns = ts;
	/* the stack it ran ended (a greenlet's, a subinterpreter's) and a return names no frame:
	 * it is of the stack that waited last (a switch back to its parent) */
	if (!t->depth && !t->owed && t->nparked)
		unpark(p, t, t->nparked - 1);
	/* frames that ran inline above the returning frame returned before it, unseen; so did
	 * the C calls it made whose returns went to a profile function of the program's own */
	while (t->depth && (t->stack[t->depth - 1].inlined || t->stack[t->depth - 1].c)) {
		p->n.c_closed += t->stack[t->depth - 1].c;
		pop(p, t, ts);
	}
	/* the ret of an activation whose frame was closed when it returned (close_returned) */
	if (t->depth && t->stack[t->depth - 1].owed) {
		t->stack[t->depth - 1].owed--;
		return 0;
	}
	if (!t->depth) {
		if (t->owed)
			t->owed--;
		else
			p->n.unmatched_returns++;
		return 0;
	}
	pop(p, t, ts);
	return 0;
}

int profile__resume(struct profile *p, uint32_t tid, uint64_t frame)
{
	struct thread *t = thread_of(p, tid);
	int64_t i;

	if (!t)
		return -ENOMEM;
	i = strand_of(p, t, frame);
	if (i >= 0 && p->n.switches && returns_above(t, i))
		return split_above(p, t, i);
	/* (what ran inline above it is closed by the return, as ever) */
	while (i >= 0 && (int64_t)t->depth > i + 1 && !t->stack[t->depth - 1].inlined) {
		p->n.closed_unseen++;
		pop(p, t, t->last_ns);
	}
	return 0;
}

#define CO_GENERATOR 0x20
#define CO_COROUTINE 0x80
#define CO_GENERATOR_KINDS 0x3a0 /* generators, coroutines, iterable coroutines, async generators */

int profile__gen_return(struct profile *p, uint32_t tid, uint64_t ts, bool none)
{
	struct thread *t = thread_of(p, tid);
	const struct frame_entry *e;
	struct frame_entry *caller;
	uint32_t flags, i;

	if (!t)
		return -ENOMEM;
	/* the frame returning: the top one under any that ran inline (profile__return) */
	for (i = t->depth; i && (t->stack[i - 1].inlined || t->stack[i - 1].c); i--)
		;
	if (i >= 2 && !t->stack[i - 1].owed) {
		e = &t->stack[i - 1];
		caller = &t->stack[i - 2];
		flags = e->func != NO_ID ? p->funcs[e->func].co_flags : 0;
		if (((flags & CO_COROUTINE) || ((flags & CO_GENERATOR) && !none)) &&
		    caller->func != NO_ID && (p->funcs[caller->func].co_flags & CO_GENERATOR_KINDS))
			caller->done_ns += at_speed(comp.done_ns, speed_of(p, t));
	}
	return profile__return(p, tid, ts);
}

int profile__exit(struct profile *p, uint32_t tid, uint64_t ts, uint64_t frame, uint64_t code,
		  uint64_t caller)
{
	struct thread *t;
	uint32_t func;
	int64_t i;
	int err;

	if (!frame)
		return profile__return(p, tid, ts);
	t = thread_of(p, tid);
	if (!t)
		return -ENOMEM;
	ts = event_time(p, t, ts);
	p->last_ns = ts;
	i = strand_of(p, t, frame);
	if (i >= 0) {
		close_above(p, t, i, ts);
		pop(p, t, ts);
		t->last_ns = ts;
		return 0;
	}
	i = caller ? strand_of(p, t, caller) : -1;
	if (i >= 0)
		close_above(p, t, i, ts);
	func = profile__func_of_code(p, code);
	if (func == NO_ID || p->funcs[func].shim) {
		t->last_ns = ts;
		return 0;
	}
	p->n.recovered++;
	err = push(p, t, frame, func, t->last_ns, true);
	if (!err)
		pop(p, t, ts);
	t->last_ns = ts;
	return err;
}

int profile__seed(struct profile *p, uint32_t tid, uint64_t ts, uint64_t frame, uint64_t code)
{
	struct thread *t = thread_of(p, tid);
	int err;

	if (!t)
		return -ENOMEM;
	if (cpu_clock) {
		ts = 0;
		t->t0_pending = true;
	}
	if (!p->first_ns)
		p->first_ns = ts;
	p->last_ns = t->last_ns = ts;
	p->n.seeded++;
	err = push(p, t, frame, profile__func_of_code(p, code), ts, true);
	if (!err)
		t->stack[t->depth - 1].seeded = true;
	return err;
}

void profile__finish(struct profile *p, uint64_t stop_ns)
{
	uint32_t i;

	for (i = 0; i < p->nthreads; i++) {
		struct thread *t = p->threads[i];
		/* (in its own time: what it waited for pyuprof taken out) */
		uint64_t end = stop_ns > t->paused_ns ? stop_ns - t->paused_ns : 0;

		uint64_t switches = p->n.switches;

		/* the strand it runs, then each that waits (greenlets still suspended) */
		do {
			if (!t->depth && t->nparked)
				unpark(p, t, t->nparked - 1);
			while (t->depth) {
				p->n.open_at_stop += t->stack[t->depth - 1].counted;
				/* a CPU clock has no common stop: the thread's last event is its
				 * latest */
				pop(p, t, cpu_clock || end < t->last_ns ? t->last_ns : end);
			}
		} while (t->nparked);
		p->n.switches = switches;
	}
	if (!cpu_clock && stop_ns > p->last_ns)
		p->last_ns = stop_ns;
	calltree__finish(&p->tree);
}
