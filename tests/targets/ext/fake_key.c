// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LD_PRELOAD for tests/batch.bats: every thread's block holds one made-up number where glibc
 * keeps the thread's id, as another C library's block may hold anything there (musl's is
 * laid out otherwise). Set for the main thread before main() and for each thread pthread_create
 * starts, before its start routine. glibc reads that field back only to name the owner of
 * recursive or error-checking mutexes and to signal or join other threads by id, which the
 * fixtures run with it (threads.py, plain_calls.py) do not do in a way that minds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_KEY 0x7ffffff0 /* no thread's id */

static uint32_t key_off;

static void fake(void)
{
	uint8_t *self = (uint8_t *)pthread_self();
	int32_t tid = (int32_t)gettid(), v, fake_key = FAKE_KEY;

	if (!key_off) /* where this glibc keeps it: the word that holds the id */
		for (uint32_t off = 8; off < 2048 && !key_off; off += 4) {
			memcpy(&v, self + off, sizeof(v));
			if (v == tid)
				key_off = off;
		}
	if (key_off)
		memcpy(self + key_off, &fake_key, sizeof(fake_key));
}

__attribute__((constructor)) static void fake_main(void)
{
	fake();
}

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *started(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	fake();
	return s.fn(s.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start *s = malloc(sizeof(*s));

	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				void *))dlsym(RTLD_NEXT, "pthread_create");
	if (!s)
		return 11; /* EAGAIN */
	s->fn = fn;
	s->arg = arg;
	return real(th, attr, started, s);
}
