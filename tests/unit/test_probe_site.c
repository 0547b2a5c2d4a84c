// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe_site: which encodings the kernel emulates under a uprobe, when a probe may move on to
 * one (tests/unit/probe_site_cases.S, each case built to allow or to forbid the move), and
 * where the single-stepped probe of a real build goes: Debian's 3.11.2 inline __getitem__ path
 * (3.13's inline __init__ probe sits on a call, emulated already: test_inline_init.c).
 */
#include <capstone/capstone.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "target/elf_syms.h"
#include "target/inline_subscr.h"
#include "target/probe_site.h"
#include "test.h"

#ifndef CASES_SO
#error "CASES_SO: the path of probe_site_cases.so (Makefile)"
#endif

static const unsigned keep_frame[] = { X86_REG_RBX };
static const unsigned keep_two[] = { X86_REG_RDI, X86_REG_RBP };

static uint64_t sym(struct elf_file *ef, const char *name, uint64_t *size)
{
	uint64_t v = 0, s = 0;

	CHECK(!elf_file__sym(ef, name, &v, &s));
	if (size)
		*size = s;
	return v;
}

/* Where a probe on the first instruction of case fn goes. */
static uint64_t moved(struct elf_file *ef, const char *fn, const unsigned *keep, size_t nkeep,
		      const uint64_t *targets, size_t ntargets)
{
	uint64_t size, v = sym(ef, fn, &size);

	return probe_site__move(ef, v, v + size, v, keep, nkeep, targets, ntargets);
}

TEST(emulated_encodings)
{
	static const struct {
		uint8_t b[6];
		size_t len;
		bool emulated;
	} insns[] = {
		{ { 0x90 }, 1, true },				   /* nop */
		{ { 0x55 }, 1, true },				   /* push rbp */
		{ { 0x41, 0x57 }, 2, true },			   /* push r15 */
		{ { 0xeb, 0x10 }, 2, true },			   /* jmp rel8 */
		{ { 0x7f, 0x10 }, 2, true },			   /* jg rel8 */
		{ { 0xe8, 1, 2, 3, 4 }, 5, true },		   /* call rel32 */
		{ { 0xe9, 1, 2, 3, 4 }, 5, true },		   /* jmp rel32 */
		{ { 0x0f, 0x8f, 1, 2, 3, 4 }, 6, true },	   /* jg rel32 */
		{ { 0x48, 0x83, 0xec, 0x08 }, 4, false },	   /* sub rsp, 8 */
		{ { 0x8d, 0x50, 0xff }, 3, false },		   /* lea edx, [rax - 1] */
		{ { 0xc3 }, 1, false },				   /* ret */
		{ { 0xff, 0xe2 }, 2, false },			   /* jmp rdx */
		{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, false },	   /* nopl: emulated by some
								      * kernels (6.18), not all */
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, 4, false },	   /* endbr64 */
		{ { 0x66, 0x90 }, 2, false },			   /* prefixed nop */
	};

	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++)
		if (probe_site__emulated(insns[i].b, insns[i].len) != insns[i].emulated) {
			printf("#   encoding %zu\n", i);
			CHECK(false);
		}
}

TEST(moves_over_what_keeps_the_view)
{
	struct elf_file *ef = elf_file__open(CASES_SO);

	REQUIRE(ef);
	CHECK(moved(ef, "moves", keep_frame, 1, NULL, 0) == sym(ef, "moves_to", NULL));
	CHECK(moved(ef, "init_like", keep_two, 2, NULL, 0) == sym(ef, "init_like_to", NULL));
	CHECK(moved(ef, "table_entry", keep_frame, 1, NULL, 0) ==
	      sym(ef, "table_entry_to", NULL));
	elf_file__close(ef);
}

TEST(stays_where_moving_could_change_what_it_sees)
{
	static const char *const stay[] = { "writes_kept", "writes_part", "stores_through",
					    "indirect",	   "jumped_short", "jumped_long",
					    "too_far",	   "already" };
	struct elf_file *ef = elf_file__open(CASES_SO);
	uint64_t target;

	REQUIRE(ef);
	for (size_t i = 0; i < sizeof(stay) / sizeof(stay[0]); i++)
		if (moved(ef, stay[i], keep_frame, 1, NULL, 0) != sym(ef, stay[i], NULL)) {
			printf("#   %s moved\n", stay[i]);
			CHECK(false);
		}
	/* a dispatch table's entry on the way */
	target = sym(ef, "table_entry_to", NULL);
	CHECK(moved(ef, "table_entry", keep_frame, 1, &target, 1) == sym(ef, "table_entry", NULL));
	/* what the program reads decides: init_like writes rsi and rsp on the way */
	CHECK(moved(ef, "init_like", (const unsigned[]){ X86_REG_RSI }, 1, NULL, 0) ==
	      sym(ef, "init_like", NULL));
	elf_file__close(ef);
}

/* The probe's site in a real build: an instruction the kernel emulates. */
static bool emulated_at(struct elf_file *ef, uint64_t vaddr)
{
	uint8_t b[16];
	cs_insn *insn = NULL;
	bool yes = false;
	csh cs;

	if (elf_file__read(ef, vaddr, b, sizeof(b)) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return false;
	if (cs_disasm(cs, b, sizeof(b), vaddr, 1, &insn) == 1)
		yes = probe_site__emulated(insn->bytes, insn->size);
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	return yes;
}

TEST(debian_311_getitem_site_is_emulated)
{
	struct elf_file *ef = elf_file__open("/usr/bin/python3.11");
	struct inline_subscr s;
	uint64_t eval, size;

	REQUIRE(ef);
	REQUIRE(!elf_file__sym(ef, "_PyEval_EvalFrameDefault", &eval, &size));
	/* offsetof(_PyInterpreterFrame, previous) on 3.11 */
	REQUIRE(!inline_subscr__find(ef, eval, size, 48, &s));
	CHECK(emulated_at(ef, s.vaddr));
	elf_file__close(ef);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(emulated_encodings),
		TEST_CASE(moves_over_what_keeps_the_view),
		TEST_CASE(stays_where_moving_could_change_what_it_sees),
		TEST_CASE(debian_311_getitem_site_is_emulated),
	};

	return test_run(cases, TEST_COUNT(cases));
}
