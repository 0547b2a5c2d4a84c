// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trampoline page's batch path (user/inject/tramp_code.S, include/stage.h) run for real in this
 * process, with 3.12.1's layout, in front of a small assembly function that starts as
 * _PyEval_EvalFrameDefault does and returns its frame argument. Fake thread state, frames,
 * code objects and strings hold the fields it reads; the flush nop jumps to a shim that logs
 * its registers (a byte other than the nop's first: "probed"). Checked: the entry, chain and
 * exit records and their flags; a flush before the first record of a thread and of each code
 * object, the chain's too, with the thread state, each naming its batch's generation; none
 * for a code object already sent; one again when its identity changed (a new object at a
 * freed one's address), told by the code object's version alone where it has one (3.12+: in
 * the version map, or past it in the table) and by its names where not (before, or once the
 * version counter wrapped); a set of the table keeping as many code objects as it has ways,
 * and a loop over one more not missing on every call; no chain record under the frame
 * entered last, which a call puts back as it returns: its caller (found there, or named by
 * the chain staged; none after a generator's frame not found there), a flush of the same owner
 * keeps and a switch forgets; an exit whose
 * frame is not the one entered last (its thread switched stacks during the call) naming its
 * frame in a resume record; a full buffer flushed; staging off, another interpreter and an
 * entry-shim caller stage nothing; a thread key found not to check out at a flush
 * (STAGE_ON_PERCALL) sends the call, and every later one, to the head; and a flush nop found
 * unprobed (pyuprof gone) switches staging off, after which the interpreter's eval_frame hook
 * is put back if it is still the page's, and left if it is not. With 3.14's and 3.15's
 * layouts: code pointers whose _PyStackRef tag bits are set are staged without them, and a
 * generator's frame that returned is told from one that yielded by each version's frame
 * states (3.15 has no FRAME_COMPLETED).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "inject/tramp.h"
#include "stage.h"
#include "target/py_layouts.h"
#include "test.h"

/* the eval function: returns its frame argument (rsi), starting with push %r15 */
extern uint64_t frame_id(uint64_t tstate, uint64_t frame, uint64_t throwflag);
/* the same, with a switch of stacks (greenlet's) in the call: switch_to becomes the frame
 * entered last (STAGE_TOP of the staging area at switch_stage) */
extern uint64_t frame_switch(uint64_t tstate, uint64_t frame, uint64_t throwflag);
extern uint64_t switch_stage, switch_to;
/* the flush nop's stand-in: logs rdi, rsi, rdx, rcx, r8, r9, rax; clobbers rax and rcx only;
 * sets STAGE_ON of the area flushed to flush_sets_on, if not 0 (pyuprof acting on a request
 * while the thread stands at the flush) */
extern void flush_shim(void);
extern uint64_t flush_n, flush_log[64][8];
extern uint32_t flush_sets_on;
__asm__(".text\n"
	".globl frame_id\n frame_id:\n push %r15\n mov %rsi,%rax\n pop %r15\n ret\n"
	".globl frame_switch\n frame_switch:\n push %r15\n mov switch_stage(%rip),%rax\n"
	" mov switch_to(%rip),%rcx\n mov %rcx," "48" "(%rax)\n mov %rsi,%rax\n pop %r15\n ret\n"
	".globl flush_shim\n flush_shim:\n push %rcx\n push %rax\n mov flush_n(%rip),%rax\n"
	" and $63,%rax\n shl $6,%rax\n lea flush_log(%rip),%rcx\n add %rax,%rcx\n"
	" mov %rdi,(%rcx)\n mov %rsi,8(%rcx)\n mov %rdx,16(%rcx)\n pop %rax\n mov %rax,48(%rcx)\n"
	" pop %rax\n mov %rax,24(%rcx)\n mov %r8,32(%rcx)\n mov %r9,40(%rcx)\n"
	" incq flush_n(%rip)\n push %rax\n mov flush_sets_on(%rip),%eax\n test %eax,%eax\n"
	" jz 1f\n mov %eax,(%rdi)\n 1: pop %rax\n ret\n"
	".data\n .globl flush_n, flush_log, flush_sets_on, switch_stage, switch_to\n .balign 8\n"
	" flush_n: .quad 0\n flush_log: .zero 64 * 64\n flush_sets_on: .quad 0\n"
	" switch_stage: .quad 0\n switch_to: .quad 0\n .text\n");
_Static_assert(STAGE_TOP == 48 && STAGE_ON == 0, "frame_switch, flush_shim: the offsets");

#define OBJ 256
#define INTERP_OBJ 16384 /* (its eval_frame hook is far into it) */
/* the fake objects: a thread state and its interpreter, a _PyCFrame, the frame entered, its
 * caller and the caller's entry shim, two code objects, their names and filename */
struct world {
	uint8_t tstate[OBJ], interp[INTERP_OBJ], other_interp[OBJ], cframe[OBJ];
	uint8_t frame[OBJ], caller[OBJ], shim[OBJ], code[OBJ], caller_code[OBJ];
	uint8_t name[OBJ], caller_name[OBJ], file[OBJ];
	uint8_t gen[2 * OBJ], none[OBJ]; /* a generator holding a frame; None */
} __attribute__((aligned(64)));

static void put64(uint8_t *obj, uint32_t off, uint64_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* An ASCII str at s (3.12: length, hash, characters at PyASCIIObject_size). */
static void put_str(const struct py_offsets *b, uint8_t *s, const char *text, uint64_t hash)
{
	put64(s, b->PyUnicode_length, strlen(text));
	put64(s, b->PyUnicode_length + 8, hash);
	memcpy(s + b->PyASCIIObject_size, text, strlen(text) + 1);
}

static void put_code(const struct py_offsets *b, uint8_t *code, uint8_t *name, uint8_t *file,
		     int32_t line, uint32_t flags)
{
	put64(code, b->PyCodeObject_co_name, addr(name));
	put64(code, b->PyCodeObject_co_filename, addr(file));
	memcpy(code + b->PyCodeObject_co_firstlineno, &line, sizeof(line));
	memcpy(code + b->PyCodeObject_co_flags, &flags, sizeof(flags));
}

struct rig {
	const struct py_offsets_entry *o;
	struct world *w;
	uint8_t *stage, *page;
};

/* The world, a staging area (on, empty) and a batch page for it, in front of fn, whose flush
 * nop jumps to flush_shim through an island in the page after it: with 3.minor's layout. */
static int rig_up_minor_with(struct rig *r, unsigned minor, void *fn)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const struct py_offsets *b;
	struct py_target t;
	uint8_t *island;
	char why[256];
	uint64_t shim = addr(flush_shim);
	int32_t rel;

	memset(r, 0, sizeof(*r));
	r->o = py_layouts__find(3, minor, 0);
	if (!r->o)
		return -1;
	b = &r->o->bpf;
	r->w = aligned_alloc(64, sizeof(*r->w));
	r->stage = aligned_alloc(4096, STAGE_SIZE);
	r->page = mmap(NULL, 2 * TRAMP_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (!r->w || !r->stage || r->page == MAP_FAILED)
		return -1;
	memset(r->w, 0, sizeof(*r->w));
	memset(r->stage, 0, STAGE_SIZE);
	memset(&t, 0, sizeof(t));
	t.major = 3;
	t.minor = minor;
	t.offsets = r->o;
	t.none_addr = addr(r->w->none); /* (3.12+: a generator's return told from its yields) */
	t.main_interp_off = r->o->PyRuntime_main_interpreter;
	t.runtime_addr = addr(r->w->interp) - t.main_interp_off;
	t.eval_addr = addr(fn);
	memcpy(t.eval_head, fn, sizeof(t.eval_head));
	if (tramp__build(&t, TRAMP_BATCH, addr(r->stage), addr(r->page), r->page, why, sizeof(why)))
		return -1;
	if (memcmp(r->page + tramp__flush_offset(), nop5, sizeof(nop5)))
		return -1;
	/* island: push %rax; movabs $flush_shim, %rax; xchg %rax, (%rsp); ret (a jump that
	 * keeps every register: the probe's nop does, and the page relies on it) */
	island = r->page + TRAMP_PAGE;
	island[0] = 0x50;
	island[1] = 0x48;
	island[2] = 0xb8;
	memcpy(island + 3, &shim, 8);
	memcpy(island + 11, "\x48\x87\x04\x24\xc3", 5);
	r->page[tramp__flush_offset()] = 0xe9;
	rel = (int32_t)(TRAMP_PAGE - (tramp__flush_offset() + 5));
	memcpy(r->page + tramp__flush_offset() + 1, &rel, sizeof(rel));
	if (mprotect(r->page, 2 * TRAMP_PAGE, PROT_READ | PROT_EXEC))
		return -1;
	/* the world: the main interpreter's thread, in a call from caller, whose activation's
	 * frame chain ends at its entry shim */
	put64(r->w->tstate, b->PyThreadState_interp, addr(r->w->interp));
	put64(r->w->tstate, b->PyThreadState_cframe, addr(r->w->cframe));
	put64(r->w->cframe, b->PyCFrame_current_frame, addr(r->w->caller));
	if (b->PyThreadState_current_frame) /* 3.13+ */
		put64(r->w->tstate, b->PyThreadState_current_frame, addr(r->w->caller));
	put64(r->w->frame, b->frame_code, addr(r->w->code));
	put64(r->w->frame, b->frame_back, addr(r->w->caller));
	put64(r->w->caller, b->frame_code, addr(r->w->caller_code));
	put64(r->w->caller, b->frame_back, addr(r->w->shim));
	r->w->shim[b->frame_owner] = 3; /* FRAME_OWNED_BY_CSTACK (3.14+: _INTERPRETER) */
	put_str(b, r->w->name, "leaf", 0x1234);
	put_str(b, r->w->caller_name, "caller", 0x5678);
	put_str(b, r->w->file, "/srv/app/model.py", 0x9abc);
	put_code(b, r->w->code, r->w->name, r->w->file, 10, 0);
	put_code(b, r->w->caller_code, r->w->caller_name, r->w->file, 3, 0);
	*(uint32_t *)(r->stage + STAGE_ON) = 1;
	*(uint64_t *)(r->stage + STAGE_BOUND) = UINT64_MAX; /* no time bound here */
	flush_n = 0;
	flush_sets_on = 0;
	switch_stage = addr(r->stage);
	return 0;
}

static int rig_up_with(struct rig *r, void *fn)
{
	return rig_up_minor_with(r, 12, fn);
}

static int rig_up_minor(struct rig *r, unsigned minor)
{
	return rig_up_minor_with(r, minor, (void *)frame_id);
}

static int rig_up(struct rig *r)
{
	return rig_up_with(r, (void *)frame_id);
}

static void rig_down(struct rig *r)
{
	munmap(r->page, 2 * TRAMP_PAGE);
	free(r->stage);
	free(r->w);
}

static uint64_t *staged(struct rig *r, uint64_t at)
{
	return (uint64_t *)(r->stage + STAGE_BUF + at);
}

static uint64_t staged_bytes(struct rig *r)
{
	return *(uint64_t *)(r->stage + STAGE_W);
}

/* a record's kind, and the TSC it holds below it */
static uint64_t tag(uint64_t w0)
{
	return STAGE_TAG(w0);
}

static uint64_t tsc(uint64_t w0)
{
	return STAGE_TSC(w0);
}

/* the records' lengths: an entry or a chain, an exit, the gauge that opens every batch, what
 * opens a batch after a code flush (its pause, then the gauge); a call with its chain */
#define E STAGE_ENTRY_BYTES
#define X STAGE_EXIT_BYTES
#define G STAGE_GAUGE_BYTES
#define P (STAGE_PAUSE_BYTES + G)
#define CALL_CHAIN (2 * E + X)

/* One call through the batch path (its address: the page's tramp_batch). */
static uint64_t call_frame(struct rig *r, const uint8_t *frame)
{
	extern const uint8_t tramp_code[], tramp_batch[];
	uint64_t (*f)(uint64_t, uint64_t, uint64_t) =
		(uint64_t(*)(uint64_t, uint64_t, uint64_t))(r->page + (tramp_batch - tramp_code));

	return f(addr(r->w->tstate), addr(frame), 0);
}

static uint64_t call(struct rig *r)
{
	return call_frame(r, r->w->frame);
}

TEST(stages_entry_chain_and_exit)
{
	struct rig r;
	uint64_t *e;

	REQUIRE(!rig_up(&r));
	CHECK(call(&r) == addr(r.w->frame));
	/* first: a new thread and a new code object, then the chain's new code object */
	REQUIRE(flush_n == 2);
	CHECK(flush_log[0][0] == addr(r.stage));
	CHECK(flush_log[0][1] == 0);
	CHECK(flush_log[0][2] == (STAGE_FLUSH_SWITCH | STAGE_FLUSH_CODE | STAGE_FLUSH_TSTATE));
	CHECK(flush_log[0][3] == addr(r.w->code));
	CHECK(flush_log[0][4] == addr(r.w->frame));
	CHECK(flush_log[0][5] == addr(r.w->tstate));
	CHECK(flush_log[1][2] == STAGE_FLUSH_CODE);
	CHECK(flush_log[1][3] == addr(r.w->caller_code));
	/* each flush names its batch's generation; the next batch is the next one */
	CHECK(flush_log[0][6] == 0 && flush_log[1][6] == 1);
	CHECK(*(uint64_t *)(r.stage + STAGE_GEN) == 2);
	CHECK(*(uint32_t *)(r.stage + STAGE_OWNER) == (uint32_t)gettid());
	/* the last code flush's time opens the batch: a pause record, from its start to its end */
	REQUIRE(staged_bytes(&r) == P + CALL_CHAIN);
	e = staged(&r, 0);
	CHECK(tag(e[0]) == STAGE_TAG_PAUSE);
	CHECK(tsc(e[0]) != 0 && e[1] >= tsc(e[0]));
	/* then the speed gauge, run after it: its start, and the ticks its loop took */
	e = staged(&r, STAGE_PAUSE_BYTES);
	CHECK(tag(e[0]) == STAGE_TAG_GAUGE);
	CHECK(tsc(e[0]) >= staged(&r, 0)[1]);
	CHECK(e[1] > 0 && e[1] < 1000000);
	CHECK(stage_rec_bytes(e[0]) == G);
	e = staged(&r, P);
	CHECK(tag(e[0]) == STAGE_TAG_ENTRY);
	CHECK(tsc(e[0]) >= tsc(staged(&r, STAGE_PAUSE_BYTES)[0]) + staged(&r, STAGE_PAUSE_BYTES)[1]);
	CHECK(e[1] == addr(r.w->frame));
	CHECK(e[2] == addr(r.w->code));
	CHECK(e[3] == addr(r.w->caller));
	/* the chain: the caller's code, then nothing past its entry shim */
	CHECK(e[4] == (addr(r.w->caller_code) | STAGE_CHAIN));
	CHECK(e[5] == 0 && e[6] == 0 && e[7] == 0);
	CHECK(tag(e[8]) == STAGE_TAG_EXIT);
	CHECK(tsc(e[8]) >= tsc(e[0]));
	/* the lengths a reader walks them by */
	CHECK(stage_rec_bytes(e[0]) == E && stage_rec_bytes(e[4]) == E &&
	      stage_rec_bytes(e[8]) == X &&
	      stage_rec_bytes(staged(&r, 0)[0]) == STAGE_PAUSE_BYTES);
	/* again: nothing new, no flush; its caller is the frame entered last now (the first
	 * call put it back as it returned): the entry and the exit alone */
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(flush_n == 2);
	CHECK(staged_bytes(&r) == P + CALL_CHAIN + E + X);
	CHECK(tsc(staged(&r, P + CALL_CHAIN)[0]) >= tsc(e[8]));
	rig_down(&r);
}

TEST(a_new_identity_at_the_same_address_is_sent_again)
{
	const struct py_offsets *b;
	struct rig r;

	uint64_t *top;

	REQUIRE(!rig_up(&r));
	b = &r.o->bpf;
	top = (uint64_t *)(r.stage + STAGE_TOP);
	call(&r);
	REQUIRE(flush_n == 2);
	/* another name (its hash), another file (its last bytes), another line: each once (each
	 * call with its chain: nothing on top) */
	put_str(b, r.w->name, "leaf", 0x4321);
	*top = 0;
	call(&r);
	CHECK(flush_n == 3 && flush_log[2][2] == (STAGE_FLUSH_CODE | STAGE_FLUSH_TSTATE) &&
	      flush_log[2][3] == addr(r.w->code));
	put_str(b, r.w->file, "/srv/app/modem.py", 0x9abc);
	*top = 0;
	call(&r);
	/* (the caller's code names the same file: it is sent again too, its chain naming it) */
	CHECK(flush_n == 5);
	put_code(b, r.w->code, r.w->name, r.w->file, 11, 0);
	*top = 0;
	call(&r);
	CHECK(flush_n == 6);
	*top = 0;
	call(&r);
	CHECK(flush_n == 6);
	rig_down(&r);
}

static void put_version(const struct py_offsets_entry *o, uint8_t *code, uint32_t version)
{
	memcpy(code + o->PyCodeObject_co_version, &version, sizeof(version));
}

TEST(a_code_version_tells_a_new_object_at_the_same_address)
{
	const struct py_offsets *b;
	struct rig r;

	REQUIRE(!rig_up(&r));
	REQUIRE(r.o->PyCodeObject_co_version);
	b = &r.o->bpf;
	put_version(r.o, r.w->code, 5);
	put_version(r.o, r.w->caller_code, 6);
	call(&r);
	REQUIRE(flush_n == 2);
	call(&r);
	CHECK(flush_n == 2);
	/* the version alone tells objects apart (no object gets the version of another): the
	 * strings are not read, nor the first line */
	put_str(b, r.w->name, "leaf", 0x4321);
	put_code(b, r.w->code, r.w->name, r.w->file, 12, 0);
	call(&r);
	CHECK(flush_n == 2);
	/* a new object at the address: another version */
	put_version(r.o, r.w->code, 7);
	call(&r);
	CHECK(flush_n == 3 && flush_log[2][2] == (STAGE_FLUSH_CODE | STAGE_FLUSH_TSTATE) &&
	      flush_log[2][3] == addr(r.w->code));
	call(&r);
	CHECK(flush_n == 3);
	/* a version past the map: the table, by version and first line */
	put_version(r.o, r.w->code, STAGE_VERSIONS + 5);
	call(&r);
	CHECK(flush_n == 4);
	call(&r);
	CHECK(flush_n == 4);
	put_code(b, r.w->code, r.w->name, r.w->file, 13, 0);
	call(&r);
	CHECK(flush_n == 5);
	put_version(r.o, r.w->code, STAGE_VERSIONS + 9);
	call(&r);
	CHECK(flush_n == 6);
	/* the counter wrapped (every new object gets 0): by the names again, and a slot the
	 * version filled never passes for them */
	put_version(r.o, r.w->code, 0);
	call(&r);
	CHECK(flush_n == 7 && flush_log[6][3] == addr(r.w->code));
	call(&r);
	CHECK(flush_n == 7);
	put_str(b, r.w->name, "leaf", 0x1111);
	call(&r);
	CHECK(flush_n == 8);
	/* and a slot the names filled never passes for a version */
	put_version(r.o, r.w->code, STAGE_VERSIONS + 9);
	call(&r);
	CHECK(flush_n == 9);
	rig_down(&r);
}

/* The set of the table a code object's address falls in (tramp_code.S's .Lslot). */
static uint64_t set_of(uint64_t code)
{
	return ((code >> 4) ^ (code >> 18)) & (STAGE_SLOTS / STAGE_WAYS - 1);
}

/* n fake code objects in pool whose addresses fall in one set of the table. */
static int same_set(const struct rig *r, uint8_t *pool, size_t pool_len, uint8_t **codes, int n)
{
	const struct py_offsets *b = &r->o->bpf;
	uint64_t want = set_of(addr(pool));
	int k = 0;

	for (size_t at = 0; at + OBJ <= pool_len && k < n; at += 16)
		if (set_of(addr(pool + at)) == want) {
			codes[k] = pool + at;
			put_code(b, codes[k], r->w->name, r->w->file, 20 + k, 0);
			k++;
			at += OBJ - 16;
		}
	return k;
}

TEST(a_set_keeps_as_many_code_objects_as_it_has_ways)
{
	const size_t pool_len = 64 << 20;
	uint8_t *pool = malloc(pool_len), *codes[STAGE_WAYS + 1];
	uint64_t before;
	struct rig r;
	int i, round;

	REQUIRE(pool && !rig_up(&r));
	memset(pool, 0, pool_len);
	REQUIRE(same_set(&r, pool, pool_len, codes, STAGE_WAYS + 1) == STAGE_WAYS + 1);
	/* each once: a flush each (and the first call's thread and caller) */
	for (i = 0; i < STAGE_WAYS; i++) {
		put64(r.w->frame, r.o->bpf.frame_code, addr(codes[i]));
		call(&r);
	}
	before = flush_n;
	/* again, in turn: all of them stayed */
	for (round = 0; round < 3; round++)
		for (i = 0; i < STAGE_WAYS; i++) {
			put64(r.w->frame, r.o->bpf.frame_code, addr(codes[i]));
			call(&r);
		}
	CHECK(flush_n == before);
	/* one more than the ways, in turn: some calls find theirs (a victim in turn, which
	 * evicts the one called next, would miss every one of them) */
	before = flush_n;
	for (round = 0; round < 40; round++)
		for (i = 0; i <= STAGE_WAYS; i++) {
			put64(r.w->frame, r.o->bpf.frame_code, addr(codes[i]));
			call(&r);
		}
	CHECK(flush_n - before < 40 * (STAGE_WAYS + 1) * 3 / 4);
	rig_down(&r);
	free(pool);
}

TEST(flags_generator_frames)
{
	const struct py_offsets *b;
	struct rig r;

	REQUIRE(!rig_up(&r));
	b = &r.o->bpf;
	put_code(b, r.w->code, r.w->name, r.w->file, 10, 0x20); /* CO_GENERATOR */
	call(&r);
	/* (after the code flush's pause record) */
	CHECK(staged(&r, P)[1] == (addr(r.w->frame) | STAGE_GEN_CREATE));
	/* a generator's own frame (owner 1) is a call (nothing on top: with its chain) */
	r.w->frame[b->frame_owner] = 1;
	*(uint64_t *)(r.stage + STAGE_TOP) = 0;
	call(&r);
	CHECK(staged(&r, P + CALL_CHAIN)[1] == addr(r.w->frame));
	/* the chain's generator frames are flagged, their addresses whole: the caller's caller
	 * a generator's frame (in place of the entry shim), then the caller too */
	r.w->shim[b->frame_owner] = 1;
	put64(r.w->shim, b->frame_code, addr(r.w->caller_code));
	*(uint64_t *)(r.stage + STAGE_TOP) = 0;
	call(&r);
	CHECK(staged(&r, P + 2 * CALL_CHAIN + E)[0] ==
	      (addr(r.w->caller_code) | STAGE_CHAIN | STAGE_CHAIN_GEN1));
	CHECK(staged(&r, P + 2 * CALL_CHAIN + E)[1] == addr(r.w->shim));
	CHECK(staged(&r, P + 2 * CALL_CHAIN + E)[2] == addr(r.w->caller_code));
	r.w->caller[b->frame_owner] = 1;
	*(uint64_t *)(r.stage + STAGE_TOP) = 0;
	call(&r);
	CHECK(staged(&r, P + 3 * CALL_CHAIN + E)[0] == (addr(r.w->caller_code) | STAGE_CHAIN |
							 STAGE_CHAIN_GEN0 | STAGE_CHAIN_GEN1));
	rig_down(&r);
}

TEST(untags_3_14_code_pointers_and_tells_a_generator_return_by_version)
{
	static const unsigned minors[] = { 12, 13, 14, 15 };

	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		const struct py_offsets_entry *o;
		const struct py_offsets *b;
		uint8_t *gframe;
		struct rig r;
		uint64_t *e, at, tags, x;
		int8_t state;

		REQUIRE(!rig_up_minor(&r, minors[i]));
		o = r.o;
		b = &o->bpf;
		tags = b->stackref_tags;
		CHECK(!tags == (minors[i] < 14));
		/* f_executable a deferred _PyStackRef (3.14+: bit 0 set), the caller's too */
		put64(r.w->frame, b->frame_code, addr(r.w->code) | tags);
		put64(r.w->caller, b->frame_code, addr(r.w->caller_code) | (tags & 1));
		call(&r);
		REQUIRE(staged_bytes(&r) == P + CALL_CHAIN);
		e = staged(&r, P);
		CHECK(e[2] == addr(r.w->code));
		CHECK(e[4] == (addr(r.w->caller_code) | STAGE_CHAIN)); /* no flag from the tag */
		CHECK(flush_log[0][3] == addr(r.w->code) && flush_log[1][3] == addr(r.w->caller_code));
		/* a generator's frame (owner 1), in its generator: each state of the frame at its
		 * exit, a yield (suspended) or a return */
		gframe = r.w->gen + o->PyGenObject_gi_iframe;
		memcpy(gframe, r.w->frame, OBJ);
		gframe[b->frame_owner] = 1;
		for (state = -3; state <= 5; state++) {
			int returned = minors[i] < 15 ? state >= 1 : state == 5;

			/* (3.12-3.14: -3 created ... 0 executing, 1 completed, 4 cleared;
			 * 3.15: 0 created, 1-3 suspended, 4 executing, 5 cleared) */
			if (minors[i] < 15 ? state == 2 || state == 3 || state == 5 : state < 0)
				continue;
			r.w->gen[o->PyGenObject_gi_frame_state] = (uint8_t)state;
			at = staged_bytes(&r);
			CHECK(call_frame(&r, gframe) == addr(gframe));
			e = staged(&r, at);
			CHECK(tag(e[0]) == STAGE_TAG_ENTRY && e[1] == addr(gframe) &&
			      e[2] == addr(r.w->code));
			x = tag(e[stage_rec_bytes(e[4]) == E ? 8 : 4]);
			CHECK(x == (returned ? STAGE_TAG_EXIT_DONE : STAGE_TAG_EXIT));
			if (x != (returned ? STAGE_TAG_EXIT_DONE : STAGE_TAG_EXIT))
				printf("#   3.%u: state %d\n", minors[i], state);
		}
		rig_down(&r);
	}
}

TEST(no_chain_record_under_the_frame_entered_last)
{
	const struct py_offsets *b;
	struct rig r;
	uint64_t *e, *top;

	REQUIRE(!rig_up(&r));
	b = &r.o->bpf;
	top = (uint64_t *)(r.stage + STAGE_TOP);
	call(&r);
	REQUIRE(staged_bytes(&r) == P + CALL_CHAIN); /* (the code flush's pause first) */
	CHECK(*top == addr(r.w->caller)); /* put back: its caller, which it named */
	/* its caller is the frame the thread entered last: the entry and the exit alone */
	CHECK(call(&r) == addr(r.w->frame));
	REQUIRE(staged_bytes(&r) == P + CALL_CHAIN + E + X);
	e = staged(&r, P + CALL_CHAIN);
	CHECK(tag(e[0]) == STAGE_TAG_ENTRY && e[1] == addr(r.w->frame));
	CHECK(e[3] == addr(r.w->caller));
	CHECK(tag(e[4]) == STAGE_TAG_EXIT);
	CHECK(*top == addr(r.w->caller));
	/* another frame on top (one of another stack, a greenlet's; or none, after a switch of
	 * the GIL): the chain again, and after the call the caller on top, which the chain made
	 * the reader's top, so that the next call from it stages no chain */
	*top = addr(r.w->shim);
	call(&r);
	CHECK(staged_bytes(&r) == P + 2 * CALL_CHAIN + E + X);
	CHECK(staged(&r, P + CALL_CHAIN + E + X)[4] == (addr(r.w->caller_code) | STAGE_CHAIN));
	CHECK(*top == addr(r.w->caller));
	/* a flush of the same owner keeps it: one for a code object at the entry, before the
	 * call takes the value to put back */
	put_str(&r.o->bpf, r.w->name, "leaf", 0x4321);
	call(&r);
	REQUIRE(flush_n == 3);
	CHECK(flush_log[2][2] == (STAGE_FLUSH_CODE | STAGE_FLUSH_TSTATE));
	CHECK(*top == addr(r.w->caller));
	/* one for a full buffer after the exit, which put it back */
	*(uint64_t *)(r.stage + STAGE_W) = STAGE_LIMIT - E;
	call(&r);
	REQUIRE(flush_n == 4);
	CHECK(flush_log[3][2] == STAGE_FLUSH_FULL);
	CHECK(*top == addr(r.w->caller));
	/* and the next call stages no chain */
	call(&r);
	CHECK(flush_n == 4);
	REQUIRE(staged_bytes(&r) == G + E + X);
	CHECK(tag(staged(&r, G)[0]) == STAGE_TAG_ENTRY && staged(&r, G)[1] == addr(r.w->frame));
	CHECK(tag(staged(&r, G + E)[0]) == STAGE_TAG_EXIT);
	/* a switch forgets it (it was the other thread's): the chain again, and its caller put
	 * back, so that the next call of a loop the thread took up again stages none */
	*(uint32_t *)(r.stage + STAGE_OWNER) = 0;
	call(&r);
	REQUIRE(flush_n == 5);
	CHECK(flush_log[4][2] & STAGE_FLUSH_SWITCH);
	REQUIRE(staged_bytes(&r) == G + CALL_CHAIN);
	CHECK(staged(&r, G)[4] == (addr(r.w->caller_code) | STAGE_CHAIN));
	CHECK(*top == addr(r.w->caller));
	call(&r);
	CHECK(flush_n == 5);
	CHECK(staged_bytes(&r) == G + CALL_CHAIN + E + X);
	/* a generator's frame for a caller, not on top (which the reader may pass over): none is
	 * put back, so that the next call from it names it in a chain again; on top, it is */
	r.w->caller[b->frame_owner] = 1;
	*top = addr(r.w->shim);
	call(&r);
	CHECK(*top == 0);
	call(&r);
	CHECK(*top == 0);
	*top = addr(r.w->caller);
	call(&r);
	CHECK(*top == addr(r.w->caller));
	rig_down(&r);
}

TEST(an_exit_after_a_stack_switch_names_its_frame)
{
	struct rig r;
	uint64_t *e, *top;

	REQUIRE(!rig_up_with(&r, (void *)frame_switch));
	top = (uint64_t *)(r.stage + STAGE_TOP);
	/* no switch in the call: a plain exit (the first call: its flushes, a pause record) */
	switch_to = addr(r.w->frame);
	call(&r);
	REQUIRE(staged_bytes(&r) == P + CALL_CHAIN);
	CHECK(tag(staged(&r, P + 2 * E)[0]) == STAGE_TAG_EXIT);
	/* in the call the thread switches to another stack, whose frame was entered last: the
	 * exit names the frame that returns */
	switch_to = addr(r.w->shim);
	*top = addr(r.w->caller);
	call(&r);
	REQUIRE(staged_bytes(&r) == P + CALL_CHAIN + E + STAGE_RESUME_BYTES + X);
	e = staged(&r, P + CALL_CHAIN);
	CHECK(tag(e[0]) == STAGE_TAG_ENTRY && e[1] == addr(r.w->frame));
	CHECK(e[4] == (uint64_t)STAGE_TAG_RESUME << STAGE_TAG_SHIFT && e[5] == addr(r.w->frame));
	CHECK(stage_rec_bytes(e[4]) == STAGE_RESUME_BYTES);
	CHECK(tag(e[6]) == STAGE_TAG_EXIT);
	/* the caller runs on after it: it was on top at the entry, and is again */
	CHECK(*top == addr(r.w->caller));
	rig_down(&r);
}

TEST(a_key_that_did_not_check_out_sends_calls_to_the_head)
{
	struct rig r;

	REQUIRE(!rig_up(&r));
	/* pyuprof sets STAGE_ON_PERCALL while the thread stands at its first flush: the call
	 * goes on through the head (whose probes see it), nothing of it staged */
	flush_sets_on = STAGE_ON_PERCALL;
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(flush_n == 1);
	CHECK(staged_bytes(&r) == P); /* (the code flush's time only) */
	flush_sets_on = 0;
	/* and every call after */
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(flush_n == 1 && staged_bytes(&r) == P);
	/* staging on again: staged again */
	*(uint32_t *)(r.stage + STAGE_ON) = STAGE_ON_STAGING;
	call(&r);
	CHECK(staged_bytes(&r) > P);
	rig_down(&r);
}

TEST(a_full_buffer_is_flushed)
{
	struct rig r;

	REQUIRE(!rig_up(&r));
	call(&r);
	REQUIRE(flush_n == 2);
	*(uint64_t *)(r.stage + STAGE_W) = STAGE_LIMIT - E;
	*(uint64_t *)(r.stage + STAGE_TOP) = 0; /* (a call with its chain) */
	call(&r);
	/* entry and chain take it past the limit (never past the buffer): flushed, then the
	 * gauge and the exit start the next batch */
	CHECK(flush_n == 3 && flush_log[2][2] == STAGE_FLUSH_FULL);
	CHECK(flush_log[2][1] == STAGE_LIMIT + E);
	CHECK(flush_log[2][6] == 2 && *(uint64_t *)(r.stage + STAGE_GEN) == 3);
	CHECK(staged_bytes(&r) == G + X);
	CHECK(tag(staged(&r, 0)[0]) == STAGE_TAG_GAUGE);
	CHECK(tag(staged(&r, G)[0]) == STAGE_TAG_EXIT);
	rig_down(&r);
}

TEST(stages_nothing_off_elsewhere_or_from_a_shim)
{
	struct rig r;

	REQUIRE(!rig_up(&r));
	call(&r);
	REQUIRE(staged_bytes(&r) == P + CALL_CHAIN && flush_n == 2);
	/* staging off: a pass-through */
	*(uint32_t *)(r.stage + STAGE_ON) = 0;
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(staged_bytes(&r) == P + CALL_CHAIN);
	*(uint32_t *)(r.stage + STAGE_ON) = 1;
	/* another interpreter (its own GIL, maybe): the head's probes, not the stage */
	put64(r.w->tstate, r.o->bpf.PyThreadState_interp, addr(r.w->other_interp));
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(staged_bytes(&r) == P + CALL_CHAIN);
	put64(r.w->tstate, r.o->bpf.PyThreadState_interp, addr(r.w->interp));
	/* called from an entry shim (a frame cleared after it returned): the head's probes */
	put64(r.w->cframe, r.o->bpf.PyCFrame_current_frame, addr(r.w->shim));
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(staged_bytes(&r) == P + CALL_CHAIN);
	CHECK(flush_n == 2);
	rig_down(&r);
}

TEST(an_unprobed_flush_nop_switches_staging_off)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	struct rig r;

	REQUIRE(!rig_up(&r));
	REQUIRE(!mprotect(r.page, TRAMP_PAGE, PROT_READ | PROT_WRITE));
	memcpy(r.page + tramp__flush_offset(), nop5, sizeof(nop5));
	REQUIRE(!mprotect(r.page, TRAMP_PAGE, PROT_READ | PROT_EXEC));
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(*(uint32_t *)(r.stage + STAGE_ON) == 0);
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(flush_n == 0);
	rig_down(&r);
}

TEST(pyuprof_gone_the_hook_is_put_back)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint64_t hook_off, ours, theirs = 0x7f0000123450, *hook;
	struct rig r;

	REQUIRE(!rig_up(&r));
	hook_off = r.o->PyInterpreterState_hook;
	ours = addr(r.page) + tramp__hook_offset(TRAMP_BATCH);
	hook = (uint64_t *)(r.w->interp + hook_off);
	REQUIRE(hook_off && hook_off + 8 <= INTERP_OBJ);
	/* staging off with the flush nop probed (pyuprof stopped, or not yet on): left */
	*hook = ours;
	*(uint32_t *)(r.stage + STAGE_ON) = STAGE_ON_PASS;
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(*hook == ours);
	/* unprobed: the first call through finds it and stops staging, the next puts back what
	 * the hook was before pyuprof (3.12: none) */
	REQUIRE(!mprotect(r.page, TRAMP_PAGE, PROT_READ | PROT_WRITE));
	memcpy(r.page + tramp__flush_offset(), nop5, sizeof(nop5));
	REQUIRE(!mprotect(r.page, TRAMP_PAGE, PROT_READ | PROT_EXEC));
	*(uint32_t *)(r.stage + STAGE_ON) = STAGE_ON_STAGING;
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(*(uint32_t *)(r.stage + STAGE_ON) == STAGE_ON_PASS);
	CHECK(*hook == ours);
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(*hook == 0);
	/* someone else's hook is theirs */
	*hook = theirs;
	CHECK(call(&r) == addr(r.w->frame));
	CHECK(*hook == theirs);
	rig_down(&r);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(stages_entry_chain_and_exit),
		TEST_CASE(a_new_identity_at_the_same_address_is_sent_again),
		TEST_CASE(a_code_version_tells_a_new_object_at_the_same_address),
		TEST_CASE(a_set_keeps_as_many_code_objects_as_it_has_ways),
		TEST_CASE(flags_generator_frames),
		TEST_CASE(untags_3_14_code_pointers_and_tells_a_generator_return_by_version),
		TEST_CASE(no_chain_record_under_the_frame_entered_last),
		TEST_CASE(an_exit_after_a_stack_switch_names_its_frame),
		TEST_CASE(a_key_that_did_not_check_out_sends_calls_to_the_head),
		TEST_CASE(a_full_buffer_is_flushed),
		TEST_CASE(stages_nothing_off_elsewhere_or_from_a_shim),
		TEST_CASE(an_unprobed_flush_nop_switches_staging_off),
		TEST_CASE(pyuprof_gone_the_hook_is_put_back),
	};

	return test_run(cases, TEST_COUNT(cases));
}
