// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe trampoline's page (user/inject/tramp.c) run for real in this process, in front of small
 * assembly functions that start as CPython's _PyEval_EvalFrameDefault does (push %r15): it
 * passes the three arguments and the result through, the callee sees the stack aligned as
 * the ABI says, and the two probe sites are the 5-byte nops the kernel optimizes. A first
 * instruction it cannot replay is refused. With a 3.12+ layout it hands the C recursion
 * budget back for a call made by the eval loop through the call machinery (fake ones here, with
 * frames of known sizes, and a fake thread state), below the depth bound only where the
 * thread's stack bounds are not known, at any depth where they are, and takes exactly that
 * back after it; a call from anywhere else gets nothing. The head keeps the frame where the
 * return probe reads it. The guard: a call with less than TRAMP_STACK_MARGIN of its stack
 * left raises RecursionError (3.12+: the function called with the C budget at 0, the budget
 * put back after; before: PyErr_SetString and NULL, the function not called), on the main
 * thread's stack as its bounds say and on a thread's as glibc's block says; a call with room,
 * or on a stack whose bounds are not known, runs. With its entry nop unprobed (pyuprof gone)
 * the guard puts the interpreter's hook back where it is still the page's. And the ret finder
 * (user/target/elf_code.c) refuses a function it cannot disassemble whole rather than guess
 * past the gap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "inject/tramp.h"
#include "target/elf_syms.h"
#include "target/thread_block.h"
#include "target/py_layouts.h"
#include "test.h"

/* a + b + c, starting with push %r15 */
extern uint64_t sum3(uint64_t a, uint64_t b, uint64_t c);
/* rsp at entry, mod 16 (the ABI says 8), starting with push %r15 */
extern uint64_t entry_rsp_mod16(void);
/* starts with endbr64 */
extern uint64_t endbr_id(uint64_t a);
__asm__(".text\n"
	".globl sum3\n sum3:\n push %r15\n mov %rdi,%rax\n add %rsi,%rax\n add %rdx,%rax\n"
	" pop %r15\n ret\n"
	".globl entry_rsp_mod16\n entry_rsp_mod16:\n push %r15\n lea 8(%rsp),%rax\n"
	" and $15,%rax\n pop %r15\n ret\n"
	".globl endbr_id\n endbr_id:\n endbr64\n mov %rdi,%rax\n ret\n"
	/* the budget as the callee sees it (3.12's offset 36) */
	".globl budget_in_call\n budget_in_call:\n push %r15\n mov 36(%rdi),%eax\n"
	" pop %r15\n ret\n"
	/* a fake eval loop (loop_start..loop_end) calling page(tstate) in three ways: itself,
	 * through a machinery function whose frame is 32 bytes (mach), and through another */
	".globl loop_start, loop_end, call_direct, call_via, call_other_via, mach_ra, other\n"
	"loop_start:\n"
	"call_direct:\n push %rbx\n call *%rsi\n pop %rbx\n ret\n"
	"call_via:\n push %rbx\n call mach\n pop %rbx\n ret\n"
	"call_other_via:\n push %rbx\n call other\n pop %rbx\n ret\n"
	"loop_end:\n"
	"mach:\n sub $24,%rsp\n call *%rsi\n mach_ra:\n add $24,%rsp\n ret\n"
	"other:\n sub $24,%rsp\n call *%rsi\n add $24,%rsp\n ret\n");
/* (tstate, page): the page called by the fake eval loop, directly or through a function */
typedef uint64_t (*chain_fn)(void *tstate, void *page);
extern uint64_t call_direct(void *, void *), call_via(void *, void *),
	call_other_via(void *, void *), other(void *, void *);
extern const uint8_t loop_start[], loop_end[], mach_ra[], tramp_code[], tramp_params[];
/* reads tstate->c_recursion_remaining (offset 36) in the call, starting with push %r15 */
extern uint64_t budget_in_call(void *tstate);

/* the function, counting its calls: returns its first argument */
extern uint64_t counted(uint64_t a);
extern uint64_t counted_n;
__asm__(".text\n .globl counted\n counted:\n push %r15\n incq counted_n(%rip)\n"
	" mov %rdi,%rax\n pop %r15\n ret\n"
	".data\n .globl counted_n\n .balign 8\n counted_n: .quad 0\n .text\n");

/* PyErr_SetString's stand-in and PyExc_RecursionError's */
static void *seterr_exc;
static char seterr_msg[64];
static int seterr_n;
static void fake_seterr(void *exc, const char *msg)
{
	seterr_exc = exc;
	snprintf(seterr_msg, sizeof(seterr_msg), "%s", msg);
	seterr_n++;
}
static uint8_t recursion_error_type[64];
static void *fake_recursion_error = recursion_error_type;

/* A thread state with 3.12.1's offsets for the fields the hand-back reads. */
struct fake_tstate {
	uint8_t pad[28];
	int32_t py_recursion_remaining; /* 28 */
	int32_t py_recursion_limit;	/* 32 */
	int32_t c_recursion_remaining;	/* 36 */
};

/* A target for fn with the layout o (if not NULL) and, 3.12+, the fake eval loop's call paths:
 * no stack bounds known. */
static void target_for(struct py_target *t, void *fn, const struct py_offsets_entry *o)
{
	memset(t, 0, sizeof(*t));
	t->offsets = o;
	if (o) {
		t->major = o->major;
		t->minor = o->minor;
	}
	t->paths.eval_start = (uint64_t)(uintptr_t)loop_start;
	t->paths.eval_len = (uint64_t)(loop_end - loop_start);
	t->paths.site[0] = (struct inline_site){ .ra = (uint64_t)(uintptr_t)mach_ra, .step = 32,
						 .held = 1 };
	t->paths.n = 1;
	t->eval_addr = (uint64_t)(uintptr_t)fn;
	memcpy(t->eval_head, fn, sizeof(t->eval_head));
	t->seterr_addr = (uint64_t)(uintptr_t)fake_seterr;
	t->recursion_error_addr = (uint64_t)(uintptr_t)&fake_recursion_error;
}

/* t's probed page, mapped executable here; NULL if it cannot be built. */
static void *tramp_of(const struct py_target *t)
{
	uint8_t page[TRAMP_PAGE];
	char why[256];
	void *m;

	if (tramp__build(t, TRAMP_PROBED, 0, 0, page, why, sizeof(why)))
		return NULL;
	m = mmap(NULL, TRAMP_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	memcpy(m, page, TRAMP_PAGE);
	if (mprotect(m, TRAMP_PAGE, PROT_READ | PROT_EXEC)) {
		munmap(m, TRAMP_PAGE);
		return NULL;
	}
	return m;
}

/* The trampoline for fn (target_for), its head */
static void *tramp_with(void *fn, const struct py_offsets_entry *o)
{
	struct py_target t;

	target_for(&t, fn, o);
	return tramp_of(&t);
}

static void *tramp_for(void *fn)
{
	return tramp_with(fn, NULL);
}

TEST(passes_arguments_and_result)
{
	uint64_t (*f)(uint64_t, uint64_t, uint64_t) = tramp_for((void *)sum3);

	REQUIRE(f);
	CHECK(f(1, 20, 300) == 321);
	CHECK(f(~0ull, 2, 0) == 1);
	munmap((void *)f, TRAMP_PAGE);
}

TEST(callee_sees_the_abi_alignment)
{
	uint64_t (*f)(void) = tramp_for((void *)entry_rsp_mod16);

	REQUIRE(f);
	CHECK(entry_rsp_mod16() == 8);
	CHECK(f() == 8);
	munmap((void *)f, TRAMP_PAGE);
}

TEST(replays_endbr64)
{
	uint64_t (*f)(uint64_t) = tramp_for((void *)endbr_id);

	REQUIRE(f);
	CHECK(f(77) == 77);
	munmap((void *)f, TRAMP_PAGE);
}

TEST(probe_sites_are_the_optimizable_nop)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint8_t *p = tramp_for((void *)sum3);

	REQUIRE(p);
	CHECK(!memcmp(p + TRAMP_ENTRY_OFFSET, nop5, 5));
	CHECK(!memcmp(p + TRAMP_RETURN_OFFSET, nop5, 5));
	munmap(p, TRAMP_PAGE);
}

TEST(refuses_what_it_cannot_replay)
{
	/* mov 0x0(%rip),%rax: rip-relative, means something else anywhere else */
	static const uint8_t riprel[16] = { 0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3 };
	uint8_t page[TRAMP_PAGE];
	struct py_target t;
	char why[256] = "";

	memset(&t, 0, sizeof(t));
	t.eval_addr = 0x7f0000001000;
	memcpy(t.eval_head, riprel, sizeof(riprel));
	CHECK(tramp__build(&t, TRAMP_PROBED, 0, 0, page, why, sizeof(why)) == -ENOTSUP);
	CHECK(strstr(why, "48 8b 05") != NULL);
}

TEST(hands_the_budget_back_below_the_bound)
{
	struct py_offsets_entry o = *py_layouts__find(3, 12, 1);
	void *f = tramp_with((void *)budget_in_call, &o);
	uint64_t (*g)(void) = tramp_with((void *)entry_rsp_mod16, &o);
	struct fake_tstate ts = { .py_recursion_limit = 1000 };

	REQUIRE(f && g);
	REQUIRE(o.eval_c_units == 2 && o.PyThreadState_c_recursion_remaining == 36);
	/* depth 10: a call from the eval loop has its two units more; through the machinery,
	 * also the unit mach holds; and the budget is as it was after it */
	ts.py_recursion_remaining = 990;
	ts.c_recursion_remaining = 100;
	CHECK(call_direct(&ts, f) == 102);
	CHECK(ts.c_recursion_remaining == 100);
	CHECK(call_via(&ts, f) == 103);
	CHECK(ts.c_recursion_remaining == 100);
	/* from a function that is neither, or from one called by it: nothing */
	CHECK(other(&ts, f) == 100);
	CHECK(call_other_via(&ts, f) == 100);
	CHECK(((uint64_t(*)(void *))f)(&ts) == 100);
	/* at the bound and past it (and a remaining above the limit): nothing */
	ts.py_recursion_remaining = 1000 - TRAMP_HANDBACK_DEPTH;
	CHECK(call_direct(&ts, f) == 100);
	ts.py_recursion_limit = 100000;
	ts.py_recursion_remaining = 100000 - TRAMP_HANDBACK_DEPTH - 1;
	CHECK(call_via(&ts, f) == 100);
	ts.py_recursion_remaining = 100000 - TRAMP_HANDBACK_DEPTH + 1; /* just below */
	CHECK(call_via(&ts, f) == 103);
	ts.py_recursion_remaining = 100001;
	CHECK(call_direct(&ts, f) == 100);
	CHECK(ts.c_recursion_remaining == 100);
	/* the callee still sees the ABI's alignment through the hand-back */
	CHECK(g() == 8);
	munmap(f, TRAMP_PAGE);
	munmap((void *)g, TRAMP_PAGE);
}

TEST(no_budget_before_3_12)
{
	uint8_t with[TRAMP_PAGE], without[TRAMP_PAGE];
	struct py_target t;
	char why[256];

	memset(&t, 0, sizeof(t));
	t.eval_addr = (uint64_t)(uintptr_t)sum3;
	memcpy(t.eval_head, (void *)sum3, sizeof(t.eval_head));
	REQUIRE(!tramp__build(&t, TRAMP_PROBED, 0, 0, without, why, sizeof(why)));
	t.offsets = py_layouts__find(3, 11, 7);
	REQUIRE(!tramp__build(&t, TRAMP_PROBED, 0, 0, with, why, sizeof(why)));
	/* the code (the parameters differ: the hook's) */
	CHECK(!memcmp(with, without, (size_t)(tramp_params - tramp_code)));
	CHECK(!tramp__wanted(&t, TRAMP_PASS));
	t.offsets = py_layouts__find(3, 13, 0);
	CHECK(tramp__wanted(&t, TRAMP_PASS));
}

/* where the return probe reads the frame, as it reads it: the head's call made by an island
 * that notes (%rsp) at the return nop, then returns (the result kept) */
static uint64_t seen_frame;

static void *tramp_noting_frames(const struct py_offsets_entry *o)
{
	uint8_t *page = tramp_with((void *)sum3, o), *m, *island;
	uint64_t at = (uint64_t)(uintptr_t)&seen_frame;
	int32_t rel;

	m = mmap(NULL, 2 * TRAMP_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!page || m == MAP_FAILED)
		return NULL;
	memcpy(m, page, TRAMP_PAGE);
	munmap(page, TRAMP_PAGE);
	island = m + TRAMP_PAGE;
	/* push %rax; mov 16(%rsp),%rax; movabs %rax,seen_frame; pop %rax; ret */
	memcpy(island, "\x50\x48\x8b\x44\x24\x10\x48\xa3", 8);
	memcpy(island + 8, &at, 8);
	memcpy(island + 16, "\x58\xc3", 2);
	m[TRAMP_RETURN_OFFSET] = 0xe8;
	rel = (int32_t)(TRAMP_PAGE - (TRAMP_RETURN_OFFSET + 5));
	memcpy(m + TRAMP_RETURN_OFFSET + 1, &rel, sizeof(rel));
	return mprotect(m, 2 * TRAMP_PAGE, PROT_READ | PROT_EXEC) ? NULL : m;
}

TEST(the_return_probe_finds_the_frame)
{
	uint64_t (*f)(uint64_t, uint64_t, uint64_t);

	/* 3.9+: the frame is the second argument */
	f = tramp_noting_frames(py_layouts__find(3, 10, 13));
	REQUIRE(f);
	CHECK(f(1, 0x5000, 300) == 0x5000 + 301);
	CHECK(seen_frame == 0x5000);
	munmap((void *)f, 2 * TRAMP_PAGE);
	/* 3.8: the first */
	f = tramp_noting_frames(py_layouts__find(3, 8, 18));
	REQUIRE(f);
	CHECK(f(0x6000, 2, 0) == 0x6002);
	CHECK(seen_frame == 0x6000);
	munmap((void *)f, 2 * TRAMP_PAGE);
}

/* The guard's page for fn: t's layout o, the main thread's stack as [low, low + span) */
static void *guarded(void *fn, const struct py_offsets_entry *o, uint64_t low, uint64_t span,
		     bool blocks)
{
	struct py_target t;
	uint8_t *m;

	target_for(&t, fn, o);
	t.main_stack_low = low;
	t.main_stack_span = span;
	t.thread_blocks = blocks;
	m = tramp_of(&t);
	return m ? m + tramp__hook_offset(TRAMP_PROBED) : NULL;
}

/* (not inlined: its frame lies just below its caller's stack pointer, however big the
 * caller's own frame is, as with ASan's redzones) */
static __attribute__((noinline)) uint64_t here(void)
{
	return (uint64_t)(uintptr_t)__builtin_frame_address(0);
}

TEST(the_guard_raises_near_the_stack_end_before_3_12)
{
	/* (3.8: no thread state for the hook's put-back to read in the arguments) */
	const struct py_offsets_entry *o = py_layouts__find(3, 8, 18);
	uint64_t sp = here(), (*f)(uint64_t);

	/* less than the margin left on the main thread's stack: RecursionError, not called */
	f = guarded((void *)counted, o, sp - TRAMP_STACK_MARGIN / 2, 8 << 20, false);
	REQUIRE(f);
	counted_n = seterr_n = 0;
	CHECK(f(77) == 0);
	CHECK(counted_n == 0 && seterr_n == 1);
	CHECK(seterr_exc == fake_recursion_error);
	CHECK(!strcmp(seterr_msg, "maximum recursion depth exceeded"));
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
	/* room: called */
	f = guarded((void *)counted, o, sp - (1 << 20), 8 << 20, false);
	REQUIRE(f);
	CHECK(f(77) == 77);
	CHECK(counted_n == 1 && seterr_n == 1);
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
	/* not on the stack its bounds describe: not judged */
	f = guarded((void *)counted, o, sp + 4096, 8 << 20, false);
	REQUIRE(f);
	CHECK(f(77) == 77);
	CHECK(counted_n == 2 && seterr_n == 1);
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
}

TEST(the_guard_takes_the_budget_away_near_the_stack_end_3_12)
{
	const struct py_offsets_entry *o = py_layouts__find(3, 12, 1);
	struct fake_tstate ts = { .py_recursion_limit = 100000 };
	uint64_t sp = here();
	void *f;

	/* near the end: the call sees no budget (CPython's check raises); it is put back after */
	f = guarded((void *)budget_in_call, o, sp - TRAMP_STACK_MARGIN / 2, 8 << 20, false);
	REQUIRE(f);
	ts.py_recursion_remaining = 99990;
	ts.c_recursion_remaining = 100;
	CHECK(call_direct(&ts, f) == 0);
	CHECK(ts.c_recursion_remaining == 100);
	CHECK(seterr_n == 1); /* (not called: the eval function raises it itself) */
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
	/* room on a stack of known bounds: handed back at any depth */
	f = guarded((void *)budget_in_call, o, sp - (1 << 20), 8 << 20, false);
	REQUIRE(f);
	ts.py_recursion_remaining = 100000 - 2 * TRAMP_HANDBACK_DEPTH;
	CHECK(call_direct(&ts, f) == 102);
	CHECK(call_via(&ts, f) == 103);
	CHECK(ts.c_recursion_remaining == 100);
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
}

/* A thread with a small stack (and its guard), in which the call is made with about `left`
 * bytes of its stack left below it (glibc may give it a larger stack it had cached: the size
 * is read from the thread itself) */
struct in_thread {
	void *f;
	size_t left;
	uint64_t got;
};

static uint64_t call_deep(struct in_thread *c, uint64_t bottom)
{
	volatile uint8_t pad[1024];

	pad[0] = 1;
	if (here() - bottom > c->left + sizeof(pad) + 512)
		return call_deep(c, bottom) + pad[0] - 1;
	return ((uint64_t(*)(uint64_t))c->f)(77);
}

static void *thread_call(void *arg)
{
	struct in_thread *c = arg;
	pthread_attr_t a;
	size_t size;
	void *low;

	if (pthread_getattr_np(pthread_self(), &a) || pthread_attr_getstack(&a, &low, &size)) {
		c->got = ~0ull;
		return NULL;
	}
	pthread_attr_destroy(&a);
	c->got = call_deep(c, (uint64_t)(uintptr_t)low);
	return NULL;
}

static uint64_t call_in_thread(void *f, size_t left)
{
	struct in_thread c = { .f = f, .left = left };
	pthread_attr_t a;
	pthread_t th;

	if (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 128 << 10) ||
	    pthread_create(&th, &a, thread_call, &c))
		return ~0ull;
	pthread_join(th, NULL);
	pthread_attr_destroy(&a);
	return c.got;
}

TEST(the_guard_reads_a_threads_stack_from_its_block)
{
	const struct py_offsets_entry *o = py_layouts__find(3, 8, 18);
	void *f;

	REQUIRE(thread_block__own()->stack_off);
	f = guarded((void *)counted, o, 0, 0, true);
	REQUIRE(f);
	counted_n = seterr_n = 0;
	CHECK(call_in_thread(f, 2 * TRAMP_STACK_MARGIN) == 77);
	CHECK(counted_n == 1 && seterr_n == 0);
	CHECK(call_in_thread(f, TRAMP_STACK_MARGIN / 2) == 0);
	CHECK(counted_n == 1 && seterr_n == 1);
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
	/* blocks not to be read (a C library not known to be glibc): not judged */
	f = guarded((void *)counted, o, 1, 1, false);
	REQUIRE(f);
	CHECK(call_in_thread(f, TRAMP_STACK_MARGIN / 2) == 77);
	CHECK(counted_n == 2 && seterr_n == 1);
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
}

TEST(the_guard_puts_the_hook_back_when_pyuprof_is_gone)
{
	const struct py_offsets_entry *o = py_layouts__find(3, 12, 1);
	static uint8_t interp[16384];
	uint8_t tstate[256] = { 0 };
	uint64_t *hook = (uint64_t *)(interp + o->PyInterpreterState_hook), ip = (uint64_t)(uintptr_t)interp;
	uint64_t (*f)(void *, uint64_t, uint64_t);

	REQUIRE(o->PyInterpreterState_hook + 8 <= sizeof(interp));
	memcpy(tstate + o->bpf.PyThreadState_interp, &ip, sizeof(ip));
	f = guarded((void *)sum3, o, 0, 0, false);
	REQUIRE(f);
	/* its entry nop is a nop here: unprobed. Our value: put back (3.12: none) */
	*hook = (uint64_t)(uintptr_t)f;
	CHECK(f(tstate, 20, 300) == (uint64_t)(uintptr_t)tstate + 320);
	CHECK(*hook == 0);
	/* someone else's: left */
	*hook = 0x7f0000001230;
	f(tstate, 20, 300);
	CHECK(*hook == 0x7f0000001230);
	munmap((void *)((uintptr_t)f & ~(uintptr_t)(TRAMP_PAGE - 1)), TRAMP_PAGE);
}

/* A shared object with function f: nop, a byte no x86-64 decoder accepts, ret. */
static char *build_gap_so(void)
{
	static char dir[] = "/tmp/test_tramp.XXXXXX", path[64], cmd[256];
	FILE *f;

	if (!mkdtemp(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/gap.S", dir);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(".text\n.globl f\n.type f,@function\nf:\n nop\n .byte 0x06\n ret\n.size f, .-f\n"
	      ".globl g\n.type g,@function\ng:\n nop\n ret\n.size g, .-g\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -o %s/gap.so %s", dir, path);
	if (system(cmd))
		return NULL;
	snprintf(path, sizeof(path), "%s/gap.so", dir);
	return path;
}

TEST(ret_finder_refuses_a_gap)
{
	char *so = build_gap_so();
	struct elf_file *ef;
	uint64_t vaddr, size, *offs = NULL;
	int n;

	REQUIRE(so);
	ef = elf_file__open(so);
	REQUIRE(ef);
	REQUIRE(!elf_file__sym(ef, "f", &vaddr, &size));
	CHECK(elf_file__ret_sites(ef, vaddr, size, &offs) == -EILSEQ);
	REQUIRE(!elf_file__sym(ef, "g", &vaddr, &size));
	n = elf_file__ret_sites(ef, vaddr, size, &offs);
	CHECK(n == 1);
	free(offs);
	elf_file__close(ef);
	unlink(so);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(passes_arguments_and_result),
		TEST_CASE(callee_sees_the_abi_alignment),
		TEST_CASE(replays_endbr64),
		TEST_CASE(probe_sites_are_the_optimizable_nop),
		TEST_CASE(refuses_what_it_cannot_replay),
		TEST_CASE(hands_the_budget_back_below_the_bound),
		TEST_CASE(no_budget_before_3_12),
		TEST_CASE(the_return_probe_finds_the_frame),
		TEST_CASE(the_guard_raises_near_the_stack_end_before_3_12),
		TEST_CASE(the_guard_takes_the_budget_away_near_the_stack_end_3_12),
		TEST_CASE(the_guard_reads_a_threads_stack_from_its_block),
		TEST_CASE(the_guard_puts_the_hook_back_when_pyuprof_is_gone),
		TEST_CASE(ret_finder_refuses_a_gap),
	};

	return test_run(cases, TEST_COUNT(cases));
}
