// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inline_init: where CPython 3.13's specialised class call makes its object before it runs
 * __init__ inline. In code built to test it (tests/unit/inline_init_cases.S: the two shapes
 * the real builds have, and paths that differ from them in one thing each, which must find
 * nothing), and in the real builds: pyenv's 3.13 libpython, whose call must be the one call
 * of its _PyType_NewManagedObject in the eval function, and Debian's stripped 3.13.18 of the
 * sid root, which has no such symbol (tests/roots.bats records through it).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <glob.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pythons.h"
#include "pyuprof.h"
#include "target/elf_syms.h"
#include "target/inline_init.h"
#include "target/probe_site.h"
#include "test.h"

#ifndef CASES_SO
#error "CASES_SO, CASES_SYM_SO: the paths of inline_init_cases{,_sym}.so (Makefile)"
#endif

#define SPEC_CACHE_INIT 920 /* offsetof(PyHeapTypeObject, _spec_cache.init), 3.13 */

static uint64_t sym(struct elf_file *ef, const char *name, uint64_t *size)
{
	uint64_t v = 0, s = 0;

	CHECK(!elf_file__sym(ef, name, &v, &s));
	if (size)
		*size = s;
	return v;
}

/* The finder on case fn (an eval function of its own). */
static int find(struct elf_file *ef, const char *fn, struct inline_init *s)
{
	uint64_t size, v = sym(ef, fn, &size);

	return inline_init__find(ef, v, size, SPEC_CACHE_INIT, s);
}

/* A skipped case fails under CI=true: there a test that cannot run is one that cannot fail. */
static void skipped(const char *why)
{
	printf("#   skipped: %s\n", why);
	if (getenv("CI") && !strcmp(getenv("CI"), "true"))
		CHECK(!"skipped under CI=true");
}

TEST(finds_the_call_in_both_shapes)
{
	struct elf_file *ef = elf_file__open(CASES_SO);
	struct inline_init s;

	REQUIRE(ef);
	/* 3.13.0's: the path takes the first check's jump */
	CHECK(!find(ef, "plain", &s));
	CHECK(s.vaddr == sym(ef, "plain_site", NULL));
	CHECK(s.callee == sym(ef, "plain_alloc", NULL));
	CHECK(s.reg == FRAME_REG_BP);
	/* Debian's 3.13.18: the handlers in a part split off the function */
	CHECK(!find(ef, "split", &s));
	CHECK(s.vaddr == sym(ef, "split_site", NULL));
	CHECK(s.callee == sym(ef, "split_alloc", NULL));
	CHECK(s.reg == FRAME_REG_BX);
	elf_file__close(ef);
}

TEST(finds_nothing_where_the_path_differs)
{
	static const char *const refused[] = { "two_exits",  "frame_written", "not_rdi",
					       "rdi_written", "few_checks",    "no_init",
					       "no_frame",   "indirect",      "tail" };
	struct elf_file *ef = elf_file__open(CASES_SO);
	struct inline_init s;

	REQUIRE(ef);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (find(ef, refused[i], &s) != -ENOENT || s.vaddr) {
			printf("#   %s found at %#llx\n", refused[i], (unsigned long long)s.vaddr);
			CHECK(false);
		}
	}
	/* no _spec_cache.init offset: a build without the specialisation */
	CHECK(inline_init__find(ef, sym(ef, "plain", NULL), 56, 0, &s) == -ENOENT);
	elf_file__close(ef);
}

TEST(a_symbol_decides_where_the_build_has_one)
{
	struct elf_file *ef = elf_file__open(CASES_SYM_SO);
	struct inline_init s;

	REQUIRE(ef);
	CHECK(!find(ef, "plain", &s));
	CHECK(s.callee == sym(ef, "_PyType_NewManagedObject", NULL));
	/* the same path as without it, but its call goes elsewhere */
	CHECK(find(ef, "split", &s) == -ENOENT && !s.vaddr);
	elf_file__close(ef);
}

/* The instruction at vaddr: a direct call the kernel emulates under a probe, to callee. */
static bool call_to(struct elf_file *ef, uint64_t vaddr, uint64_t callee)
{
	uint8_t b[5];
	int32_t rel;

	if (elf_file__read(ef, vaddr, b, sizeof(b)) || !probe_site__emulated(b, sizeof(b)) ||
	    b[0] != 0xe8)
		return false;
	memcpy(&rel, b + 1, 4);
	return vaddr + 5 + (int64_t)rel == callee;
}

static bool callee_saved(uint32_t reg)
{
	return reg >= FRAME_REG_BX && reg <= FRAME_REG_R15;
}

TEST(pyenv_313_the_one_call_of_its_symbol)
{
	char root[PATH_MAX], pattern[PATH_MAX + 64];
	uint64_t eval, size, managed, *ras = NULL, *targets = NULL;
	struct inline_init s;
	struct elf_file *ef;
	int n, calls;
	glob_t g;

	pyenv_root(root, sizeof(root));
	snprintf(pattern, sizeof(pattern), "%s/versions/3.13.*/lib/libpython3.13.so.1.0", root);
	if (glob(pattern, 0, NULL, &g) || !g.gl_pathc) {
		skipped("no pyenv 3.13 build");
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		printf("#   %s\n", g.gl_pathv[i]);
		ef = elf_file__open(g.gl_pathv[i]);
		REQUIRE(ef);
		eval = sym(ef, "_PyEval_EvalFrameDefault", &size);
		managed = sym(ef, "_PyType_NewManagedObject", NULL);
		CHECK(!inline_init__find(ef, eval, size, SPEC_CACHE_INIT, &s));
		CHECK(s.callee == managed);
		CHECK(call_to(ef, s.vaddr, managed));
		CHECK(callee_saved(s.reg));
		/* the only call of it in the eval loop: CALL_ALLOC_AND_ENTER_INIT's */
		n = elf_file__calls(ef, eval, size, &ras, &targets);
		calls = 0;
		for (int k = 0; k < n; k++)
			if (targets[k] == managed) {
				calls++;
				CHECK(ras[k] == s.vaddr + 5);
			}
		CHECK(calls == 1);
		free(ras);
		free(targets);
		elf_file__close(ef);
	}
	globfree(&g);
}

TEST(debian_31318_stripped)
{
	const char *sid = getenv("PYUPROF_SID_ROOT"), *roots = getenv("PYUPROF_ROOTS");
	uint64_t eval, size, managed, table = 0;
	char path[PATH_MAX + 32];
	struct inline_init s;
	struct elf_file *ef;

	if (sid && *sid)
		snprintf(path, sizeof(path), "%s/usr/bin/python3.13", sid);
	else
		snprintf(path, sizeof(path), "%s/sid/usr/bin/python3.13",
			 roots && *roots ? roots : "/var/lib/pyuprof/roots");
	ef = elf_file__open(path);
	if (!ef) {
		skipped("no python3.13 in the sid root (scripts/install-deps.sh test)");
		return;
	}
	printf("#   %s\n", path);
	/* what makes it a case of its own: no symbol, and the eval loop outside the eval
	 * function's own range (its dispatch table's targets all in a part split off it) */
	CHECK(elf_file__sym(ef, "_PyType_NewManagedObject", &managed, NULL) == -ENOENT);
	eval = sym(ef, "_PyEval_EvalFrameDefault", &size);
	CHECK(elf_file__code_table(ef, eval, eval + size, 256, 128, &table) == -ENOENT);
	REQUIRE(!inline_init__find(ef, eval, size, SPEC_CACHE_INIT, &s));
	CHECK(s.vaddr < eval || s.vaddr >= eval + size);
	CHECK(call_to(ef, s.vaddr, s.callee));
	CHECK(callee_saved(s.reg));
	elf_file__close(ef);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(finds_the_call_in_both_shapes),
		TEST_CASE(finds_nothing_where_the_path_differs),
		TEST_CASE(a_symbol_decides_where_the_build_has_one),
		TEST_CASE(pyenv_313_the_one_call_of_its_symbol),
		TEST_CASE(debian_31318_stripped),
	};

	return test_run(cases, TEST_COUNT(cases));
}
