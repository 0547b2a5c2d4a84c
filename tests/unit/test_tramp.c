// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe trampoline's page (user/inject/tramp.c) run for real in this process, in front of small
 * assembly functions that start as CPython's _PyEval_EvalFrameDefault does (push %r15): it
 * passes the three arguments and the result through, the callee sees the stack aligned as
 * the ABI says, and the two probe sites are the 5-byte nops the kernel optimizes. A first
 * instruction it cannot replay is refused. With a 3.12+ layout it hands the C recursion
 * budget back for a call made by the eval loop through the call machinery (fake ones here, with
 * frames of known sizes, and a fake thread state), below the depth bound only, and takes exactly
 * that back after it; a call from anywhere else gets nothing. And the ret finder (user/target/elf_syms.c) refuses a
 * function it cannot disassemble whole rather than guess past the gap.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "inject/tramp.h"
#include "target/elf_syms.h"
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
extern const uint8_t loop_start[], loop_end[], mach_ra[];
/* reads tstate->c_recursion_remaining (offset 36) in the call, starting with push %r15 */
extern uint64_t budget_in_call(void *tstate);

/* A thread state with 3.12.1's offsets for the fields the hand-back reads. */
struct fake_tstate {
	uint8_t pad[28];
	int32_t py_recursion_remaining; /* 28 */
	int32_t py_recursion_limit;	/* 32 */
	int32_t c_recursion_remaining;	/* 36 */
};

/* The trampoline for fn (with the layout o and, 3.12+, the fake eval loop's call paths, if o
 * is not NULL), mapped executable here; NULL if it cannot be built. */
static void *tramp_with(void *fn, const struct py_offsets_entry *o)
{
	struct py_target t;
	uint8_t page[TRAMP_PAGE];
	char why[256];
	void *m;

	memset(&t, 0, sizeof(t));
	t.offsets = o;
	t.paths.eval_start = (uint64_t)(uintptr_t)loop_start;
	t.paths.eval_len = (uint64_t)(loop_end - loop_start);
	t.paths.site[0] = (struct inline_site){ .ra = (uint64_t)(uintptr_t)mach_ra, .step = 32,
						.held = 1 };
	t.paths.n = 1;
	t.eval_addr = (uint64_t)(uintptr_t)fn;
	memcpy(t.eval_head, fn, sizeof(t.eval_head));
	if (tramp__build(&t, TRAMP_PROBED, 0, page, why, sizeof(why)))
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
	CHECK(tramp__build(&t, TRAMP_PROBED, 0, page, why, sizeof(why)) == -ENOTSUP);
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
	REQUIRE(!tramp__build(&t, TRAMP_PROBED, 0, without, why, sizeof(why)));
	t.offsets = py_layouts__find(3, 11, 7);
	REQUIRE(!tramp__build(&t, TRAMP_PROBED, 0, with, why, sizeof(why)));
	CHECK(!memcmp(with, without, TRAMP_PAGE));
	CHECK(!tramp__wanted(&t, TRAMP_PASS));
	t.offsets = py_layouts__find(3, 13, 0);
	CHECK(tramp__wanted(&t, TRAMP_PASS));
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
		TEST_CASE(ret_finder_refuses_a_gap),
	};

	return test_run(cases, TEST_COUNT(cases));
}
