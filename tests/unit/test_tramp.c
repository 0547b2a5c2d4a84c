// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe trampoline's page (user/tramp.c) run for real in this process, in front of small
 * assembly functions that start as CPython's _PyEval_EvalFrameDefault does (push %r15): it
 * passes the three arguments and the result through, the callee sees the stack aligned as
 * the ABI says, and the two probe sites are the 5-byte nops the kernel optimizes. A first
 * instruction it cannot replay is refused. And the ret finder (user/elf_syms.c) refuses a
 * function it cannot disassemble whole rather than guess past the gap.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "test.h"
#include "elf_syms.h"
#include "tramp.h"

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
	".globl endbr_id\n endbr_id:\n endbr64\n mov %rdi,%rax\n ret\n");

/* The trampoline for fn, mapped executable here; NULL if it cannot be built. */
static void *tramp_for(void *fn)
{
	struct py_target t;
	uint8_t page[TRAMP_PAGE];
	char why[256];
	void *m;

	memset(&t, 0, sizeof(t));
	t.eval_addr = (uint64_t)(uintptr_t)fn;
	memcpy(t.eval_head, fn, sizeof(t.eval_head));
	if (tramp__build(&t, page, why, sizeof(why)))
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
	CHECK(tramp__build(&t, page, why, sizeof(why)) == -ENOTSUP);
	CHECK(strstr(why, "48 8b 05") != NULL);
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
		TEST_CASE(ret_finder_refuses_a_gap),
	};

	return test_run(cases, TEST_COUNT(cases));
}
