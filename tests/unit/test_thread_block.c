// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the trampoline reads of a thread (user/target/thread_block.c), checked against glibc's
 * own account in this process: the tid where the thread block keeps it, and the stack block
 * (stackblock, its size, its guard) as pthread_getattr_np reports the thread's stack; every
 * thread of this process checks out (the main thread's block has no stack block) and a block
 * with another value where the tid is does not; the main thread's stack from the maps and the
 * stack limit holds the stack pointer and reaches down as far as pthread_getattr_np says; and
 * the C library by the ELF interpreter: this process's is glibc's, a copy of a program whose
 * interpreter is another file is not; and the mask a new thread starts with, its creator's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "target/thread_block.h"
#include "test.h"

static __attribute__((noinline)) uint64_t here(void)
{
	return (uint64_t)(uintptr_t)__builtin_frame_address(0);
}

struct seen {
	pid_t tid;
	uint64_t base, low, size;
	pthread_barrier_t *hold; /* the thread waits here until the test has read it */
};

static void *note(void *p)
{
	struct seen *s = p;
	pthread_attr_t a;
	void *low;
	size_t size;

	s->tid = gettid();
	s->base = (uint64_t)(uintptr_t)pthread_self();
	if (!pthread_getattr_np(pthread_self(), &a) && !pthread_attr_getstack(&a, &low, &size)) {
		s->low = (uint64_t)(uintptr_t)low;
		s->size = size;
		pthread_attr_destroy(&a);
	}
	pthread_barrier_wait(s->hold);
	pthread_barrier_wait(s->hold);
	return NULL;
}

TEST(finds_the_tid_and_the_stack_block_as_glibc_reports_them)
{
	const struct thread_block *tb = thread_block__own();
	pthread_barrier_t hold;
	struct seen s = { .hold = &hold };
	pthread_attr_t a;
	pthread_t th;
	uint64_t blk[3];
	int32_t key;

	REQUIRE(tb->tid_off && tb->stack_off);
	REQUIRE(!pthread_barrier_init(&hold, NULL, 2));
	REQUIRE(!pthread_attr_init(&a) && !pthread_attr_setstacksize(&a, 512 << 10));
	REQUIRE(!pthread_create(&th, &a, note, &s));
	pthread_barrier_wait(&hold);
	memcpy(&key, (uint8_t *)(uintptr_t)s.base + tb->tid_off, sizeof(key));
	memcpy(blk, (uint8_t *)(uintptr_t)s.base + tb->stack_off, sizeof(blk));
	CHECK(key == s.tid);
	/* the usable stack: above the guard, to the block's top */
	CHECK(blk[0] + blk[2] == s.low);
	CHECK(blk[1] - blk[2] == s.size);
	/* both threads' blocks check out; a made-up id does not */
	{
		pid_t tids[2] = { getpid(), s.tid };
		uint64_t bases[2] = { (uint64_t)(uintptr_t)pthread_self(), s.base };
		char why[256] = "";

		CHECK(thread_block__check(getpid(), tids, bases, 2, why, sizeof(why)) == 0);
		tids[1] = s.tid + 1;
		CHECK(thread_block__check(getpid(), tids, bases, 2, why, sizeof(why)) == -EINVAL);
		CHECK(strstr(why, "where glibc keeps the tid") != NULL);
	}
	pthread_barrier_wait(&hold);
	pthread_join(th, NULL);
	pthread_attr_destroy(&a);
	pthread_barrier_destroy(&hold);
}

TEST(the_main_threads_stack_from_its_mapping_and_limit)
{
	pthread_attr_t a;
	uint64_t low, span, sp = here();
	size_t size;
	void *addr;

	REQUIRE(!thread_block__main_stack(getpid(), &low, &span));
	CHECK(low < sp && sp < low + span);
	/* glibc finds the same bottom (the stack limit down from the top; its top is the page
	 * above where the program's stack began, the mapping's a little higher) */
	REQUIRE(!pthread_getattr_np(pthread_self(), &a) && !pthread_attr_getstack(&a, &addr, &size));
	pthread_attr_destroy(&a);
	CHECK(low == (uint64_t)(uintptr_t)addr);
	CHECK(low + span >= (uint64_t)(uintptr_t)addr + size);
	CHECK(low + span - ((uint64_t)(uintptr_t)addr + size) <= 64 << 10);
}

/* A copy of /bin/sleep whose ELF interpreter is renamed to a link to the real one: it runs as
 * ever, with an interpreter that is not named as glibc's. Returns its pid, or -1. */
static pid_t run_renamed(char *dir)
{
	static const char glibc[] = "/lib64/ld-linux-x86-64.so.2";
	char cmd[512], prog[128], link[128];
	pid_t pid;

	snprintf(link, sizeof(link), "%s/ld-x.so", dir);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	if (strlen(link) > strlen(glibc) || symlink(glibc, link))
		return -1;
	/* the interpreter's path, overwritten in place: no longer than the old one */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import sys; b = open('/bin/sleep', 'rb').read(); "
		 "old = b'%s'; new = b'%s'.ljust(len(old), b'\\\\0'); assert b.count(old) == 1; "
		 "open('%s', 'wb').write(b.replace(old, new))\" && chmod +x %s",
		 glibc, link, prog, prog);
	if (system(cmd))
		return -1;
	pid = fork();
	if (pid == 0) {
		execl(prog, prog, "10", (char *)NULL);
		_exit(127);
	}
	return pid;
}

TEST(the_c_library_by_the_elf_interpreter)
{
	char dir[] = "/tmp/tbXXXXXX", why[256];
	pid_t pid;

	CHECK(thread_block__libc(getpid(), why, sizeof(why)) == LIBC_GLIBC);
	CHECK(strstr(why, "ld-linux") != NULL);
	REQUIRE(mkdtemp(dir));
	pid = run_renamed(dir);
	REQUIRE(pid > 0);
	usleep(100 * 1000); /* (its exec done) */
	CHECK(thread_block__libc(pid, why, sizeof(why)) == LIBC_OTHER);
	CHECK(strstr(why, "ld-x.so") != NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(why, sizeof(why), "rm -rf %s", dir);
	CHECK(!system(why));
}

static void *idle(void *p)
{
	return p;
}

/* A thread's block keeps the mask its creator ran with (pthread_create's clone runs with every
 * signal blocked: bpf/thread_births.bpf.h reads the mask the creator goes back to there) */
TEST(the_mask_a_thread_starts_with_as_its_creator_had_it)
{
	const struct thread_block *tb = thread_block__own();
	sigset_t mask, old;
	uint64_t want = 0, got = 0;
	pthread_t th;

	REQUIRE(tb->sigmask_off);
	sigemptyset(&mask);
	sigaddset(&mask, SIGURG);
	sigaddset(&mask, SIGTTIN);
	REQUIRE(!pthread_sigmask(SIG_BLOCK, &mask, &old));
	REQUIRE(!pthread_sigmask(SIG_SETMASK, NULL, &mask));
	memcpy(&want, &mask, sizeof(want));
	REQUIRE(!pthread_create(&th, NULL, idle, NULL));
	memcpy(&got, (const uint8_t *)th + tb->sigmask_off, sizeof(got));
	pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	CHECK(got == want);
	CHECK(got & (1ULL << (SIGURG - 1)));
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(finds_the_tid_and_the_stack_block_as_glibc_reports_them),
		TEST_CASE(the_main_threads_stack_from_its_mapping_and_limit),
		TEST_CASE(the_c_library_by_the_elf_interpreter),
		TEST_CASE(the_mask_a_thread_starts_with_as_its_creator_had_it),
	};

	return test_run(cases, TEST_COUNT(cases));
}
